/* underfed doctor, pass 5: kernel time by class (doctor_internal.h lists the passes): the
 * kernel-name classes of doctor_rules.c (elementwise chains, SIMT, tensor-core and misaligned
 * GEMMs, decode-shaped matrix products), under-filled grids, exposed host-to-device copies,
 * and the host's cost per launch and the copies' rates that uf_doctor_compare holds against
 * the ceilings. */
#include "doctor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"
#include "stats.h"

/* An activity's index and its launch time, to sort by launch. */
typedef struct by_launch {
    uint64_t t_ns;
    size_t act;
} by_launch;

/* By launch time; ties keep trace order. */
static int cmp_by_launch(const void *pa, const void *pb)
{
    const by_launch *a = pa, *b = pb;
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    return (a->act > b->act) - (a->act < b->act);
}

/* Activity indices sorted by their launch time (ties: trace order). 0, or -1 out of memory. */
static int sort_by_launch(const uf_doctor_work *w, size_t *order, size_t n)
{
    by_launch *v = malloc((n + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (by_launch){w->launch_ns[order[i]], order[i]};
    qsort(v, n, sizeof *v, cmp_by_launch);
    for (size_t i = 0; i < n; i++)
        order[i] = v[i].act;
    free(v);
    return 0;
}

/* The kernel classes whose time work_figures measures: each class's time is the union of its
 * kernels' intervals, not the sum of their lengths, so that kernels that overlap (programmatic
 * dependent launch, concurrent streams) count once and no share exceeds its step. */
enum { CLS_SIMT, CLS_MISALIGNED, CLS_TC, CLS_UNKNOWN, CLS_CHAIN, CLS_GEMV, N_CLS };

/* The union of the intervals of `n_which` classes (copied into scratch, which holds them all). */
static uint64_t classes_union_ns(uf_interval *const cls[], const size_t n_cls[], const int *which,
                                 int n_which, uf_interval *scratch)
{
    size_t m = 0;
    for (int i = 0; i < n_which; i++) {
        memcpy(scratch + m, cls[which[i]], n_cls[which[i]] * sizeof *scratch);
        m += n_cls[which[i]];
    }
    return uf_interval_union_ns(scratch, m);
}

/* ---- memory-bound chains --------------------------------------------------------------------- */

/* What makes a kernel memory-bound for the chains: its family's name, or the counters. */
enum { MEM_NO = 0, MEM_FAMILY = 1, MEM_COUNTERS = 2 };

/* The window's busy time: every window activity's interval, merged, in time order, into
 * *out (malloc'ed). 0, or -1 out of memory. */
static int busy_intervals(const uf_doctor_work *w, uf_interval **out, size_t *n_out)
{
    const uf_dtrace *t = w->t;
    uf_interval *iv = malloc((t->n_acts + 1) * sizeof *iv);
    if (iv == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < t->n_acts; i++)
        if (w->step_of[i] >= 0 && t->acts[i].end_ns > t->acts[i].start_ns)
            iv[n++] = (uf_interval){t->acts[i].start_ns, t->acts[i].end_ns};
    uf_interval_union_ns(iv, n);        /* sorts by start */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && iv[i].start_ns <= iv[m - 1].end_ns) {
            if (iv[i].end_ns > iv[m - 1].end_ns)
                iv[m - 1].end_ns = iv[i].end_ns;
        } else {
            iv[m++] = iv[i];
        }
    }
    *out = iv;
    *n_out = m;
    return 0;
}

/* The busy ns of [a, b) in merged intervals iv[0..n). */
static uint64_t busy_in(const uf_interval *iv, size_t n, uint64_t a, uint64_t b)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (iv[mid].end_ns <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t ns = 0;
    for (size_t i = lo; i < n && iv[i].start_ns < b; i++) {
        uint64_t x = iv[i].start_ns > a ? iv[i].start_ns : a;
        uint64_t y = iv[i].end_ns < b ? iv[i].end_ns : b;
        ns += y > x ? y - x : 0;
    }
    return ns;
}

/* One PM sample's activity while the device was busy. */
typedef struct busy_sample {
    uint64_t start_ns, end_ns, max_end_ns;  /* max_end: the latest end up to it, by start */
    double dram_pct, tensor_pct;            /* NaN: not read, or busy under a tenth of it */
} busy_sample;

static int cmp_busy_sample(const void *pa, const void *pb)
{
    const busy_sample *a = pa, *b = pb;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The PM samples' DRAM and tensor activity while the device was busy: a sample's mean over
 * its interval, divided by the share of it the device was busy (a sample half idle reads
 * half the activity of the kernels in it), at most 100 %. By start, into *out (malloc'ed).
 * 0, or -1 out of memory. */
static int counters_while_busy(const uf_doctor_work *w, busy_sample **out, size_t *n_out)
{
    const uf_dtrace *t = w->t;
    uf_interval *busy = NULL;
    size_t n_busy = 0;
    busy_sample *s = malloc((t->n_pm + 1) * sizeof *s);
    if (s == NULL || busy_intervals(w, &busy, &n_busy) != 0) {
        free(s);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->n_pm; i++) {
        const uf_pm_sample *p = &t->pm[i];
        if (p->end_ns <= p->start_ns || p->end_ns <= w->dev_begin || p->start_ns >= w->dev_end)
            continue;
        double share = (double)busy_in(busy, n_busy, p->start_ns, p->end_ns) /
                       (double)(p->end_ns - p->start_ns);
        double dram = share >= 0.1 ? p->dram_pct / share : NAN;
        double tensor = share >= 0.1 ? p->tensor_active_pct / share : NAN;
        s[n++] = (busy_sample){p->start_ns, p->end_ns, 0, fmin(dram, 100.0), fmin(tensor, 100.0)};
    }
    qsort(s, n, sizeof *s, cmp_busy_sample);
    for (size_t i = 0; i < n; i++)
        s[i].max_end_ns = i > 0 && s[i - 1].max_end_ns > s[i].end_ns ? s[i - 1].max_end_ns
                                                                      : s[i].end_ns;
    free(busy);
    *out = s;
    *n_out = n;
    return 0;
}

/* Do the counters call kernel [k0, k1) memory-bound: over the samples it overlaps (weighted by
 * the overlap), DRAM at least UF_DOCTOR_DRAM_BOUND while busy and the tensor pipes idle (under
 * UF_DOCTOR_TENSOR_PIPES_IDLE)? *covered: some sample read it. */
static int counters_memory_bound(const busy_sample *s, size_t n, uint64_t k0, uint64_t k1,
                                 int *covered)
{
    size_t lo = 0, hi = n;      /* the first sample that (or one before it) ends after k0 */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].max_end_ns <= k0)
            lo = mid + 1;
        else
            hi = mid;
    }
    double dram = 0.0, tensor = 0.0, weight = 0.0;
    for (size_t i = lo; i < n && s[i].start_ns < k1; i++) {
        uint64_t x = s[i].start_ns > k0 ? s[i].start_ns : k0;
        uint64_t y = s[i].end_ns < k1 ? s[i].end_ns : k1;
        if (y <= x || isnan(s[i].dram_pct) || isnan(s[i].tensor_pct))
            continue;
        dram += s[i].dram_pct * (double)(y - x);
        tensor += s[i].tensor_pct * (double)(y - x);
        weight += (double)(y - x);
    }
    *covered = weight > 0.0;
    return weight > 0.0 && dram / weight >= UF_DOCTOR_DRAM_BOUND &&
           tensor / weight < UF_DOCTOR_TENSOR_PIPES_IDLE;
}

/* Memory-bound chains: runs of at least UF_DOCTOR_CHAIN_MIN consecutive memory-bound kernels
 * in launch order. A run no longer than a step's kernels is one chain wherever the step
 * boundary falls (where nothing marks a step its phase is arbitrary, and must not cut a
 * chain); a longer one (a step of memory-bound kernels only, steps back to back) is cut at
 * the step boundaries, each step's part a chain if long enough (a fused kernel once a step is
 * no chain, however many steps follow each other). A kernel is memory-bound by its family's
 * name (uf_doctor_memory_family)
 * or, where PM samples read the window, by the counters: DRAM busy and the tensor pipes idle
 * while it ran; GEMMs, decode-shaped matrix products and communication never are (they have
 * rules of their own). order[0..n): the window's kernels by launch. The chains' intervals
 * into chain (*n_chain of them) and their kernels per step by signal into d. 0, or -1 out of
 * memory. */
static int chain_figures(const uf_doctor_work *w, const size_t *order, size_t n,
                         uf_interval *chain, size_t *n_chain, uf_diagnosis *d)
{
    const uf_dtrace *t = w->t;
    busy_sample *samples = NULL;
    size_t n_samples = 0;
    uint8_t *mem = malloc(n + 1);
    if (mem == NULL || counters_while_busy(w, &samples, &n_samples) != 0) {
        free(mem);
        return -1;
    }
    int any_covered = 0;
    for (size_t i = 0; i < n; i++) {
        const uf_activity *a = &t->acts[order[i]];
        mem[i] = MEM_NO;
        if (a->is_comm || uf_doctor_is_decode_matmul(a->name) || uf_doctor_is_gemm(a->name))
            continue;
        int covered = 0;
        int counters = counters_memory_bound(samples, n_samples, a->start_ns, a->end_ns, &covered);
        mem[i] = uf_doctor_memory_family(a->name) != NULL ? MEM_FAMILY
                 : counters                                ? MEM_COUNTERS
                                                           : MEM_NO;
        any_covered |= covered;
    }
    /* maximal runs [i, e) of memory-bound kernels, each then cut into chains */
    double by_family = 0, by_counters = 0, triton = 0;
    double per_step = (double)n / w->n_steps;
    *n_chain = 0;
    for (size_t i = 0; i < n;) {
        if (mem[i] == MEM_NO) {
            i++;
            continue;
        }
        size_t e = i;
        while (e < n && mem[e] != MEM_NO)
            e++;
        int across = (double)(e - i) <= per_step &&
                     w->step_of[order[e - 1]] - w->step_of[order[i]] <= 1;
        for (size_t a = i; a < e;) {     /* the pieces: the run, or each step's part of it */
            size_t b = a + 1;
            while (b < e && (across || w->step_of[order[b]] == w->step_of[order[a]]))
                b++;
            for (size_t k = a; b - a >= UF_DOCTOR_CHAIN_MIN && k < b; k++) {
                const uf_activity *m = &t->acts[order[k]];
                chain[(*n_chain)++] = (uf_interval){m->start_ns, m->end_ns};
                by_family += mem[k] == MEM_FAMILY;
                by_counters += mem[k] == MEM_COUNTERS;
                triton += uf_doctor_is_triton_fused(m->name);
            }
            a = b;
        }
        i = e;
    }
    d->chain_family_per_step = by_family / w->n_steps;
    d->chain_counters_per_step = by_counters / w->n_steps;
    d->chain_triton_per_step = triton / w->n_steps;
    d->chain_counters = any_covered;
    free(mem);
    free(samples);
    return 0;
}

/* ---- the classes' time ----------------------------------------------------------------------- */


/* ---- SMs left empty --------------------------------------------------------------------- */

/* A kernel's start (+1) or end (-1) on its device, with the SMs its grid can hold. */
typedef struct sm_event {
    uint64_t t_ns;
    uint32_t device_id;
    uint32_t sms;               /* min(blocks, SM count); a communication kernel or one of
                                 * unknown grid counts as filling the device */
    int8_t delta;
} sm_event;

static int cmp_sm_event(const void *pa, const void *pb)
{
    const sm_event *a = pa, *b = pb;
    if (a->device_id != b->device_id)
        return a->device_id < b->device_id ? -1 : 1;
    return (a->t_ns > b->t_ns) - (a->t_ns < b->t_ns);
}

/* The SM time the window's kernels left empty, in ns: over the time some kernel ran on a
 * device, the share of its SMs that no running kernel's grid could fill (one block an SM at
 * least), from a sweep over the kernels' starts and ends. Kernels that run at once share the
 * SMs, so the sum is bounded by the kernels' union (a sum of each kernel's empty share counted
 * the SMs two overlapping small kernels leave empty twice: a share over 100 % of the step, seen
 * by the trace fuzzer). -1 when out of memory. */
static double empty_sm_ns(const uf_doctor_work *w, int sm_count)
{
    const uf_dtrace *t = w->t;
    if (sm_count <= 0)
        return 0.0;
    size_t n = 0;
    for (size_t i = 0; i < t->n_acts; i++)
        n += w->step_of[i] >= 0 && t->acts[i].kind == UF_ACT_KERNEL;
    if (n == 0)
        return 0.0;
    sm_event *ev = malloc(2 * n * sizeof *ev);
    if (ev == NULL)
        return -1.0;
    size_t k = 0;
    for (size_t i = 0; i < t->n_acts; i++) {
        const uf_activity *a = &t->acts[i];
        if (w->step_of[i] < 0 || a->kind != UF_ACT_KERNEL)
            continue;
        uint32_t sms = a->is_comm || a->blocks == 0 || a->blocks > (uint32_t)sm_count
                           ? (uint32_t)sm_count : a->blocks;
        ev[k++] = (sm_event){a->start_ns, a->device_id, sms, +1};
        ev[k++] = (sm_event){a->end_ns, a->device_id, sms, -1};
    }
    qsort(ev, k, sizeof *ev, cmp_sm_event);
    int64_t held = 0, running = 0;
    double empty = 0.0;
    for (size_t i = 0; i < k; i++) {
        held += ev[i].delta * (int64_t)ev[i].sms;
        running += ev[i].delta;
        if (i + 1 == k || ev[i + 1].device_id != ev[i].device_id || running <= 0)
            continue;
        uint64_t dt = ev[i + 1].t_ns - ev[i].t_ns;
        if (held < sm_count)
            empty += (double)dt * (1.0 - (double)held / sm_count);
    }
    free(ev);
    return empty;
}

/* Copies, memory-bound chains, SIMT and misaligned GEMMs, decode-shaped matrix products and
 * under-filled grids in the window, per step. A GEMV, or a GEMM tiled for a few tokens, is not
 * counted as a GEMM (a CUTLASS Gemv's namespace says gemm): it is memory-bound by nature,
 * whatever units it runs on. */
static int work_figures(const uf_doctor_work *w, uf_diagnosis *d)
{
    const uf_dtrace *t = w->t;
    size_t n = t->n_acts;
    uf_interval *h2d = malloc((n + 1) * sizeof *h2d), *kern = malloc((n + 1) * sizeof *kern);
    uf_interval *cls[N_CLS] = {NULL};
    size_t n_cls[N_CLS] = {0};
    size_t *order = malloc((n + 1) * sizeof *order);
    int rc = -1;
    if (h2d == NULL || kern == NULL || order == NULL)
        goto out_free;
    for (int c = 0; c < N_CLS; c++)
        if ((cls[c] = malloc((n + 1) * sizeof *cls[c])) == NULL)
            goto out_free;
    size_t n_h2d = 0, n_kern = 0, n_order = 0;
    for (size_t i = 0; i < n; i++) {
        const uf_activity *a = &t->acts[i];
        if (w->step_of[i] < 0)
            continue;
        uf_interval iv = {a->start_ns, a->end_ns};
        if (uf_copy_direction(a) == UF_COPY_HTOD) {
            /* the part of a copy inside the steady window: one launched in a step may start
             * before it or run past it (a copy of 30 ms from t = 0, by the trace fuzzer, made
             * starved_input's share pass 100 %) */
            uf_interval in = {a->start_ns > w->dev_begin ? a->start_ns : w->dev_begin,
                              a->end_ns < w->dev_end ? a->end_ns : w->dev_end};
            if (in.end_ns > in.start_ns)
                h2d[n_h2d++] = in;
        }
        if (a->kind != UF_ACT_KERNEL)
            continue;
        kern[n_kern++] = iv;
        order[n_order++] = i;
        if (uf_doctor_is_decode_matmul(a->name)) {
            /* decode streams a weight matrix whose grid spans the GPU; a skinny tile over a
             * grid that leaves most SMs idle is a small matrix (low_sm_fill's: a larger batch) */
            int spans = t->sm_count <= 0 || a->blocks == 0 ||
                        (double)a->blocks >= UF_DOCTOR_DECODE_MIN_FILL * t->sm_count;
            if (spans)
                cls[CLS_GEMV][n_cls[CLS_GEMV]++] = iv;
        } else if (uf_doctor_is_gemm(a->name)) {
            int c = uf_doctor_is_cuda_core_gemm(a->name) ? CLS_SIMT
                    : !uf_doctor_is_tensor_core(a->name)  ? CLS_UNKNOWN
                    : uf_doctor_is_misaligned(a->name)    ? CLS_MISALIGNED
                                                          : CLS_TC;
            cls[c][n_cls[c]++] = iv;
        }
    }
    if (sort_by_launch(w, order, n_order) != 0 ||
        chain_figures(w, order, n_order, cls[CLS_CHAIN], &n_cls[CLS_CHAIN], d) != 0)
        goto out_free;
    double steps = w->n_steps, ms[N_CLS];
    for (int c = 0; c < N_CLS; c++)
        ms[c] = (double)uf_interval_union_ns(cls[c], n_cls[c]) / 1e6 / steps;
    uint64_t h2d_ns = uf_interval_union_ns(h2d, n_h2d);
    uint64_t hidden_ns = uf_interval_overlap_ns(h2d, n_h2d, kern, n_kern);
    /* simt_gemm's time spans classes: their union, in kern (done with; the GEMMs are among its
     * kernels), so that a SIMT and a misaligned GEMM at once count once */
    static const int gemm_classes[] = {CLS_SIMT, CLS_MISALIGNED, CLS_TC, CLS_UNKNOWN};
    d->simt_any_ms = (double)classes_union_ns(cls, n_cls, gemm_classes, 2, kern) / 1e6 / steps;
    d->gemm_any_ms = (double)classes_union_ns(cls, n_cls, gemm_classes, 4, kern) / 1e6 / steps;
    d->h2d_exposed_ms = (double)(h2d_ns - hidden_ns) / 1e6 / steps;
    d->elementwise_ms = ms[CLS_CHAIN];
    d->simt_gemm_ms = ms[CLS_SIMT];
    d->tc_gemm_ms = ms[CLS_TC];
    d->unknown_gemm_ms = ms[CLS_UNKNOWN];
    d->misaligned_gemm_ms = ms[CLS_MISALIGNED];
    d->gemv_ms = ms[CLS_GEMV];
    d->gemv_per_step = (double)n_cls[CLS_GEMV] / steps;
    double under_ns = empty_sm_ns(w, t->sm_count);
    if (under_ns < 0.0)
        goto out_free;
    d->underfilled_ms = under_ns / 1e6 / steps;
    rc = 0;
out_free:
    for (int c = 0; c < N_CLS; c++)
        free(cls[c]);
    free(h2d);
    free(kern);
    free(order);
    return rc;
}

/* The host's cost per launch and the host-to-device copies' rates in the window, which
 * uf_doctor_compare holds against the ceilings: the median duration of the call that launched
 * each kernel (the timeline's match by correlation id, runtime record preferred: cudaLaunchKernel*,
 * or cuLaunchKernel* for a kernel launched through the driver), graph nodes left out (one
 * cudaGraphLaunch launches many: its call is no cost per launch); and, by host memory (pinned,
 * pageable), the copies' bytes over their records' time (for pageable copies the DMA of data
 * already staged, not the host's staging). 0, or -1 out of memory. */
static int host_cost_figures(const uf_doctor_work *w, uf_diagnosis *d)
{
    const uf_dtrace *t = w->t;
    double *call_us = malloc((t->n_acts + 1) * sizeof *call_us);
    double bytes[UF_N_H2D] = {0, 0}, ns[UF_N_H2D] = {0, 0};
    if (call_us == NULL)
        return -1;
    int n = 0;
    for (size_t i = 0; i < t->n_acts; i++) {
        const uf_activity *a = &t->acts[i];
        if (w->step_of[i] < 0)
            continue;
        if (a->kind == UF_ACT_KERNEL && a->graph_id != 0)
            d->n_graph_kernels++;
        else if (a->kind == UF_ACT_KERNEL && w->launch_end[i] > w->launch_ns[i])
            call_us[n++] = (double)(w->launch_end[i] - w->launch_ns[i]) / 1e3;
        if (uf_copy_direction(a) != UF_COPY_HTOD || a->bytes == 0 || a->end_ns <= a->start_ns)
            continue;
        int k = a->src_mem == UF_MEM_PAGEABLE ? UF_H2D_PAGEABLE : UF_H2D_PINNED;
        bytes[k] += (double)a->bytes;
        ns[k] += (double)(a->end_ns - a->start_ns);
        d->n_h2d[k]++;
    }
    d->n_launch_calls = n;
    d->launch_call_us = uf_median(call_us, n);
    free(call_us);
    for (int k = 0; k < UF_N_H2D; k++) {
        d->h2d_gbs[k] = d->n_h2d[k] > 0 ? bytes[k] / ns[k] : NAN;
        d->h2d_mean_bytes[k] = d->n_h2d[k] > 0 ? bytes[k] / d->n_h2d[k] : NAN;
    }
    return n > 0 && isnan(d->launch_call_us) ? -1 : 0;    /* the median's own allocation */
}


int uf_doctor_pass_kernels(const uf_doctor_work *w, uf_diagnosis *d)
{
    return work_figures(w, d) != 0 || host_cost_figures(w, d) != 0 ? -1 : 0;
}

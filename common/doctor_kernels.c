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
enum { CLS_SIMT, CLS_TC, CLS_MISALIGNED, CLS_CHAIN, CLS_GEMV, N_CLS };

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

/* Copies, elementwise chains, SIMT and misaligned GEMMs, decode-shaped matrix products and
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
    double under_ns = 0;
    for (size_t i = 0; i < n; i++) {
        const uf_activity *a = &t->acts[i];
        if (w->step_of[i] < 0)
            continue;
        uf_interval iv = {a->start_ns, a->end_ns};
        double dur = a->end_ns > a->start_ns ? (double)(a->end_ns - a->start_ns) : 0.0;
        if (uf_copy_direction(a) == UF_COPY_HTOD)
            h2d[n_h2d++] = iv;
        if (a->kind != UF_ACT_KERNEL)
            continue;
        kern[n_kern++] = iv;
        order[n_order++] = i;
        if (uf_doctor_is_decode_matmul(a->name)) {
            cls[CLS_GEMV][n_cls[CLS_GEMV]++] = iv;
        } else if (uf_doctor_is_gemm(a->name)) {
            int c = !uf_doctor_is_tensor_core(a->name)  ? CLS_SIMT
                    : uf_doctor_is_misaligned(a->name) ? CLS_MISALIGNED
                                                        : CLS_TC;
            cls[c][n_cls[c]++] = iv;
        }
        if (!a->is_comm && t->sm_count > 0 && a->blocks > 0 && a->blocks < (uint32_t)t->sm_count)
            under_ns += dur * (1.0 - (double)a->blocks / t->sm_count);
    }
    /* Elementwise chains: runs of consecutive elementwise kernels in launch order within one
     * step (a fused kernel once a step is no chain, however many steps follow each other). The
     * window's kernels are in trace order: sort them by launch. A run's kernels are
     * order[first .. first + run - 1]. */
    if (sort_by_launch(w, order, n_order) != 0)
        goto out_free;
    size_t run = 0, first = 0;
    int run_step = -1;
    for (size_t i = 0; i <= n_order; i++) {
        const uf_activity *a = i < n_order ? &t->acts[order[i]] : NULL;
        int step = a != NULL ? w->step_of[order[i]] : -1;
        int elementwise = a != NULL && uf_doctor_is_elementwise(a->name);
        if (elementwise && (run == 0 || step == run_step)) {
            if (run == 0)
                first = i;
            run_step = step;
            run++;
            continue;
        }
        if (run >= UF_DOCTOR_CHAIN_MIN)
            for (size_t k = first; k < first + run; k++) {
                const uf_activity *m = &t->acts[order[k]];
                cls[CLS_CHAIN][n_cls[CLS_CHAIN]++] = (uf_interval){m->start_ns, m->end_ns};
            }
        run = 0;
        if (elementwise) {   /* the first of the next step */
            run = 1;
            first = i;
            run_step = step;
        }
    }
    double steps = w->n_steps, ms[N_CLS];
    for (int c = 0; c < N_CLS; c++)
        ms[c] = (double)uf_interval_union_ns(cls[c], n_cls[c]) / 1e6 / steps;
    uint64_t h2d_ns = uf_interval_union_ns(h2d, n_h2d);
    uint64_t hidden_ns = uf_interval_overlap_ns(h2d, n_h2d, kern, n_kern);
    /* simt_gemm's time spans classes: their union, in kern (done with; the GEMMs are among its
     * kernels), so that a SIMT and a misaligned GEMM at once count once */
    static const int gemm_classes[] = {CLS_SIMT, CLS_MISALIGNED, CLS_TC};
    d->simt_any_ms = (double)classes_union_ns(cls, n_cls, gemm_classes, 2, kern) / 1e6 / steps;
    d->gemm_any_ms = (double)classes_union_ns(cls, n_cls, gemm_classes, 3, kern) / 1e6 / steps;
    d->h2d_exposed_ms = (double)(h2d_ns - hidden_ns) / 1e6 / steps;
    d->elementwise_ms = ms[CLS_CHAIN];
    d->simt_gemm_ms = ms[CLS_SIMT];
    d->tc_gemm_ms = ms[CLS_TC];
    d->misaligned_gemm_ms = ms[CLS_MISALIGNED];
    d->gemv_ms = ms[CLS_GEMV];
    d->gemv_per_step = (double)n_cls[CLS_GEMV] / steps;
    /* an estimate of SM time left empty: kernels that overlap share SMs, so this may count
     * some empty SMs twice; it is a share of kernel time, not of the step's union */
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

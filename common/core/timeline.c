/* Timeline analysis over plain records (docs/metrics.md):
 *
 * - The analysed activities are those of the chosen device whose launch counts as measured
 *   (uf_timeline_analyze's comment in timeline.h). The window is [earliest start, latest end]
 *   of those activities.
 * - busy_pct: |union of their intervals| / window.
 * - Idle gaps are the holes between the merged busy intervals. A gap is host wait when an
 *   activity starting at the gap's end was launched by an API call (same correlation id; the
 *   runtime record preferred over the driver one) that had not yet returned when the gap
 *   began: the work was not yet submitted, so the device ran dry waiting for the host. (This
 *   departs from HTA's "started after": in a launch storm the CPU enters the next launch
 *   call while the previous tiny kernel still runs, but the call takes longer than the kernel,
 *   so the device idles with the call still in flight — host-bound, yet "started before".)
 *   Otherwise (the call had returned: the work was queued; no call matched; or the activity
 *   is a later node of a graph whose single launch returned before the gap) the gap counts as
 *   other idle time. idle_other_pct = 100 − busy − host.
 * - launch_us: per correlation id with kernels and an API record, earliest kernel start − API
 *   start; the median over ids.
 * - Communication: kernels flagged is_comm against compute kernels (all other kernels; memcpy
 *   and memset are neither).
 * - Copies: |union(memcpy) ∩ union(all kernels)| / |union(memcpy)|, the share of copy time
 *   hidden under kernels (copy/compute overlap).
 * - comm_sm_pct: a sweep over the kernels' start and end events, per device in time order.
 *   Between two consecutive events the set of running kernels is fixed; each such segment
 *   where a comm kernel runs weighs min(sm_count, Σ blocks of the running kernels) / sm_count
 *   by its length. The total weight is |union(comm)| (per device, summed over devices). Blocks
 *   are resident blocks at best: a block may be stalled, and a grid larger than the GPU runs in
 *   waves, so this is an upper bound of the SMs that are active, not a sampled counter.
 *
 * - Host calls (syncs, pageable copies, drains, the gap after a drain) count in the step
 *   window [first step's begin, steps_enqueued_ns): the caller's own closing wait after the
 *   steps is no step's. A drain is found with the activities sorted by launch time and a
 *   running maximum of their ends: t_last(C) is that maximum over the launches before C.start.
 *
 * Correlation lookups sort once and binary-search, so 100k-record passes stay O(n log n). */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int uf_is_comm_kernel(const char *name)
{
    return name && (strstr(name, "ncclDevKernel_") || strstr(name, "ncclSymkDevKernel_"));
}

uint32_t uf_grid_blocks(int32_t x, int32_t y, int32_t z)
{
    if (x <= 0 || y <= 0 || z <= 0)
        return 0;
    uint64_t n = (uint64_t)x * (uint64_t)y;   /* < 2^62: no overflow */
    if (n > UINT32_MAX)
        return UINT32_MAX;
    n *= (uint64_t)z;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* ---- intervals ------------------------------------------------------------------------- */

static int cmp_interval(const void *pa, const void *pb)
{
    const uf_interval *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

/* Next merged interval of a sorted array from *i on, skipping empty ones. 0 when none is left. */
static int next_merged(const uf_interval *iv, size_t n, size_t *i, uf_interval *out)
{
    while (*i < n && iv[*i].end_ns <= iv[*i].start_ns)
        (*i)++;
    if (*i >= n)
        return 0;
    *out = iv[(*i)++];
    while (*i < n && iv[*i].start_ns <= out->end_ns) {
        if (iv[*i].end_ns > out->end_ns)
            out->end_ns = iv[*i].end_ns;
        (*i)++;
    }
    return 1;
}

uint64_t uf_interval_union_ns(uf_interval *iv, size_t n)
{
    if (iv == NULL || n == 0)
        return 0;
    qsort(iv, n, sizeof *iv, cmp_interval);
    uint64_t total = 0;
    size_t i = 0;
    uf_interval m;
    while (next_merged(iv, n, &i, &m))
        total += m.end_ns - m.start_ns;
    return total;
}

uint64_t uf_interval_overlap_ns(uf_interval *a, size_t na, uf_interval *b, size_t nb)
{
    if (a == NULL || b == NULL || na == 0 || nb == 0)
        return 0;
    qsort(a, na, sizeof *a, cmp_interval);
    qsort(b, nb, sizeof *b, cmp_interval);
    size_t ia = 0, ib = 0;
    uf_interval ma, mb;
    int has_a = next_merged(a, na, &ia, &ma);
    int has_b = next_merged(b, nb, &ib, &mb);
    uint64_t total = 0;
    while (has_a && has_b) {
        uint64_t lo = ma.start_ns > mb.start_ns ? ma.start_ns : mb.start_ns;
        uint64_t hi = ma.end_ns < mb.end_ns ? ma.end_ns : mb.end_ns;
        if (hi > lo)
            total += hi - lo;
        /* Advance whichever merged interval ends first. */
        if (ma.end_ns <= mb.end_ns)
            has_a = next_merged(a, na, &ia, &ma);
        else
            has_b = next_merged(b, nb, &ib, &mb);
    }
    return total;
}

/* ---- API lookup by correlation id ------------------------------------------------------- */

typedef struct api_key {
    uint32_t correlation_id;
    uint8_t is_runtime;
    uint64_t start_ns, end_ns;
    size_t index;               /* the call's index in the records given */
} api_key;

/* By correlation id, the runtime record first, then the earliest. */
static int cmp_api_key(const void *pa, const void *pb)
{
    const api_key *a = pa, *b = pb;
    if (a->correlation_id != b->correlation_id)
        return a->correlation_id < b->correlation_id ? -1 : 1;
    if (a->is_runtime != b->is_runtime)
        return a->is_runtime > b->is_runtime ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

typedef struct api_index {
    api_key *keys;
    size_t n;
} api_index;

static int api_index_build(api_index *ix, const uf_api_call *apis, size_t n)
{
    ix->keys = NULL;
    ix->n = 0;
    if (apis == NULL || n == 0)
        return 0;
    ix->keys = malloc(n * sizeof *ix->keys);
    if (ix->keys == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        ix->keys[i].correlation_id = apis[i].correlation_id;
        ix->keys[i].is_runtime = apis[i].is_runtime ? 1 : 0;
        ix->keys[i].start_ns = apis[i].start_ns;
        ix->keys[i].end_ns = apis[i].end_ns;
        ix->keys[i].index = i;
    }
    qsort(ix->keys, n, sizeof *ix->keys, cmp_api_key);
    ix->n = n;
    return 0;
}

/* The launching call of a correlation id (runtime preferred), or NULL. */
static const api_key *api_find(const api_index *ix, uint32_t correlation_id)
{
    size_t lo = 0, hi = ix->n;   /* first key with id >= correlation_id */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->keys[mid].correlation_id < correlation_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ix->n && ix->keys[lo].correlation_id == correlation_id)
        return &ix->keys[lo];
    return NULL;
}

/* The activity's launch: its launching call's start (*k that call), or its own start when it
 * has none (*k NULL). */
static uint64_t launch_of(const api_index *ix, const uf_activity *a, const api_key **k)
{
    *k = api_find(ix, a->correlation_id);
    return *k != NULL ? (*k)->start_ns : a->start_ns;
}

/* Is the activity on the analysed device (any, with device_id -1)? */
static int on_device(const uf_timeline *tl, const uf_activity *a)
{
    return tl->device_id < 0 || a->device_id == (uint32_t)tl->device_id;
}

/* The activity's end, never before its start. */
static uint64_t end_of(const uf_activity *a)
{
    return a->end_ns > a->start_ns ? a->end_ns : a->start_ns;
}

/* ---- the analysis ----------------------------------------------------------------------- */

/* One counted activity with the start and end of its launching call (has_api 0: none). */
typedef struct counted_act {
    uint64_t start_ns, end_ns;
    uint64_t api_start_ns, api_end_ns;
    uint32_t correlation_id;
    uint32_t device_id;
    uint32_t blocks;            /* kernels: grid size, 0 unknown */
    uint8_t kind, is_comm, has_api;
    uint8_t pageable;           /* a memcpy from or to pageable host memory */
} counted_act;

static int cmp_counted_start(const void *pa, const void *pb)
{
    const counted_act *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

static int cmp_counted_corr(const void *pa, const void *pb)
{
    const counted_act *a = pa, *b = pb;
    if (a->correlation_id != b->correlation_id)
        return a->correlation_id < b->correlation_id ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static void metrics_nan(uf_timeline_metrics *m)
{
    m->window_ms = m->busy_pct = m->kernels_per_step = m->kernel_us_mean = NAN;
    m->launch_us = m->idle_host_pct = m->idle_other_pct = NAN;
    m->comm_ms_per_step = m->comm_overlap_pct = m->comm_exposed_ms = m->comm_sm_pct = NAN;
    m->copy_ms_per_step = m->copy_overlap_pct = NAN;
    m->syncs_per_step = m->stream_syncs_per_step = m->context_syncs_per_step = NAN;
    m->event_syncs_per_step = m->pageable_copies_per_step = m->drains_per_step = NAN;
    m->sync_gap_us = NAN;
    m->n_activities = 0;
}

/* An activity counts when its launch (the API call, or itself without one) is at or after
 * measure_begin_ns and, when measure_end_ns is set after it, not after measure_end_ns. */
static int launch_is_measured(const uf_timeline *tl, uint64_t launch_ns)
{
    if (launch_ns < tl->measure_begin_ns)
        return 0;
    if (tl->measure_end_ns > tl->measure_begin_ns && launch_ns > tl->measure_end_ns)
        return 0;
    return 1;
}

/* The activities of the analysed device that count, with their launch call. */
static size_t collect_counted(const uf_timeline *tl, const api_index *ix, counted_act *out)
{
    size_t n = 0;
    for (size_t i = 0; i < tl->n_acts; i++) {
        const uf_activity *a = &tl->acts[i];
        const api_key *k;
        if (!on_device(tl, a) || !launch_is_measured(tl, launch_of(ix, a, &k)))
            continue;
        counted_act *c = &out[n++];
        c->start_ns = a->start_ns;
        c->end_ns = end_of(a);
        c->api_start_ns = k != NULL ? k->start_ns : 0;
        c->api_end_ns = k != NULL ? k->end_ns : 0;
        c->has_api = k != NULL;
        c->correlation_id = a->correlation_id;
        c->device_id = a->device_id;
        c->blocks = a->kind == UF_ACT_KERNEL ? a->blocks : 0;
        c->kind = a->kind;
        c->is_comm = a->is_comm ? 1 : 0;
        c->pageable = (uint8_t)uf_copy_pageable(a);
    }
    return n;
}

/* The next merged busy interval [*lo, *hi] of activities sorted by start, from *i on, and the
 * idle gap after it (gap->end_ns == gap->start_ns when none follows). The gap is host wait
 * when some activity starting at its end was launched by a call that had not returned when
 * the gap began. Returns 0 when no activity is left. */
static int next_busy(const counted_act *c, size_t n, size_t *i, uint64_t *lo, uint64_t *hi,
                     uf_gap *gap)
{
    if (*i >= n)
        return 0;
    *lo = c[*i].start_ns;
    *hi = c[*i].end_ns;
    for ((*i)++; *i < n && c[*i].start_ns <= *hi; (*i)++)
        if (c[*i].end_ns > *hi)
            *hi = c[*i].end_ns;
    memset(gap, 0, sizeof *gap);
    gap->start_ns = gap->end_ns = *hi;
    if (*i >= n)
        return 1;
    gap->end_ns = c[*i].start_ns;
    for (size_t j = *i; j < n && c[j].start_ns == gap->end_ns; j++) {
        if (c[j].has_api && (gap->next_launch_ns == 0 || c[j].api_start_ns < gap->next_launch_ns))
            gap->next_launch_ns = c[j].api_start_ns;
        if (c[j].has_api && c[j].api_end_ns > *hi)
            gap->host_wait = 1;
    }
    return 1;
}

/* Busy time and host-wait idle time over activities sorted by start. */
static void busy_and_host_wait(const counted_act *c, size_t n, uint64_t *busy_ns,
                               uint64_t *host_ns)
{
    *busy_ns = 0;
    *host_ns = 0;
    size_t i = 0;
    uint64_t lo, hi;
    uf_gap gap;
    while (next_busy(c, n, &i, &lo, &hi, &gap)) {
        *busy_ns += hi - lo;
        if (gap.host_wait)
            *host_ns += gap.end_ns - gap.start_ns;
    }
}

/* Median over correlation ids of (earliest kernel start − launch call start), in µs. Sorts c
 * by correlation id. */
static double launch_median_us(counted_act *c, size_t n)
{
    qsort(c, n, sizeof *c, cmp_counted_corr);
    double *lat_us = malloc((n > 0 ? n : 1) * sizeof *lat_us);
    if (lat_us == NULL)
        return NAN;
    int m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        const counted_act *first_kernel = NULL;
        for (; j < n && c[j].correlation_id == c[i].correlation_id; j++)
            if (first_kernel == NULL && c[j].kind == UF_ACT_KERNEL)
                first_kernel = &c[j];   /* sorted by start within the id */
        if (first_kernel != NULL && first_kernel->has_api)
            lat_us[m++] = ((double)first_kernel->start_ns - (double)first_kernel->api_start_ns)
                          / 1e3;
        i = j;
    }
    double med = uf_median(lat_us, m);
    free(lat_us);
    return med;
}

/* Kernel counts and mean duration, and the communication/compute unions. */
static int kernel_metrics(const counted_act *c, size_t n, double steps,
                          uf_timeline_metrics *out)
{
    uf_interval *comm = malloc((n > 0 ? n : 1) * sizeof *comm);
    uf_interval *compute = malloc((n > 0 ? n : 1) * sizeof *compute);
    uf_interval *copies = malloc((n > 0 ? n : 1) * sizeof *copies);
    uf_interval *kernels = malloc((n > 0 ? n : 1) * sizeof *kernels);
    if (comm == NULL || compute == NULL || copies == NULL || kernels == NULL) {
        free(comm);
        free(compute);
        free(copies);
        free(kernels);
        return -1;
    }
    size_t n_comm = 0, n_compute = 0, n_kernels = 0, n_copies = 0;
    double kernel_ns_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        uf_interval iv = {c[i].start_ns, c[i].end_ns};
        if (c[i].kind == UF_ACT_MEMCPY)
            copies[n_copies++] = iv;
        if (c[i].kind != UF_ACT_KERNEL)
            continue;
        kernels[n_kernels++] = iv;
        kernel_ns_sum += (double)(c[i].end_ns - c[i].start_ns);
        if (c[i].is_comm)
            comm[n_comm++] = iv;
        else
            compute[n_compute++] = iv;
    }
    uint64_t copy_ns = uf_interval_union_ns(copies, n_copies);
    out->copy_ms_per_step = (double)copy_ns / 1e6 / steps;
    out->copy_overlap_pct =
        copy_ns > 0 ? (double)uf_interval_overlap_ns(copies, n_copies, kernels, n_kernels) /
                          (double)copy_ns * 100.0
                    : NAN;
    free(copies);
    free(kernels);
    out->kernels_per_step = (double)n_kernels / steps;
    out->kernel_us_mean = n_kernels > 0 ? kernel_ns_sum / (double)n_kernels / 1e3 : NAN;
    uint64_t comm_ns = uf_interval_union_ns(comm, n_comm);
    out->comm_ms_per_step = (double)comm_ns / 1e6 / steps;
    if (comm_ns > 0) {
        uint64_t ov_ns = uf_interval_overlap_ns(comm, n_comm, compute, n_compute);
        out->comm_overlap_pct = (double)ov_ns / (double)comm_ns * 100.0;
        out->comm_exposed_ms = (double)(comm_ns - ov_ns) / 1e6 / steps;
    } else {
        out->comm_overlap_pct = NAN;
        out->comm_exposed_ms = NAN;
    }
    free(comm);
    free(compute);
    return 0;
}

/* A kernel starting (+1) or ending (−1) on a device: the sweep's events. */
typedef struct sweep_event {
    uint64_t t_ns;
    uint32_t device_id;
    uint32_t blocks;            /* 0 unknown */
    int8_t delta;               /* +1 start, −1 end */
    uint8_t is_comm;
} sweep_event;

/* By device, then time. The order of events at one instant does not matter: a segment is
 * measured from one event to the next, so only the state after the instant's last event is
 * held for a nonzero time. */
static int cmp_sweep_event(const void *pa, const void *pb)
{
    const sweep_event *a = pa, *b = pb;
    if (a->device_id != b->device_id)
        return a->device_id < b->device_id ? -1 : 1;
    return (a->t_ns > b->t_ns) - (a->t_ns < b->t_ns);
}

/* comm_sm_pct (timeline.h): the share of SMs holding at least one block while communication
 * runs. *pct is NaN without comm time, without sm_count, or when a kernel of unknown grid size
 * runs during communication. Returns 0, or -1 when out of memory. */
static int comm_sm_share(const counted_act *c, size_t n, int sm_count, double *pct)
{
    *pct = NAN;
    if (sm_count <= 0)
        return 0;
    size_t n_ev = 0, n_comm = 0;
    for (size_t i = 0; i < n; i++) {
        n_ev += c[i].kind == UF_ACT_KERNEL ? 2 : 0;
        n_comm += c[i].kind == UF_ACT_KERNEL && c[i].is_comm;
    }
    if (n_comm == 0)
        return 0;
    sweep_event *ev = malloc(n_ev * sizeof *ev);
    if (ev == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].kind != UF_ACT_KERNEL)
            continue;
        sweep_event e = {c[i].start_ns, c[i].device_id, c[i].blocks, +1, c[i].is_comm};
        ev[k++] = e;
        e.t_ns = c[i].end_ns;
        e.delta = -1;
        ev[k++] = e;
    }
    qsort(ev, n_ev, sizeof *ev, cmp_sweep_event);

    /* The running kernels of the current device: their blocks, how many are comm, how many
     * have an unknown size. Every start has its end on the same device, so all three are back
     * to 0 when the sweep moves on to the next device. */
    int64_t blocks = 0, comm_running = 0, unknown_running = 0;
    uint64_t comm_ns = 0;
    double held_ns = 0.0;   /* Σ segment length × share of SMs held */
    int unknown = 0;
    for (size_t i = 0; i < n_ev; i++) {
        blocks += ev[i].delta * (int64_t)ev[i].blocks;
        comm_running += ev[i].is_comm ? ev[i].delta : 0;
        unknown_running += ev[i].blocks == 0 ? ev[i].delta : 0;
        if (i + 1 == n_ev || ev[i + 1].device_id != ev[i].device_id || comm_running <= 0)
            continue;
        uint64_t dt = ev[i + 1].t_ns - ev[i].t_ns;
        if (dt == 0)
            continue;
        if (unknown_running > 0)
            unknown = 1;
        int64_t held = blocks < sm_count ? blocks : sm_count;
        held_ns += (double)held / (double)sm_count * (double)dt;
        comm_ns += dt;
    }
    free(ev);
    if (comm_ns > 0 && !unknown)
        *pct = held_ns / (double)comm_ns * 100.0;
    return 0;
}

/* ---- host calls in the step window ------------------------------------------------------ */

int uf_api_name_has_prefix(const char *name, const char *const *prefixes)
{
    for (int i = 0; name != NULL && prefixes[i] != NULL; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

int uf_api_never_waits(const char *name)
{
    /* launches, error queries, and the two event calls that queue work without waiting for
     * it (cudaStreamWaitEvent makes a stream wait, not the host) */
    static const char *const prefixes[] = {"cudaLaunch", "cudaGraphLaunch", "cudaGetLastError",
                                           "cudaPeekAtLastError", "cudaEventRecord",
                                           "cudaStreamWaitEvent", NULL};
    return uf_api_name_has_prefix(name, prefixes);
}

int uf_api_is_query(const char *name)
{
    static const char *const queries[] = {"cudaEventQuery", "cudaStreamQuery", "cuEventQuery",
                                          "cuStreamQuery", NULL};
    return uf_api_name_has_prefix(name, queries);
}

/* The device's activities as three sorted views: (launch time, end) pairs by launch time with
 * the running maximum of the ends, and all starts and all ends ascending. */
typedef struct device_views {
    uint64_t *launch, *max_end;     /* n entries, by launch */
    uint64_t *starts, *ends;        /* n entries each, ascending */
    size_t n;
} device_views;

typedef struct launch_end {
    uint64_t launch_ns, end_ns;
} launch_end;

static int cmp_launch_end(const void *pa, const void *pb)
{
    const launch_end *a = pa, *b = pb;
    return (a->launch_ns > b->launch_ns) - (a->launch_ns < b->launch_ns);
}

static void device_views_free(device_views *v)
{
    free(v->launch);
    free(v->max_end);
    free(v->starts);
    free(v->ends);
}

/* Every activity of the analysed device (measured or not: work queued before the steps can
 * still run into them), launched at its API call's start, or at its own start without one. */
static int device_views_build(const uf_timeline *tl, const api_index *ix, device_views *v)
{
    size_t cap = tl->n_acts > 0 ? tl->n_acts : 1, n = 0;
    launch_end *le = malloc(cap * sizeof *le);
    v->launch = malloc(cap * sizeof *v->launch);
    v->max_end = malloc(cap * sizeof *v->max_end);
    v->starts = malloc(cap * sizeof *v->starts);
    v->ends = malloc(cap * sizeof *v->ends);
    if (le == NULL || v->launch == NULL || v->max_end == NULL || v->starts == NULL ||
        v->ends == NULL) {
        free(le);
        device_views_free(v);
        return -1;
    }
    for (size_t i = 0; i < tl->n_acts; i++) {
        const uf_activity *a = &tl->acts[i];
        const api_key *k;
        if (!on_device(tl, a))
            continue;
        le[n] = (launch_end){launch_of(ix, a, &k), end_of(a)};
        v->starts[n] = a->start_ns;
        v->ends[n] = le[n].end_ns;
        n++;
    }
    qsort(le, n, sizeof *le, cmp_launch_end);
    qsort(v->starts, n, sizeof *v->starts, uf_cmp_u64);
    qsort(v->ends, n, sizeof *v->ends, uf_cmp_u64);
    for (size_t i = 0; i < n; i++) {
        v->launch[i] = le[i].launch_ns;
        v->max_end[i] = i > 0 && v->max_end[i - 1] > le[i].end_ns ? v->max_end[i - 1] : le[i].end_ns;
    }
    v->n = n;
    free(le);
    return 0;
}

/* How many of the ascending a[0..n) are < t (or <= t with or_equal). */
static size_t count_below(const uint64_t *a, size_t n, uint64_t t, int or_equal)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < t || (or_equal && a[mid] == t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Is call [c0, c1] a drain (timeline.h, drains_per_step)? */
static int is_drain(const device_views *v, uint64_t c0, uint64_t c1)
{
    size_t before = count_below(v->launch, v->n, c0, 0);
    if (before == 0)
        return 0;
    uint64_t t_last = v->max_end[before - 1];
    return c0 < t_last && t_last <= c1;
}

/* The device idle gap around t: first start >= t minus last end <= t; 0 when no activity
 * starts after t or none ended before it (no gap to measure). */
static int gap_around(const device_views *v, uint64_t t, uint64_t *gap_ns)
{
    size_t ended = count_below(v->ends, v->n, t, 1);
    size_t not_started = count_below(v->starts, v->n, t, 0);
    if (ended == 0 || not_started == v->n)
        return 0;
    uint64_t last_end = v->ends[ended - 1], next_start = v->starts[not_started];
    *gap_ns = next_start > last_end ? next_start - last_end : 0;
    return 1;
}

/* The step window of the host-call metrics: [first step's begin, steps_enqueued_ns). */
static void host_call_window(const uf_timeline *tl, uint64_t *w0, uint64_t *w1)
{
    *w0 = tl->step_begin_ns != NULL ? tl->step_begin_ns[0] : tl->measure_begin_ns;
    *w1 = tl->steps_enqueued_ns;
}

/* The calls drains_per_step weighs: runtime calls that may wait (not uf_api_never_waits). */
static int runtime_may_wait(const uf_api_call *a)
{
    return a->is_runtime && !uf_api_never_waits(a->name);
}

/* The drains of the step window (timeline.h, drains_per_step) among the calls `weighs` picks,
 * into out (room for tl->n_apis), each with the device gap around its return. Returns how
 * many, or -1 when out of memory. */
static ptrdiff_t find_drains(const uf_timeline *tl, const api_index *ix,
                             int (*weighs)(const uf_api_call *), uf_drain *out)
{
    uint64_t w0, w1;
    host_call_window(tl, &w0, &w1);
    device_views v;
    if (device_views_build(tl, ix, &v) != 0)
        return -1;
    ptrdiff_t n = 0;
    for (size_t i = 0; tl->apis != NULL && i < tl->n_apis; i++) {
        const uf_api_call *a = &tl->apis[i];
        if (a->start_ns < w0 || a->start_ns >= w1 || !weighs(a) ||
            !is_drain(&v, a->start_ns, a->end_ns))
            continue;
        uf_drain *d = &out[n++];
        *d = (uf_drain){.start_ns = a->start_ns, .end_ns = a->end_ns, .api = i};
        d->has_gap = (uint8_t)gap_around(&v, a->end_ns, &d->gap_ns);
    }
    device_views_free(&v);
    return n;
}

/* The host-call metrics (timeline.h) over the step window; with keep, the drains counted are
 * handed over too (*keep malloc'ed, NULL when none). Returns 0, or -1 when out of memory. */
static int host_call_metrics(const uf_timeline *tl, const api_index *ix, const counted_act *c,
                             size_t n, double steps, uf_timeline_metrics *out, uf_drain **keep,
                             size_t *n_keep)
{
    if (tl->steps_enqueued_ns == 0)
        return 0;
    uint64_t w0, w1;
    host_call_window(tl, &w0, &w1);
    size_t by_kind[5] = {0};
    for (size_t i = 0; tl->syncs != NULL && i < tl->n_syncs; i++) {
        const uf_sync_record *s = &tl->syncs[i];
        const api_key *k = api_find(ix, s->correlation_id);
        if (s->start_ns >= w0 && s->start_ns < w1 && s->kind <= 4 &&
            (k == NULL || !uf_api_is_query(tl->apis[k->index].name)))
            by_kind[s->kind]++;
    }
    out->event_syncs_per_step = (double)by_kind[UF_SYNC_EVENT] / steps;
    out->stream_syncs_per_step = (double)by_kind[UF_SYNC_STREAM] / steps;
    out->context_syncs_per_step = (double)by_kind[UF_SYNC_CONTEXT] / steps;
    out->syncs_per_step = out->event_syncs_per_step + out->stream_syncs_per_step +
                          out->context_syncs_per_step;
    size_t pageable = 0;
    for (size_t i = 0; i < n; i++)
        pageable += c[i].pageable;
    out->pageable_copies_per_step = (double)pageable / steps;

    uf_drain *drains = malloc((tl->n_apis > 0 ? tl->n_apis : 1) * sizeof *drains);
    ptrdiff_t n_drains = drains != NULL ? find_drains(tl, ix, runtime_may_wait, drains) : -1;
    if (n_drains < 0) {
        free(drains);
        return -1;
    }
    size_t gaps = 0;
    double gap_ns_sum = 0.0;
    for (ptrdiff_t i = 0; i < n_drains; i++)
        if (drains[i].has_gap) {
            gap_ns_sum += (double)drains[i].gap_ns;
            gaps++;
        }
    if (keep != NULL && n_drains > 0) {
        *keep = drains;
        *n_keep = (size_t)n_drains;
    } else {
        free(drains);
    }
    out->drains_per_step = (double)n_drains / steps;
    out->sync_gap_us = gaps > 0 ? gap_ns_sum / (double)gaps / 1e3 : NAN;
    return 0;
}

int uf_timeline_drains(const uf_timeline *tl, uf_drain **drains, size_t *n_drains)
{
    return uf_timeline_drains_where(tl, runtime_may_wait, drains, n_drains);
}

int uf_timeline_drains_where(const uf_timeline *tl, int (*weighs)(const uf_api_call *),
                             uf_drain **drains, size_t *n_drains)
{
    *drains = NULL;
    *n_drains = 0;
    if (tl == NULL || tl->steps_enqueued_ns == 0 || tl->apis == NULL || tl->n_apis == 0)
        return 0;
    api_index ix;
    if (api_index_build(&ix, tl->apis, tl->n_apis) != 0)
        return -1;
    uf_drain *out = malloc(tl->n_apis * sizeof *out);
    ptrdiff_t n = out != NULL ? find_drains(tl, &ix, weighs, out) : -1;
    free(ix.keys);
    if (n <= 0) {
        free(out);
        return n < 0 ? -1 : 0;
    }
    *drains = out;
    *n_drains = (size_t)n;
    return 0;
}

int uf_timeline_analyze(const uf_timeline *tl, uf_timeline_metrics *out)
{
    return uf_timeline_analyze_drains(tl, out, NULL, NULL);
}

int uf_timeline_analyze_drains(const uf_timeline *tl, uf_timeline_metrics *out,
                               uf_drain **drains, size_t *n_drains)
{
    if (drains != NULL) {
        *drains = NULL;
        *n_drains = 0;
    }
    metrics_nan(out);
    if (tl == NULL || tl->acts == NULL || tl->n_acts == 0)
        return -1;
    api_index ix;
    if (api_index_build(&ix, tl->apis, tl->n_apis) != 0)
        return -1;
    int rc = -1;
    counted_act *c = malloc(tl->n_acts * sizeof *c);
    if (c == NULL)
        goto out_free_index;
    size_t n = collect_counted(tl, &ix, c);
    if (n == 0)
        goto out_free_counted;

    qsort(c, n, sizeof *c, cmp_counted_start);
    uint64_t first_ns = c[0].start_ns, last_ns = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].end_ns > last_ns)
            last_ns = c[i].end_ns;
    uint64_t window_ns = last_ns - first_ns;
    double steps = tl->n_steps >= 1 ? (double)tl->n_steps : 1.0;

    uint64_t busy_ns, host_ns;
    busy_and_host_wait(c, n, &busy_ns, &host_ns);
    out->n_activities = n;
    out->window_ms = (double)window_ns / 1e6;
    if (window_ns > 0) {
        out->busy_pct = (double)busy_ns / (double)window_ns * 100.0;
        out->idle_host_pct = (double)host_ns / (double)window_ns * 100.0;
        out->idle_other_pct = 100.0 - out->busy_pct - out->idle_host_pct;
        if (out->idle_other_pct < 0.0)
            out->idle_other_pct = 0.0;
    }
    if (kernel_metrics(c, n, steps, out) != 0)
        goto out_free_counted;
    if (comm_sm_share(c, n, tl->sm_count, &out->comm_sm_pct) != 0)
        goto out_free_counted;
    if (host_call_metrics(tl, &ix, c, n, steps, out, drains, n_drains) != 0)
        goto out_free_counted;
    out->launch_us = launch_median_us(c, n);
    rc = 0;

out_free_counted:
    free(c);
out_free_index:
    free(ix.keys);
    if (rc != 0) {
        size_t counted = out->n_activities;
        metrics_nan(out);
        out->n_activities = counted;
    }
    return rc;
}

int uf_timeline_idle_gaps(const uf_timeline *tl, uf_gap **gaps, size_t *n_gaps)
{
    *gaps = NULL;
    *n_gaps = 0;
    if (tl == NULL || tl->acts == NULL || tl->n_acts == 0)
        return 0;
    api_index ix;
    if (api_index_build(&ix, tl->apis, tl->n_apis) != 0)
        return -1;
    int rc = -1;
    counted_act *c = malloc(tl->n_acts * sizeof *c);
    uf_gap *out = malloc(tl->n_acts * sizeof *out);  /* at most one gap per activity */
    if (c == NULL || out == NULL)
        goto out_free;
    size_t n = collect_counted(tl, &ix, c), k = 0, i = 0;
    qsort(c, n, sizeof *c, cmp_counted_start);
    uint64_t lo, hi;
    uf_gap gap;
    while (next_busy(c, n, &i, &lo, &hi, &gap))
        if (gap.end_ns > gap.start_ns)
            out[k++] = gap;
    if (k > 0) {
        *gaps = out;
        *n_gaps = k;
        out = NULL;
    }
    rc = 0;
out_free:
    free(out);
    free(c);
    free(ix.keys);
    return rc;
}

int uf_timeline_launch_calls(const uf_timeline *tl, uint64_t *launch_start_ns,
                             uint64_t *launch_end_ns)
{
    api_index ix;
    if (api_index_build(&ix, tl->apis, tl->n_apis) != 0)
        return -1;
    for (size_t i = 0; i < tl->n_acts; i++) {
        const api_key *k;
        launch_start_ns[i] = launch_of(&ix, &tl->acts[i], &k);
        if (launch_end_ns != NULL)
            launch_end_ns[i] = k != NULL ? k->end_ns : 0;
    }
    free(ix.keys);
    return 0;
}

int uf_timeline_launch_apis(const uf_timeline *tl, size_t *act_api, size_t *sync_api)
{
    api_index ix;
    if (api_index_build(&ix, tl->apis, tl->n_apis) != 0)
        return -1;
    for (size_t i = 0; i < tl->n_acts; i++) {
        const api_key *k = api_find(&ix, tl->acts[i].correlation_id);
        act_api[i] = k != NULL ? k->index : SIZE_MAX;
    }
    for (size_t i = 0; sync_api != NULL && i < tl->n_syncs; i++) {
        const api_key *k = api_find(&ix, tl->syncs[i].correlation_id);
        sync_api[i] = k != NULL ? k->index : SIZE_MAX;
    }
    free(ix.keys);
    return 0;
}

int uf_timeline_step_index(const uint64_t *step_begin_ns, int n_steps, uint64_t t_ns)
{
    if (step_begin_ns == NULL || n_steps <= 0 || t_ns < step_begin_ns[0])
        return -1;
    int lo = 0, hi = n_steps - 1;   /* invariant: step_begin_ns[lo] <= t_ns */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (step_begin_ns[mid] <= t_ns)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Overlap-weighted mean of one metric; NaN values carry no weight. */
typedef struct weighted_mean {
    double sum, weight;
} weighted_mean;

static void wm_add(weighted_mean *w, double value, double weight)
{
    if (isnan(value))
        return;
    w->sum += value * weight;
    w->weight += weight;
}

static double wm_value(const weighted_mean *w)
{
    return w->weight > 0.0 ? w->sum / w->weight : NAN;
}

size_t uf_pm_window_mean(const uf_pm_sample *s, size_t n, uint64_t t0_ns, uint64_t t1_ns,
                         uf_pm_sample *mean)
{
    weighted_mean sm = {0, 0}, occ = {0, 0}, tensor = {0, 0}, dram = {0, 0};
    size_t used = 0;
    for (size_t i = 0; s != NULL && i < n; i++) {
        uint64_t lo = s[i].start_ns > t0_ns ? s[i].start_ns : t0_ns;
        uint64_t hi = s[i].end_ns < t1_ns ? s[i].end_ns : t1_ns;
        if (hi <= lo)
            continue;
        double w = (double)(hi - lo);
        wm_add(&sm, s[i].sm_active_pct, w);
        wm_add(&occ, s[i].occupancy_pct, w);
        wm_add(&tensor, s[i].tensor_active_pct, w);
        wm_add(&dram, s[i].dram_pct, w);
        used++;
    }
    mean->start_ns = t0_ns;
    mean->end_ns = t1_ns;
    mean->sm_active_pct = wm_value(&sm);
    mean->occupancy_pct = wm_value(&occ);
    mean->tensor_active_pct = wm_value(&tensor);
    mean->dram_pct = wm_value(&dram);
    return used;
}

const char *const uf_counter_names[4] = {"SM active", "occupancy", "tensor active", "DRAM"};

void uf_pm_counters(const uf_pm_sample *s, double v[4])
{
    v[0] = s->sm_active_pct;
    v[1] = s->occupancy_pct;
    v[2] = s->tensor_active_pct;
    v[3] = s->dram_pct;
}

double uf_gpm_disagreement(const uf_pm_sample *pm, const uf_pm_sample *gpm, int *worst)
{
    double a[4], b[4], most = NAN;
    uf_pm_counters(pm, a);
    uf_pm_counters(gpm, b);
    *worst = -1;
    for (int i = 0; i < 4; i++) {
        double d = fabs(a[i] - b[i]);
        if (!isnan(d) && (isnan(most) || d > most)) {
            most = d;
            *worst = i;
        }
    }
    return most;
}

double uf_util_window(const uint64_t *ts_us, const double *value, size_t n, uint64_t t0_us,
                      uint64_t t1_us, int *n_used)
{
    double sum = 0.0, weight = 0.0;
    *n_used = 0;
    for (size_t i = 1; i < n; i++) {
        if (ts_us[i] <= ts_us[i - 1] || ts_us[i - 1] < t0_us || ts_us[i] > t1_us)
            continue;
        const double w = (double)(ts_us[i] - ts_us[i - 1]);
        sum += w * value[i];
        weight += w;
        (*n_used)++;
    }
    return *n_used > 0 ? sum / weight : NAN;
}

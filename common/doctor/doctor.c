/* underfed doctor: the analysis of one process's trace, as a row of passes
 * (doctor_internal.h lists them). This file holds passes 1 (index the records), 3 (the
 * steady window) and 6 (the counters), the helpers the recorder shares (which calls may
 * drain, what it could not see), and uf_doctor_analyze, which runs the passes in order. */
#include "doctor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"
#include "errors.h"
#include "stats.h"

/* ---- the calls the recorder keeps ------------------------------------------------------------ */

int uf_doctor_is_event_record(const char *api_name)
{
    return api_name != NULL && strncmp(api_name, "cudaEventRecord", 15) == 0;
}

/* Is name `base` itself, or base with CUPTI's version suffix ("cudaFree_v3020")? */
static int is_call(const char *name, const char *base)
{
    size_t n = strlen(base);
    return strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '_');
}

int uf_doctor_may_drain(const char *api_name)
{
    static const char *const waits[] = {
        "cudaFree", "cudaFreeHost", "cudaFreeArray", "cudaFreeMipmappedArray",
        "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
        "cudaEventSynchronize", "cudaDeviceReset", "cudaStreamDestroy", NULL};
    if (api_name == NULL)
        return 0;
    for (int i = 0; waits[i] != NULL; i++)
        if (is_call(api_name, waits[i]))
            return 1;
    /* every copy (cudaMemcpyAsync waits for a pageable one), the memsets that do not queue */
    return strncmp(api_name, "cudaMemcpy", 10) == 0 ||
           (strncmp(api_name, "cudaMemset", 10) == 0 && strstr(api_name, "Async") == NULL);
}


/* ---- what the recorder could not see --------------------------------------------------------- */

void uf_doctor_refusal_note(char *out, size_t len, int result, const char *result_name,
                            const char *refused, const char *lost)
{
    if (result == UF_CUPTI_MULTIPLE_SUBSCRIBERS)
        snprintf(out, len, "another profiler is attached (nsys, ncu, torch.profiler or a second "
                 "CUPTI injection: CUPTI refused %s, %s); the program runs on, but the doctor "
                 "cannot see %s", refused, result_name, lost);
    else
        snprintf(out, len, "CUPTI refused %s (%s): the doctor cannot see %s", refused,
                 result_name, lost);
}

int uf_doctor_missing_kernels_note(char *out, size_t len, unsigned long recorded,
                                   unsigned long launched, unsigned long graph_launches)
{
    if (graph_launches > 0 || launched == 0 || (double)recorded >= 0.9 * (double)launched)
        return 0;
    snprintf(out, len, "recorded %lu kernels of %lu launched: another CUPTI activity client "
             "(torch.profiler, nsys, ...) took the rest; the doctor cannot see %lu kernels "
             "(%.0f %%), and its shares are of what it saw", recorded, launched,
             launched - recorded, 100.0 * (double)(launched - recorded) / (double)launched);
    return 1;
}


/* ---- pass 1: the records indexed ------------------------------------------------------------- */

/* The first and last timestamps of any record of the process. */
static void record_span(const uf_dtrace *t, uint64_t *first, uint64_t *last)
{
    *first = UINT64_MAX;
    *last = 0;
#define SPAN(arr, n)                                                  \
    for (size_t i = 0; i < (n); i++) {                                \
        if ((arr)[i].start_ns < *first) *first = (arr)[i].start_ns;   \
        if ((arr)[i].end_ns > *last) *last = (arr)[i].end_ns;         \
    }
    SPAN(t->acts, t->n_acts)
    SPAN(t->apis, t->n_apis)
    SPAN(t->syncs, t->n_syncs)
#undef SPAN
}

/* Driver calls that may wait for the device (uf_doctor_may_drain lists the runtime's): the
 * synchronous copies and memsets, the syncs and the frees. */
static int driver_may_wait(const char *name)
{
    static const char *const waits[] = {"cuStreamSynchronize", "cuCtxSynchronize",
                                        "cuEventSynchronize", "cuMemFree", NULL};
    if (strncmp(name, "cuMemcpy", 8) == 0 || strncmp(name, "cuMemset", 8) == 0)
        return strstr(name, "Async") == NULL;
    return uf_api_name_has_prefix(name, waits);
}

int uf_doctor_is_load_call(const char *api_name)
{
    static const char *const loads[] = {"cuModuleLoad", "cuLibraryLoad", "cudaLibraryLoad",
                                        "cuLinkAdd", "cuLinkComplete", "cuLinkCreate", NULL};
    return uf_api_name_has_prefix(api_name, loads);
}

/* Driver calls that queue work or a dependency and return (uf_api_never_waits lists the
 * runtime's): launches of kernels, graphs and host functions, event records, stream waits. */
static int driver_queues(const char *name)
{
    static const char *const queues[] = {"cuLaunch", "cuGraphLaunch", "cuEventRecord",
                                         "cuStreamWaitEvent", NULL};
    return uf_api_name_has_prefix(name, queues);
}

int uf_doctor_is_graph_launch(const char *api_name)
{
    return api_name != NULL && (strncmp(api_name, "cudaGraphLaunch", 15) == 0 ||
                                strncmp(api_name, "cuGraphLaunch", 13) == 0);
}

int uf_doctor_is_alloc_call(const char *api_name)
{
    static const char *const allocs[] = {
        "cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
        "cudaMemPoolTrimTo", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemHostRegister",
        "cuMemHostUnregister", "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap",
        "cuMemSetAccess", "cuMemAddressReserve", "cuMemAddressFree", "cuMemPoolTrimTo", NULL};
    return uf_api_name_has_prefix(api_name, allocs);
}

/* A call that may have waited while the device ran dry: a runtime call other than those that
 * never wait (the calls the timeline's drains_per_step weighs), or a driver call that may
 * wait. */
static int call_may_wait(const uf_api_call *a)
{
    if (a->is_runtime)
        return !uf_api_never_waits(a->name);
    return a->name != NULL && driver_may_wait(a->name);
}

int uf_doctor_is_batch_copy(const uf_activity *a)
{
    return uf_copy_direction(a) == UF_COPY_HTOD &&
           (a->bytes == 0 || a->bytes >= UF_DOCTOR_BATCH_MIN_BYTES);
}

/* The kind of each API record by its name (uf_call_kind), then by what it did: the call of a
 * host-to-device copy record of at least UF_DOCTOR_BATCH_MIN_BYTES (or of unknown size)
 * copies input, a smaller one launches like a kernel; a call that launched a recorded activity
 * without waiting, or made a stream wait, launches; the call of a blocking sync record waits. And
 * what each launched (UF_WORK_*) into work. */
static void call_kinds(const uf_doctor_work *w, uint8_t *kind, uint8_t *work)
{
    const uf_dtrace *t = w->t;
    for (size_t i = 0; i < t->n_apis; i++) {
        const char *name = t->apis[i].name != NULL ? t->apis[i].name : "";
        int waits = t->apis[i].is_runtime ? uf_doctor_may_drain(name) : driver_may_wait(name);
        kind[i] = waits ? UF_CALL_WAIT
                  : uf_api_never_waits(name) || driver_queues(name) ? UF_CALL_LAUNCH
                                                                     : UF_CALL_OTHER;
    }
    memset(work, UF_WORK_NONE, t->n_apis);
    for (size_t i = 0; i < t->n_acts; i++) {
        size_t j = w->act_api[i];
        if (j == SIZE_MAX)
            continue;
        const uf_activity *a = &t->acts[i];
        if (uf_doctor_is_batch_copy(a)) {
            kind[j] = UF_CALL_H2D;
            work[j] = UF_WORK_H2D;
        } else {
            kind[j] = kind[j] == UF_CALL_OTHER ? UF_CALL_LAUNCH : kind[j];
            work[j] = work[j] == UF_WORK_NONE ? UF_WORK_OTHER : work[j];
        }
    }
    for (size_t i = 0; i < t->n_syncs; i++) {
        size_t j = w->sync_api[i];
        if (j == SIZE_MAX || kind[j] == UF_CALL_H2D || uf_api_is_query(t->apis[j].name))
            continue;   /* a query's record: it returned at once (uf_api_is_query) */
        if (t->syncs[i].kind == UF_SYNC_STREAM_WAIT)
            kind[j] = kind[j] == UF_CALL_OTHER ? UF_CALL_LAUNCH : kind[j];
        else
            kind[j] = UF_CALL_WAIT;
    }
}

/* An API record's place in its thread's time line, to sort by. */
typedef struct api_place {
    uint32_t thread;
    uint64_t start_ns, end_ns;
    size_t api;
} api_place;

/* By thread, then start; at one start the longer first (it holds the other). */
static int cmp_api_place(const void *pa, const void *pb)
{
    const api_place *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->end_ns < b->end_ns) - (a->end_ns > b->end_ns);
}

/* Each thread's outermost calls in time order, with their kind: a call that starts inside the
 * one before it on its thread (the driver call a runtime call makes) is part of it, and lends
 * it its kind where the outer one's is UF_CALL_OTHER. 0, or -1 out of memory. */
static int index_calls(uf_doctor_work *w)
{
    const uf_dtrace *t = w->t;
    size_t n = t->n_apis;
    api_place *order = malloc((n + 1) * sizeof *order);
    uint8_t *kind = malloc(n + 1), *work = malloc(n + 1);
    w->calls = malloc((n + 1) * sizeof *w->calls);
    w->call_of_api = malloc((n + 1) * sizeof *w->call_of_api);
    if (order == NULL || kind == NULL || work == NULL || w->calls == NULL ||
        w->call_of_api == NULL) {
        free(order);
        free(kind);
        free(work);
        return -1;
    }
    call_kinds(w, kind, work);
    for (size_t i = 0; i < n; i++) {
        const uf_api_call *a = &t->apis[i];
        order[i] = (api_place){a->thread_id, a->start_ns,
                               a->end_ns > a->start_ns ? a->end_ns : a->start_ns, i};
    }
    qsort(order, n, sizeof *order, cmp_api_place);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const api_place *a = &order[k];
        uf_doctor_call *outer = m > 0 ? &w->calls[m - 1] : NULL;
        if (outer != NULL && outer->thread == a->thread && a->start_ns < outer->end_ns) {
            if (outer->kind == UF_CALL_OTHER)
                outer->kind = kind[a->api];
            if (outer->work == UF_WORK_NONE)
                outer->work = work[a->api];
            outer->alloc |= (uint8_t)uf_doctor_is_alloc_call(t->apis[a->api].name);
            outer->load |= (uint8_t)uf_doctor_is_load_call(t->apis[a->api].name);
            if (a->end_ns > outer->end_ns)
                outer->end_ns = a->end_ns;
        } else {
            uint8_t graph = (uint8_t)uf_doctor_is_graph_launch(t->apis[a->api].name);
            uint8_t alloc = (uint8_t)uf_doctor_is_alloc_call(t->apis[a->api].name);
            uint8_t load = (uint8_t)uf_doctor_is_load_call(t->apis[a->api].name);
            w->calls[m++] = (uf_doctor_call){a->start_ns, a->end_ns, a->thread, kind[a->api],
                                             work[a->api], graph, alloc, load};
        }
        w->call_of_api[a->api] = m - 1;
    }
    w->n_calls = m;
    free(order);
    free(kind);
    free(work);
    w->load_ns = malloc((m + 1) * sizeof *w->load_ns);
    w->threads = malloc((m + 1) * sizeof *w->threads);
    if (w->threads == NULL || w->load_ns == NULL)
        return -1;
    w->n_loads = 0;
    for (size_t k = 0; k < m; k++)
        if (w->calls[k].load)
            w->load_ns[w->n_loads++] = w->calls[k].start_ns;
    qsort(w->load_ns, w->n_loads, sizeof *w->load_ns, uf_cmp_u64);
    w->n_threads = 0;
    for (size_t k = 0; k < m; k++) {
        uf_doctor_thread *last = w->n_threads > 0 ? &w->threads[w->n_threads - 1] : NULL;
        if (last != NULL && last->thread == w->calls[k].thread)
            last->n++;
        else
            w->threads[w->n_threads++] = (uf_doctor_thread){w->calls[k].thread, k, 1, 0};
    }
    for (size_t i = 0; i < w->n_threads; i++) {
        uf_doctor_thread *th = &w->threads[i];
        th->dispatch_ns = uf_doctor_dispatch_ns(w->calls + th->first, th->n);
        if (th->dispatch_ns == 0)
            return -1;
    }
    return 0;
}

uint64_t uf_doctor_dispatch_ns(const uf_doctor_call *c, size_t n)
{
    double *stretch = malloc((n + 1) * sizeof *stretch);
    if (stretch == NULL)
        return 0;
    int m = 0;
    double outside = 0.0;       /* outside calls since the last call that launched work */
    for (size_t k = 1; k < n; k++) {
        if (c[k].start_ns >= c[k - 1].end_ns)
            outside += (double)(c[k].start_ns - c[k - 1].end_ns);
        if (c[k].work != UF_WORK_NONE) {
            stretch[m++] = outside;
            outside = 0.0;
        }
    }
    double typical = m > 0 ? uf_median(stretch, m) : 0.0;
    free(stretch);
    double bound = UF_DOCTOR_DISPATCH_X * typical;
    return bound > (double)UF_DOCTOR_DISPATCH_NS ? (uint64_t)bound : UF_DOCTOR_DISPATCH_NS;
}

uint64_t uf_doctor_first_load(const uf_doctor_work *w, uint64_t x)
{
    size_t lo = uf_lower_bound(w->load_ns, w->n_loads, sizeof *w->load_ns, &x, uf_cmp_u64);
    return lo < w->n_loads ? w->load_ns[lo] : UINT64_MAX;
}

int uf_doctor_loads_between(const uf_doctor_work *w, uint64_t x, uint64_t y)
{
    uint64_t load = uf_doctor_first_load(w, x);
    return load != UINT64_MAX && load <= y;
}

void uf_doctor_thread_calls(const uf_doctor_work *w, uint32_t thread, size_t *first, size_t *n,
                            uint64_t *dispatch_ns)
{
    size_t lo = 0, hi = w->n_threads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->threads[mid].thread < thread)
            lo = mid + 1;
        else
            hi = mid;
    }
    int found = lo < w->n_threads && w->threads[lo].thread == thread;
    *first = found ? w->threads[lo].first : 0;
    *n = found ? w->threads[lo].n : 0;
    *dispatch_ns = found ? w->threads[lo].dispatch_ns : UF_DOCTOR_DISPATCH_NS;
}

static int cmp_host_sample(const void *pa, const void *pb)
{
    const uf_host_sample *a = *(const uf_host_sample *const *)pa;
    const uf_host_sample *b = *(const uf_host_sample *const *)pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->t_ns > b->t_ns) - (a->t_ns < b->t_ns);
}

/* The host samples by thread, then time. 0, or -1 out of memory. */
static int index_host(uf_doctor_work *w)
{
    const uf_dtrace *t = w->t;
    w->host = malloc((t->n_host + 1) * sizeof *w->host);
    if (w->host == NULL)
        return -1;
    for (size_t i = 0; i < t->n_host; i++)
        w->host[i] = &t->host[i];
    qsort(w->host, t->n_host, sizeof *w->host, cmp_host_sample);
    w->n_host = t->n_host;
    return 0;
}

int uf_doctor_pass_index(uf_doctor_work *w, const uf_dtrace *t)
{
    w->t = t;
    w->tl = (uf_timeline){.acts = t->acts, .n_acts = t->n_acts, .apis = t->apis,
                          .n_apis = t->n_apis, .syncs = t->syncs, .n_syncs = t->n_syncs,
                          .device_id = -1, .sm_count = t->sm_count};
    w->launch_ns = malloc(t->n_acts * sizeof *w->launch_ns);
    w->launch_end = malloc(t->n_acts * sizeof *w->launch_end);
    w->act_api = malloc(t->n_acts * sizeof *w->act_api);
    w->sync_api = malloc((t->n_syncs + 1) * sizeof *w->sync_api);
    if (w->launch_ns == NULL || w->launch_end == NULL || w->act_api == NULL ||
        w->sync_api == NULL ||
        uf_timeline_launch_calls(&w->tl, w->launch_ns, w->launch_end) != 0 ||
        uf_timeline_launch_apis(&w->tl, w->act_api, w->sync_api) != 0 ||
        index_calls(w) != 0 || index_host(w) != 0)
        return -1;
    record_span(t, &w->first_ns, &w->last_ns);
    return 0;
}

/* ---- pass 3: the steady window --------------------------------------------------------------- */

static int in_window(const uf_doctor_work *w, uint64_t t_ns)
{
    return t_ns >= w->bounds[0] && t_ns < w->bounds[w->n_steps];
}

/* The host waits that cost the device time are the timeline's drains (timeline.h,
 * drains_per_step: a call in flight when the device ran out of the work queued before it, be
 * it a sync, a blocking read-back or a pageable copy), by the end of the call. */
static int cmp_drain_end(const void *pa, const void *pb)
{
    const uf_drain *a = pa, *b = pb;
    return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

/* One pass over the activities: each one's step (by its launch time; -1 outside the steady
 * window), each step's earliest launch and earliest start on the device (UINT64_MAX when the
 * step launched nothing), and the ends of the window's device work. 0, or -1 out of memory. */
static int assign_steps(uf_doctor_work *w)
{
    const uf_dtrace *t = w->t;
    size_t n_steps = (size_t)w->n_steps;
    w->step_of = malloc((t->n_acts + 1) * sizeof *w->step_of);
    w->first_launch = malloc(n_steps * sizeof *w->first_launch);
    w->first_start = malloc(n_steps * sizeof *w->first_start);
    if (w->step_of == NULL || w->first_launch == NULL || w->first_start == NULL)
        return -1;
    for (size_t s = 0; s < n_steps; s++)
        w->first_launch[s] = w->first_start[s] = UINT64_MAX;
    w->dev_begin = UINT64_MAX;
    w->dev_end = w->dev_last_start = 0;
    for (size_t i = 0; i < t->n_acts; i++) {
        const uf_activity *a = &t->acts[i];
        int s = in_window(w, w->launch_ns[i])
                    ? uf_timeline_step_index(w->bounds, w->n_steps, w->launch_ns[i]) : -1;
        w->step_of[i] = s;
        if (s < 0)
            continue;
        w->first_launch[s] = w->launch_ns[i] < w->first_launch[s] ? w->launch_ns[i]
                                                                   : w->first_launch[s];
        w->first_start[s] = a->start_ns < w->first_start[s] ? a->start_ns : w->first_start[s];
        w->dev_begin = a->start_ns < w->dev_begin ? a->start_ns : w->dev_begin;
        w->dev_end = a->end_ns > w->dev_end ? a->end_ns : w->dev_end;
        w->dev_last_start = a->start_ns > w->dev_last_start ? a->start_ns : w->dev_last_start;
    }
    return 0;
}

/* The median step on the device into *ms: from the start of a step's first device work to the
 * next step's (host-time steps are the host's pace, which runs ahead of the device's when the
 * host is not the bottleneck). The mean over the window when fewer than two steps have work.
 * 0, or -1 when out of memory. */
static int median_step_ms(const uf_doctor_work *w, double window_ms, double *ms)
{
    int n = w->n_steps;
    const uint64_t *first = w->first_start;
    double *len = malloc((size_t)n * sizeof *len);
    if (len == NULL)
        return -1;
    int m = 0;
    for (int s = 0; s + 1 < n; s++)
        if (first[s] != UINT64_MAX && first[s + 1] != UINT64_MAX && first[s + 1] > first[s])
            len[m++] = (double)(first[s + 1] - first[s]) / 1e6;
    *ms = m >= 1 ? uf_median(len, m) : window_ms / n;
    free(len);
    return 0;
}

int uf_doctor_pass_window(uf_doctor_work *w, uf_diagnosis *d)
{
    d->n_steps = w->n_steps;
    w->tl.measure_begin_ns = w->bounds[0];
    w->tl.measure_end_ns = w->bounds[w->n_steps] - 1;
    w->tl.steps_enqueued_ns = w->bounds[w->n_steps];     /* host calls: [bounds[0], bounds[n]) */
    w->tl.n_steps = w->n_steps;
    int analyzed = uf_timeline_analyze(&w->tl, &d->tl);
    if (analyzed != 0 && d->tl.n_activities > 0)   /* it counted work, then ran out of memory */
        return -1;
    if (analyzed != 0 || !(d->tl.window_ms > 0.0))
        return -2;
    /* the drains of the runtime calls that tl's drains_per_step counts, and of the driver's
     * syncs (JAX and other driver-API programs wait in cuStreamSynchronize) */
    if (uf_timeline_drains_where(&w->tl, call_may_wait, &w->drains, &w->n_drains) != 0)
        return -1;
    /* The steady window on the device is the harness's window over the steps' work
     * (d->tl.window_ms); its ends, and the last start in it, for the counters and syncs. */
    if (assign_steps(w) != 0)
        return -1;
    d->startup_ms = w->dev_begin > w->first_ns ? (double)(w->dev_begin - w->first_ns) / 1e6 : 0.0;
    d->tail_ms = w->last_ns > w->dev_end ? (double)(w->last_ns - w->dev_end) / 1e6 : 0.0;
    if (median_step_ms(w, d->tl.window_ms, &d->step_ms) != 0)
        return -1;
    if (w->n_drains > 1)
        qsort(w->drains, w->n_drains, sizeof *w->drains, cmp_drain_end);
    return 0;
}

/* ---- pass 6: the counters -------------------------------------------------------------------- */

/* NVML's utilization over [t0, t1]: the samples whose whole interval lies inside
 * (uf_util_window, as the harness reads it); a window shorter than two sample periods holds
 * none, and then the samples whose interval overlaps it, weighted by the overlap. */
static double util_over(const uf_util_sample *u, size_t n, uint64_t t0, uint64_t t1, int *used)
{
    uint64_t *ts = malloc((n + 1) * sizeof *ts);
    double *v = malloc((n + 1) * sizeof *v);
    double pct = NAN;
    *used = 0;
    if (ts != NULL && v != NULL) {
        for (size_t i = 0; i < n; i++) {
            ts[i] = u[i].t_ns / 1000;
            v[i] = u[i].util_pct;
        }
        pct = uf_util_window(ts, v, n, t0 / 1000, t1 / 1000, used);
    }
    free(ts);
    free(v);
    double sum = 0.0, weight = 0.0;
    for (size_t i = 1; *used == 0 && i < n; i++) {
        uint64_t lo = u[i - 1].t_ns > t0 ? u[i - 1].t_ns : t0;
        uint64_t hi = u[i].t_ns < t1 ? u[i].t_ns : t1;
        if (hi > lo && !isnan(u[i].util_pct)) {
            sum += u[i].util_pct * (double)(hi - lo);
            weight += (double)(hi - lo);
        }
    }
    if (*used == 0 && weight > 0.0) {
        pct = sum / weight;
        *used = -1;     /* partial intervals */
    }
    return pct;
}

/* The mean of the clock and power reads inside [t0, t1] (NaN where none). */
static int clocks_over(const uf_clock_sample *c, size_t n, uint64_t t0, uint64_t t1,
                       double *mhz, double *watts)
{
    double s_mhz = 0.0, s_w = 0.0;
    int n_mhz = 0, n_w = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].t_ns < t0 || c[i].t_ns > t1)
            continue;
        if (!isnan(c[i].sm_clock_mhz)) {
            s_mhz += c[i].sm_clock_mhz;
            n_mhz++;
        }
        if (!isnan(c[i].power_w)) {
            s_w += c[i].power_w;
            n_w++;
        }
    }
    *mhz = n_mhz ? s_mhz / n_mhz : NAN;
    *watts = n_w ? s_w / n_w : NAN;
    return n_mhz > n_w ? n_mhz : n_w;
}

/* The counters over the steady window [t0, t1] (device time): the series' means, or the
 * trace's run means where there is no series (formats 1 and 2, hand-made traces). */
static void counter_figures(const uf_dtrace *t, uint64_t t0, uint64_t t1, uf_diagnosis *d)
{
    uf_copy_str(d->counters_note, sizeof d->counters_note, t->counters_note);
    d->sm_active_pct = t->sm_active_pct;
    d->tensor_active_pct = t->tensor_active_pct;
    d->dram_pct = t->dram_pct;
    d->nvml_util_pct = t->nvml_util_pct;
    d->sm_clock_mhz = d->power_w = NAN;
    /* a series that misses the window gives no value: its run mean is another period's */
    if (t->n_pm > 0) {
        uf_pm_sample mean;
        d->n_pm_used = (int)uf_pm_window_mean(t->pm, t->n_pm, t0, t1, &mean);
        d->sm_active_pct = d->n_pm_used > 0 ? mean.sm_active_pct : NAN;
        d->tensor_active_pct = d->n_pm_used > 0 ? mean.tensor_active_pct : NAN;
        d->dram_pct = d->n_pm_used > 0 ? mean.dram_pct : NAN;
    }
    if (t->n_util > 0)
        d->nvml_util_pct = util_over(t->util, t->n_util, t0, t1, &d->n_util_used);
    d->n_clocks_used = clocks_over(t->clocks, t->n_clocks, t0, t1, &d->sm_clock_mhz, &d->power_w);
}


void uf_doctor_pass_counters(const uf_doctor_work *w, uf_diagnosis *d)
{
    counter_figures(w->t, w->dev_begin, w->dev_end, d);
}

/* ---- the analysis ---------------------------------------------------------------------------- */

void uf_doctor_work_free(uf_doctor_work *w)
{
    free(w->drains);
    free(w->bounds);
    free(w->launch_ns);
    free(w->launch_end);
    free(w->act_api);
    free(w->sync_api);
    free(w->calls);
    free(w->call_of_api);
    free(w->threads);
    free(w->load_ns);
    free(w->host);
    free(w->step_of);
    free(w->first_launch);
    free(w->first_start);
    memset(w, 0, sizeof *w);
}

int uf_doctor_analyze(const uf_dtrace *t, uf_diagnosis *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->pid = t->pid;
    d->sm_count = t->sm_count;
    uf_copy_str(d->note, sizeof d->note, t->note);
    if (t->n_acts == 0)
        return uf_set_err(err, errlen, "pid %d: no device activity recorded%s%s", t->pid,
                          t->note[0] ? ": " : "", t->note);
    uf_doctor_work w = {0};
    int rc = uf_doctor_pass_index(&w, t);
    if (rc == 0)
        rc = uf_doctor_pass_steps(&w, d);
    if (rc == 0)
        rc = uf_doctor_pass_window(&w, d);
    if (rc == 0)
        rc = uf_doctor_pass_idle(&w, d);
    if (rc == 0)
        rc = uf_doctor_pass_kernels(&w, d);
    if (rc == 0) {
        uf_doctor_pass_counters(&w, d);
        uf_doctor_apply_rules(d);
        uf_doctor_order_findings(d);
    }
    uf_doctor_work_free(&w);
    if (rc == -2)
        return uf_set_err(err, errlen, "pid %d: no device work launched inside the steady window",
                          t->pid);
    if (rc != 0)
        return uf_set_err(err, errlen, "pid %d: out of memory", t->pid);
    return 0;
}

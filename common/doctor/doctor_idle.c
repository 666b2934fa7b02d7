/* underfed doctor, pass 4: the device's idle time split by what the host was doing
 * (doctor_internal.h lists the passes; doctor.h's uf_diagnosis names the parts).
 *
 * Every idle gap of a device in the steady window ends with some work starting; the API call
 * that launched it gives the host thread that submitted it, and that thread's calls (pass 1:
 * each thread's outermost calls by time, with their kind) say what it did during the gap:
 *   1. the launch call had returned before the gap began: device-side (a dependency, the
 *      queue; also no launch call recorded, and a device's idle after its last work);
 *   2. a drain of that thread returned inside the gap, having started before it (the
 *      timeline's drains: its call waited while the device ran out of work): the gap's first
 *      part, as long as the host had waited in the call while the device still ran (the lead
 *      the sync threw away: without it the host would have done that much of its work while
 *      the device still ran), at most the whole gap, is the sync's; the rest is classified as
 *      below over the gap's last part (what the host would have kept the device waiting for
 *      anyway);
 *   3. otherwise, moment by moment: inside that work's launch call (and after it, until the
 *      work starts) or another launch call: launch; inside a call that allocates, frees or
 *      pins memory (uf_doctor_is_alloc_call): the allocator; inside a call that loads or links
 *      device code (uf_doctor_is_load_call): compiling; inside a call that may wait for
 *      the device: sync; inside a host-to-device copy's call: input; inside another call:
 *      other CUDA calls; inside no call: dispatch when the thread's stretch between two calls is at
 *      most its dispatch bound (uf_doctor_dispatch_ns: 100 us, or 4x its typical time before
 *      a launch where that is longer: a framework's per-launch cost), else the host's own work:
 *      compiling where the thread loads device code before it next launches work (a kernel
 *      built for a new shape, by cuDNN, Triton, XLA or NVRTC, then loaded), or where a build
 *      follows the gap with the device all but idle until its load (build_follows), else input where
 *      the first device work the thread launches after it is a copy to the device (a loader's
 *      augmentation, collate and pinning, or its wait for a worker, end in the batch's copy).
 * Each nanosecond of a gap is in one part, so the parts add up to the idle time. Where the
 * trace has host samples (format 4), the own-work parts also get the share of their time the
 * thread ran on a CPU. Apart from the parts, the raw state of the thread over the host-wait
 * gaps (all but device-side), before any rule reads it: inside a CUDA call, inside a call that
 * waits for the device, outside CUDA calls. */
#include "doctor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

enum {
    PART_LAUNCH, PART_DISPATCH, PART_INPUT, PART_WORK, PART_API, PART_ALLOC, PART_COMPILE,
    PART_SYNC, PART_DEVICE, N_PART
};

/* The parts' time, and for the own-work parts (input, work) the time their thread ran and
 * the time the host samples covered. */
typedef struct idle_parts {
    double ns[N_PART];
    double graph_ns;                    /* of ns[PART_LAUNCH], inside graph launches */
    double ran_ns[2], sampled_ns[2];    /* [0] input, [1] work */
} idle_parts;

/* ---- where the drains returned --------------------------------------------------------------- */

/* Where in their step the drains returned, on average (0 start, 100 end): where the host got
 * its value (a sync is entered early when the host runs ahead; what the step pays for is when
 * it comes back). NaN without drains. */
static double drain_position_pct(const uf_doctor_work *w, const uf_drain *dr, size_t n_dr)
{
    size_t n = 0;
    double pos = 0.0;
    for (size_t i = 0; i < n_dr; i++) {
        int s = uf_timeline_step_index(w->bounds, w->n_steps, dr[i].start_ns);
        if (s < 0 || s >= w->n_steps)
            continue;
        double len = (double)(w->bounds[s + 1] - w->bounds[s]);
        double at = (double)(dr[i].end_ns - w->bounds[s]) / len * 100.0;
        pos += at < 100.0 ? at : 100.0;
        n++;
    }
    return n > 0 ? pos / (double)n : NAN;
}

/* ---- the host thread's time ------------------------------------------------------------------ */

/* The share of [x, y) that thread `thread` ran on a CPU, from its host samples: each pair of
 * consecutive samples gives the rate it ran at between them (CPU time over wall time), weighed
 * by its overlap with [x, y); adds to *ran and *sampled (the overlap the samples covered). */
static void thread_ran(const uf_doctor_work *w, uint32_t thread, uint64_t x, uint64_t y,
                       double *ran, double *sampled)
{
    const uf_host_sample *const *h = w->host;
    size_t lo = 0, hi = w->n_host;      /* the thread's first sample ending after x */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h[mid]->tid < thread || (h[mid]->tid == thread && h[mid]->t_ns <= x))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo > 0 ? lo : 1; i < w->n_host && h[i]->tid == thread; i++) {
        const uf_host_sample *a = h[i - 1], *b = h[i];
        if (a->tid != thread || b->t_ns <= a->t_ns)
            continue;
        if (a->t_ns >= y)
            break;
        uint64_t o0 = a->t_ns > x ? a->t_ns : x, o1 = b->t_ns < y ? b->t_ns : y;
        if (o1 <= o0)
            continue;
        double rate = b->run_ns > a->run_ns
                          ? (double)(b->run_ns - a->run_ns) / (double)(b->t_ns - a->t_ns) : 0.0;
        *ran += (rate < 1.0 ? rate : 1.0) * (double)(o1 - o0);
        *sampled += (double)(o1 - o0);
    }
}

/* Is the first device work the thread launches from c[k] on (calls that launch nothing
 * recorded, queries, allocations, event records, are passed over; at most 256 calls) a copy to
 * the device? Then its host work before c[k] prepared input: a loader's augmentation, collate
 * and pinning, or its wait for a worker's batch, end in the batch's copy before anything else
 * reaches the device. */
static int next_work_is_copy(const uf_doctor_call *c, size_t n, size_t k)
{
    for (size_t j = k; j < n && j < k + 256; j++)
        if (c[j].work != UF_WORK_NONE)
            return c[j].work == UF_WORK_H2D;
    return 0;
}

/* The first of the thread's calls from c[k] on that launches recorded work or loads device code
 * (n none). Where it loads, the thread's host work before c[k] built that code: a kernel
 * compiled for a shape it had not seen (cuDNN's runtime fusion, Triton, XLA, NVRTC), or a whole
 * recompilation (torch.compile meeting a new grad mode on the H200: 2.9 s of tracing and code
 * generation between 262 calls that launch nothing, then the loads), loaded before the thread
 * next launches work. *memo keeps the answer for the calls up to it: a gap's stretches are
 * read in time order, so each call is looked at once (SIZE_MAX: none yet). */
static size_t next_load_or_work(const uf_doctor_call *c, size_t n, size_t k, size_t *memo)
{
    if (*memo != SIZE_MAX && *memo >= k)
        return *memo;
    size_t j = k;
    while (j < n && !c[j].load && c[j].work == UF_WORK_NONE)
        j++;
    return *memo = j;
}

/* The part of a moment inside this call. */
static int part_of_call(const uf_doctor_call *c)
{
    uint8_t kind = c->kind;
    return c->alloc               ? PART_ALLOC
           : c->load              ? PART_COMPILE
           : kind == UF_CALL_LAUNCH ? PART_LAUNCH
           : kind == UF_CALL_WAIT ? PART_SYNC
           : kind == UF_CALL_H2D  ? PART_INPUT
                                  : PART_API;
}

/* Add [x, y) of thread `thread`'s own work to part p (PART_INPUT or PART_WORK). */
static void add_own_work(const uf_doctor_work *w, uint32_t thread, int p, uint64_t x, uint64_t y,
                         idle_parts *parts)
{
    if (parts == NULL)
        return;
    parts->ns[p] += (double)(y - x);
    int k = p == PART_INPUT ? 0 : 1;
    thread_ran(w, thread, x, y, &parts->ran_ns[k], &parts->sampled_ns[k]);
}

/* The raw state of the thread during the host-wait idle, before the rules read it: inside a
 * CUDA call (a launch, a copy, another call), inside a call that waits for the device, or
 * outside CUDA calls. */
enum { RAW_IN_CALL, RAW_IN_WAIT, RAW_OUTSIDE, N_RAW };

/* [a, b) of a gap by what thread `thread` was doing (rule 3 of the file's comment) into parts,
 * and its raw state into raw (either may be NULL); launch: the call that launched the work
 * that ends the gap. */
static void split_by_host(const uf_doctor_work *w, uint32_t thread, uint64_t a, uint64_t b,
                          const uf_api_call *launch, int building, idle_parts *parts,
                          double *raw)
{
    uint64_t l0 = launch->start_ns;
    if (a >= b)
        return;
    if (l0 < b) {               /* inside that work's launch call, then its way to the device */
        uint64_t from = l0 > a ? l0 : a;
        if (parts != NULL)
            parts->ns[PART_LAUNCH] += (double)(b - from);
        if (parts != NULL && uf_doctor_is_graph_launch(launch->name))
            parts->graph_ns += (double)(b - from);
        if (raw != NULL)
            raw[RAW_IN_CALL] += (double)(b - from);
        b = from;
    }
    size_t first, n;
    uint64_t dispatch_ns;
    uf_doctor_thread_calls(w, thread, &first, &n, &dispatch_ns);
    const uf_doctor_call *c = w->calls + first;
    size_t lo = 0, hi = n;      /* the first call ending after a (a thread's calls are in time
                                 * order and do not overlap, so their ends are too) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].end_ns <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t memo = SIZE_MAX;
    for (size_t k = lo; a < b;) {
        if (k < n && c[k].start_ns <= a) {             /* inside call k */
            uint64_t to = c[k].end_ns < b ? c[k].end_ns : b;
            if (parts != NULL)
                parts->ns[part_of_call(&c[k])] += (double)(to - a);
            if (parts != NULL && c[k].kind == UF_CALL_LAUNCH && c[k].graph)
                parts->graph_ns += (double)(to - a);
            if (raw != NULL)
                raw[c[k].kind == UF_CALL_WAIT ? RAW_IN_WAIT : RAW_IN_CALL] += (double)(to - a);
            a = to;
            k++;
            continue;
        }
        uint64_t next = k < n ? c[k].start_ns : UINT64_MAX;   /* outside calls until next */
        uint64_t to = next < b ? next : b;
        int bounded = k > 0 && k < n;
        if (raw != NULL)
            raw[RAW_OUTSIDE] += (double)(to - a);
        if (parts != NULL && bounded && next - c[k - 1].end_ns <= dispatch_ns)
            parts->ns[PART_DISPATCH] += (double)(to - a);
        else if (parts != NULL && k < n &&
                 (building || (next_load_or_work(c, n, k, &memo) < n && c[memo].load)))
            parts->ns[PART_COMPILE] += (double)(to - a);
        else
            add_own_work(w, thread, k < n && next_work_is_copy(c, n, k) ? PART_INPUT : PART_WORK,
                         a, to, parts);
        a = to;
    }
}

/* The drain of `thread` (any, when the trace has no threads: all its calls are thread 0's)
 * that returned inside [g0, g1] having started before g0, the one that started first (it
 * waited longest while the device ran); NULL none. */
static const uf_drain *drain_into(const uf_doctor_work *w, uint32_t thread, uint64_t g0,
                                  uint64_t g1)
{
    const uf_drain *dr = w->drains, *best = NULL;
    size_t lo = 0, hi = w->n_drains;    /* by end: the first ending at or after g0 */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dr[mid].end_ns < g0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < w->n_drains && dr[i].end_ns <= g1; i++)
        if (dr[i].start_ns <= g0 && w->t->apis[dr[i].api].thread_id == thread &&
            (best == NULL || dr[i].start_ns < best->start_ns))
            best = &dr[i];
    return best;
}

/* One gap [g0, g1) that activity `act` ends, by the rules of the file's comment; the
 * thread's raw state over all of a host-wait gap into raw. */
static void split_gap(const uf_doctor_work *w, uint64_t g0, uint64_t g1, size_t act,
                      int building, idle_parts *parts, double *raw)
{
    size_t api = w->act_api[act];
    const uf_api_call *call = api != SIZE_MAX ? &w->t->apis[api] : NULL;
    if (call == NULL || call->end_ns <= g0) {
        parts->ns[PART_DEVICE] += (double)(g1 - g0);
        return;
    }
    const uf_drain *d = drain_into(w, call->thread_id, g0, g1);
    if (d == NULL) {
        split_by_host(w, call->thread_id, g0, g1, call, building, parts, raw);
        return;
    }
    /* the lead the sync threw away: how long the host had waited in it while the device still
     * ran (the device ran dry at g0) */
    uint64_t wait = g0 - d->start_ns, len = g1 - g0;
    uint64_t sync = wait < len ? wait : len;
    parts->ns[w->calls[w->call_of_api[d->api]].alloc ? PART_ALLOC : PART_SYNC] += (double)sync;
    split_by_host(w, call->thread_id, g1 - (len - sync), g1, call, building, parts, NULL);
    split_by_host(w, call->thread_id, g0, g1, call, 0, NULL, raw);
}

/* ---- the gaps of each device ----------------------------------------------------------------- */

/* A window activity on its device. */
typedef struct dev_act {
    uint32_t device;
    uint64_t start_ns, end_ns, launch_ns;
    size_t act;
} dev_act;

/* By device, then start; at one start the earliest launched first (it ends the gap before). */
static int cmp_dev_act(const void *pa, const void *pb)
{
    const dev_act *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->launch_ns > b->launch_ns) - (a->launch_ns < b->launch_ns);
}

/* Is the gap [g0, g1) that v[i] ends (v: one device's activities from i on, by start, n in
 * all) a build's, though its work is not the code's? A thread loads device code after the gap,
 * and until that load the device ran at most UF_DOCTOR_BUILD_AHEAD_RECORDS records, no batch
 * copied to it, together busy less than UF_DOCTOR_BUILD_AHEAD_BUSY x the gap: a compiler
 * that touched the device in passing (a value filled and read back between its tracing and its
 * code generation), not steps that ran. Loads inside the gap are the caller's rule. */
static int build_follows(const uf_doctor_work *w, const dev_act *v, size_t n, size_t i,
                         uint64_t g0, uint64_t g1)
{
    uint64_t load = uf_doctor_first_load(w, g0);
    if (load == UINT64_MAX || load < g1)
        return 0;
    double budget = UF_DOCTOR_BUILD_AHEAD_BUSY * (double)(g1 - g0), busy = 0.0;
    for (size_t j = i, k = 0; j < n && v[j].device == v[i].device; j++, k++) {
        if (v[j].start_ns >= load)
            return 1;
        const uf_activity *a = &w->t->acts[v[j].act];
        if (k >= UF_DOCTOR_BUILD_AHEAD_RECORDS || uf_doctor_is_batch_copy(a))
            return 0;
        busy += (double)((v[j].end_ns < load ? v[j].end_ns : load) - v[j].start_ns);
        if (busy >= budget)
            return 0;
    }
    return 0;       /* the window ended first */
}

/* Every gap of every device in the window [w->dev_begin, w->dev_end] into parts (a device's
 * idle before its first work is ended by that work; after its last, device-side); the number
 * of devices into *n_devices. With before (raw NULL): the same over the work launched from
 * w->steps_began_ns that starts before the window, or as it begins (its first work ends the
 * last gap before it), where a gap in which a thread loaded device code, or did within the
 * gap's own length after it, is compiling whole: the steps had stopped, and the compiler's
 * tracing, code generation and builds are the host's work, of which only the last part ends
 * in a load (torch.compile recompiling a GPT on the H200: 10.7 s of such work, then the loads,
 * after a few of the compiled graph's launches). In the window, the host's own work in a gap
 * that a build follows (build_follows) is compiling. 0, or -1 out of memory. */
static int split_devices(const uf_doctor_work *w, int before, idle_parts *parts, double *raw,
                         int *n_devices)
{
    const uf_dtrace *t = w->t;
    dev_act *v = malloc((t->n_acts + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < t->n_acts; i++) {
        const uf_activity *a = &t->acts[i];
        if (before ? w->launch_ns[i] < w->steps_began_ns || a->start_ns > w->dev_begin
                   : w->step_of[i] < 0)
            continue;
        v[n++] = (dev_act){a->device_id, a->start_ns, a->end_ns > a->start_ns ? a->end_ns
                                                                               : a->start_ns,
                           w->launch_ns[i], i};
    }
    qsort(v, n, sizeof *v, cmp_dev_act);
    *n_devices = 0;
    for (size_t i = 0; i < n;) {
        uint32_t dev = v[i].device;
        uint64_t busy_end = before ? w->steps_began_ns : w->dev_begin;
        (*n_devices)++;
        for (; i < n && v[i].device == dev; i++) {
            uint64_t g0 = busy_end, g1 = v[i].start_ns;
            if (g1 > g0 && before && uf_doctor_loads_between(w, g0, g1 + (g1 - g0)))
                parts->ns[PART_COMPILE] += (double)(g1 - g0);
            else if (g1 > g0)
                split_gap(w, g0, g1, v[i].act, !before && build_follows(w, v, n, i, g0, g1),
                          parts, raw);
            if (v[i].end_ns > busy_end)
                busy_end = v[i].end_ns;
        }
        if (!before && w->dev_end > busy_end)
            parts->ns[PART_DEVICE] += (double)(w->dev_end - busy_end);
    }
    free(v);
    return 0;
}

/* The share of the own-work time its thread ran, where the samples covered at least half of
 * it; NaN otherwise. */
static double ran_pct(const idle_parts *p, int k, int part)
{
    return p->ns[part] > 0.0 && p->sampled_ns[k] >= 0.5 * p->ns[part]
               ? p->ran_ns[k] / p->sampled_ns[k] * 100.0 : NAN;
}

/* The calls of every thread that start in the window and allocate (alloc) or load device code
 * (!alloc): how many per step, and their time per step (what alloc_churn's and
 * kernel_compile's evidence counts, whether or not the device waited in them). */
static void calls_per_step(const uf_doctor_work *w, int alloc, double *per_step,
                           double *ms_per_step)
{
    double n = 0.0, ns = 0.0;
    for (size_t i = 0; i < w->n_calls; i++) {
        const uf_doctor_call *c = &w->calls[i];
        if (!(alloc ? c->alloc : c->load) || c->start_ns < w->dev_begin ||
            c->start_ns >= w->dev_end)
            continue;
        n += 1.0;
        ns += (double)(c->end_ns - c->start_ns);
    }
    *per_step = w->n_steps > 0 ? n / w->n_steps : 0.0;
    *ms_per_step = w->n_steps > 0 ? ns / 1e6 / w->n_steps : 0.0;
}

/* The device's idle while the host built or loaded code since steps like the steady ones
 * first ran (w->steps_began_ns, before the window), and its share of the run since then (the
 * window's own, steady, in parts, added). 0, or -1 out of memory. */
static int recompiled(const uf_doctor_work *w, const idle_parts *steady, uf_diagnosis *d)
{
    d->recompile_ms = d->since_steps_ms = d->recompile_pct = 0.0;
    if (w->steps_began_ns >= w->dev_begin || w->dev_end <= w->dev_begin)
        return 0;
    idle_parts before;
    memset(&before, 0, sizeof before);
    int n_devices = 0;
    if (split_devices(w, 1, &before, NULL, &n_devices) != 0)
        return -1;
    double devices = d->n_devices > 0 ? d->n_devices : 1;
    double span = (double)(w->dev_end - w->steps_began_ns);
    d->recompile_ms = before.ns[PART_COMPILE] / devices / 1e6;
    d->since_steps_ms = span / 1e6;
    d->recompile_pct = (before.ns[PART_COMPILE] + steady->ns[PART_COMPILE]) / (span * devices) *
                       100.0;
    return 0;
}

int uf_doctor_pass_idle(const uf_doctor_work *w, uf_diagnosis *d)
{
    idle_parts parts;
    memset(&parts, 0, sizeof parts);
    double raw[N_RAW] = {0, 0, 0};
    if (split_devices(w, 0, &parts, raw, &d->n_devices) != 0 || recompiled(w, &parts, d) != 0)
        return -1;
    double whole = (double)(w->dev_end - w->dev_begin) * (d->n_devices > 0 ? d->n_devices : 1);
    double pct[N_PART];
    for (int p = 0; p < N_PART; p++)
        pct[p] = whole > 0.0 ? parts.ns[p] / whole * 100.0 : 0.0;
    d->idle_launch_pct = pct[PART_LAUNCH];
    d->idle_graph_launch_pct = whole > 0.0 ? parts.graph_ns / whole * 100.0 : 0.0;
    d->idle_dispatch_pct = pct[PART_DISPATCH];
    d->idle_input_pct = pct[PART_INPUT];
    d->idle_work_pct = pct[PART_WORK];
    d->idle_api_pct = pct[PART_API];
    d->idle_alloc_pct = pct[PART_ALLOC];
    d->idle_compile_pct = pct[PART_COMPILE];
    d->idle_sync_pct = pct[PART_SYNC];
    d->idle_device_pct = pct[PART_DEVICE];
    d->input_ran_pct = ran_pct(&parts, 0, PART_INPUT);
    d->work_ran_pct = ran_pct(&parts, 1, PART_WORK);
    /* launch_bound leaves graph launches out: under the recorder a graph launch costs the host
     * more per node than the program pays without it (measured on the H200, 2026-12-01:
     * launch_storm's 1000-node graph, 0.960 ms a step plain, 1.201 ms under the recorder, its
     * cudaGraphLaunch ~1.15 ms: ~0.24 us a node of CUPTI's own), so the device waiting inside
     * one is no evidence of the program's launch cost. The time stays in the idle split. */
    d->launch_gap_pct = pct[PART_LAUNCH] - d->idle_graph_launch_pct + pct[PART_DISPATCH];
    if (d->launch_gap_pct < 0.0)
        d->launch_gap_pct = 0.0;
    d->input_gap_pct = pct[PART_INPUT];
    d->host_gap_pct = pct[PART_WORK] + pct[PART_API];
    d->sync_gap_pct = pct[PART_SYNC];
    d->alloc_gap_pct = pct[PART_ALLOC];
    d->compile_gap_pct = pct[PART_COMPILE];
    calls_per_step(w, 1, &d->alloc_calls_per_step, &d->alloc_ms_per_step);
    calls_per_step(w, 0, &d->load_calls_per_step, &d->load_ms_per_step);
    d->host_in_call_pct = whole > 0.0 ? raw[RAW_IN_CALL] / whole * 100.0 : 0.0;
    d->host_in_wait_pct = whole > 0.0 ? raw[RAW_IN_WAIT] / whole * 100.0 : 0.0;
    d->host_outside_pct = whole > 0.0 ? raw[RAW_OUTSIDE] / whole * 100.0 : 0.0;
    d->sync_pos_pct = drain_position_pct(w, w->drains, w->n_drains);
    return 0;
}

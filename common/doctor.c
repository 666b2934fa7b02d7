/* underfed doctor: how it measures (doctor.h says what each step does). The records in launch
 * order, the steps (NVTX ranges, else the repeating sequence) and the steady window, the
 * per-step figures (gaps, syncs, work classes, host costs), the counters, and uf_doctor_analyze,
 * which ends by applying the rules. What is judged is in doctor_rules.c; the ceilings
 * comparison and the output are in doctor_report.c. */
#include "doctor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"
#include "errors.h"
#include "stats.h"

/* ---- the records in launch order --------------------------------------------------------- */

/* One record of device work or a host wait, at its launch time: the sequence steps repeat. */
typedef struct token {
    uint64_t t_ns;              /* launch call start (activities), call start (syncs) */
    uint64_t key;               /* what it is: kind and name, hashed */
    size_t seq;                 /* position in launch order */
} token;

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static uint64_t activity_key(const uf_activity *a)
{
    uint64_t h = fnv1a(14695981039346656037ull, &a->kind, 1);
    if (a->kind == UF_ACT_MEMCPY) {
        uint8_t direction = (uint8_t)uf_copy_direction(a);
        h = fnv1a(h, &direction, 1);
    }
    if (a->kind == UF_ACT_KERNEL && a->name != NULL)
        h = fnv1a(h, a->name, strlen(a->name));
    return h;
}

/* By time; records at one instant keep the order they were collected in (seq holds it). */
static int cmp_token_time(const void *pa, const void *pb)
{
    const token *a = pa, *b = pb;
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static int cmp_token_key(const void *pa, const void *pb)
{
    const token *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The analysis's working state: the trace as a uf_timeline and its launch times. */
typedef struct work {
    const uf_dtrace *t;
    uf_timeline tl;
    uint64_t *launch_ns;        /* per activity: launch call start (or its own start) */
    uint64_t *launch_end;       /* per activity: launch call end (0: no call matched) */
    uint64_t *bounds;           /* step starts, n_steps + 1 entries (the last: window end) */
    int n_steps;
    uint64_t first_ns, last_ns; /* first and last record of the process */
    /* the steady window's device work, from one pass over the activities (assign_steps): */
    int *step_of;               /* per activity: its step by launch time, -1 outside the window */
    uint64_t *first_launch;     /* per step: the earliest launch of its work (UINT64_MAX none) */
    uint64_t *first_start;      /* per step: the earliest start of that work on the device */
    uint64_t dev_begin, dev_end, dev_last_start; /* its first start, last end, last start */
} work;

/* The best run of one token key: occurrences whose spacing in the sequence is constant. */
typedef struct step_run {
    size_t first, n_steps, period;  /* index into the key-sorted tokens, steps, tokens per step */
    double host_gap_ns;             /* mean host time before an occurrence: prefer the token
                                     * that follows the pause (data loading, a sync) */
} step_run;

/* Is a run covering `coverage` records at `period` better than the best so far? More records
 * win; within UF_DOCTOR_COVER_TIE of each other, the longer period (a kernel repeating inside
 * the step, e.g. once per layer, can cover as much as the step's own marker), then the longer
 * pause before it. */
static int better_run(size_t coverage, size_t period, double gap, const step_run *best)
{
    double cov = (double)coverage, best_cov = (double)(best->n_steps * best->period);
    if (cov > best_cov * (1.0 + UF_DOCTOR_COVER_TIE))
        return 1;
    if (cov < best_cov * (1.0 - UF_DOCTOR_COVER_TIE))
        return 0;
    if (period != best->period)
        return period > best->period;
    return gap > best->host_gap_ns;
}

/* Scores one run [j0, j1] of a key's occurrences (k sorted by key, then sequence). */
static void consider_run(const token *k, const token *by_seq, size_t j0, size_t j1,
                         size_t period, step_run *best)
{
    size_t steps = j1 - j0;
    if (steps < UF_DOCTOR_MIN_STEPS || period < 2)
        return;
    double gap = 0.0;
    for (size_t j = j0; j <= j1; j++)
        if (k[j].seq > 0)
            gap += (double)(k[j].t_ns - by_seq[k[j].seq - 1].t_ns);
    gap /= (double)(steps + 1);
    if (better_run(steps * period, period, gap, best)) {
        best->first = j0;
        best->n_steps = steps;
        best->period = period;
        best->host_gap_ns = gap;
    }
}

/* Steps from the repeating sequence: for each kind of record, its runs of occurrences at a
 * constant spacing; the run covering the most records wins (near ties: better_run), so that
 * a step is the longest repeating unit and starts after its data loading or its sync. */
static int detect_steps(work *w, token *seq, size_t n, char *source, size_t source_len)
{
    if (n == 0 || n > SIZE_MAX / 2 / sizeof(token))
        return 0;
    token *k = malloc(n * sizeof *k);
    if (k == NULL)
        return -1;
    memcpy(k, seq, n * sizeof *k);
    qsort(k, n, sizeof *k, cmp_token_key);
    step_run best = {0, 0, 0, 0.0};
    for (size_t i = 0; i < n;) {
        size_t end = i;
        while (end < n && k[end].key == k[i].key)
            end++;
        size_t j0 = i;
        for (size_t j = i + 1; j < end; j++) {
            size_t period = k[j].seq - k[j - 1].seq;
            if (j - 1 > j0 && period != k[j - 1].seq - k[j - 2].seq) {
                consider_run(k, seq, j0, j - 1, k[j - 1].seq - k[j - 2].seq, &best);
                j0 = j - 1;
            }
            if (j + 1 == end)
                consider_run(k, seq, j0, j, period, &best);
        }
        i = end;
    }
    int rc = 0;
    if (best.n_steps > 0) {
        w->bounds = malloc((best.n_steps + 1) * sizeof *w->bounds);
        if (w->bounds == NULL) {
            rc = -1;
        } else {
            for (size_t s = 0; s <= best.n_steps; s++)
                w->bounds[s] = k[best.first + s].t_ns;
            w->n_steps = (int)best.n_steps;
            snprintf(source, source_len, "detected: a sequence of %zu records repeating",
                     best.period);
        }
    }
    free(k);
    return rc;
}

/* ---- steps from NVTX --------------------------------------------------------------------- */

static int cmp_range_name(const void *pa, const void *pb)
{
    const uf_range *a = *(const uf_range *const *)pa, *b = *(const uf_range *const *)pb;
    int c = strcmp(a->name, b->name);
    if (c != 0)
        return c;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* Steps from the most frequent NVTX range name (ties: the longer total time), at least
 * UF_DOCTOR_MIN_STEPS of them: step k runs from range k's start to range k+1's, the last to
 * its own end; overlapping ranges (threads) are one step. 0 (w->n_steps 0 when none
 * qualifies) or -1 out of memory. */
static int nvtx_steps(work *w, char *source, size_t source_len)
{
    const uf_dtrace *t = w->t;
    size_t n = 0;
    const uf_range **r = malloc((t->n_ranges > 0 ? t->n_ranges : 1) * sizeof *r);
    if (r == NULL)
        return -1;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (t->ranges[i].name != NULL && t->ranges[i].end_ns > t->ranges[i].start_ns)
            r[n++] = &t->ranges[i];
    qsort(r, n, sizeof *r, cmp_range_name);
    size_t best = 0, best_n = 0;
    uint64_t best_total = 0;
    for (size_t i = 0; i < n;) {
        size_t end = i;
        uint64_t total = 0;
        for (; end < n && strcmp(r[end]->name, r[i]->name) == 0; end++)
            total += r[end]->end_ns - r[end]->start_ns;
        if (end - i > best_n || (end - i == best_n && total > best_total)) {
            best = i;
            best_n = end - i;
            best_total = total;
        }
        i = end;
    }
    int rc = 0;
    w->bounds = best_n >= UF_DOCTOR_MIN_STEPS ? malloc((best_n + 1) * sizeof *w->bounds) : NULL;
    if (best_n >= UF_DOCTOR_MIN_STEPS && w->bounds == NULL)
        rc = -1;
    /* Ranges of the name that overlap are one step run by several threads (one per GPU in a
     * multi-GPU process): a step starts where a range starts after all earlier ones ended. */
    size_t n_steps = 0;
    uint64_t end = 0;
    for (size_t s = 0; w->bounds != NULL && s < best_n; s++) {
        const uf_range *x = r[best + s];
        if (n_steps == 0 || x->start_ns >= end)
            w->bounds[n_steps++] = x->start_ns;
        end = x->end_ns > end ? x->end_ns : end;
    }
    if (w->bounds != NULL && n_steps >= UF_DOCTOR_MIN_STEPS) {
        w->bounds[n_steps] = end;
        w->n_steps = (int)n_steps;
        snprintf(source, source_len, "nvtx \"%.100s\"%s", r[best]->name,
                 n_steps < best_n ? " (overlapping ranges merged: several threads)" : "");
    } else if (w->bounds != NULL) {
        free(w->bounds);
        w->bounds = NULL;
    }
    free(r);
    return rc;
}

/* Leave out leading and trailing steps slower than UF_DOCTOR_SLOW_STEP x the median (warm-up,
 * a compiling first step, a slow last one), keeping at least UF_DOCTOR_MIN_STEPS. */
static int trim_slow_steps(work *w, int *left_out)
{
    int n = w->n_steps;
    double *len = malloc((size_t)n * sizeof *len);
    if (len == NULL)
        return -1;
    for (int s = 0; s < n; s++)
        len[s] = (double)(w->bounds[s + 1] - w->bounds[s]);
    double med = uf_median(len, n);
    int lo = 0, hi = n;     /* kept: [lo, hi) */
    while (hi - lo > UF_DOCTOR_MIN_STEPS && len[lo] > UF_DOCTOR_SLOW_STEP * med)
        lo++;
    while (hi - lo > UF_DOCTOR_MIN_STEPS && len[hi - 1] > UF_DOCTOR_SLOW_STEP * med)
        hi--;
    free(len);
    memmove(w->bounds, w->bounds + lo, (size_t)(hi - lo + 1) * sizeof *w->bounds);
    w->n_steps = hi - lo;
    *left_out = n - w->n_steps;
    return 0;
}

/* ---- setting up ---------------------------------------------------------------------------- */

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

/* ---- what the recorder could not see ----------------------------------------------------- */

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

/* The launch-ordered sequence of device work, host waits and event records. */
static token *make_sequence(const work *w, size_t *n)
{
    const uf_dtrace *t = w->t;
    token *seq = malloc((t->n_acts + t->n_syncs + t->n_apis + 1) * sizeof *seq);
    if (seq == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < t->n_acts; i++, k++)
        seq[k] = (token){w->launch_ns[i], activity_key(&t->acts[i]), k};
    for (size_t i = 0; i < t->n_syncs; i++, k++) {
        uint64_t key = fnv1a(0x5157ull, &t->syncs[i].kind, 1);
        seq[k] = (token){t->syncs[i].start_ns, key, k};
    }
    /* Event records mark steps where every kernel has one name (a timing loop's events, a
     * framework's per-step events): a step of N identical kernels repeats [event, N x k]. */
    for (size_t i = 0; i < t->n_apis; i++)
        if (uf_doctor_is_event_record(t->apis[i].name)) {
            seq[k] = (token){t->apis[i].start_ns, 0xe7e7e7e7ull, k};
            k++;
        }
    qsort(seq, k, sizeof *seq, cmp_token_time);
    for (size_t i = 0; i < k; i++)
        seq[i].seq = i;
    *n = k;
    return seq;
}

/* Steps: NVTX, else detected, else the whole run as one step. */
static int find_steps(work *w, uf_diagnosis *d)
{
    if (nvtx_steps(w, d->step_source, sizeof d->step_source) != 0)
        return -1;
    if (w->n_steps == 0) {
        size_t n;
        token *seq = make_sequence(w, &n);
        if (seq == NULL)
            return -1;
        int rc = detect_steps(w, seq, n, d->step_source, sizeof d->step_source);
        free(seq);
        if (rc != 0)
            return -1;
    }
    if (w->n_steps == 0) {
        w->bounds = malloc(2 * sizeof *w->bounds);
        if (w->bounds == NULL)
            return -1;
        w->bounds[0] = w->first_ns;
        w->bounds[1] = w->last_ns + 1;
        w->n_steps = 1;
        snprintf(d->step_source, sizeof d->step_source,
                 "none found (fewer than %d repeats): the whole run is one step",
                 UF_DOCTOR_MIN_STEPS);
        return 0;
    }
    return trim_slow_steps(w, &d->steps_left_out);
}

/* ---- per-step figures ---------------------------------------------------------------------- */

static int in_window(const work *w, uint64_t t_ns)
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

/* Where in their step the drains returned, on average (0 start, 100 end): where the host got
 * its value (a sync is entered early when the host runs ahead; what the step pays for is when
 * it comes back). NaN without drains. */
static double drain_position_pct(const work *w, const uf_drain *dr, size_t n_dr)
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

/* The host_sync figures from the timeline's drains: the idle after them, as a share of the
 * window (the gaps whose mean is uf_timeline_metrics.sync_gap_us, those that end inside the
 * window: the last step's drain idles into the step after it, which is not in the window,
 * and the shares of the window's idle must add up), and where in the step they returned.
 * last_start_ns: the latest start of the window's device work. */
static void sync_figures(const work *w, const uf_drain *dr, size_t n_dr, uint64_t last_start_ns,
                         uf_diagnosis *d)
{
    double gap_ns = 0.0;
    for (size_t i = 0; i < n_dr; i++)
        if (dr[i].has_gap && dr[i].end_ns <= last_start_ns)
            gap_ns += (double)dr[i].gap_ns;
    d->sync_gap_pct = gap_ns / (d->tl.window_ms * 1e6) * 100.0;
    d->sync_pos_pct = drain_position_pct(w, dr, n_dr);
}

/* Did a drain return inside gap g, having started before the device ran dry? (dr by end) */
static int gap_follows_drain(const uf_drain *dr, size_t n_dr, const uf_gap *g)
{
    size_t lo = 0, hi = n_dr;   /* first drain ending at or after the gap's start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dr[mid].end_ns < g->start_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < n_dr && dr[i].end_ns <= g->end_ns; i++)
        if (dr[i].start_ns <= g->start_ns)
            return 1;
    return 0;
}

/* One pass over the activities: each one's step (by its launch time; -1 outside the steady
 * window), each step's earliest launch and earliest start on the device (UINT64_MAX when the
 * step launched nothing), and the ends of the window's device work. 0, or -1 out of memory. */
static int assign_steps(work *w)
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

/* The host-wait idle gaps split by cause: after a drain (the share the timeline's sync_gap_us
 * measures: set in sync_figures), before a step's first work, between launches. dr by end. */
static int gap_figures(const work *w, const uf_drain *dr, size_t n_dr, uf_diagnosis *d)
{
    uf_gap *gaps;
    size_t n_gaps;
    if (uf_timeline_idle_gaps(&w->tl, &gaps, &n_gaps) != 0)
        return -1;
    const uint64_t *first = w->first_launch;
    double input_ns = 0, launch_ns = 0;
    int boundaries = w->n_steps > 1;
    for (size_t i = 0; i < n_gaps; i++) {
        const uf_gap *g = &gaps[i];
        double len = (double)(g->end_ns - g->start_ns);
        if (!g->host_wait)
            continue;
        int s = uf_timeline_step_index(w->bounds, w->n_steps, g->next_launch_ns);
        if (gap_follows_drain(dr, n_dr, g))
            continue;
        if (boundaries && s >= 0 && g->next_launch_ns == first[s])
            input_ns += len;
        else
            launch_ns += len;
    }
    double window_ns = d->tl.window_ms * 1e6;
    d->input_gap_pct = input_ns / window_ns * 100.0;
    d->launch_gap_pct = launch_ns / window_ns * 100.0;
    free(gaps);
    return 0;
}

/* Activity indices sorted by their launch time (ties: trace order). 0, or -1 out of memory. */
static int sort_by_launch(const work *w, size_t *order, size_t n)
{
    token *by_launch = malloc((n + 1) * sizeof *by_launch);    /* seq: the activity's index */
    if (by_launch == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        by_launch[i] = (token){w->launch_ns[order[i]], 0, order[i]};
    qsort(by_launch, n, sizeof *by_launch, cmp_token_time);
    for (size_t i = 0; i < n; i++)
        order[i] = by_launch[i].seq;
    free(by_launch);
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
static int work_figures(const work *w, uf_diagnosis *d)
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
static int host_cost_figures(const work *w, uf_diagnosis *d)
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

/* ---- counters ------------------------------------------------------------------------------ */

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

/* ---- the analysis -------------------------------------------------------------------------- */

/* The median step on the device into *ms: from the start of a step's first device work to the
 * next step's (host-time steps are the host's pace, which runs ahead of the device's when the
 * host is not the bottleneck). The mean over the window when fewer than two steps have work.
 * 0, or -1 when out of memory. */
static int median_step_ms(const work *w, double window_ms, double *ms)
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

int uf_doctor_analyze(const uf_dtrace *t, uf_diagnosis *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->pid = t->pid;
    d->sm_count = t->sm_count;
    uf_copy_str(d->note, sizeof d->note, t->note);
    if (t->n_acts == 0)
        return uf_set_err(err, errlen, "pid %d: no device activity recorded%s%s", t->pid,
                          t->note[0] ? ": " : "", t->note);
    int rc = -1;
    uf_drain *drains = NULL;
    size_t n_drains = 0;
    work w = {.t = t};
    w.tl = (uf_timeline){.acts = t->acts, .n_acts = t->n_acts, .apis = t->apis,
                         .n_apis = t->n_apis, .syncs = t->syncs, .n_syncs = t->n_syncs,
                         .device_id = -1, .sm_count = t->sm_count};
    w.launch_ns = malloc(t->n_acts * sizeof *w.launch_ns);
    w.launch_end = malloc(t->n_acts * sizeof *w.launch_end);
    if (w.launch_ns == NULL || w.launch_end == NULL ||
        uf_timeline_launch_calls(&w.tl, w.launch_ns, w.launch_end) != 0)
        goto out_oom;
    record_span(t, &w.first_ns, &w.last_ns);
    if (find_steps(&w, d) != 0)
        goto out_oom;
    d->n_steps = w.n_steps;
    w.tl.measure_begin_ns = w.bounds[0];
    w.tl.measure_end_ns = w.bounds[w.n_steps] - 1;
    w.tl.steps_enqueued_ns = w.bounds[w.n_steps];     /* host calls: [bounds[0], bounds[n]) */
    w.tl.n_steps = w.n_steps;
    int analyzed = uf_timeline_analyze_drains(&w.tl, &d->tl, &drains, &n_drains);
    if (analyzed != 0 && d->tl.n_activities > 0)   /* it counted work, then ran out of memory */
        goto out_oom;
    if (analyzed != 0 || !(d->tl.window_ms > 0.0)) {
        rc = uf_set_err(err, errlen, "pid %d: no device work launched inside the steady window",
                        t->pid);
        goto out_free;
    }
    /* The steady window on the device is the harness's window over the steps' work
     * (d->tl.window_ms); its ends, and the last start in it, for the counters and syncs. */
    if (assign_steps(&w) != 0)
        goto out_oom;
    d->startup_ms = w.dev_begin > w.first_ns ? (double)(w.dev_begin - w.first_ns) / 1e6 : 0.0;
    d->tail_ms = w.last_ns > w.dev_end ? (double)(w.last_ns - w.dev_end) / 1e6 : 0.0;
    if (median_step_ms(&w, d->tl.window_ms, &d->step_ms) != 0)
        goto out_oom;
    if (n_drains > 1)
        qsort(drains, n_drains, sizeof *drains, cmp_drain_end);
    if (gap_figures(&w, drains, n_drains, d) != 0 || work_figures(&w, d) != 0 ||
        host_cost_figures(&w, d) != 0)
        goto out_oom;
    sync_figures(&w, drains, n_drains, w.dev_last_start, d);
    counter_figures(t, w.dev_begin, w.dev_end, d);
    uf_doctor_apply_rules(d);
    uf_doctor_order_findings(d);
    rc = 0;
    goto out_free;
out_oom:
    rc = uf_set_err(err, errlen, "pid %d: out of memory", t->pid);
out_free:
    free(drains);
    free(w.bounds);
    free(w.launch_ns);
    free(w.launch_end);
    free(w.step_of);
    free(w.first_launch);
    free(w.first_start);
    return rc;
}

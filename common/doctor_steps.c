/* underfed doctor, pass 2: the steps (doctor_internal.h lists the passes). NVTX ranges when
 * the program marks its steps, else the repeating sequence of device work in launch order,
 * else the whole run as one step; slow leading and trailing steps (warm-up, tail) left out. */
#include "doctor.h"

#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"
#include "stats.h"

/* ---- the records in launch order ------------------------------------------------------------- */

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
static int detect_steps(uf_doctor_work *w, token *seq, size_t n, char *source, size_t source_len)
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

/* ---- steps from NVTX ------------------------------------------------------------------------- */

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
static int nvtx_steps(uf_doctor_work *w, char *source, size_t source_len)
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
static int trim_slow_steps(uf_doctor_work *w, int *left_out)
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

/* The launch-ordered sequence of device work, host waits and event records. */
static token *make_sequence(const uf_doctor_work *w, size_t *n)
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

/* Steps: NVTX, else detected, else the whole run as one step (doctor_internal.h). */
int uf_doctor_pass_steps(uf_doctor_work *w, uf_diagnosis *d)
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


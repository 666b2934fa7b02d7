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
    uint32_t thread;            /* the calling thread (0 unknown) */
    uint32_t stream;            /* the activity's or the sync's stream; UINT32_MAX none */
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

static int cmp_size(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return (a > b) - (a < b);
}

/* The host's time before record i of a sequence: from the previous record's start (0 for the
 * first). A sync's wait counts before the record after it, so a step that ends in a sync
 * starts after it. */
static double pause_before(const token *seq, size_t i)
{
    return i > 0 ? (double)(seq[i].t_ns - seq[i - 1].t_ns) : 0.0;
}

/* The mean host time before the records at positions at[0..n) (n > 0) of seq. */
static double mean_pause(const token *seq, const size_t *at, size_t n)
{
    double pause = 0.0;
    for (size_t j = 0; j < n; j++)
        pause += pause_before(seq, at[j]);
    return pause / (double)n;
}

/* ---- step candidates ------------------------------------------------------------------------- */

/* Steps found in one sequence: their boundaries as positions in it. */
typedef struct candidate {
    size_t *at;                 /* boundary positions, ascending: steps + 1 of them (the last
                                 * closes the last step); NULL none */
    size_t n_at;
    size_t period;              /* records per step */
    size_t covered;             /* records from the first boundary to the last */
    double pause_ns;            /* mean host time before a boundary */
    int loose;                  /* a chain at about its period (repeating_records' second
                                 * kind), not at exactly it */
} candidate;

static void candidate_free(candidate *c)
{
    free(c->at);
    *c = (candidate){0};
}

/* Do records [lo, hi) lie apart from candidate c's (c not empty)? */
static int disjoint(size_t lo, size_t hi, const candidate *c)
{
    return hi <= c->at[0] || lo >= c->at[c->n_at - 1];
}

/* Is a candidate covering `covered` records from `first` at `period` (loose: at about it) better
 * than the best so far? More records win. Within UF_DOCTOR_COVER_TIE of each other, or, where
 * either is a loose chain, within the longer of the two periods (a record of each layer, whose
 * loose chain reaches a part of a step further at each end than the step's own record: a
 * fraction of a step is never a step; a loose chain wins where it covers steps the exact runs
 * cannot, whose records vary): of two runs in different
 * parts of the run, the later (the steady state follows the warm-up: a generate() call's first
 * tokens, slower, repeat as many times as a later call's); else the longer period: a kernel
 * repeating inside the step (once per layer, 600 identical kernels at spacing 1, an op cycle
 * whose last slot the step's own last kernel takes) can cover as much as the step's own marker,
 * and only the longer period repeats every record; at one period (loose chains: within
 * UF_DOCTOR_STEP_SLACK of each other, their steps' records vary), the one after the longer
 * host pause (the step starts after its data loading or its sync). */
static int better_candidate(size_t covered, size_t period, double pause_ns, size_t first,
                            int loose, const candidate *best)
{
    if (best->n_at == 0)
        return 1;
    double cov = (double)covered, best_cov = (double)best->covered;
    double band = best_cov * UF_DOCTOR_COVER_TIE;
    double longer = (double)(period > best->period ? period : best->period);
    if ((loose || best->loose) && band < longer)
        band = longer;
    if (cov > best_cov + band)
        return 1;
    if (cov < best_cov - band)
        return 0;
    if (disjoint(first, first + covered, best))
        return first > best->at[0];
    size_t apart = period > best->period ? period - best->period : best->period - period;
    if (apart > ((loose || best->loose) ? (size_t)longer / UF_DOCTOR_STEP_SLACK : 0))
        return period > best->period;
    return pause_ns > best->pause_ns;
}

/* Keep positions at[0..n) (copied) as the best candidate if they beat it. 0, -1 out of memory. */
static int offer(candidate *best, const size_t *at, size_t n, size_t period, double pause_ns,
                 int loose)
{
    size_t covered = at[n - 1] - at[0];
    if (!better_candidate(covered, period, pause_ns, at[0], loose, best))
        return 0;
    size_t *copy = malloc(n * sizeof *copy);
    if (copy == NULL)
        return -1;
    memcpy(copy, at, n * sizeof *copy);
    free(best->at);
    *best = (candidate){copy, n, period, covered, pause_ns, loose};
    return 0;
}

/* The first of pos[lo..m) (ascending) at or after x, or m. */
static size_t first_at_or_after(const size_t *pos, size_t lo, size_t m, size_t x)
{
    return lo + uf_lower_bound(pos + lo, m - lo, sizeof *pos, &x, cmp_size);
}

/* The spacings between consecutive positions pos[0..m) (ascending) into d[0..m-1), sorted. */
static void sorted_spacings(const size_t *pos, size_t m, size_t *d)
{
    for (size_t j = 0; j + 1 < m; j++)
        d[j] = pos[j + 1] - pos[j];
    if (m >= 2)
        qsort(d, m - 1, sizeof *d, cmp_size);
}

/* The most frequent of the spacings between consecutive positions pos[0..m) (ascending; ties:
 * the larger) and how often it occurs; d holds m - 1 scratch values. 0 when m < 2. */
static size_t spacing_mode(const size_t *pos, size_t m, size_t *d, size_t *count)
{
    size_t mode = 0, mode_n = 0;
    sorted_spacings(pos, m, d);
    for (size_t j = 0; j + 1 < m;) {
        size_t e = j;
        while (e + 1 < m && d[e] == d[j])
            e++;
        if (e - j >= mode_n) {
            mode = d[j];
            mode_n = e - j;
        }
        j = e;
    }
    *count = mode_n;
    return mode;
}

/* The median of the spacings between consecutive positions pos[0..m) (ascending), m >= 2; d
 * holds m - 1 scratch values. */
static size_t spacing_median(const size_t *pos, size_t m, size_t *d)
{
    sorted_spacings(pos, m, d);
    return d[(m - 2) / 2];
}

/* The longest chain of positions of pos[0..m) (ascending) each within tol of `spacing` after
 * the one before (positions in between are stepped over) into chain; its length. used holds m
 * scratch flags, scratch m positions. */
static size_t longest_chain(const size_t *pos, size_t m, size_t spacing, size_t tol,
                            unsigned char *used, size_t *scratch, size_t *chain)
{
    size_t best_len = 0;
    memset(used, 0, m);
    for (size_t j0 = 0; j0 < m; j0++) {
        if (used[j0])
            continue;
        size_t len = 0, j = j0;
        while (j < m && !used[j]) {
            used[j] = 1;
            scratch[len++] = pos[j];
            size_t next = first_at_or_after(pos, j + 1, m, pos[j] + spacing - tol);
            j = next < m && pos[next] <= pos[j] + spacing + tol ? next : m;
        }
        if (len > best_len) {
            best_len = len;
            memcpy(chain, scratch, len * sizeof *chain);
        }
    }
    return best_len;
}

/* The repeating records: for each kind of record, its runs of occurrences at a constant
 * spacing (one kernel a step repeats at spacing 1), and its longest chain at about its median
 * spacing (longest_chain, within UF_DOCTOR_STEP_SLACK: a step's kernel whose steps hold a few
 * records more every so often, a loss read every 100 steps, or other kernels for another
 * shape, repeats so, where its runs at one spacing end at each of them, and a record of the
 * logging step alone would cover more); the candidate covering the most records wins (near
 * ties: better_candidate). Where an exact run wins over a chain that covered as much at a
 * period at most half its own, that chain's period into *finer (0 otherwise): the two read
 * alike (a step with a read-back every k steps, or k layers a step), and the report says so.
 * seq in time order. 0, or -1 out of memory. */
static int repeating_records(const token *seq, size_t n, candidate *best, size_t *finer)
{
    size_t loose_period = 0, loose_covered = 0;
    *finer = 0;
    token *k = malloc((n + 1) * sizeof *k);
    size_t *at = malloc((n + 1) * sizeof *at), *pos = malloc((n + 1) * sizeof *pos);
    size_t *scratch = malloc((n + 1) * sizeof *scratch);
    unsigned char *used = malloc(n + 1);
    int rc = -1;
    if (k == NULL || at == NULL || pos == NULL || scratch == NULL || used == NULL)
        goto out;
    memcpy(k, seq, n * sizeof *k);
    qsort(k, n, sizeof *k, cmp_token_key);
    for (size_t i = 0; i < n;) {
        size_t end = i;
        while (end < n && k[end].key == k[i].key)
            end++;
        /* runs [j0, j1] of occurrences whose spacing is constant */
        for (size_t j0 = i; j0 + 1 < end;) {
            size_t period = k[j0 + 1].seq - k[j0].seq, j1 = j0 + 1;
            while (j1 + 1 < end && k[j1 + 1].seq - k[j1].seq == period)
                j1++;
            if (j1 - j0 >= UF_DOCTOR_MIN_STEPS) {
                for (size_t j = j0; j <= j1; j++)
                    at[j - j0] = k[j].seq;
                if (offer(best, at, j1 - j0 + 1, period, mean_pause(seq, at, j1 - j0 + 1), 0) != 0)
                    goto out;
            }
            j0 = j1;
        }
        /* the chain at about the median spacing (UF_DOCTOR_STEP_SLACK of it), for steps of
         * UF_DOCTOR_LOOSE_MIN_RECORDS or more */
        size_t m = end - i;
        for (size_t j = 0; j < m; j++)
            pos[j] = k[i + j].seq;
        size_t typical = m > UF_DOCTOR_MIN_STEPS ? spacing_median(pos, m, scratch) : 0;
        if (typical >= UF_DOCTOR_LOOSE_MIN_RECORDS) {
            size_t len = longest_chain(pos, m, typical, typical / UF_DOCTOR_STEP_SLACK, used,
                                       scratch, at);
            if (len >= UF_DOCTOR_MIN_STEPS + 1) {
                if (offer(best, at, len, typical, mean_pause(seq, at, len), 1) != 0)
                    goto out;
                if (at[len - 1] - at[0] > loose_covered) {
                    loose_covered = at[len - 1] - at[0];
                    loose_period = typical;
                }
            }
        }
        i = end;
    }
    if (best->n_at > 0 && !best->loose && loose_period > 0 && 2 * loose_period <= best->period &&
        loose_covered >= best->covered)
        *finer = loose_period;
    rc = 0;
out:
    free(k);
    free(at);
    free(pos);
    free(scratch);
    free(used);
    return rc;
}

/* Do the host's pauses at positions pos[0..m) (ascending) recur at one spacing? The spacing
 * between consecutive pauses that most often recurs (a pause before every record marks no
 * step), and the longest chain of pauses each about that spacing after the one before (within
 * a sixteenth: a few records more in a step that also logs; pauses in between, a collection
 * or a page fault inside a step, are stepped over: longest_chain); it is a candidate when it holds at least
 * UF_DOCTOR_PAUSE_REGULAR of the pauses. 0, or -1 out of memory. */
static int offer_pauses(const token *seq, const size_t *pos, size_t m, candidate *best)
{
    size_t *d = malloc(m * sizeof *d), *chain = malloc(m * sizeof *chain);
    size_t *scratch = malloc(m * sizeof *scratch);
    unsigned char *used = malloc(m);
    int rc = -1;
    if (d == NULL || chain == NULL || scratch == NULL || used == NULL)
        goto out;
    size_t mode_n = 0, mode = spacing_mode(pos, m, d, &mode_n);
    rc = 0;
    if (mode < 2 || mode_n < UF_DOCTOR_MIN_STEPS)
        goto out;
    size_t best_len = longest_chain(pos, m, mode, mode / 16, used, scratch, chain);
    if (best_len < UF_DOCTOR_MIN_STEPS + 1 ||
        (double)best_len < UF_DOCTOR_PAUSE_REGULAR * (double)m)
        goto out;
    rc = offer(best, chain, best_len, mode, mean_pause(seq, chain, best_len), 0);
out:
    free(d);
    free(chain);
    free(scratch);
    free(used);
    return rc;
}

/* By pause before the record, longest first (ties: earlier first). */
typedef struct pause_rank {
    double pause_ns;
    size_t at;
} pause_rank;

static int cmp_pause_rank(const void *pa, const void *pb)
{
    const pause_rank *a = pa, *b = pb;
    if (a->pause_ns != b->pause_ns)
        return a->pause_ns > b->pause_ns ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* The host's recurring pause: the longest pauses, taken down to a natural break (the shortest
 * of them at least UF_DOCTOR_PAUSE_BREAK x the longest of the rest, so that they stand out
 * from the host's time between launches), whose positions recur at one spacing
 * (offer_pauses). The first UF_DOCTOR_PAUSE_BREAKS breaks from the top are tried; the best
 * candidate wins (better_candidate). 0, or -1 out of memory. */
static int recurring_pause(const token *seq, size_t n, candidate *best)
{
    if (n < 2 * (UF_DOCTOR_MIN_STEPS + 1))
        return 0;
    pause_rank *r = malloc(n * sizeof *r);
    size_t *pos = malloc(n * sizeof *pos);
    int rc = -1;
    if (r == NULL || pos == NULL)
        goto out;
    for (size_t i = 1; i < n; i++)
        r[i - 1] = (pause_rank){pause_before(seq, i), i};
    qsort(r, n - 1, sizeof *r, cmp_pause_rank);
    int tried = 0;
    for (size_t m = UF_DOCTOR_MIN_STEPS + 1; m < n - 1 && tried < UF_DOCTOR_PAUSE_BREAKS; m++) {
        double shortest = r[m - 1].pause_ns, next = r[m].pause_ns;
        if (!(shortest > 0.0 && shortest >= UF_DOCTOR_PAUSE_BREAK * next))
            continue;
        tried++;
        for (size_t j = 0; j < m; j++)
            pos[j] = r[j].at;
        qsort(pos, m, sizeof *pos, cmp_size);
        if (offer_pauses(seq, pos, m, best) != 0)
            goto out;
    }
    rc = 0;
out:
    free(r);
    free(pos);
    return rc;
}

/* ---- the steps of one sequence --------------------------------------------------------------- */

/* How the steps were found. */
typedef enum { FOUND_NONE, FOUND_RECORDS, FOUND_PAUSE, FOUND_BOTH, FOUND_AMBIGUOUS } found_how;

typedef struct steps_found {
    candidate c;                /* the boundaries (FOUND_AMBIGUOUS: the first and the last) */
    found_how how;
    size_t records_period, pause_period;   /* each signal's period (0 none) */
    size_t finer_period;        /* the steps are the records' and a chain at this period, at
                                 * most half theirs, covered as much (repeating_records); 0 */
} steps_found;

/* Every k-th boundary of c, from the one of the k offsets whose pauses are longest on average:
 * a step of k pause-to-pause pieces starts after its longest pause. 0, or -1 out of memory. */
static int every_kth(const token *seq, const candidate *c, size_t k, candidate *out)
{
    size_t best_r = 0;
    double best_pause = -1.0;
    for (size_t r = 0; r < k; r++) {
        double pause = 0.0;
        size_t n = 0;
        for (size_t j = r; j < c->n_at; j += k, n++)
            pause += pause_before(seq, c->at[j]);
        if (n > 0 && pause / (double)n > best_pause) {
            best_pause = pause / (double)n;
            best_r = r;
        }
    }
    size_t n = 0, *at = malloc(c->n_at * sizeof *at);
    if (at == NULL)
        return -1;
    for (size_t j = best_r; j < c->n_at; j += k)
        at[n++] = c->at[j];
    *out = (candidate){at, n, c->period * k, n > 0 ? at[n - 1] - at[0] : 0, best_pause, c->loose};
    return 0;
}

/* Do most of b's boundaries fall on a's (both ascending)? */
static int same_phase(const candidate *a, const candidate *b)
{
    size_t i = 0, common = 0;
    for (size_t j = 0; j < b->n_at; j++) {
        while (i < a->n_at && a->at[i] < b->at[j])
            i++;
        common += i < a->n_at && a->at[i] == b->at[j];
    }
    return 2 * common >= b->n_at;
}

/* The steps of one sequence from its two signals (doctor.h's step detection): the repeating
 * records (rec) and the host's recurring pause (pause). One alone decides; so does one that
 * covers at least twice the other's records, or the later of two that cover different parts
 * of the run. When both hold: the same period at the same phase is the records' (they reach
 * back to the first step); the same period at another phase (the repeating sequence starts
 * mid-step), or a pause that recurs every k record periods (600 identical kernels a step
 * repeat at spacing 1: the pause shows the step), is the pause's; records that repeat every k
 * pauses make steps of k pauses, starting after the longest; any other pair is ambiguous. 0,
 * or -1 out of memory. */
static int choose_steps(const token *seq, candidate *rec, candidate *pause, steps_found *f)
{
    f->records_period = rec->n_at > 0 ? rec->period : 0;
    f->pause_period = pause->n_at > 0 ? pause->period : 0;
    int use_rec = rec->n_at > 0, use_pause = pause->n_at > 0;
    if (use_rec && use_pause) {
        if ((double)pause->covered < 0.5 * (double)rec->covered)
            use_pause = 0;
        else if ((double)rec->covered < 0.5 * (double)pause->covered)
            use_rec = 0;
        else if (disjoint(pause->at[0], pause->at[pause->n_at - 1], rec))
            use_rec = !(use_pause = pause->at[0] > rec->at[0]);   /* two parts: the later */
    }
    if (use_rec && !use_pause) {
        f->c = *rec;
        *rec = (candidate){0};
        f->how = FOUND_RECORDS;
        return 0;
    }
    if (use_pause && !use_rec) {
        f->c = *pause;
        *pause = (candidate){0};
        f->how = FOUND_PAUSE;
        return 0;
    }
    if (!use_rec) {
        f->how = FOUND_NONE;
        return 0;
    }
    size_t pr = rec->period, pp = pause->period;
    if (pp == pr && same_phase(rec, pause)) {   /* the records reach the first step too */
        f->c = *rec;
        *rec = (candidate){0};
        f->how = FOUND_BOTH;
        return 0;
    }
    if ((size_t)labs((long)pp - (long)pr) <= pr / 16 || pp % pr == 0) {
        f->c = *pause;
        *pause = (candidate){0};
        f->how = FOUND_BOTH;
        return 0;
    }
    if (pr % pp == 0) {
        f->how = FOUND_BOTH;
        return every_kth(seq, pause, pr / pp, &f->c);
    }
    /* ambiguous: the window both cover, judged as one */
    size_t *at = malloc(2 * sizeof *at);
    if (at == NULL)
        return -1;
    at[0] = rec->at[0] < pause->at[0] ? rec->at[0] : pause->at[0];
    at[1] = rec->at[rec->n_at - 1] > pause->at[pause->n_at - 1] ? rec->at[rec->n_at - 1]
                                                                  : pause->at[pause->n_at - 1];
    f->c = (candidate){at, 2, at[1] - at[0], at[1] - at[0], 0.0, 0};
    f->how = FOUND_AMBIGUOUS;
    return 0;
}

/* The steps of one sequence (time order). 0, or -1 out of memory. */
static int steps_of_sequence(const token *seq, size_t n, steps_found *f)
{
    candidate rec = {0}, pause = {0};
    *f = (steps_found){.how = FOUND_NONE};
    size_t finer = 0;
    int rc = -1;
    if (n == 0) {
        rc = 0;
        goto out;
    }
    if (repeating_records(seq, n, &rec, &finer) != 0 || recurring_pause(seq, n, &pause) != 0)
        goto out;
    size_t rec_period = rec.period;
    rc = choose_steps(seq, &rec, &pause, f);
    if (finer > 0 && (f->how == FOUND_RECORDS || f->how == FOUND_BOTH) &&
        f->c.period == rec_period)
        f->finer_period = finer;
out:
    candidate_free(&rec);
    candidate_free(&pause);
    return rc;
}

/* The step source's words for what was found. */
static void describe_steps(const steps_found *f, const char *whose, char *source, size_t len)
{
    switch (f->how) {
    case FOUND_RECORDS:
        snprintf(source, len, "detected: a sequence of %zu record%s repeating%s", f->c.period,
                 f->c.period == 1 ? "" : "s", whose);
        break;
    case FOUND_PAUSE:
        snprintf(source, len, "detected: a host pause recurring every %zu records%s",
                 f->c.period, whose);
        break;
    case FOUND_BOTH:
        if (f->records_period == f->c.period)
            snprintf(source, len, "detected: a sequence of %zu records repeating, after the "
                     "host's recurring pause%s", f->c.period, whose);
        else
            snprintf(source, len, "detected: a sequence of %zu records repeating (the records "
                     "repeat every %zu, the host pauses every %zu)%s", f->c.period,
                     f->records_period, f->pause_period, whose);
        break;
    case FOUND_AMBIGUOUS:
        snprintf(source, len, "ambiguous: the records repeat every %zu, the host pauses every "
                 "%zu: the steady window (%zu records) judged as one step%s",
                 f->records_period, f->pause_period, f->c.period, whose);
        break;
    case FOUND_NONE:
        break;
    }
    if (f->finer_period > 0) {      /* ambiguous between the two: said, the coarser kept */
        size_t used = strlen(source), k = (f->c.period + f->finer_period / 2) / f->finer_period;
        snprintf(source + used, used < len ? len - used : 0, "; or of about %zu, one in %zu "
                 "longer (a read-back every %zu steps?)", f->finer_period, k, k);
    }
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

/* A device record by its launch: when, and what (activity_key). */
typedef struct launched {
    uint64_t t_ns, key;
} launched;

static int cmp_launched(const void *pa, const void *pb)
{
    return uf_cmp_u64(&((const launched *)pa)->t_ns, &((const launched *)pb)->t_ns);
}

/* The records of r (n, by launch) launched in [lo, hi): [*first, *first + return). */
static size_t launched_between(const launched *r, size_t n, uint64_t lo, uint64_t hi,
                               size_t *first)
{
    launched x = {lo, 0}, y = {hi, 0};
    size_t a = uf_lower_bound(r, n, sizeof *r, &x, cmp_launched);
    size_t b = uf_lower_bound(r, n, sizeof *r, &y, cmp_launched);
    *first = a;
    return b > a ? b - a : 0;
}

/* Does a slow leading step of `count` records from r[first] do the kept steps' work: about as
 * many records as their median (within UF_DOCTOR_STEP_WORK_SLACK), and at least
 * UF_DOCTOR_STEP_WORK_SHARED of them of kinds the kept steps run (kept_keys, sorted: the same
 * kernel by name, a copy in the same direction, as activity_key tells them)? */
static int does_the_steps_work(const launched *r, size_t first, size_t count, double work_med,
                               const uint64_t *kept_keys, size_t n_kept)
{
    double k = (double)count;
    if (k < work_med / UF_DOCTOR_STEP_WORK_SLACK || k > work_med * UF_DOCTOR_STEP_WORK_SLACK)
        return 0;
    size_t shared = 0;
    for (size_t i = first; i < first + count; i++) {
        size_t j = uf_lower_bound(kept_keys, n_kept, sizeof *kept_keys, &r[i].key, uf_cmp_u64);
        shared += j < n_kept && kept_keys[j] == r[i].key;
    }
    return (double)shared >= UF_DOCTOR_STEP_WORK_SHARED * k;
}

/* trim_slow_steps' reading of the slow leading steps [0, lo) before the kept ones [lo, hi):
 * where at least UF_DOCTOR_MIN_STEPS of them did the steps' work and loaded code after the
 * run's first build, w->steps_began_ns moves to the first step after that build. 0, or -1 out
 * of memory. */
static int slow_steps_compiled(uf_doctor_work *w, int lo, int hi)
{
    const uf_dtrace *t = w->t;
    size_t n_acts = t->n_acts, n_kept = 0, first_rec = 0;
    int rc = -1;
    double *work = malloc((size_t)(hi - lo) * sizeof *work);
    launched *r = malloc((n_acts + 1) * sizeof *r);
    uint64_t *kept = NULL;
    if (work == NULL || r == NULL)
        goto out;
    for (size_t i = 0; i < n_acts; i++)
        r[i] = (launched){w->launch_ns[i], activity_key(&t->acts[i])};
    qsort(r, n_acts, sizeof *r, cmp_launched);
    for (int s = lo; s < hi; s++)
        work[s - lo] = (double)launched_between(r, n_acts, w->bounds[s], w->bounds[s + 1],
                                                &first_rec);
    double work_med = uf_median(work, hi - lo);
    size_t n_in = launched_between(r, n_acts, w->bounds[lo], w->bounds[hi], &first_rec);
    if ((kept = malloc((n_in + 1) * sizeof *kept)) == NULL)
        goto out;
    for (size_t i = 0; i < n_in; i++)
        kept[i] = r[first_rec + i].key;
    qsort(kept, n_in, sizeof *kept, uf_cmp_u64);
    /* each kind once, those launched in at least half as many records as kept steps (not
     * the odd record in the window: the last piece of a start-up may open it) */
    for (size_t i = 0, j; i < n_in; i = j) {
        for (j = i; j < n_in && kept[j] == kept[i]; j++)
            ;
        if (2 * (j - i) >= (size_t)(hi - lo))
            kept[n_kept++] = kept[i];
    }
    /* the run's first build (before the steps, or in the first of them that loads) is
     * start-up; the slow leading steps that do the steps' work and load after it compile */
    int first = uf_doctor_loads_between(w, 0, w->bounds[0] - 1) ? 0 : -1, compiling = 0;
    for (int s = 0; s < lo; s++) {
        if (!uf_doctor_loads_between(w, w->bounds[s], w->bounds[s + 1] - 1))
            continue;
        size_t count = launched_between(r, n_acts, w->bounds[s], w->bounds[s + 1], &first_rec);
        if (first < 0)
            first = s + 1;
        else if (does_the_steps_work(r, first_rec, count, work_med, kept, n_kept))
            compiling++;
    }
    if (compiling >= UF_DOCTOR_MIN_STEPS && w->bounds[first] < w->steps_began_ns)
        w->steps_began_ns = w->bounds[first];
    rc = 0;
out:
    free(work);
    free(r);
    free(kept);
    return rc;
}

/* Leave out leading and trailing steps slower than UF_DOCTOR_SLOW_STEP x the median (warm-up,
 * a compiling first step, a slow last one), keeping at least UF_DOCTOR_MIN_STEPS. Where at
 * least UF_DOCTOR_MIN_STEPS of the slow leading ones loaded device code after the run's first
 * build (before the steps, or in the first step that loads) while doing the steps' work
 * (does_the_steps_work; slow_steps_compiled), the steps kept compiling (a program that builds a kernel for each new
 * shape in its first hundred steps, then runs its steady ones): w->steps_began_ns moves to
 * the first step after that build, like an earlier chain (earlier_steps), so the idle those
 * steps spent building code counts over the run since. The first build stays start-up: every
 * program compiles once; and so does a slow leading "step" of other work (the pieces of a
 * start-up that compiles one function after another, between which the steps' first record
 * happens to recur). */
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
    /* fewer slow leading steps than could compile after a first build: nothing to read */
    if (lo >= UF_DOCTOR_MIN_STEPS && slow_steps_compiled(w, lo, hi) != 0)
        return -1;
    memmove(w->bounds, w->bounds + lo, (size_t)(hi - lo + 1) * sizeof *w->bounds);
    w->n_steps = hi - lo;
    *left_out = n - w->n_steps;
    return 0;
}

/* The calling thread of t->apis[api] (0 unknown, or no such call). */
static uint32_t thread_of(const uf_dtrace *t, size_t api)
{
    return api < t->n_apis ? t->apis[api].thread_id : 0;
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
        seq[k] = (token){w->launch_ns[i], activity_key(&t->acts[i]), k,
                         thread_of(t, w->act_api[i]), t->acts[i].stream_id};
    for (size_t i = 0; i < t->n_syncs; i++, k++) {
        uint64_t key = fnv1a(0x5157ull, &t->syncs[i].kind, 1);
        seq[k] = (token){t->syncs[i].start_ns, key, k, thread_of(t, w->sync_api[i]),
                         t->syncs[i].stream_id};
    }
    /* Event records mark steps where every kernel has one name (a timing loop's events, a
     * framework's per-step events): a step of N identical kernels repeats [event, N x k]. */
    for (size_t i = 0; i < t->n_apis; i++)
        if (uf_doctor_is_event_record(t->apis[i].name)) {
            seq[k] = (token){t->apis[i].start_ns, 0xe7e7e7e7ull, k, t->apis[i].thread_id,
                             UINT32_MAX};
            k++;
        }
    qsort(seq, k, sizeof *seq, cmp_token_time);
    for (size_t i = 0; i < k; i++)
        seq[i].seq = i;
    *n = k;
    return seq;
}

/* The thread (by_thread) or the stream that holds the most records of seq, and whether
 * another holds any: a sequence of its own is worth trying only then. */
static int main_source(const token *seq, size_t n, int by_thread, uint32_t *which)
{
    uint32_t *v = malloc((n + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = by_thread ? seq[i].thread : seq[i].stream;
        if (by_thread ? x != 0 : x != UINT32_MAX)
            v[m++] = x;
    }
    int several = 0;
    size_t best_n = 0;
    for (size_t i = 0; i < m; i++) {     /* few distinct values: count each once */
        if (v[i] != v[0])
            several = 1;
        size_t c = 0;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = v[j] == v[i];
        for (size_t j = i; !seen && j < m; j++)
            c += v[j] == v[i];
        if (!seen && c > best_n) {
            best_n = c;
            *which = v[i];
        }
        if (!seen && i > 64)            /* many threads or streams: the first 64 decide */
            break;
    }
    free(v);
    return several;
}

/* The records of seq from one thread (by_thread) or on one stream, renumbered. */
static size_t sub_sequence(const token *seq, size_t n, int by_thread, uint32_t which,
                           token *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if ((by_thread ? seq[i].thread : seq[i].stream) == which) {
            out[m] = seq[i];
            out[m].seq = m;
            m++;
        }
    return m;
}

/* The host time the steps of f span in seq. */
static uint64_t found_span_ns(const steps_found *f, const token *seq)
{
    return f->c.n_at > 1 ? seq[f->c.at[f->c.n_at - 1]].t_ns - seq[f->c.at[0]].t_ns : 0;
}

/* Is found b (in sequence sb) a better reading than a (in sa)? Steps found beat an ambiguous
 * reading, which beats none; between found steps, b must span at least 1.25 x a's host time:
 * the process's whole sequence, tried first, keeps its steps unless one thread's or one
 * stream's cover clearly more of the run (records of another thread interleave at random, a
 * prefetcher's copies say, and cut the whole sequence's repeats short). */
static int better_found(const steps_found *a, const token *sa, const steps_found *b,
                        const token *sb)
{
    int ra = a->how == FOUND_NONE ? 0 : a->how == FOUND_AMBIGUOUS ? 1 : 2;
    int rb = b->how == FOUND_NONE ? 0 : b->how == FOUND_AMBIGUOUS ? 1 : 2;
    if (ra != rb)
        return rb > ra;
    if (rb < 2)
        return 0;
    return (double)found_span_ns(b, sb) > 1.25 * (double)found_span_ns(a, sa);
}

/* Where steps like c's ran again, before c: the second of the longest chain of at least
 * UF_DOCTOR_MIN_STEPS + 1 occurrences of c's first record at about c's period, all before it
 * (longest_chain): the warm-up's steps, before a stretch that left the chain (a recompile for
 * a new shape after them). Not the first: the chain's first step runs the steps' kernels for
 * the first time, and what it loads (a lazily loaded library's kernels, at first use) is
 * start-up. UINT64_MAX none; 0 out of memory. */
static uint64_t earlier_steps(const token *seq, const candidate *c)
{
    uint64_t key = seq[c->at[0]].key, began = UINT64_MAX;
    size_t m = 0;
    for (size_t j = 0; j < c->at[0]; j++)
        m += seq[j].key == key;
    if (m < UF_DOCTOR_MIN_STEPS + 1)
        return began;
    size_t *pos = malloc(m * sizeof *pos), *scratch = malloc(m * sizeof *scratch);
    size_t *chain = malloc(m * sizeof *chain);
    unsigned char *used = malloc(m);
    if (pos == NULL || scratch == NULL || chain == NULL || used == NULL) {
        began = 0;
        goto out;
    }
    m = 0;
    for (size_t j = 0; j < c->at[0]; j++)
        if (seq[j].key == key)
            pos[m++] = j;
    size_t len = longest_chain(pos, m, c->period, c->period / UF_DOCTOR_STEP_SLACK, used,
                               scratch, chain);
    if (len >= UF_DOCTOR_MIN_STEPS + 1)
        began = seq[chain[1]].t_ns;
out:
    free(pos);
    free(scratch);
    free(chain);
    free(used);
    return began;
}

/* Detected steps: the process's sequence, else one thread's (the one launching the most), else
 * one stream's (format <= 3 traces have no threads), whichever reads best (better_found).
 * Sets w->bounds and w->n_steps (0 when none), and the source. 0, or -1 out of memory. */
static int detect_steps(uf_doctor_work *w, char *source, size_t source_len, int *ambiguous)
{
    size_t n = 0;
    token *seq = make_sequence(w, &n);
    token *sub = malloc((n + 1) * sizeof *sub), *best_seq = malloc((n + 1) * sizeof *best_seq);
    steps_found best = {.how = FOUND_NONE}, f;
    char whose[64] = "";
    int rc = -1;
    if (seq == NULL || sub == NULL || best_seq == NULL)
        goto out;
    if (steps_of_sequence(seq, n, &best) != 0)
        goto out;
    memcpy(best_seq, seq, n * sizeof *seq);
    for (int by_thread = 1; by_thread >= 0; by_thread--) {
        uint32_t which = 0;
        int several = main_source(seq, n, by_thread, &which);
        if (several < 0)
            goto out;
        if (!several)
            continue;
        size_t m = sub_sequence(seq, n, by_thread, which, sub);
        if (steps_of_sequence(sub, m, &f) != 0)
            goto out;
        if (better_found(&best, best_seq, &f, sub)) {
            candidate_free(&best.c);
            best = f;
            memcpy(best_seq, sub, m * sizeof *sub);
            snprintf(whose, sizeof whose, " (%s %u's records)", by_thread ? "thread" : "stream",
                     which);
        } else {
            candidate_free(&f.c);
        }
    }
    rc = 0;
    if (best.how == FOUND_NONE)
        goto out;
    w->bounds = malloc(best.c.n_at * sizeof *w->bounds);
    if (w->bounds == NULL) {
        rc = -1;
        goto out;
    }
    for (size_t s = 0; s < best.c.n_at; s++)
        w->bounds[s] = best_seq[best.c.at[s]].t_ns;
    w->n_steps = (int)best.c.n_at - 1;
    *ambiguous = best.how == FOUND_AMBIGUOUS;
    if (!*ambiguous && (w->steps_began_ns = earlier_steps(best_seq, &best.c)) == 0) {
        rc = -1;
        goto out;
    }
    describe_steps(&best, whose, source, source_len);
out:
    candidate_free(&best.c);
    free(seq);
    free(sub);
    free(best_seq);
    return rc;
}

/* Steps: NVTX, else detected, else the whole run as one step (doctor_internal.h). */
int uf_doctor_pass_steps(uf_doctor_work *w, uf_diagnosis *d)
{
    int ambiguous = 0;
    w->steps_began_ns = UINT64_MAX;
    if (nvtx_steps(w, d->step_source, sizeof d->step_source) != 0)
        return -1;
    if (w->n_steps == 0 && detect_steps(w, d->step_source, sizeof d->step_source, &ambiguous) != 0)
        return -1;
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
    return ambiguous ? 0 : trim_slow_steps(w, &d->steps_left_out);
}

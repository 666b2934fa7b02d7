/* Run comparison and its noise model (see compare.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "stats.h"

/* Where a judged metric's spread comes from (compare.h's noise model). */
typedef enum {
    SPREAD_STEP,            /* the timing pass's: spread_pct of each side */
    SPREAD_TRACE_WINDOW,    /* the trace pass's window: the drift of trace_overhead */
} spread_source;

/* The judged metrics and their spread; which way is better is the metric table's. The NVML
 * view of the timing pass (nvml_util_pct, sm_clock_mhz, sm_clock_min_mhz, power_w) is not
 * judged: a lower clock or a higher power explains a change in step time, it is not a
 * regression of its own. */
static const struct {
    const char *name;
    spread_source spread;
} compared[] = {
    {"step_ms", SPREAD_STEP},
    {"tflops_useful", SPREAD_STEP},
    {"gbs", SPREAD_STEP},
    {"busy_pct", SPREAD_TRACE_WINDOW},
};

enum { N_COMPARED = sizeof compared / sizeof compared[0] };

const char *uf_verdict_name(uf_verdict v)
{
    static const char *const names[] = {"SAME", "FASTER", "SLOWER", "NOISY", "MISSING", "NEW"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

/* Column index in b of each axis of a; -1 when b lacks it. */
static void map_axes(const uf_table *a, const uf_table *b, int *map)
{
    for (int i = 0; i < a->n_axes; i++) {
        map[i] = -1;
        for (int j = 0; j < b->n_axes; j++)
            if (strcmp(a->axis_names[i], b->axis_names[j]) == 0)
                map[i] = j;
    }
}

static const uf_row *find_row(const uf_table *b, const uf_row *ra, const int *map, int n_axes)
{
    for (int i = 0; i < b->n_rows; i++) {
        const uf_row *rb = &b->rows[i];
        if (strcmp(rb->variant, ra->variant) != 0)
            continue;
        int same = 1;
        for (int k = 0; k < n_axes && same; k++)
            same = map[k] >= 0 && rb->axis[map[k]] == ra->axis[k];
        if (same)
            return rb;
    }
    return NULL;
}

static void describe_point(const uf_table *t, const uf_row *r, char *out, size_t len)
{
    out[0] = '\0';
    for (int k = 0; k < t->n_axes; k++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s=%.10g", k ? " " : "", t->axis_names[k],
                 r->axis[k]);
    }
}

static uf_verdict judge(double a, double spread_a, double b, double spread_b, double threshold,
                        int lower_is_better)
{
    switch (uf_compare_values(a, isnan(spread_a) ? 0 : spread_a, b, isnan(spread_b) ? 0 : spread_b,
                              threshold, lower_is_better)) {
    case -1: return UF_FASTER;
    case 1: return UF_SLOWER;
    case 2: return UF_NOISY;
    default: return UF_SAME;
    }
}

double uf_launch_drift_pct(double launch_us_a, double launch_us_b)
{
    if (isnan(launch_us_a) || isnan(launch_us_b) || launch_us_a <= 0 || launch_us_b <= 0)
        return 0.0;
    return fabs(launch_us_b - launch_us_a) / fmin(launch_us_a, launch_us_b) * 100.0;
}

double uf_trace_window_drift_pct(double overhead_a, double overhead_b)
{
    if (isnan(overhead_a) || isnan(overhead_b) || overhead_a <= 0 || overhead_b <= 0)
        return 0.0;
    return fabs(overhead_b - overhead_a) / fmin(overhead_a, overhead_b) * 100.0;
}

double uf_table_launch_us(const uf_table *t)
{
    uf_ceilings c;
    uf_ceilings_from_meta(&t->meta, &c);
    return c.launch_us;
}

/* The larger idle_host_pct of the two rows when it makes the pair host-bound; NaN otherwise. */
static double host_bound_idle(const uf_row *ra, const uf_row *rb)
{
    double ia = isnan(ra->idle_host_pct) ? -1 : ra->idle_host_pct;
    double ib = isnan(rb->idle_host_pct) ? -1 : rb->idle_host_pct;
    double idle = fmax(ia, ib);
    return idle >= UF_HOST_BOUND_IDLE_PCT ? idle : NAN;
}

/* How one pair of values was judged. */
typedef struct judged {
    uf_verdict verdict, strict;
    double idle_host_pct, tolerance_pct, window_drift_pct;
} judged;

/* One diff into out[*n] when it fits; *n counts them all. */
static void add_diff(uf_diff *out, int max_out, int *n, const uf_table *t, const uf_row *r,
                     const char *metric, double a, double b, judged j)
{
    if (*n < max_out) {
        uf_diff *d = &out[*n];
        snprintf(d->variant, sizeof d->variant, "%s", r->variant);
        describe_point(t, r, d->where, sizeof d->where);
        d->metric = metric;
        d->a = a;
        d->b = b;
        d->change_pct = isnan(a) || isnan(b) || a == 0 ? NAN : (b - a) / a * 100.0;
        d->verdict = j.verdict;
        d->strict = j.strict;
        d->idle_host_pct = j.idle_host_pct;
        d->tolerance_pct = j.tolerance_pct;
        d->window_drift_pct = j.window_drift_pct;
    }
    (*n)++;
}

/* A verdict that no noise model touches (MISSING, NEW). */
static judged plain(uf_verdict v)
{
    return (judged){v, v, NAN, NAN, NAN};
}

/* Two measured values by the noise model (compare.h): the device-bound rule, then, for a
 * host-bound pair, the run-to-run tolerance in place of the spread alone. */
static judged judge_pair(double va, double spread_a, double vb, double spread_b,
                         double host_idle, double drift_pct, double threshold_pct,
                         int lower_is_better)
{
    spread_a = isnan(spread_a) ? 0 : spread_a;
    spread_b = isnan(spread_b) ? 0 : spread_b;
    judged j = plain(judge(va, spread_a, vb, spread_b, threshold_pct, lower_is_better));
    if (isnan(host_idle))
        return j;
    j.idle_host_pct = host_idle;
    j.tolerance_pct = threshold_pct + drift_pct + UF_HOST_ALLOWANCE_PCT + spread_a + spread_b;
    if (j.strict != UF_SAME)
        j.verdict = judge(va, j.tolerance_pct, vb, 0, threshold_pct, lower_is_better);
    return j;
}

/* The judged metrics of a row present in both tables. */
static void compare_row(const uf_table *a, const uf_row *ra, const uf_table *b,
                        const uf_row *rb, const uf_compare_noise *noise, uf_diff *out,
                        int max_out, int *n)
{
    double host_idle = host_bound_idle(ra, rb);
    double drift = uf_launch_drift_pct(noise->launch_us_a, noise->launch_us_b);
    for (int m = 0; m < N_COMPARED; m++) {
        double va = uf_table_value(a, ra, compared[m].name);
        double vb = uf_table_value(b, rb, compared[m].name);
        if (isnan(va) && isnan(vb))
            continue;
        const uf_metric_desc *desc = uf_metric_find(compared[m].name);
        /* busy_pct's window is the trace pass's: the change of its instrument's overhead
         * between the runs is its spread, one figure for the pair */
        double window = compared[m].spread == SPREAD_TRACE_WINDOW
                            ? uf_trace_window_drift_pct(ra->trace_overhead, rb->trace_overhead)
                            : NAN;
        double spread_a = isnan(window) ? ra->spread_pct : window;
        double spread_b = isnan(window) ? rb->spread_pct : 0;
        judged j = isnan(vb)   ? plain(UF_MISSING)
                   : isnan(va) ? plain(UF_NEW)
                               : judge_pair(va, spread_a, vb, spread_b, host_idle, drift,
                                            noise->threshold_pct,
                                            desc->direction == UF_DIR_LOWER);
        if (!isnan(va) && !isnan(vb))
            j.window_drift_pct = window;
        add_diff(out, max_out, n, a, ra, compared[m].name, va, vb, j);
    }
}

int uf_compare_tables_noise(const uf_table *a, const uf_table *b, const uf_compare_noise *noise,
                            uf_diff *out, int max_out)
{
    int map[UF_MAX_AXES], back[UF_MAX_AXES];
    int n = 0;
    map_axes(a, b, map);
    map_axes(b, a, back);
    for (int i = 0; i < a->n_rows; i++) {
        const uf_row *ra = &a->rows[i];
        const uf_row *rb = find_row(b, ra, map, a->n_axes);
        if (rb)
            compare_row(a, ra, b, rb, noise, out, max_out, &n);
        else
            add_diff(out, max_out, &n, a, ra, "row", NAN, NAN, plain(UF_MISSING));
    }
    for (int i = 0; i < b->n_rows; i++)
        if (!find_row(a, &b->rows[i], back, b->n_axes))
            add_diff(out, max_out, &n, b, &b->rows[i], "row", NAN, NAN, plain(UF_NEW));
    return n;
}

int uf_compare_tables(const uf_table *a, const uf_table *b, double threshold_pct, uf_diff *out,
                      int max_out)
{
    uf_compare_noise noise = {threshold_pct, uf_table_launch_us(a), uf_table_launch_us(b)};
    return uf_compare_tables_noise(a, b, &noise, out, max_out);
}

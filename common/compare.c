/* Run comparison (see compare.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "stats.h"

/* name, lower is better, carries the step-time spread. The NVML view of the timing pass
 * (nvml_util_pct, sm_clock_mhz, sm_clock_min_mhz, power_w) is not judged: a lower clock or a
 * higher power explains a change in step time, it is not a regression of its own. */
static const struct {
    const char *name;
    int lower_is_better;
    int uses_step_spread;
} compared[] = {
    {"step_ms", 1, 1},
    {"tflops_useful", 0, 1},
    {"gbs", 0, 1},
    {"busy_pct", 0, 0},
};

enum { N_COMPARED = sizeof compared / sizeof compared[0] };

const char *uf_verdict_name(uf_verdict v)
{
    static const char *const names[] = {"SAME", "FASTER", "SLOWER", "NOISY", "MISSING"};
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
        snprintf(out + used, len - used, "%s%s=%g", k ? " " : "", t->axis_names[k], r->axis[k]);
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

int uf_compare_tables(const uf_table *a, const uf_table *b, double threshold_pct, uf_diff *out,
                      int max_out)
{
    int map[UF_MAX_AXES];
    int n = 0;
    map_axes(a, b, map);
    for (int i = 0; i < a->n_rows; i++) {
        const uf_row *ra = &a->rows[i];
        const uf_row *rb = find_row(b, ra, map, a->n_axes);
        char where[UF_REASON_LEN];
        describe_point(a, ra, where, sizeof where);
        for (int m = 0; m < N_COMPARED; m++) {
            double va = uf_table_value(a, ra, compared[m].name);
            double vb = rb ? uf_table_value(b, rb, compared[m].name) : NAN;
            if (rb && (isnan(va) || isnan(vb)))
                continue;
            if (n < max_out) {
                uf_diff *d = &out[n];
                snprintf(d->variant, sizeof d->variant, "%s", ra->variant);
                snprintf(d->where, sizeof d->where, "%s", where);
                d->metric = rb ? compared[m].name : "row";
                d->a = va;
                d->b = vb;
                d->change_pct = (vb - va) / va * 100.0;
                d->verdict = !rb ? UF_MISSING
                                 : judge(va, compared[m].uses_step_spread ? ra->spread_pct : 0,
                                         vb, compared[m].uses_step_spread ? rb->spread_pct : 0,
                                         threshold_pct, compared[m].lower_is_better);
            }
            n++;
            if (!rb)
                break;
        }
    }
    return n;
}

/* Unit tests of compare.c: the run comparison on hand-built tables (SAME within the threshold,
 * FASTER / SLOWER beyond threshold and spread, NOISY within the combined spread, missing and
 * new rows and values, axes matched by name, empty on both sides skipped), the noise model
 * for host-bound rows (idle_host_pct >= UF_HOST_BOUND_IDLE_PCT: a run-to-run tolerance, every
 * excuse recorded), then as the `underfed compare` tool uses it: on the fixture result folders
 * of tests/data (noise-*: one H200 launch_storm cut, and copies with one row changed), read by
 * the strict reader, and on the committed H200 results. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "results.h"

#define DATA(name) UF_TEST_DATA_DIR "/" name
#define MAX_DIFFS 64

/* ---- helpers ---------------------------------------------------------------------------- */

/* A table of one scenario with axes "elems" then "ops". */
static void table_elems_ops(uf_table *t)
{
    uf_table_init(t, "launch_storm");
    cr_assert_eq(uf_table_add_axis(t, "elems"), 0);
    cr_assert_eq(uf_table_add_axis(t, "ops"), 0);
}

/* A row at (elems, ops) with the compared metrics; NaN leaves one empty. */
static uf_row *add_row(uf_table *t, const char *variant, double elems, double ops,
                       double step_ms, double spread_pct, double busy_pct)
{
    uf_row *r = uf_table_append(t);
    cr_assert_not_null(r);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->role, sizeof r->role, "%s", strcmp(variant, "eager") == 0 ? "broken" : "fixed");
    r->axis[0] = elems;
    r->axis[1] = ops;
    r->step_ms = step_ms;
    r->spread_pct = spread_pct;
    r->busy_pct = busy_pct;
    return r;
}

/* The diff of one metric of one variant; NULL when there is none. */
static const uf_diff *find_diff(const uf_diff *d, int n, const char *variant, const char *metric)
{
    for (int i = 0; i < n; i++)
        if (strcmp(d[i].variant, variant) == 0 && strcmp(d[i].metric, metric) == 0)
            return &d[i];
    return NULL;
}

static const uf_diff *must_find(const uf_diff *d, int n, const char *variant, const char *metric)
{
    const uf_diff *found = find_diff(d, n, variant, metric);
    cr_assert_not_null(found, "no diff for %s %s", variant, metric);
    return found;
}

/* Compare one row pair on step_ms only (busy NaN): the verdict. */
static uf_verdict step_verdict(double a_ms, double a_spread, double b_ms, double b_spread,
                               double threshold_pct)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    add_row(&a, "graph", 4096, 1000, a_ms, a_spread, NAN);
    add_row(&b, "graph", 4096, 1000, b_ms, b_spread, NAN);
    int n = uf_compare_tables(&a, &b, threshold_pct, d, MAX_DIFFS);
    cr_assert_eq(n, 1, "only step_ms is filled: one diff, got %d", n);
    cr_assert_str_eq(d[0].metric, "step_ms");
    uf_verdict v = d[0].verdict;
    uf_table_free(&a);
    uf_table_free(&b);
    return v;
}

/* ---- verdicts --------------------------------------------------------------------------- */

Test(compare, same_within_threshold)
{
    cr_expect_eq(step_verdict(1.00, 1.0, 1.03, 1.0, 5.0), UF_SAME);
    cr_expect_eq(step_verdict(1.00, 1.0, 0.97, 1.0, 5.0), UF_SAME);
    cr_expect_eq(step_verdict(1.00, 0.0, 1.25, 0.0, 25.0), UF_SAME, "exactly the threshold");
    cr_expect_eq(step_verdict(2.50, 0.0, 2.50, 0.0, 0.0), UF_SAME, "identical at threshold 0");
}

Test(compare, slower_and_faster_beyond_threshold_and_spread)
{
    cr_expect_eq(step_verdict(1.00, 1.0, 1.20, 1.0, 5.0), UF_SLOWER, "20 %% longer step");
    cr_expect_eq(step_verdict(1.00, 1.0, 0.80, 1.0, 5.0), UF_FASTER, "20 %% shorter step");
}

Test(compare, noisy_within_the_combined_spread)
{
    /* 10 % apart: beyond the 5 % threshold, within 6 + 6 % of spread */
    cr_expect_eq(step_verdict(1.00, 6.0, 1.10, 6.0, 5.0), UF_NOISY);
    cr_expect_eq(step_verdict(1.00, 6.0, 0.90, 6.0, 5.0), UF_NOISY);
    /* the same 10 % with 4 + 4 % of spread is a real difference */
    cr_expect_eq(step_verdict(1.00, 4.0, 1.10, 4.0, 5.0), UF_SLOWER);
    /* one side's spread alone can cover it */
    cr_expect_eq(step_verdict(1.00, 12.0, 1.10, 0.0, 5.0), UF_NOISY);
}

Test(compare, unknown_spread_counts_as_none)
{
    cr_expect_eq(step_verdict(1.00, NAN, 1.10, NAN, 5.0), UF_SLOWER);
    cr_expect_eq(step_verdict(1.00, NAN, 1.10, 20.0, 5.0), UF_NOISY);
}

Test(compare, higher_is_better_metrics_and_change)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    uf_row *ra = add_row(&a, "fused", 4096, 1000, 2.0, 1.0, 50.0);
    uf_row *rb = add_row(&b, "fused", 4096, 1000, 1.0, 1.0, 80.0);
    ra->tflops_useful = 10.0;
    rb->tflops_useful = 20.0;
    ra->gbs = 400.0;
    rb->gbs = 300.0;
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 4, "step_ms, tflops_useful, gbs, busy_pct: got %d", n);

    const uf_diff *step = must_find(d, n, "fused", "step_ms");
    cr_expect_eq(step->verdict, UF_FASTER);
    cr_expect_float_eq(step->a, 2.0, 1e-12);
    cr_expect_float_eq(step->b, 1.0, 1e-12);
    cr_expect_float_eq(step->change_pct, -50.0, 1e-9);
    const uf_diff *tflops = must_find(d, n, "fused", "tflops_useful");
    cr_expect_eq(tflops->verdict, UF_FASTER, "more TFLOP/s is better");
    cr_expect_float_eq(tflops->change_pct, 100.0, 1e-9);
    cr_expect_eq(must_find(d, n, "fused", "gbs")->verdict, UF_SLOWER, "fewer GB/s is worse");
    cr_expect_eq(must_find(d, n, "fused", "busy_pct")->verdict, UF_FASTER, "busier is better");
    cr_expect_str_eq(step->where, "elems=4096 ops=1000");
    uf_table_free(&a);
    uf_table_free(&b);
}

/* busy_pct is a share, not a timing: the step-time spread does not cover its changes. */
Test(compare, busy_pct_ignores_the_step_spread)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    add_row(&a, "eager", 4096, 1000, 1.0, 30.0, 60.0);
    add_row(&b, "eager", 4096, 1000, 1.1, 30.0, 50.0);
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 2);
    cr_expect_eq(must_find(d, n, "eager", "step_ms")->verdict, UF_NOISY);
    cr_expect_eq(must_find(d, n, "eager", "busy_pct")->verdict, UF_SLOWER);
    uf_table_free(&a);
    uf_table_free(&b);
}

/* The NVML view of the timing pass (utilization, SM clock, power) explains a change and is not
 * judged: a throttled run differs only in step_ms. */
Test(compare, nvml_clock_and_power_are_not_judged)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    uf_row *ra = add_row(&a, "eager", 4096, 1000, 1.0, 0.5, NAN);
    uf_row *rb = add_row(&b, "eager", 4096, 1000, 1.5, 0.5, NAN);
    ra->nvml_util_pct = 100;
    ra->sm_clock_mhz = ra->sm_clock_min_mhz = 1980;
    ra->power_w = 450;
    rb->nvml_util_pct = 100;
    rb->sm_clock_mhz = 1320;
    rb->sm_clock_min_mhz = 1200;
    rb->power_w = 690;
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 1, "only step_ms is judged, got %d diffs", n);
    cr_expect_eq(must_find(d, n, "eager", "step_ms")->verdict, UF_SLOWER);
    cr_expect_null(find_diff(d, n, "eager", "sm_clock_mhz"));
    cr_expect_null(find_diff(d, n, "eager", "power_w"));
    uf_table_free(&a);
    uf_table_free(&b);
}

/* ---- rows and axes ---------------------------------------------------------------------- */

Test(compare, missing_and_new_rows_are_listed)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    add_row(&a, "eager", 4096, 1000, 4.0, 1.0, 25.0);
    add_row(&a, "graph", 4096, 1000, 1.5, 1.0, 95.0);
    add_row(&a, "graph", 65536, 1000, 1.6, 1.0, 95.0);
    add_row(&b, "eager", 4096, 1000, 4.0, 1.0, 25.0);
    add_row(&b, "graph", 65536, 1000, 1.6, 1.0, 95.0);
    add_row(&b, "fused", 4096, 1000, 0.01, 1.0, 70.0);   /* only in b: NEW */
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 6, "2 + 1 missing + 2 + 1 new, got %d", n);
    int missing = 0, added = 0;
    for (int i = 0; i < n; i++) {
        if (d[i].verdict == UF_MISSING) {
            missing++;
            cr_expect_str_eq(d[i].variant, "graph");
            cr_expect_str_eq(d[i].metric, "row");
            cr_expect_str_eq(d[i].where, "elems=4096 ops=1000");
            cr_expect(isnan(d[i].b) && isnan(d[i].change_pct));
        } else if (d[i].verdict == UF_NEW) {
            added++;
            cr_expect_str_eq(d[i].variant, "fused");
            cr_expect_str_eq(d[i].metric, "row");
            cr_expect_str_eq(d[i].where, "elems=4096 ops=1000");
        } else {
            cr_expect_eq(d[i].verdict, UF_SAME);
        }
    }
    cr_expect_eq(missing, 1);
    cr_expect_eq(added, 1);
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare, axes_matched_by_name_not_position)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    uf_table_init(&b, "launch_storm");
    cr_assert_eq(uf_table_add_axis(&b, "ops"), 0);
    cr_assert_eq(uf_table_add_axis(&b, "elems"), 0);
    add_row(&a, "eager", 4096, 100, 1.0, 1.0, NAN);
    add_row(&a, "eager", 100, 4096, 9.0, 1.0, NAN);   /* the swapped point, to be told apart */
    uf_row *r = uf_table_append(&b);   /* ops = 100, elems = 4096 */
    snprintf(r->variant, sizeof r->variant, "eager");
    r->axis[0] = 100;
    r->axis[1] = 4096;
    r->step_ms = 1.0;
    r->spread_pct = 1.0;
    r = uf_table_append(&b);           /* ops = 4096, elems = 100 */
    snprintf(r->variant, sizeof r->variant, "eager");
    r->axis[0] = 4096;
    r->axis[1] = 100;
    r->step_ms = 9.0;
    r->spread_pct = 1.0;
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 2);
    for (int i = 0; i < n; i++) {
        cr_expect_eq(d[i].verdict, UF_SAME, "%s: %g vs %g", d[i].where, d[i].a, d[i].b);
        cr_expect_float_eq(d[i].a, d[i].b, 1e-12);
    }
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare, axis_absent_from_the_second_table_is_missing)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    uf_table_init(&b, "launch_storm");
    cr_assert_eq(uf_table_add_axis(&b, "elems"), 0);
    add_row(&a, "eager", 4096, 1000, 1.0, 1.0, NAN);
    uf_row *r = uf_table_append(&b);
    snprintf(r->variant, sizeof r->variant, "eager");
    r->axis[0] = 4096;
    r->step_ms = 1.0;
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 1);
    cr_expect_eq(d[0].verdict, UF_MISSING);
    uf_table_free(&a);
    uf_table_free(&b);
}

/* Empty on both sides: nothing to compare. Measured on one side only: listed, MISSING when the
 * second run lost it, NEW when it gained it; never dropped silently. */
Test(compare, one_sided_values_are_missing_or_new)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    add_row(&a, "eager", 4096, 1000, 1.0, 1.0, NAN);   /* busy not measured in a */
    add_row(&b, "eager", 4096, 1000, 1.0, 1.0, 40.0);
    add_row(&a, "graph", 4096, 1000, 2.0, 1.0, 90.0);
    add_row(&b, "graph", 4096, 1000, NAN, NAN, 91.0);  /* step not measured in b */
    add_row(&a, "fused", 4096, 1000, 1.0, 1.0, NAN);   /* busy in neither */
    add_row(&b, "fused", 4096, 1000, 1.0, 1.0, NAN);
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 5, "got %d", n);
    cr_expect_eq(must_find(d, n, "eager", "step_ms")->verdict, UF_SAME);
    cr_expect_eq(must_find(d, n, "eager", "busy_pct")->verdict, UF_NEW);
    cr_expect_eq(must_find(d, n, "graph", "step_ms")->verdict, UF_MISSING);
    cr_expect(isnan(must_find(d, n, "graph", "step_ms")->change_pct));
    cr_expect_eq(must_find(d, n, "graph", "busy_pct")->verdict, UF_SAME);
    cr_expect_null(find_diff(d, n, "fused", "busy_pct"));
    uf_table_free(&a);
    uf_table_free(&b);
}

/* A value of 0 in the first run has no relative change: NaN, not an infinity. */
Test(compare, change_from_zero_is_nan)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    uf_row *ra = add_row(&a, "eager", 4096, 1000, 1.0, 1.0, NAN);
    uf_row *rb = add_row(&b, "eager", 4096, 1000, 1.0, 1.0, NAN);
    ra->tflops_useful = 0;
    rb->tflops_useful = 1;
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    const uf_diff *t = must_find(d, n, "eager", "tflops_useful");
    cr_expect(isnan(t->change_pct));
    cr_expect_eq(t->verdict, UF_FASTER);
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare, counts_all_but_writes_at_most_max_out)
{
    uf_table a, b;
    uf_diff d[3];
    table_elems_ops(&a);
    table_elems_ops(&b);
    for (int i = 0; i < 4; i++) {
        add_row(&a, "eager", 4096.0 * (i + 1), 1000, 1.0, 1.0, 50.0);
        add_row(&b, "eager", 4096.0 * (i + 1), 1000, 1.0, 1.0, 50.0);
    }
    memset(d, 0, sizeof d);
    int n = uf_compare_tables(&a, &b, 5.0, d, 2);
    cr_expect_eq(n, 8, "4 rows x (step_ms, busy_pct)");
    cr_expect_null(d[2].metric, "nothing written past max_out");
    cr_expect_eq(uf_compare_tables(&a, &b, 5.0, NULL, 0), 8);
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare, empty_tables)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    cr_expect_eq(uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS), 0);
    add_row(&b, "eager", 4096, 1000, 1.0, 1.0, 50.0);
    cr_expect_eq(uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS), 1, "a row only in b: NEW");
    cr_expect_eq(d[0].verdict, UF_NEW);
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare, verdict_names)
{
    cr_expect_str_eq(uf_verdict_name(UF_SAME), "SAME");
    cr_expect_str_eq(uf_verdict_name(UF_FASTER), "FASTER");
    cr_expect_str_eq(uf_verdict_name(UF_SLOWER), "SLOWER");
    cr_expect_str_eq(uf_verdict_name(UF_NOISY), "NOISY");
    cr_expect_str_eq(uf_verdict_name(UF_MISSING), "MISSING");
    cr_expect_str_eq(uf_verdict_name(UF_NEW), "NEW");
    cr_expect_str_eq(uf_verdict_name((uf_verdict)42), "?");
}

/* ---- the noise model: host-bound rows ---------------------------------------------------- */

/* One eager row pair, step a_ms -> b_ms (spread 1 % each), idle_host_pct ih_a -> ih_b, compared
 * with launch floors la, lb (µs; NaN: not measured) at a 5 % threshold: the step_ms diff. */
static uf_diff host_step(double a_ms, double b_ms, double ih_a, double ih_b, double la, double lb)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    add_row(&a, "eager", 4096, 1000, a_ms, 1.0, NAN)->idle_host_pct = ih_a;
    add_row(&b, "eager", 4096, 1000, b_ms, 1.0, NAN)->idle_host_pct = ih_b;
    uf_compare_noise noise = {5.0, la, lb};
    int n = uf_compare_tables_noise(&a, &b, &noise, d, MAX_DIFFS);
    cr_assert_eq(n, 1, "only step_ms is filled: one diff, got %d", n);
    uf_table_free(&a);
    uf_table_free(&b);
    return d[0];
}

Test(noise, host_bound_change_within_the_tolerance_is_noisy_and_says_why)
{
    uf_diff d = host_step(10.0, 11.0, 80.0, 82.0, NAN, NAN);
    cr_expect_eq(d.verdict, UF_NOISY);
    cr_expect_eq(d.strict, UF_SLOWER, "the device-bound rule alone calls it SLOWER");
    cr_expect_float_eq(d.idle_host_pct, 82.0, 1e-9, "the larger idle of the two");
    /* threshold 5 + drift 0 + allowance + spreads 1 + 1 */
    cr_expect_float_eq(d.tolerance_pct, 5.0 + UF_HOST_ALLOWANCE_PCT + 2.0, 1e-9);
    d = host_step(10.0, 6.0, 80.0, 70.0, NAN, NAN);
    cr_expect_eq(d.verdict, UF_NOISY, "a host-bound speed-up within the tolerance is not FASTER");
    cr_expect_eq(d.strict, UF_FASTER);
}

Test(noise, host_bound_change_beyond_the_tolerance_is_still_judged)
{
    uf_diff d = host_step(10.0, 30.0, 80.0, 93.0, NAN, NAN);
    cr_expect_eq(d.verdict, UF_SLOWER, "3x slower is a regression, host-bound or not");
    cr_expect_eq(d.strict, UF_SLOWER);
    cr_expect_float_eq(d.idle_host_pct, 93.0, 1e-9);
    d = host_step(10.0, 10.0 * (1 + (5.0 + UF_HOST_ALLOWANCE_PCT + 2.0 + 1.0) / 100), 80.0, 80.0,
                  NAN, NAN);
    cr_expect_eq(d.verdict, UF_SLOWER, "1 %% beyond the tolerance");
    d = host_step(10.0, 3.0, 80.0, 80.0, NAN, NAN);
    cr_expect_eq(d.verdict, UF_FASTER);
}

Test(noise, host_bound_change_within_the_threshold_is_same)
{
    uf_diff d = host_step(10.0, 10.3, 80.0, 80.0, NAN, NAN);
    cr_expect_eq(d.verdict, UF_SAME);
    cr_expect_eq(d.strict, UF_SAME);
}

Test(noise, device_bound_rows_keep_the_spread_rule)
{
    uf_diff d = host_step(10.0, 11.0, 10.0, 19.9, NAN, NAN);
    cr_expect_eq(d.verdict, UF_SLOWER, "idle_host below the bound on both sides");
    cr_expect(isnan(d.idle_host_pct) && isnan(d.tolerance_pct));
    d = host_step(10.0, 11.0, NAN, NAN, NAN, NAN);
    cr_expect_eq(d.verdict, UF_SLOWER, "no trace pass: nothing says the host bounds it");
    cr_expect(isnan(d.idle_host_pct));
}

Test(noise, high_idle_on_either_side_makes_the_row_host_bound)
{
    cr_expect_eq(host_step(10.0, 11.0, UF_HOST_BOUND_IDLE_PCT, 5.0, NAN, NAN).verdict, UF_NOISY);
    cr_expect_eq(host_step(10.0, 11.0, NAN, 35.0, NAN, NAN).verdict, UF_NOISY);
}

Test(noise, launch_floor_drift_widens_the_tolerance)
{
    /* +80 %: beyond 5 + 50 + 2, within it when the second host launches 40 % slower */
    uf_diff d = host_step(10.0, 18.0, 80.0, 80.0, 2.5, 3.5);
    cr_expect_eq(d.verdict, UF_NOISY);
    cr_expect_float_eq(d.tolerance_pct, 5.0 + 40.0 + UF_HOST_ALLOWANCE_PCT + 2.0, 1e-9);
    cr_expect_eq(host_step(10.0, 18.0, 80.0, 80.0, 3.5, 2.5).verdict, UF_NOISY, "either way");
    cr_expect_eq(host_step(10.0, 18.0, 80.0, 80.0, 2.5, 2.5).verdict, UF_SLOWER);
    cr_expect_eq(host_step(10.0, 18.0, 80.0, 80.0, 2.5, NAN).verdict, UF_SLOWER,
                 "one floor unknown: no drift");
    /* the drift never touches a device-bound row */
    cr_expect_eq(host_step(10.0, 11.0, 0.0, 0.0, 2.5, 3.5).verdict, UF_SLOWER);
}

Test(noise, launch_drift_pct)
{
    cr_expect_float_eq(uf_launch_drift_pct(2.5, 3.5), 40.0, 1e-9);
    cr_expect_float_eq(uf_launch_drift_pct(3.5, 2.5), 40.0, 1e-9);
    cr_expect_float_eq(uf_launch_drift_pct(4.0, 4.0), 0.0, 1e-9);
    cr_expect_float_eq(uf_launch_drift_pct(NAN, 4.0), 0.0, 1e-9);
    cr_expect_float_eq(uf_launch_drift_pct(4.0, 0.0), 0.0, 1e-9);
}

/* busy_pct's spread: the drift of the trace window, |Δ trace_overhead| / the smaller. */
Test(noise, trace_window_drift_pct)
{
    cr_expect_float_eq(uf_trace_window_drift_pct(1.043, 1.150), 10.258868648130392, 1e-9);
    cr_expect_float_eq(uf_trace_window_drift_pct(1.150, 1.043), 10.258868648130392, 1e-9);
    cr_expect_float_eq(uf_trace_window_drift_pct(1.2, 1.2), 0.0, 1e-9);
    cr_expect_float_eq(uf_trace_window_drift_pct(NAN, 1.2), 0.0, 1e-9, "not traced: none");
    cr_expect_float_eq(uf_trace_window_drift_pct(1.2, 0.0), 0.0, 1e-9);
}

/* uf_compare_tables takes each table's recorded `ceiling.launch_us`. */
Test(noise, launch_floors_from_the_tables_metadata)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    cr_expect(isnan(uf_table_launch_us(&a)));
    uf_meta_set(&a.meta, "ceiling.launch_us", "2.5");
    uf_meta_set(&b.meta, "ceiling.launch_us", "3.5");
    cr_expect_float_eq(uf_table_launch_us(&a), 2.5, 1e-9);
    add_row(&a, "eager", 4096, 1000, 10.0, 1.0, NAN)->idle_host_pct = 80.0;
    add_row(&b, "eager", 4096, 1000, 18.0, 1.0, NAN)->idle_host_pct = 80.0;
    cr_assert_eq(uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS), 1);
    cr_expect_eq(d[0].verdict, UF_NOISY);
    cr_expect_float_eq(d[0].tolerance_pct, 5.0 + 40.0 + UF_HOST_ALLOWANCE_PCT + 2.0, 1e-9);
    uf_table_free(&a);
    uf_table_free(&b);
}

/* Every judged metric of a host-bound row, busy_pct included, gets the tolerance; MISSING and
 * NEW are untouched by it. */
Test(noise, every_metric_of_a_host_bound_row_and_not_missing)
{
    uf_table a, b;
    uf_diff d[MAX_DIFFS];
    table_elems_ops(&a);
    table_elems_ops(&b);
    add_row(&a, "eager", 4096, 1000, 1.0, 1.0, 20.0)->idle_host_pct = 80.0;
    add_row(&b, "eager", 4096, 1000, 1.1, 1.0, 16.0)->idle_host_pct = 84.0;
    add_row(&a, "eager", 4096, 100, 1.0, 1.0, NAN)->idle_host_pct = 80.0;
    uf_row *r = add_row(&b, "eager", 4096, 100, NAN, NAN, NAN);
    r->idle_host_pct = 80.0;
    r->tflops_useful = 1.0;
    int n = uf_compare_tables(&a, &b, 5.0, d, MAX_DIFFS);
    cr_assert_eq(n, 4);
    cr_expect_eq(d[0].verdict, UF_NOISY);
    cr_expect_eq(d[1].verdict, UF_NOISY, "busy_pct -20 %%: host-bound, within 55 %%");
    cr_expect_eq(d[1].strict, UF_SLOWER);
    cr_expect_float_eq(d[1].tolerance_pct, 5.0 + UF_HOST_ALLOWANCE_PCT, 1e-9, "busy: no spread");
    cr_expect_eq(d[2].verdict, UF_MISSING);
    cr_expect_eq(d[2].strict, UF_MISSING);
    cr_expect_eq(d[3].verdict, UF_NEW);
    uf_table_free(&a);
    uf_table_free(&b);
}

/* ---- as the tool uses it: fixture result folders through the strict reader -------------- */

static void load(uf_table *t, const char *path)
{
    char err[UF_REASON_LEN] = "";
    uf_table_init(t, "");
    cr_assert_eq(uf_table_read_csv(t, path, err, sizeof err), 0, "%s", err);
}

Test(compare_files, fixture_against_itself_is_all_same)
{
    uf_table a, b;
    uf_diff d[256];
    load(&a, DATA("gpu-a/launch_storm.csv"));
    load(&b, DATA("gpu-a/launch_storm.csv"));
    cr_assert_eq(a.n_rows, 24);
    int n = uf_compare_tables(&a, &b, 0.0, d, 256);
    cr_assert(n >= a.n_rows && n <= 256, "n = %d", n);
    for (int i = 0; i < n; i++)
        cr_expect_eq(d[i].verdict, UF_SAME, "%s %s %s", d[i].variant, d[i].where, d[i].metric);
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare_files, slower_gpu_is_slower)
{
    uf_table a, b;
    uf_diff d[256];
    load(&a, DATA("gpu-a/launch_storm.csv"));
    load(&b, DATA("gpu-b/launch_storm.csv"));
    cr_assert_str_eq(uf_meta_get(&a.meta, "gpu"), "Test GPU A");
    cr_assert_str_eq(uf_meta_get(&b.meta, "gpu"), "Test GPU B");
    cr_assert_str_eq(uf_meta_get(&a.meta, "note"),
                     "fixture made for the tests, not a measurement");
    int n = uf_compare_tables(&a, &b, 5.0, d, 256);
    cr_assert(n > 0 && n <= 256);
    const uf_diff *eager = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(d[i].variant, "eager") == 0 && strcmp(d[i].metric, "step_ms") == 0 &&
            strcmp(d[i].where, "elems=4096 ops=1000") == 0)
            eager = &d[i];
    cr_assert_not_null(eager);
    /* eager waits for the host (idle_host 75 -> 82 %): +40 % is within its run-to-run
     * tolerance, excused and marked so; a device-bound variant's slowdown is not */
    cr_expect_eq(eager->verdict, UF_NOISY, "%g ms -> %g ms", eager->a, eager->b);
    cr_expect_eq(eager->strict, UF_SLOWER);
    cr_expect_float_eq(eager->idle_host_pct, 82.14285714, 1e-6);
    const uf_diff *fused = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(d[i].variant, "fused") == 0 && strcmp(d[i].metric, "step_ms") == 0 &&
            strcmp(d[i].where, "elems=65536 ops=100") == 0)
            fused = &d[i];
    cr_assert_not_null(fused);
    cr_expect_eq(fused->verdict, UF_SLOWER, "%g ms -> %g ms", fused->a, fused->b);
    cr_expect(isnan(fused->idle_host_pct));
    /* the row with empty counter columns still compares its timing */
    int timing_at_empty_counters = 0;
    for (int i = 0; i < n; i++)
        timing_at_empty_counters += strcmp(d[i].where, "elems=65536 ops=100") == 0 &&
                                    strcmp(d[i].metric, "step_ms") == 0;
    cr_expect_eq(timing_at_empty_counters, 3);
    uf_table_free(&a);
    uf_table_free(&b);
}

Test(compare_files, truncated_copy_is_refused_with_file_and_line)
{
    uf_table t;
    char err[UF_REASON_LEN] = "";
    uf_table_init(&t, "");
    cr_assert_neq(uf_table_read_csv(&t, DATA("gpu-truncated/launch_storm.csv"), err, sizeof err),
                  0);
    cr_expect(strstr(err, "gpu-truncated/launch_storm.csv:50:") != NULL, "message: %s", err);
    cr_expect(strstr(err, "truncated") != NULL, "message: %s", err);
    uf_table_free(&t);
}

Test(compare_files, fixture_ceilings_read)
{
    uf_ceilings c;
    char err[UF_REASON_LEN] = "";
    cr_assert_eq(uf_ceilings_read(DATA("gpu-b/ceilings.csv"), &c, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(c.copy_d2d_gbs, 900.0, 1e-9);
    cr_expect(isnan(c.nccl_busbw_gbs), "one GPU: no NCCL ceiling");
}

/* The noise fixtures: noise-a against a copy with one row changed; the diffs, and how many of
 * them are regressions (what makes `underfed compare` exit 1). */
static int compare_noise_fixture(const char *copy, uf_diff *d, int max, int *n)
{
    uf_table a, b;
    char path[512];
    load(&a, DATA("noise-a/launch_storm.csv"));
    snprintf(path, sizeof path, "%s/%s/launch_storm.csv", UF_TEST_DATA_DIR, copy);
    load(&b, path);
    cr_assert_eq(a.n_rows, 6);
    cr_assert_float_eq(uf_table_launch_us(&a), 4.509938431, 1e-9, "the fixture records its floor");
    *n = uf_compare_tables(&a, &b, 5.0, d, max);
    cr_assert(*n > 0 && *n <= max, "n = %d", *n);
    int regressed = 0;
    for (int i = 0; i < *n; i++)
        regressed += d[i].verdict == UF_SLOWER;
    uf_table_free(&a);
    uf_table_free(&b);
    return regressed;
}

/* (i) A fixed, device-bound variant (fused: idle_host 0 %) made 10 % slower is caught. */
Test(noise_files, planted_slowdown_of_a_fixed_variant_is_slower)
{
    uf_diff d[64];
    int n;
    cr_expect_eq(compare_noise_fixture("noise-fixed-slower", d, 64, &n), 3,
                 "step_ms, tflops_useful and gbs");
    for (int i = 0; i < n; i++) {
        int planted = strcmp(d[i].variant, "fused") == 0 &&
                      strcmp(d[i].where, "elems=4096 ops=1000") == 0 &&
                      strcmp(d[i].metric, "busy_pct") != 0;
        cr_expect_eq(d[i].verdict, planted ? UF_SLOWER : UF_SAME, "%s %s %s", d[i].variant,
                     d[i].where, d[i].metric);
        if (strcmp(d[i].variant, "fused") == 0)
            cr_expect(isnan(d[i].idle_host_pct), "fused is not host-bound");
    }
}

/* (ii) The host-bound eager row (idle_host 84 %) 10 % slower: NOISY, with its reason. */
Test(noise_files, ten_pct_change_of_a_host_bound_row_is_noisy)
{
    uf_diff d[64];
    int n, noisy = 0;
    cr_expect_eq(compare_noise_fixture("noise-host-10", d, 64, &n), 0);
    for (int i = 0; i < n; i++)
        if (d[i].verdict != UF_SAME) {
            cr_expect_str_eq(d[i].variant, "eager");
            cr_expect_eq(d[i].verdict, UF_NOISY, "%s", d[i].metric);
            cr_expect_eq(d[i].strict, UF_SLOWER, "the excuse is recorded");
            cr_expect(d[i].idle_host_pct >= 83.0, "%g", d[i].idle_host_pct);
            noisy++;
        }
    cr_expect_eq(noisy, 4, "step_ms, tflops_useful, gbs, busy_pct");
}

/* (iii) The same row 3x slower: far beyond the model, a regression. */
Test(noise_files, threefold_change_of_a_host_bound_row_is_slower)
{
    uf_diff d[64];
    int n;
    cr_expect_eq(compare_noise_fixture("noise-host-3x", d, 64, &n), 4);
    for (int i = 0; i < n; i++)
        if (strcmp(d[i].variant, "eager") == 0 && strcmp(d[i].where, "elems=4096 ops=1000") == 0)
            cr_expect(d[i].verdict == UF_SLOWER && !isnan(d[i].idle_host_pct), "%s",
                      d[i].metric);
}

/* (v) busy_pct's window is the trace pass's: the graph row (device-bound, idle_host 0 %) traced
 * 7 % slower with its kernels and untraced step unchanged (trace_overhead 1.147 -> 1.227):
 * busy 6.5 % lower is the instrument's, NOISY by the strict rule, with the drift said. */
Test(noise_files, busy_change_within_the_trace_window_drift_is_noisy)
{
    uf_diff d[64];
    int n, seen = 0;
    cr_expect_eq(compare_noise_fixture("noise-busy-window", d, 64, &n), 0);
    for (int i = 0; i < n; i++) {
        int moved = strcmp(d[i].variant, "graph") == 0 &&
                    strcmp(d[i].where, "elems=4096 ops=1000") == 0 &&
                    strcmp(d[i].metric, "busy_pct") == 0;
        cr_expect_eq(d[i].verdict, moved ? UF_NOISY : UF_SAME, "%s %s %s", d[i].variant,
                     d[i].where, d[i].metric);
        if (!moved)
            continue;
        seen = 1;
        cr_expect_eq(d[i].strict, UF_NOISY, "no host-bound excuse: the spread itself");
        cr_expect(isnan(d[i].idle_host_pct));
        cr_expect_float_eq(d[i].window_drift_pct, 7.0, 1e-6);
        cr_expect_float_eq(d[i].change_pct, (1 / 1.07 - 1) * 100, 1e-6);
    }
    cr_expect(seen, "the busy_pct diff of the graph row");
}

/* (vi) The same row 7 % slower with and without tracing (an idle gap added on the device):
 * trace_overhead unchanged, so busy's 6.5 % drop is not excused: SLOWER, with the step. */
Test(noise_files, busy_drop_with_an_unchanged_trace_window_is_slower)
{
    uf_diff d[64];
    int n;
    cr_expect_eq(compare_noise_fixture("noise-busy-idle", d, 64, &n), 4,
                 "step_ms, tflops_useful, gbs and busy_pct");
    for (int i = 0; i < n; i++)
        if (strcmp(d[i].metric, "busy_pct") == 0 && strcmp(d[i].variant, "graph") == 0 &&
            strcmp(d[i].where, "elems=4096 ops=1000") == 0) {
            cr_expect_eq(d[i].verdict, UF_SLOWER);
            cr_expect_float_eq(d[i].window_drift_pct, 0.0, 1e-9);
        }
}

/* (iv) Every scenario of the committed H200 results against itself: all SAME. */
Test(noise_files, committed_h200_results_against_themselves_have_no_regression)
{
    const char *dir = UF_TEST_DATA_DIR "/../../results/nvidia-h200";
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp, "%s", dir);
    int files = 0, diffs = 0;
    enum { MAX = 1024 };
    uf_diff *d = malloc(MAX * sizeof *d);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(dp)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0 ||
            strstr(e->d_name, ".series.") || strcmp(e->d_name, "ceilings.csv") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        uf_table a, b;
        load(&a, path);
        load(&b, path);
        int n = uf_compare_tables(&a, &b, 5.0, d, MAX);
        cr_assert(n > 0 && n <= MAX, "%s: n = %d", e->d_name, n);
        for (int i = 0; i < n; i++)
            cr_expect_eq(d[i].verdict, UF_SAME, "%s %s %s %s", e->d_name, d[i].variant,
                         d[i].where, d[i].metric);
        diffs += n;
        files++;
        uf_table_free(&a);
        uf_table_free(&b);
    }
    closedir(dp);
    free(d);
    cr_expect_geq(files, 6, "the committed scenarios");
    cr_expect_geq(diffs, 500, "575 comparisons in the issue's count");
}

/* ---- the series reader, as `underfed series` uses it ------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Read the gpu-a results, then the series file at path; the reader's status and message. */
static int read_series(uf_table *t, const char *path, char *err, size_t errlen)
{
    load(t, DATA("gpu-a/launch_storm.csv"));
    err[0] = '\0';
    return uf_table_read_series_csv(t, path, err, errlen);
}

Test(series_files, fixture_series_attach_to_their_rows)
{
    uf_table t;
    char err[UF_REASON_LEN];
    cr_assert_eq(read_series(&t, DATA("gpu-a/launch_storm.series.csv"), err, sizeof err), 0,
                 "%s", err);
    int with_samples = 0;
    for (int i = 0; i < t.n_rows; i++) {
        const uf_row *r = &t.rows[i];
        if (r->n_samples == 0)
            continue;
        with_samples++;
        cr_expect_eq(r->axis[0], 4096.0);
        cr_expect_eq(r->axis[1], 1000.0);
        cr_expect_eq(r->n_samples, 40u);
        cr_expect_eq(r->samples[0].start_ns, 0u);
        cr_expect_eq(r->samples[39].start_ns, 39000000u, "t_ms 39 -> 39e6 ns");
        for (size_t s = 0; s < r->n_samples; s++)
            cr_expect(r->samples[s].sm_active_pct >= 0 && r->samples[s].sm_active_pct <= 100);
    }
    cr_expect_eq(with_samples, 3, "the three variants at the default point");
    uf_table_free(&t);
}

Test(series_files, malformed_series_are_refused_with_file_and_line)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"# underfed-series v1\nvariant,elems,ops,t_ms,sm_active_pct,occupancy_pct,"
         "tensor_active_pct,dram_pct\neager,4096,1000,0,1,2,0,3\neager,4096,1000,1,1,2,0",
         ":4: truncated"},
        {"# underfed-series v1\nvariant,ops,elems,t_ms,sm_active_pct,occupancy_pct,"
         "tensor_active_pct,dram_pct\n", ":2: column 2 is 'ops', expected 'elems'"},
        {"# underfed-series v1\nvariant,elems,ops,t_ms,sm_active_pct,occupancy_pct,"
         "tensor_active_pct,dram_pct\neager,4096,7,0,1,2,0,3\n", ":3: no row"},
        {"# underfed-series v1\nvariant,elems,ops,t_ms,sm_active_pct,occupancy_pct,"
         "tensor_active_pct,dram_pct\neager,4096,1000,x,1,2,0,3\n", ":3:17: column 't_ms': 'x'"},
        {"# underfed-series v1\nvariant,elems,ops,t_ms,sm_active_pct,occupancy_pct,"
         "tensor_active_pct,dram_pct\neager,4096,1000,0,1,2,0\n", ":3: 7 fields"},
        {"# underfed-series v1\n# scenario: varlen_attention\nvariant,elems,ops,t_ms\n",
         ":2: series of scenario 'varlen_attention'"},
        {"# underfed-results v1\n", ":1: not an underfed series file"},
        {"# underfed-series v1\n", "missing header"},
    };
    char path[] = "/tmp/uf_series_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uf_table t;
        char err[UF_REASON_LEN];
        write_text(path, cases[c].text);
        cr_expect_neq(read_series(&t, path, err, sizeof err), 0, "case %zu read", c);
        cr_expect(strstr(err, path) != NULL && strstr(err, cases[c].message) != NULL,
                  "case %zu: message \"%s\", expected \"%s\"", c, err, cases[c].message);
        uf_table_free(&t);
    }
    unlink(path);
}

/* Unit tests of compare.c: the run comparison on hand-built tables (SAME within the threshold,
 * FASTER / SLOWER beyond threshold and spread, NOISY within the combined spread, missing and
 * new rows and values, axes matched by name, empty on both sides skipped), then as the
 * `underfed compare` tool uses it: on the fixture result folders of tests/data, read by the
 * strict reader. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
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
    cr_expect_eq(eager->verdict, UF_SLOWER, "%g ms -> %g ms", eager->a, eager->b);
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

/* Unit tests of stats.c: order statistics, NaN skipping, the noise-aware comparison. */
#include <criterion/criterion.h>
#include <math.h>

#include "stats.h"

#define EPS 1e-12

Test(stats, odd_count)
{
    const double v[] = {5.0, 1.0, 3.0};
    uf_summary s;
    cr_assert_eq(uf_summarize(v, 3, &s), 0);
    cr_assert_eq(s.n, 3);
    cr_assert_float_eq(s.median, 3.0, EPS);
    cr_assert_float_eq(s.min, 1.0, EPS);
    cr_assert_float_eq(s.max, 5.0, EPS);
    cr_assert_float_eq(s.mean, 3.0, EPS);
    /* the input is not modified */
    cr_assert_float_eq(v[0], 5.0, EPS);
}

Test(stats, even_count)
{
    const double v[] = {4.0, 1.0, 3.0, 2.0};
    cr_assert_float_eq(uf_median(v, 4), 2.5, EPS);
    uf_summary s;
    cr_assert_eq(uf_summarize(v, 4, &s), 0);
    cr_assert_float_eq(s.p25, 1.75, EPS);    /* numpy: percentile([1,2,3,4], 25) */
    cr_assert_float_eq(s.p75, 3.25, EPS);
}

/* numpy.percentile(range(1, 11), [10, 25, 50, 75, 90]) = 1.9, 3.25, 5.5, 7.75, 9.1 */
Test(stats, quantiles_match_numpy_linear)
{
    double v[10];
    for (int i = 0; i < 10; i++)
        v[i] = 10 - i;  /* unsorted on purpose */
    uf_summary s;
    cr_assert_eq(uf_summarize(v, 10, &s), 0);
    cr_assert_float_eq(s.p10, 1.9, 1e-12);
    cr_assert_float_eq(s.p25, 3.25, 1e-12);
    cr_assert_float_eq(s.median, 5.5, 1e-12);
    cr_assert_float_eq(s.p75, 7.75, 1e-12);
    cr_assert_float_eq(s.p90, 9.1, 1e-12);
    cr_assert_float_eq(s.spread_pct, (7.75 - 3.25) / 5.5 * 100.0, 1e-9);
}

Test(stats, quantile_sorted_edges)
{
    const double v[] = {10.0, 20.0, 30.0};
    cr_assert_float_eq(uf_quantile_sorted(v, 3, 0.0), 10.0, EPS);
    cr_assert_float_eq(uf_quantile_sorted(v, 3, 1.0), 30.0, EPS);
    cr_assert_float_eq(uf_quantile_sorted(v, 3, 0.5), 20.0, EPS);
    cr_assert_float_eq(uf_quantile_sorted(v, 3, 0.75), 25.0, EPS);
    cr_assert_float_eq(uf_quantile_sorted(v, 1, 0.3), 10.0, EPS);
    cr_assert(isnan(uf_quantile_sorted(v, 0, 0.5)));
}

Test(stats, nan_inputs_are_skipped)
{
    const double v[] = {NAN, 2.0, NAN, 4.0};
    uf_summary s;
    cr_assert_eq(uf_summarize(v, 4, &s), 0);
    cr_assert_eq(s.n, 2);
    cr_assert_float_eq(s.median, 3.0, EPS);
    cr_assert_float_eq(s.mean, 3.0, EPS);
    cr_assert_float_eq(uf_median(v, 4), 3.0, EPS);
}

Test(stats, empty_and_all_nan)
{
    uf_summary s;
    cr_assert_eq(uf_summarize(NULL, 0, &s), -1);
    cr_assert(isnan(s.median) && isnan(s.min) && isnan(s.max) && isnan(s.mean));
    cr_assert(isnan(s.p10) && isnan(s.p90) && isnan(s.spread_pct));
    const double v[] = {NAN, NAN};
    cr_assert_eq(uf_summarize(v, 2, &s), -1);
    cr_assert(isnan(s.median));
    cr_assert(isnan(uf_median(v, 0)));
    cr_assert(isnan(uf_median(v, 2)));
}

Test(stats, single_value_has_no_spread)
{
    const double v[] = {7.0};
    uf_summary s;
    cr_assert_eq(uf_summarize(v, 1, &s), 0);
    cr_assert_float_eq(s.median, 7.0, EPS);
    cr_assert_float_eq(s.p10, 7.0, EPS);
    cr_assert_float_eq(s.spread_pct, 0.0, EPS);
}

Test(stats, compare_lower_is_better)
{
    /* 10 → 5: 50 % lower, beyond threshold and noise: better */
    cr_assert_eq(uf_compare_values(10.0, 1.0, 5.0, 1.0, 5.0, 1), -1);
    /* 10 → 15: worse */
    cr_assert_eq(uf_compare_values(10.0, 1.0, 15.0, 1.0, 5.0, 1), +1);
    /* 10 → 10.3: 3 % within a 5 % threshold: same */
    cr_assert_eq(uf_compare_values(10.0, 1.0, 10.3, 1.0, 5.0, 1), 0);
    /* 10 → 12: 20 % beyond the threshold, within 15 + 10 % spread: noisy */
    cr_assert_eq(uf_compare_values(10.0, 15.0, 12.0, 10.0, 5.0, 1), 2);
}

Test(stats, compare_higher_is_better)
{
    cr_assert_eq(uf_compare_values(10.0, 0.0, 15.0, 0.0, 5.0, 0), -1);
    cr_assert_eq(uf_compare_values(10.0, 0.0, 5.0, 0.0, 5.0, 0), +1);
}

Test(stats, compare_edge_values)
{
    cr_assert_eq(uf_compare_values(NAN, 0.0, 1.0, 0.0, 5.0, 1), 2);
    cr_assert_eq(uf_compare_values(1.0, 0.0, NAN, 0.0, 5.0, 1), 2);
    cr_assert_eq(uf_compare_values(0.0, 0.0, 0.0, 0.0, 5.0, 1), 0);
    cr_assert_eq(uf_compare_values(0.0, 0.0, 1.0, 0.0, 5.0, 1), +1);
    /* a NaN spread counts as zero */
    cr_assert_eq(uf_compare_values(10.0, NAN, 5.0, NAN, 5.0, 1), -1);
}

static size_t lb(const uint64_t *v, size_t n, uint64_t x)
{
    return uf_lower_bound(v, n, sizeof *v, &x, uf_cmp_u64);
}

Test(stats, lower_bound)
{
    const uint64_t v[] = {2, 4, 4, 9};
    cr_assert_eq(lb(v, 4, 0), 0);
    cr_assert_eq(lb(v, 4, 2), 0);
    cr_assert_eq(lb(v, 4, 3), 1);
    cr_assert_eq(lb(v, 4, 4), 1);
    cr_assert_eq(lb(v, 4, 5), 3);
    cr_assert_eq(lb(v, 4, 10), 4);
    cr_assert_eq(lb(v, 0, 1), 0);
}

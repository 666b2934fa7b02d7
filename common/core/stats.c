/* Statistics of repeated measurements: order statistics with linear interpolation (numpy's
 * default "linear" method), a NaN-skipping summary, and the noise-aware comparison of two
 * measurements. */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Quantile q of n sorted values: position q·(n−1), interpolated between its neighbours. */
double uf_quantile_sorted(const double *sorted, int n, double q)
{
    if (n <= 0 || sorted == NULL || isnan(q))
        return NAN;
    if (q <= 0.0)
        return sorted[0];
    if (q >= 1.0)
        return sorted[n - 1];
    double pos = q * (double)(n - 1);
    int lo = (int)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static void summary_nan(uf_summary *out, int n)
{
    out->n = n;
    out->median = out->min = out->max = out->mean = NAN;
    out->p10 = out->p25 = out->p75 = out->p90 = NAN;
    out->spread_pct = NAN;
}

/* The interquartile range relative to the median, in percent. A zero median gives 0 when the
 * values do not spread at all and NaN otherwise (a relative spread has no meaning there). */
static double relative_iqr_pct(double p25, double p75, double median)
{
    double iqr = p75 - p25;
    if (median == 0.0)
        return iqr == 0.0 ? 0.0 : NAN;
    return iqr / fabs(median) * 100.0;
}

/* Summary of the non-NaN values among v[0..n). No value left (n <= 0, all NaN, or no memory
 * for the sorted copy): every field NaN, n = 0, returns -1. */
int uf_summarize(const double *v, int n, uf_summary *out)
{
    summary_nan(out, 0);
    if (n <= 0 || v == NULL)
        return -1;
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (sorted == NULL)
        return -1;
    int m = 0;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        sorted[m++] = v[i];
        sum += v[i];
    }
    if (m == 0) {
        free(sorted);
        return -1;
    }
    qsort(sorted, (size_t)m, sizeof *sorted, cmp_double);
    out->n = m;
    out->min = sorted[0];
    out->max = sorted[m - 1];
    out->mean = sum / m;
    out->median = uf_quantile_sorted(sorted, m, 0.5);
    out->p10 = uf_quantile_sorted(sorted, m, 0.10);
    out->p25 = uf_quantile_sorted(sorted, m, 0.25);
    out->p75 = uf_quantile_sorted(sorted, m, 0.75);
    out->p90 = uf_quantile_sorted(sorted, m, 0.90);
    out->spread_pct = relative_iqr_pct(out->p25, out->p75, out->median);
    free(sorted);
    return 0;
}

double uf_median(const double *v, int n)
{
    uf_summary s;
    uf_summarize(v, n, &s);
    return s.median;
}

/* Relative difference of b against a: same (0) within threshold_pct; noisy (2) when beyond it
 * but within the two spreads together; otherwise better (-1) or worse (+1) for b. A NaN value
 * cannot be compared: noisy. A NaN spread counts as zero. a == 0: b == 0 is the same, any
 * other b differs by an unbounded relative amount. */
int uf_compare_values(double a, double spread_a_pct, double b, double spread_b_pct,
                      double threshold_pct, int lower_is_better)
{
    if (isnan(a) || isnan(b))
        return 2;
    double diff_pct;
    if (a == 0.0)
        diff_pct = b == 0.0 ? 0.0 : INFINITY;
    else
        diff_pct = fabs(b - a) / fabs(a) * 100.0;
    double noise_pct = (isnan(spread_a_pct) ? 0.0 : fabs(spread_a_pct)) +
                       (isnan(spread_b_pct) ? 0.0 : fabs(spread_b_pct));
    if (diff_pct <= threshold_pct)
        return 0;
    if (diff_pct <= noise_pct)
        return 2;
    int b_lower = b < a;
    return (b_lower == (lower_is_better != 0)) ? -1 : +1;
}

int uf_cmp_u64(const void *pa, const void *pb)
{
    const uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

size_t uf_lower_bound(const void *sorted, size_t n, size_t size, const void *key,
                      int (*cmp)(const void *, const void *))
{
    const unsigned char *base = sorted;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(base + mid * size, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Statistics of repeated measurements. Plain C, unit-tested. */
#ifndef UF_STATS_H
#define UF_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uf_summary {
    int n;
    double median, min, max, mean;
    double p10, p25, p75, p90;  /* linear interpolation between order statistics */
    double spread_pct;          /* (p75 − p25) / median × 100: the interquartile range, relative */
} uf_summary;

/* Summarize n values (not modified). n <= 0: every field NaN, returns -1; else 0. NaN inputs
 * are skipped. */
int uf_summarize(const double *v, int n, uf_summary *out);

/* Quantile q in [0,1] of sorted values, linear interpolation. */
double uf_quantile_sorted(const double *sorted, int n, double q);

/* Median of n values (not modified); NaN when n <= 0. */
double uf_median(const double *v, int n);

/* qsort's comparison of two uint64_t (times in ns, ...), ascending. */
int uf_cmp_u64(const void *pa, const void *pb);

/* The index of the first of n elements (each `size` bytes, ascending by cmp, qsort's kind of
 * comparison) that is not less than *key; n where none is. */
size_t uf_lower_bound(const void *sorted, size_t n, size_t size, const void *key,
                      int (*cmp)(const void *, const void *));

/* Compare two measurements of the same metric (lower is better when lower_is_better): returns
 * -1 (the second is better), +1 (worse), 0 (same), 2 (noisy). "Same" when the relative
 * difference is within threshold_pct; "noisy" when it is beyond the threshold but within the
 * combined spread (spread_a_pct + spread_b_pct); better/worse otherwise. */
int uf_compare_values(double a, double spread_a_pct, double b, double spread_b_pct,
                      double threshold_pct, int lower_is_better);

#ifdef __cplusplus
}
#endif
#endif

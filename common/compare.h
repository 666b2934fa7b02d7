/* Run comparison: two result tables of one scenario, metric by metric, each difference
 * labelled SAME / FASTER / SLOWER / NOISY against the repeat spread recorded in the files.
 * Plain C, unit-tested. */
#ifndef UF_COMPARE_H
#define UF_COMPARE_H

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MISSING: in the first table only (a lost row or value); NEW: in the second only. */
typedef enum { UF_SAME = 0, UF_FASTER, UF_SLOWER, UF_NOISY, UF_MISSING, UF_NEW } uf_verdict;

typedef struct uf_diff {
    char variant[UF_NAME_LEN];
    char where[UF_REASON_LEN];  /* "elems=4096 ops=1000" */
    const char *metric;
    double a, b;                /* the value in the first and second table */
    double change_pct;          /* (b − a) / a × 100 */
    uf_verdict verdict;         /* FASTER/SLOWER: the second run is better/worse */
} uf_diff;

/* Compare step_ms, tflops_useful, gbs (which inherit step_ms's spread) and busy_pct of every
 * row of a with the row of b at the same variant and sweep point (axes matched by name); which
 * way is better comes from the metric table (metrics.h). A row of a absent from b gives one
 * UF_MISSING diff (metric "row"), a row of b absent from a one UF_NEW diff (variant and where
 * from b). A metric measured on one side and empty on the other is UF_MISSING (measured in a
 * only) or UF_NEW (in b only); empty on both sides, it is skipped. A difference is SAME within
 * threshold_pct, NOISY when beyond it but within the two rows' combined spread, else FASTER or
 * SLOWER. change_pct is NaN where there is no ratio (a side empty, or a == 0). Writes at most
 * max_out diffs; returns how many there were in all. */
int uf_compare_tables(const uf_table *a, const uf_table *b, double threshold_pct, uf_diff *out,
                      int max_out);

const char *uf_verdict_name(uf_verdict v);

#ifdef __cplusplus
}
#endif
#endif

/* Looking up a results table (results.h): its variants, the row of a variant at a point, the
 * point a `where` names (expect.h's grammar), the rows of a sweep. The text commands of
 * `underfed` and the plot data (plotdata.h) read rows through these, so that both show the
 * same ones. */
#ifndef UF_TOOLS_TABLEQUERY_H
#define UF_TOOLS_TABLEQUERY_H

#include <stddef.h>

#include "results.h"

/* The index of the axis `name`, -1 when the table has none. */
int tq_axis_index(const uf_table *t, const char *name);
/* The variants in order of first appearance into names (at most max); returns how many. */
int tq_variants(const uf_table *t, const char **names, int max);
int tq_has_variant(const uf_table *t, const char *name);
/* The row of `variant` at point (every axis), NULL when there is none. */
const uf_row *tq_row_at(const uf_table *t, const char *variant, const double *point);
/* The point `where` names (NULL: the run's defaults): unnamed axes at metadata default.AXIS
 * (else the first row's value), max/min over the values run, a named value replaced by the
 * run's value it matches under the shared tolerance, so that rows match it exactly.
 * 0, or -1 with the reason in err (W malformed, an unknown axis, out of memory). */
int tq_point(const uf_table *t, const char *where, double *point, char *err, size_t errlen);
/* Does any row sit at the point (every axis but free_axis, -1: none)? */
int tq_point_has_rows(const uf_table *t, const double *point, int free_axis);
/* The distinct values of axis ax in row order into seen; returns how many (at most max). */
int tq_distinct_values(const uf_table *t, int ax, double *seen, int max);
/* The rows of `variant` at point but on axis ax (free), in increasing order of ax, into rows
 * (room for t->n_rows); returns how many. */
int tq_sweep_rows(const uf_table *t, const char *variant, int ax, const double *point,
                  const uf_row **rows);
/* The share-of-ceiling column that says most about this scenario: pct_of_gemm, pct_of_copy
 * (the first with a value in some row), else busy_pct. */
const char *tq_auto_share(const uf_table *t);

#endif

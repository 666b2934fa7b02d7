/* The expressions of `underfed readme`'s figures (readme_expr.c): numbers (4K, 1G: binary
 * suffixes, as on the command line) and references (`metric`, `variant.metric`,
 * `variant[WHERE].metric`, `ceiling.NAME`, `claims.held|failed|total`) combined with
 * + - * / ( ), each reference looked up in the results (readme_results.h). */
#ifndef UF_TOOLS_README_EXPR_H
#define UF_TOOLS_README_EXPR_H

#include "readme_results.h"

/* Evaluate the whole of expr in scope: a finite number into *out. 0, or -1 with c->err. */
int rd_eval(rd_ctx *c, const rd_scope *scope, const char *expr, double *out);

#endif

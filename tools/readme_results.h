/* What the figures of `underfed readme` read (readme_results.c): the run's context (the
 * results folder, its files each read once, its ceilings, the last error), the scope a
 * reference without a variant or a point looks in, and the look-ups: a file's table, a point,
 * a variant's row at a point, its metrics, the ceilings and the claims. Each fails with -1 (or
 * NULL) and the reason in c->err. The expressions (readme_expr.h), the figures
 * (readme_figure.h) and the tables (readme_table.h) read through it; the command
 * (readme_cmd.c) makes the context and frees it. */
#ifndef UF_TOOLS_README_RESULTS_H
#define UF_TOOLS_README_RESULTS_H

#include <stddef.h>

#include "results.h"

enum { RD_MAX_SOURCES = 32, RD_ERR_LEN = 1024, RD_TEXT_LEN = 512 };

/* One results file, read once per run. */
typedef struct rd_source {
    char name[UF_NAME_LEN];
    uf_table table;
} rd_source;

typedef struct rd_ctx {
    const char *dir;
    rd_source src[RD_MAX_SOURCES];
    int n_src;
    uf_ceilings ceilings;
    int have_ceilings;          /* 0 not read yet, 1 read */
    char err[RD_ERR_LEN];       /* the last error */
} rd_ctx;

/* Where a reference without a variant or a point looks. */
typedef struct rd_scope {
    const uf_table *t;
    char variant[UF_NAME_LEN];  /* "" : none */
    double point[UF_MAX_AXES];
} rd_scope;

/* The message into c->err; returns -1, so that `return rd_error(c, ...)` fails. */
int rd_error(rd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A name (scenario, variant, axis, metric) is a letter or _, then letters, digits and _:
 * rd_ident_len is the length of the one at s, 0 where none starts. */
int rd_is_ident_char(int ch);
size_t rd_ident_len(const char *s);

/* The table of DIR/NAME.csv, read on first use; NULL with the reason in c->err. */
const uf_table *rd_table(rd_ctx *c, const char *name);
/* The run's default point: metadata default.AXIS; NaN where absent (then a reference must
 * name that axis). */
void rd_default_point(const uf_table *t, double *point);
/* Apply "AXIS=VALUE,..." (where, len bytes) to point, the axes not named keeping their value;
 * with star not NULL one VALUE may be *, and *star then names that axis. 0, or -1. */
int rd_apply_where(rd_ctx *c, const uf_table *t, const char *where, size_t len, double *point,
                   int *star);
/* "elems=4096,ops=1000" */
void rd_point_text(const uf_table *t, const double *point, char *out, size_t len);
/* The row of variant at point; NULL with the reason (no such variant, or none at the point). */
const uf_row *rd_row(rd_ctx *c, const uf_table *t, const char *variant, const double *point);
/* A metric, extra column or axis of a row: -1 when the name is unknown or the value was not
 * measured. */
int rd_metric(rd_ctx *c, const uf_table *t, const uf_row *r, const char *name, double *out);
/* Ceiling NAME as t's run recorded it (`# ceiling.NAME:`), else DIR/ceilings.csv's. t may be
 * NULL. 0, or -1. */
int rd_ceiling(rd_ctx *c, const uf_table *t, const char *name, double *out);
/* claims.WHAT (held, failed, total) of t's `claim.N:` metadata lines. 0, or -1. */
int rd_claims(rd_ctx *c, const uf_table *t, const char *what, double *out);
/* The tables read; c itself is the caller's. */
void rd_ctx_free(rd_ctx *c);

#endif

/* A table block of `underfed readme` (readme_table.c): the spec between
 * "<!-- underfed:table " and "-->" (a head, a line "rows: VARIANT[WHERE], ..." where one axis
 * may be *, and a line per column "LABEL = EXPR [FORMAT]") read into a rd_tablespec, then
 * rendered as a Markdown table, a figure (readme_figure.h) per cell. */
#ifndef UF_TOOLS_README_TABLE_H
#define UF_TOOLS_README_TABLE_H

#include "readme_results.h"
#include "strbuf.h"

enum { RD_MAX_COLS = 16, RD_MAX_ROWS = 256 };

typedef struct rd_column {
    char label[UF_NAME_LEN * 2];
    char expr[RD_TEXT_LEN];
    char fmt[UF_NAME_LEN];
} rd_column;

typedef struct rd_tablespec {
    rd_scope head;
    rd_column cols[RD_MAX_COLS];
    int n_cols;
    rd_scope rows[RD_MAX_ROWS];     /* each row's scope: the head's, its variant and point */
    int n_rows;
} rd_tablespec;

/* The spec after "<!-- underfed:table ": a head, then lines "rows: ..." and columns; each
 * row checked to exist. 0, or -1 with c->err. */
int rd_parse_table_spec(rd_ctx *c, const char *spec, rd_tablespec *ts);
/* The Markdown table, framed by blank lines: numbers right-aligned, text left. 0, or -1. */
int rd_render_table(rd_ctx *c, const rd_tablespec *ts, uf_strbuf *out);

#endif

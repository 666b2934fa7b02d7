/* One figure of `underfed readme` (readme_figure.c): HEAD EXPR [FORMAT]. The head
 * (SCENARIO[/VARIANT][[WHERE]]) gives the scope, the expression (readme_expr.h) the value,
 * the format (one printf f, g or e conversion; none: three significant digits) its text.
 * An inline figure is one spec; a table (readme_table.h) has a head and a figure per cell. */
#ifndef UF_TOOLS_README_FIGURE_H
#define UF_TOOLS_README_FIGURE_H

#include <stddef.h>

#include "readme_results.h"

/* HEAD := SCENARIO [ '/' VARIANT ] [ '[' WHERE ']' ]: the scope of what follows, the
 * scenario's file read. Advances *s past it. 0, or -1 with c->err. */
int rd_parse_head(rd_ctx *c, const char **s, rd_scope *scope);
/* Split "EXPR [FORMAT]" (the format starts at the first %) into expr and fmt (len bytes
 * each), trimmed; the format checked. 0, or -1 with c->err. */
int rd_split_format(rd_ctx *c, const char *text, char *expr, char *fmt, size_t len);
/* The text of EXPR FMT in scope: `meta.KEY` and (with a row) `variant` are text, the rest a
 * number. *numeric says which. 0, or -1 with c->err. */
int rd_figure_text(rd_ctx *c, const rd_scope *scope, const char *expr, const char *fmt,
                   char *out, size_t len, int *numeric);
/* An inline spec "HEAD EXPR [FORMAT]" (between "<!-- uf " and "-->"): its text into out. */
int rd_inline_figure(rd_ctx *c, const char *spec, char *out, size_t len);

#endif

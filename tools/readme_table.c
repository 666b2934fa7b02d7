/* A table block of `underfed readme` (readme_table.h): its spec read (a head, a `rows:` line,
 * a column a line) and the Markdown table rendered, a figure per cell (readme_figure.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readme_table.h"
#include "readme_figure.h"
#include "expect.h"

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One row reference "VARIANT[WHERE]" on top of the head: one row, or a row per value of the
 * axis given as *. */
static int add_rows(rd_ctx *c, rd_tablespec *ts, const char *ref, size_t len)
{
    rd_scope row = ts->head;
    int star = -1;
    size_t n = rd_ident_len(ref);
    if (n >= sizeof row.variant || (n == 0 && !row.variant[0]))
        return rd_error(c, "bad row \"%.*s\": VARIANT[AXIS=VALUE,...]", (int)len, ref);
    if (n)
        snprintf(row.variant, sizeof row.variant, "%.*s", (int)n, ref);
    if (n < len) {
        if (ref[n] != '[' || ref[len - 1] != ']')
            return rd_error(c, "bad row \"%.*s\": VARIANT[AXIS=VALUE,...]", (int)len, ref);
        if (rd_apply_where(c, row.t, ref + n + 1, len - n - 2, row.point, &star) != 0)
            return -1;
    }
    if (star < 0) {
        if (ts->n_rows == RD_MAX_ROWS)
            return rd_error(c, "more than %d rows", RD_MAX_ROWS);
        ts->rows[ts->n_rows++] = row;
        return rd_row(c, row.t, row.variant, row.point) ? 0 : -1;
    }
    /* every value of the starred axis where the other axes sit at the point */
    double values[RD_MAX_ROWS];
    int nv = 0;
    for (int i = 0; i < row.t->n_rows && nv < RD_MAX_ROWS; i++) {
        const uf_row *r = &row.t->rows[i];
        int match = strcmp(r->variant, row.variant) == 0;
        for (int a = 0; a < row.t->n_axes; a++)
            match &= a == star || uf_axis_value_same(r->axis[a], row.point[a]);
        for (int k = 0; k < nv && match; k++)
            match = !uf_axis_value_same(values[k], r->axis[star]);
        if (match)
            values[nv++] = r->axis[star];
    }
    if (nv == 0) {
        char where[RD_TEXT_LEN];
        rd_point_text(row.t, row.point, where, sizeof where);
        return rd_error(c, "%s.csv has no row of %s at %s for any %s", row.t->scenario,
                        row.variant, where, row.t->axis_names[star]);
    }
    qsort(values, (size_t)nv, sizeof values[0], by_value);
    for (int k = 0; k < nv; k++) {
        if (ts->n_rows == RD_MAX_ROWS)
            return rd_error(c, "more than %d rows", RD_MAX_ROWS);
        row.point[star] = values[k];
        ts->rows[ts->n_rows++] = row;
    }
    return 0;
}

/* "rows: REF, REF, ..." (commas inside [ ] belong to the point) */
static int parse_rows_line(rd_ctx *c, rd_tablespec *ts, const char *s)
{
    int depth = 0;
    const char *start = s;
    for (;; s++) {
        if (*s == '[')
            depth++;
        else if (*s == ']')
            depth--;
        if (*s == '\0' || (*s == ',' && depth == 0)) {
            const char *end = s;
            while (start < end && isspace((unsigned char)*start))
                start++;
            while (end > start && isspace((unsigned char)end[-1]))
                end--;
            if (end > start && add_rows(c, ts, start, (size_t)(end - start)) != 0)
                return -1;
            if (*s == '\0')
                return 0;
            start = s + 1;
        }
    }
}

/* "LABEL = EXPR [FORMAT]" */
static int parse_column_line(rd_ctx *c, rd_tablespec *ts, const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq)
        return rd_error(c, "\"%s\": a column is LABEL = EXPRESSION [FORMAT]", s);
    if (ts->n_cols == RD_MAX_COLS)
        return rd_error(c, "more than %d columns", RD_MAX_COLS);
    rd_column *col = &ts->cols[ts->n_cols++];
    size_t n = (size_t)(eq - s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0 || n >= sizeof col->label || memchr(s, '|', n))
        return rd_error(c, "\"%s\": a label is 1 to %zu characters, no |", s, sizeof col->label - 1);
    snprintf(col->label, sizeof col->label, "%.*s", (int)n, s);
    char fmt[RD_TEXT_LEN];
    if (rd_split_format(c, eq + 1, col->expr, fmt, sizeof col->expr) != 0)
        return -1;
    if (strlen(fmt) >= sizeof col->fmt)
        return rd_error(c, "format too long: %s", fmt);
    snprintf(col->fmt, sizeof col->fmt, "%s", fmt);
    return 0;
}

/* The spec after "<!-- underfed:table ": a head, then lines "rows: ..." and columns. */
int rd_parse_table_spec(rd_ctx *c, const char *spec, rd_tablespec *ts)
{
    char line[RD_TEXT_LEN];
    const char *s = spec;
    memset(ts, 0, sizeof *ts);
    if (rd_parse_head(c, &s, &ts->head) != 0)
        return -1;
    while (*s) {
        size_t n = strcspn(s, "\n");
        const char *l = s;
        s += n + (s[n] == '\n');
        while (n && isspace((unsigned char)*l))
            l++, n--;
        while (n && isspace((unsigned char)l[n - 1]))
            n--;
        if (n == 0)
            continue;
        if (n >= sizeof line)
            return rd_error(c, "line too long: %.40s...", l);
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        int rc = strncmp(line, "rows:", 5) == 0 ? parse_rows_line(c, ts, line + 5)
                                                : parse_column_line(c, ts, line);
        if (rc != 0)
            return -1;
    }
    if (ts->n_rows == 0 || ts->n_cols == 0)
        return rd_error(c, "a table needs a \"rows:\" line and at least one column");
    return 0;
}

/* The Markdown table, framed by blank lines: numbers right-aligned, text left. */
int rd_render_table(rd_ctx *c, const rd_tablespec *ts, uf_strbuf *out)
{
    typedef char cell[UF_NAME_LEN * 2];
    cell *cells = malloc((size_t)ts->n_rows * RD_MAX_COLS * sizeof *cells);
    int numeric[RD_MAX_COLS] = {0};
    if (!cells)
        return rd_error(c, "out of memory");
    for (int r = 0; r < ts->n_rows; r++)
        for (int k = 0; k < ts->n_cols; k++) {
            int num;
            if (rd_figure_text(c, &ts->rows[r], ts->cols[k].expr, ts->cols[k].fmt,
                               cells[r * RD_MAX_COLS + k], sizeof *cells, &num) != 0) {
                free(cells);
                return -1;
            }
            numeric[k] |= num;
        }
    uf_sb_puts(out, "\n|");
    for (int k = 0; k < ts->n_cols; k++)
        uf_sb_printf(out, " %s |", ts->cols[k].label);
    uf_sb_puts(out, "\n|");
    for (int k = 0; k < ts->n_cols; k++)
        uf_sb_puts(out, numeric[k] ? "---:|" : "---|");
    for (int r = 0; r < ts->n_rows; r++) {
        uf_sb_puts(out, "\n|");
        for (int k = 0; k < ts->n_cols; k++)
            uf_sb_printf(out, " %s |", cells[r * RD_MAX_COLS + k]);
    }
    uf_sb_puts(out, "\n\n");
    free(cells);
    return 0;
}

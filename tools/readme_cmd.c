/* underfed readme [--check] RESULTS_DIR FILE.md...
 *
 * Rewrites the figures of Markdown pages from a results folder, so that no number in the prose
 * is typed by hand. The spec of each figure lives in an HTML comment beside it (GitHub renders
 * comments as nothing); the text after it is generated:
 *
 *   inline:  <!-- uf launch_storm/eager[elems=4K] step_ms %.2f -->4.70<!-- /uf -->
 *   table:   <!-- underfed:table launch_storm[elems=4K]
 *            rows: eager, graph, fused
 *            variant   = variant
 *            step ms   = step_ms
 *            busy %    = busy_pct %.1f
 *            -->
 *            (the generated Markdown table)
 *            <!-- underfed:end -->
 *
 * A head `SCENARIO[/VARIANT][[WHERE]]` names results/…/SCENARIO.csv, a default variant and a
 * point (axes not named take the run's default.AXIS). An expression combines references with
 * + - * / ( ) and numbers (4K, 1G: binary suffixes, as on the command line). A reference is
 * `metric` (the default variant), `variant.metric` or `variant[WHERE].metric` (WHERE overrides
 * axes of the point), `ceiling.NAME` (the ceiling recorded with the scenario's run, its
 * metadata line ceiling.NAME; RESULTS_DIR/ceilings.csv where the file records none) or
 * `claims.held` / `claims.total` (the claims recorded in the file). `meta.KEY` alone is the text of a metadata
 * line (git, utc, driver, ...); `variant` alone, in a table, the row's variant. Rows of a table
 * are `variant[WHERE]`; one axis may be `*`: a row per value the file has. The format is one
 * printf conversion (f, g or e; %% for a percent sign); without one, three significant
 * digits (whole numbers as they are).
 *
 * A variant, point, metric or ceiling that does not exist, or a value that was not measured,
 * is an error (exit 2) naming the page and line: never a blank. --check rewrites nothing and
 * exits 1 listing each stale figure; without it, each page whose figures changed is rewritten
 * atomically. Markers inside fenced code blocks and `code spans` are text, not figures.
 *
 * This file: the command and the page walker (lines, fences, code spans, the markers, the
 * stale report, the rewrite). What it calls, one unit each: a table block, readme_table.c;
 * one figure (head, format, text), readme_figure.c; its expression, readme_expr.c; the
 * results files, points, rows, ceilings and claims they read, readme_results.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readme_cmd.h"
#include "readme_figure.h"
#include "readme_table.h"
#include "fileutil.h"
#include "strbuf.h"

enum { RD_STALE = 1, RD_BAD = 2 };

static const char inline_open[] = "<!-- uf ";
static const char inline_close[] = "<!-- /uf -->";
static const char block_open[] = "<!-- underfed:";
static const char block_end[] = "<!-- underfed:end -->";

/* ---- pages ------------------------------------------------------------------------------ */

typedef struct rd_page {
    const char *path;
    int stale, figures, tables;
} rd_page;

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Report a stale figure: FILE:LINE, then - old / + new, line by line. */
static void report_stale(const rd_page *pg, int line, const char *what, const char *old,
                         size_t old_len, const char *new_text, size_t new_len)
{
    printf("%s:%d: stale %s\n", pg->path, line, what);
    for (int side = 0; side < 2; side++) {
        const char *s = side ? new_text : old;
        const char *end = s + (side ? new_len : old_len);
        while (s < end) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
            if (n)
                printf("  %c %.*s\n", side ? '+' : '-', (int)n, s);
            s += n + (nl != NULL);
        }
    }
}

/* Is at inside a `code span` of the line (an odd number of backticks before it)? */
static int in_code_span(const char *line, const char *at)
{
    int ticks = 0;
    for (const char *s = line; s < at; s++)
        ticks += *s == '`';
    return ticks % 2;
}

/* Inline figures of one line (not in a code block); appends the line, regenerated. */
static int do_inline(rd_ctx *c, rd_page *pg, int lineno, const char *line, size_t len,
                     uf_strbuf *out)
{
    const char *end = line + len, *s = line;
    char spec[RD_TEXT_LEN], value[RD_TEXT_LEN];
    for (;;) {
        const char *open = strstr(s, inline_open);
        if (!open || open >= end)
            break;
        if (open == line + strspn(line, " "))
            return rd_error(c, "%s:%d: a figure starts the line: Markdown would read the line as "
                               "raw HTML; move a word in front of it", pg->path, lineno);
        if (in_code_span(line, open)) {   /* `<!-- uf ... -->` shown as code: text */
            uf_sb_putn(out, s, (size_t)(open + 1 - s));
            s = open + 1;
            continue;
        }
        const char *spec_end = strstr(open, "-->");
        const char *close = spec_end ? strstr(spec_end, inline_close) : NULL;
        if (!close || close >= end)
            return rd_error(c, "%s:%d: a figure opens without \"-->\" and \"%s\" on its line",
                            pg->path, lineno, inline_close);
        size_t n = (size_t)(spec_end - open) - strlen(inline_open);
        if (n >= sizeof spec)
            return rd_error(c, "%s:%d: figure spec too long", pg->path, lineno);
        while (n && isspace((unsigned char)open[strlen(inline_open) + n - 1]))
            n--;
        snprintf(spec, sizeof spec, "%.*s", (int)n, open + strlen(inline_open));
        if (rd_inline_figure(c, spec, value, sizeof value) != 0) {
            char why[RD_ERR_LEN];
            snprintf(why, sizeof why, "%s", c->err);
            return rd_error(c, "%s:%d: <!-- uf %s -->: %s", pg->path, lineno, spec, why);
        }
        const char *old = spec_end + 3;
        size_t old_len = (size_t)(close - old);
        if (old_len != strlen(value) || memcmp(old, value, old_len) != 0) {
            pg->stale++;
            report_stale(pg, lineno, spec, old, old_len, value, strlen(value));
        }
        uf_sb_putn(out, s, (size_t)(old - s));
        uf_sb_puts(out, value);
        s = close;
        pg->figures++;
    }
    uf_sb_putn(out, s, (size_t)(end - s));
    return 0;
}

/* The line after *pos (which it advances), without its newline; NULL at the end. */
static const char *next_line(const char *text, size_t *pos, size_t *len)
{
    if (text[*pos] == '\0')
        return NULL;
    const char *line = text + *pos;
    *len = strcspn(line, "\n");
    *pos += *len + (line[*len] == '\n');
    return line;
}

/* A table block starting at the line `line` (its spec may run over several lines up to -->).
 * Appends the spec, the regenerated table and the end marker's line; advances *pos past that
 * line and *lineno to its number. */
static int do_block(rd_ctx *c, rd_page *pg, const char *text, size_t *pos, const char *line,
                    int *lineno, uf_strbuf *out)
{
    int start_line = *lineno;
    const char *kind = line + strlen(block_open);
    if (!starts_with(kind, "table ") && !starts_with(kind, "table\n"))
        return rd_error(c, "%s:%d: unknown block \"%.20s\" (underfed:table, underfed:end)",
                        pg->path, start_line, kind);
    const char *spec_end = strstr(line, "-->");
    if (!spec_end)
        return rd_error(c, "%s:%d: the table spec is not closed by -->", pg->path, start_line);
    const char *after = strchr(spec_end, '\n');   /* the generated part starts after this */
    const char *old = after ? after + 1 : spec_end + strlen(spec_end);
    const char *end = strstr(old, block_end);
    const char *next = strstr(old, block_open);
    char *spec = strndup(kind + 6, (size_t)(spec_end - kind) - 6);
    rd_tablespec *ts = malloc(sizeof *ts);
    uf_strbuf table = {0};
    int rc = -1;
    if (!spec || !ts) {
        rd_error(c, "out of memory");
    } else if (!end || (next && next < end) || end[-1] != '\n') {
        rd_error(c, "%s:%d: the table has no \"%s\" line after it", pg->path, start_line,
                 block_end);
    } else if (rd_parse_table_spec(c, spec, ts) != 0 || rd_render_table(c, ts, &table) != 0) {
        char why[RD_ERR_LEN];
        snprintf(why, sizeof why, "%s", c->err);
        rd_error(c, "%s:%d: table %.*s: %s", pg->path, start_line, (int)strcspn(spec, "\n"), spec,
                 why);
    } else if (table.failed) {
        rd_error(c, "out of memory");
    } else {
        size_t old_len = (size_t)(end - old);
        if (old_len != table.len || memcmp(old, table.data, old_len) != 0) {
            char what[UF_NAME_LEN * 2];
            snprintf(what, sizeof what, "table %.*s", (int)strcspn(spec, "\n"), spec);
            pg->stale++;
            report_stale(pg, start_line, what, old, old_len, table.data, table.len);
        }
        size_t end_len = strcspn(end, "\n");
        end_len += end[end_len] == '\n';
        uf_sb_putn(out, line, (size_t)(old - line));
        uf_sb_putn(out, table.data, table.len);
        uf_sb_putn(out, end, end_len);
        for (const char *s = line; s < end; s++)
            *lineno += *s == '\n';
        *pos = (size_t)(end + end_len - text);
        pg->tables++;
        rc = 0;
    }
    free(spec);
    free(ts);
    free(table.data);
    return rc;
}

static int is_fence(const char *line)
{
    while (*line == ' ')
        line++;
    return starts_with(line, "```") || starts_with(line, "~~~");
}

/* Regenerate one page into out. 0, or -1 with c->err. */
static int do_page(rd_ctx *c, rd_page *pg, const char *text, uf_strbuf *out)
{
    size_t pos = 0, len;
    int lineno = 0, fence = 0;
    const char *line;
    while ((line = next_line(text, &pos, &len)) != NULL) {
        lineno++;
        if (is_fence(line) || fence) {
            fence ^= is_fence(line);
            uf_sb_putn(out, line, len);
        } else if (starts_with(line, block_end)) {
            return rd_error(c, "%s:%d: %s without a table before it", pg->path, lineno, block_end);
        } else if (starts_with(line, block_open)) {
            pos = (size_t)(line - text);
            if (do_block(c, pg, text, &pos, line, &lineno, out) != 0)
                return -1;
            continue;   /* the end marker's line, newline included, is written */
        } else if (do_inline(c, pg, lineno, line, len, out) != 0) {
            return -1;
        }
        if (line[len] == '\n')
            uf_sb_putn(out, "\n", 1);
    }
    return out->failed ? rd_error(c, "out of memory") : 0;
}

/* A page, read whole (fileutil.h's reader: regular files only); NULL with a message. */
static char *read_file(rd_ctx *c, const char *path)
{
    char err[UF_REASON_LEN], *text = NULL;
    size_t len = 0;
    if (uf_read_file(path, &text, &len, err, sizeof err) != 0) {
        rd_error(c, "%s", err);
        return NULL;
    }
    if (strlen(text) != len) {
        free(text);
        rd_error(c, "cannot read %s: it holds a NUL byte", path);
        return NULL;
    }
    return text;
}

int uf_cmd_readme(int argc, char **argv)
{
    rd_ctx *c;
    int check = 0, first = 0, stale = 0, rc = 0;
    if (argc > 0 && strcmp(argv[0], "--check") == 0)
        check = 1, first = 1;
    if (argc - first < 2 || argv[first][0] == '-') {
        fprintf(stderr, "usage: underfed readme [--check] RESULTS_DIR FILE.md...\n"
                        "  rewrites the figures between <!-- uf ... --> and <!-- /uf -->, and the\n"
                        "  tables between <!-- underfed:table ... --> and <!-- underfed:end -->;\n"
                        "  --check rewrites nothing and exits 1 when a figure is stale\n");
        return RD_BAD;
    }
    if ((c = calloc(1, sizeof *c)) == NULL)
        return RD_BAD;
    c->dir = argv[first];
    for (int i = first + 1; i < argc && rc == 0; i++) {
        rd_page pg = {argv[i], 0, 0, 0};
        uf_strbuf out = {0};
        char err[UF_REASON_LEN];
        char *text = read_file(c, argv[i]);
        if (!text || do_page(c, &pg, text, &out) != 0) {
            fprintf(stderr, "underfed readme: %s\n", c->err);
            rc = RD_BAD;
        } else if (!check && pg.stale && uf_sb_commit(&out, argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "underfed readme: %s\n", err);
            rc = RD_BAD;
        } else {
            fprintf(stderr, "underfed readme: %s: %d figures, %d tables, %d %s\n", argv[i],
                    pg.figures, pg.tables, pg.stale,
                    check ? "stale" : pg.stale ? "rewritten" : "changed");
            stale += pg.stale;
        }
        free(out.data);
        free(text);
    }
    if (rc == 0 && check && stale)
        fprintf(stderr, "underfed readme: %d stale figure(s): run underfed readme %s FILE.md...\n",
                stale, c->dir);
    rd_ctx_free(c);
    free(c);
    return rc ? rc : check && stale ? RD_STALE : 0;
}

/* Its line in `underfed --help`; it reads its own argv. */
const uf_command uf_readme_command = {
    "readme", "[--check] DIR FILE.md...", 0, 0, "",
    "rewrites the pages' figures from DIR (--check: only checks)", uf_cmd_readme, 0};

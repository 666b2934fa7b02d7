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
 * atomically. Markers inside fenced code blocks and `code spans` are text, not figures. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "readme_cmd.h"
#include "expect.h"
#include "fileutil.h"
#include "results.h"
#include "strbuf.h"

enum { RD_STALE = 1, RD_BAD = 2, RD_MAX_SOURCES = 32, RD_MAX_COLS = 16, RD_MAX_ROWS = 256,
       RD_ERR_LEN = 1024, RD_TEXT_LEN = 512 };

static const char inline_open[] = "<!-- uf ";
static const char inline_close[] = "<!-- /uf -->";
static const char block_open[] = "<!-- underfed:";
static const char block_end[] = "<!-- underfed:end -->";

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

static int rd_error(rd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rd_error(rd_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_ident_char(int ch)
{
    return isalnum(ch) || ch == '_';
}

/* ---- results files and points ------------------------------------------------------------ */

/* The table of DIR/NAME.csv, read on first use; NULL with the reason in c->err. */
static const uf_table *rd_table(rd_ctx *c, const char *name)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    for (int i = 0; i < c->n_src; i++)
        if (strcmp(c->src[i].name, name) == 0)
            return &c->src[i].table;
    for (const char *p = name; *p; p++)
        if (!is_ident_char((unsigned char)*p)) {
            rd_error(c, "\"%s\" is not a scenario name", name);
            return NULL;
        }
    if (c->n_src == RD_MAX_SOURCES) {
        rd_error(c, "more than %d result files named", RD_MAX_SOURCES);
        return NULL;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/%s.csv", c->dir, name) >= sizeof path) {
        rd_error(c, "path too long: %s/%s.csv", c->dir, name);
        return NULL;
    }
    rd_source *s = &c->src[c->n_src];
    uf_table_init(&s->table, name);
    if (uf_table_read_csv(&s->table, path, err, sizeof err) != 0) {
        uf_table_free(&s->table);
        rd_error(c, "%s", err);
        return NULL;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    c->n_src++;
    return &s->table;
}

/* The run's default point: metadata default.AXIS; NaN where absent (then a reference must
 * name that axis). */
static void default_point(const uf_table *t, double *point)
{
    for (int a = 0; a < t->n_axes; a++) {
        char key[UF_NAME_LEN + 16];
        const char *def;
        snprintf(key, sizeof key, "default.%s", t->axis_names[a]);
        point[a] = NAN;
        if ((def = uf_meta_get(&t->meta, key)) != NULL)
            uf_parse_number(def, &point[a]);
    }
}

static int axis_of(const uf_table *t, const char *name, size_t len)
{
    for (int a = 0; a < t->n_axes; a++)
        if (strlen(t->axis_names[a]) == len && strncmp(t->axis_names[a], name, len) == 0)
            return a;
    return -1;
}

/* Apply "AXIS=VALUE,..." (VALUE: a number with optional K/M/G, max, min, or * where `star`
 * is not NULL: *star then names that axis) to point: the core's `where` grammar
 * (uf_where_parse), with the axes not named keeping their value in point. 0, or -1 with
 * c->err. */
static int apply_where(rd_ctx *c, const uf_table *t, const char *where, size_t len, double *point,
                       int *star)
{
    char buf[RD_TEXT_LEN], rest[RD_TEXT_LEN] = "", err[RD_TEXT_LEN];
    if (len >= sizeof buf)
        return rd_error(c, "point too long: %.*s", (int)len, where);
    memcpy(buf, where, len);
    buf[len] = '\0';
    /* "AXIS=*" (a row per value of that axis) is this page's own; the rest is the core's */
    size_t used = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (star && eq && strcmp(eq + 1, "*") == 0) {
            *star = axis_of(t, tok, (size_t)(eq - tok));
            if (*star < 0)
                return rd_error(c, "%s.csv has no axis \"%.*s\"", t->scenario,
                                (int)(eq - tok), tok);
            continue;
        }
        used += (size_t)snprintf(rest + used, sizeof rest - used, "%s%s", used ? "," : "", tok);
    }
    uf_where_axis axes[UF_MAX_AXES];
    size_t n_rows = t->n_rows > 0 ? (size_t)t->n_rows : 1;
    double *values = malloc(n_rows * UF_MAX_AXES * sizeof *values);
    if (values == NULL)
        return rd_error(c, "out of memory");
    for (int ax = 0; ax < t->n_axes; ax++) {
        double *column = values + (size_t)ax * n_rows;
        for (int i = 0; i < t->n_rows; i++)
            column[i] = t->rows[i].axis[ax];
        axes[ax] = (uf_where_axis){.name = t->axis_names[ax], .default_value = point[ax],
                                   .values = column, .n_values = t->n_rows};
    }
    int rc = uf_where_parse(axes, t->n_axes, rest, point, NULL, err, sizeof err);
    free(values);
    if (rc != 0)
        return rd_error(c, "%s.csv: point \"%.*s\": %s", t->scenario, (int)len, where, err);
    return 0;
}

/* "elems=4096,ops=1000" */
static void point_text(const uf_table *t, const double *point, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int a = 0; a < t->n_axes && used < len; a++)
        used += (size_t)snprintf(out + used, len - used, "%s%s=%.10g", a ? "," : "",
                                 t->axis_names[a], point[a]);
}

/* The row of variant at point; NULL with the reason (no such variant, or none at the point). */
static const uf_row *rd_row(rd_ctx *c, const uf_table *t, const char *variant, const double *point)
{
    int known = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *r = &t->rows[i];
        int same = 1;
        if (strcmp(r->variant, variant) != 0)
            continue;
        known = 1;
        for (int a = 0; a < t->n_axes; a++)
            same &= uf_axis_value_same(r->axis[a], point[a]);
        if (same)
            return r;
    }
    char where[RD_TEXT_LEN];
    point_text(t, point, where, sizeof where);
    if (!known)
        rd_error(c, "%s.csv has no variant \"%s\"", t->scenario, variant);
    else
        rd_error(c, "%s.csv has no row of %s at %s", t->scenario, variant, where);
    return NULL;
}

/* A metric, extra column or axis of a row: -1 when the name is unknown or the value was not
 * measured (the row's skip_reason then says why). */
static int rd_metric(rd_ctx *c, const uf_table *t, const uf_row *r, const char *name, double *out)
{
    int known = axis_of(t, name, strlen(name)) >= 0;
    for (int i = 0; i < uf_n_metrics; i++)
        known |= strcmp(uf_metrics[i].name, name) == 0;
    for (int e = 0; e < t->n_extra; e++)
        known |= strcmp(t->extra_names[e], name) == 0;
    if (!known)
        return rd_error(c, "%s.csv has no metric \"%s\"", t->scenario, name);
    *out = uf_table_value(t, r, name);
    if (isnan(*out))
        return rd_error(c, "%s of %s in %s.csv is empty (not measured%s%s)", name, r->variant,
                        t->scenario, r->skip_reason[0] ? ": " : "", r->skip_reason);
    return 0;
}

/* Ceiling NAME as the scenario's run recorded it (its metadata line ceiling.NAME: the shares in
 * that file were computed against it), else RESULTS_DIR/ceilings.csv. A folder can hold runs of
 * several commits and machines (a two-GPU run kept beside a newer one-GPU suite), so its
 * ceilings.csv need not be the one a file was measured against. */
static int rd_ceiling(rd_ctx *c, const uf_table *t, const char *name, double *out)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN], key[UF_NAME_LEN + 16];
    const char *recorded;
    snprintf(key, sizeof key, "ceiling.%s", name);
    if (t && (recorded = uf_meta_get(&t->meta, key)) != NULL) {
        if (uf_parse_number(recorded, out) != 0 || !isfinite(*out) || *out <= 0)
            return rd_error(c, "%s.csv: ceiling.%s is \"%s\", not a positive number",
                            t->scenario, name, recorded);
        return 0;
    }
    if (!c->have_ceilings) {
        snprintf(path, sizeof path, "%s/ceilings.csv", c->dir);
        if (uf_ceilings_read(path, &c->ceilings, err, sizeof err) != 0)
            return rd_error(c, "%s", err);
        c->have_ceilings = 1;
    }
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, name) == 0) {
            *out = *(const double *)((const char *)&c->ceilings + uf_ceiling_descs[i].offset);
            if (isnan(*out))
                return rd_error(c, "ceiling %s is not measured in %s/ceilings.csv", name, c->dir);
            return 0;
        }
    return rd_error(c, "no ceiling \"%s\"", name);
}

/* claims.held / claims.failed / claims.total: the `claim.N: [status] ...` metadata lines. */
static int rd_claims(rd_ctx *c, const uf_table *t, const char *what, double *out)
{
    int total = 0, held = 0, failed = 0;
    for (int i = 0; i < t->meta.n; i++)
        if (strncmp(t->meta.key[i], "claim.", 6) == 0) {
            total++;
            held += strncmp(t->meta.value[i], "[held]", 6) == 0;
            failed += strncmp(t->meta.value[i], "[FAILED]", 8) == 0;
        }
    if (total == 0)
        return rd_error(c, "%s.csv records no claims", t->scenario);
    if (strcmp(what, "held") == 0)
        *out = held;
    else if (strcmp(what, "failed") == 0)
        *out = failed;
    else if (strcmp(what, "total") == 0)
        *out = total;
    else
        return rd_error(c, "claims.%s: say claims.held, claims.failed or claims.total", what);
    return 0;
}

/* ---- expressions ------------------------------------------------------------------------- */

typedef struct rd_parser {
    const char *s;
    rd_ctx *c;
    const rd_scope *scope;
    int failed;
} rd_parser;

static void skip_space(rd_parser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static double parse_sum(rd_parser *p);

static double parse_fail(rd_parser *p)
{
    p->failed = 1;
    return NAN;
}

static size_t ident_len(const char *s)
{
    size_t n = 0;
    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    while (is_ident_char((unsigned char)s[n]))
        n++;
    return n;
}

/* A number: digits, '.', an exponent, one K/M/G suffix. */
static double parse_number(rd_parser *p)
{
    const char *start = p->s;
    char buf[64];
    double v = NAN;
    while (isdigit((unsigned char)*p->s) || *p->s == '.')
        p->s++;
    if ((*p->s == 'e' || *p->s == 'E') &&
        (isdigit((unsigned char)p->s[1]) ||
         ((p->s[1] == '-' || p->s[1] == '+') && isdigit((unsigned char)p->s[2])))) {
        p->s += 2;
        while (isdigit((unsigned char)*p->s))
            p->s++;
    }
    if (strchr("KMGkmg", *p->s) && *p->s)
        p->s++;
    size_t len = (size_t)(p->s - start);
    if (len >= sizeof buf || (memcpy(buf, start, len), buf[len] = '\0', uf_parse_number(buf, &v)))
        return rd_error(p->c, "bad number \"%.*s\"", (int)len, start), parse_fail(p);
    return v;
}

/* ref := NAME [ '[' WHERE ']' ] [ '.' NAME ] */
static double parse_ref(rd_parser *p)
{
    char first[UF_NAME_LEN], second[UF_NAME_LEN] = "";
    const char *where = NULL;
    size_t where_len = 0, n = ident_len(p->s);
    if (n == 0 || n >= sizeof first)
        return rd_error(p->c, "expected a name at \"%s\"", p->s), parse_fail(p);
    snprintf(first, sizeof first, "%.*s", (int)n, p->s);
    p->s += n;
    if (*p->s == '[') {
        const char *close = strchr(p->s, ']');
        if (!close)
            return rd_error(p->c, "no ] after \"%s\"", p->s), parse_fail(p);
        where = p->s + 1;
        where_len = (size_t)(close - where);
        p->s = close + 1;
    }
    if (*p->s == '.') {
        n = ident_len(p->s + 1);
        if (n == 0 || n >= sizeof second)
            return rd_error(p->c, "expected a metric after \"%s.\"", first), parse_fail(p);
        snprintf(second, sizeof second, "%.*s", (int)n, p->s + 1);
        p->s += n + 1;
    }
    const rd_scope *sc = p->scope;
    double v = NAN, point[UF_MAX_AXES];
    int rc;
    if (second[0] && !where && strcmp(first, "ceiling") == 0) {
        rc = rd_ceiling(p->c, sc->t, second, &v);
    } else if (second[0] && !where && strcmp(first, "claims") == 0) {
        rc = rd_claims(p->c, sc->t, second, &v);
    } else {
        const char *variant = second[0] ? first : sc->variant;
        const char *metric = second[0] ? second : first;
        const uf_row *r;
        if (!variant[0])
            return rd_error(p->c, "\"%s\": name the variant (variant.%s)", metric, metric),
                   parse_fail(p);
        memcpy(point, sc->point, sizeof point);
        rc = where ? apply_where(p->c, sc->t, where, where_len, point, NULL) : 0;
        if (rc == 0)
            rc = (r = rd_row(p->c, sc->t, variant, point)) ? rd_metric(p->c, sc->t, r, metric, &v)
                                                            : -1;
    }
    return rc == 0 ? v : parse_fail(p);
}

static double parse_factor(rd_parser *p)
{
    skip_space(p);
    if (*p->s == '-') {
        p->s++;
        return -parse_factor(p);
    }
    if (*p->s == '(') {
        p->s++;
        double v = parse_sum(p);
        skip_space(p);
        if (*p->s != ')')
            return rd_error(p->c, "expected ) at \"%s\"", p->s), parse_fail(p);
        p->s++;
        return v;
    }
    if (isdigit((unsigned char)*p->s) || *p->s == '.')
        return parse_number(p);
    return parse_ref(p);
}

static double parse_product(rd_parser *p)
{
    double v = parse_factor(p);
    for (skip_space(p); !p->failed && (*p->s == '*' || *p->s == '/'); skip_space(p)) {
        char op = *p->s++;
        double w = parse_factor(p);
        v = op == '*' ? v * w : v / w;
    }
    return v;
}

static double parse_sum(rd_parser *p)
{
    double v = parse_product(p);
    for (skip_space(p); !p->failed && (*p->s == '+' || *p->s == '-'); skip_space(p)) {
        char op = *p->s++;
        double w = parse_product(p);
        v = op == '+' ? v + w : v - w;
    }
    return v;
}

/* Evaluate the whole of expr in scope. 0, or -1 with c->err. */
static int rd_eval(rd_ctx *c, const rd_scope *scope, const char *expr, double *out)
{
    rd_parser p = {expr, c, scope, 0};
    double v = parse_sum(&p);
    skip_space(&p);
    if (p.failed)
        return -1;
    if (*p.s)
        return rd_error(c, "unexpected \"%s\" in \"%s\"", p.s, expr);
    if (!isfinite(v))
        return rd_error(c, "\"%s\" is not a finite number", expr);
    *out = v;
    return 0;
}

/* ---- formatting ------------------------------------------------------------------------- */

/* A format is text with exactly one %[flags][width][.precision]f|g|e and %% elsewhere. */
static int check_format(rd_ctx *c, const char *fmt)
{
    int conversions = 0;
    for (const char *s = fmt; *s; s++) {
        if (*s != '%')
            continue;
        if (s[1] == '%') {
            s++;
            continue;
        }
        s++;
        s += strspn(s, "-+ 0#");
        s += strspn(s, "0123456789");
        if (*s == '.')
            s += 1 + strspn(s + 1, "0123456789");
        if (*s != 'f' && *s != 'g' && *s != 'e')
            return rd_error(c, "format \"%s\": one %%f, %%g or %%e conversion (%%%% for %%)", fmt);
        conversions++;
    }
    if (conversions != 1)
        return rd_error(c, "format \"%s\" has %d conversions, not one", fmt, conversions);
    return 0;
}

/* "-0.0" reads as a change of sign that did not happen: drop the minus of a zero. */
static void drop_negative_zero(char *s)
{
    size_t number = strspn(s, "-+0123456789.");
    if (s[0] == '-' && strcspn(s, "123456789") >= number)
        memmove(s, s + 1, strlen(s));
}

/* Three significant digits, whole numbers as they are: 4.70, 16.9, 253, 0.0269, 1980, 8. */
static void format_value(double v, const char *fmt, char *out, size_t len)
{
    if (fmt && *fmt) {
        snprintf(out, len, fmt, v);   /* check_format let through one f, g or e */
    } else if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(out, len, "%.0f", v);
    } else {
        int decimals = 2 - (int)floor(log10(fabs(v)));
        snprintf(out, len, "%.*f", decimals < 0 ? 0 : decimals, v);
    }
    drop_negative_zero(out);
}

/* ---- one figure: HEAD EXPR [FORMAT] ----------------------------------------------------- */

/* HEAD := SCENARIO [ '/' VARIANT ] [ '[' WHERE ']' ]: the scope of what follows. Advances *s
 * past it. 0, or -1 with c->err. */
static int parse_head(rd_ctx *c, const char **s, rd_scope *scope)
{
    char name[UF_NAME_LEN];
    size_t n = ident_len(*s);
    if (n == 0 || n >= sizeof name)
        return rd_error(c, "expected a scenario name at \"%.40s\"", *s);
    snprintf(name, sizeof name, "%.*s", (int)n, *s);
    *s += n;
    memset(scope, 0, sizeof *scope);
    if ((scope->t = rd_table(c, name)) == NULL)
        return -1;
    default_point(scope->t, scope->point);
    if (**s == '/') {
        n = ident_len(*s + 1);
        if (n == 0 || n >= sizeof scope->variant)
            return rd_error(c, "expected a variant after \"%s/\"", name);
        snprintf(scope->variant, sizeof scope->variant, "%.*s", (int)n, *s + 1);
        *s += n + 1;
    }
    if (**s == '[') {
        const char *close = strchr(*s, ']');
        if (!close)
            return rd_error(c, "no ] in \"%s\"", *s);
        if (apply_where(c, scope->t, *s + 1, (size_t)(close - *s - 1), scope->point, NULL) != 0)
            return -1;
        *s = close + 1;
    }
    if (**s && !isspace((unsigned char)**s))
        return rd_error(c, "unexpected \"%.20s\" after the scenario", *s);
    return 0;
}

/* Split "EXPR [FORMAT]" (the format starts at the first %) into its parts, trimmed. */
static int split_format(rd_ctx *c, const char *text, char *expr, char *fmt, size_t len)
{
    const char *pct = strchr(text, '%');
    size_t n = pct ? (size_t)(pct - text) : strlen(text);
    while (n && isspace((unsigned char)text[n - 1]))
        n--;
    while (n && isspace((unsigned char)*text))
        text++, n--;
    if (n >= len || (pct && strlen(pct) >= len))
        return rd_error(c, "figure too long: %s", text);
    snprintf(expr, len, "%.*s", (int)n, text);
    snprintf(fmt, len, "%s", pct ? pct : "");
    for (size_t k = strlen(fmt); k && isspace((unsigned char)fmt[k - 1]); k--)
        fmt[k - 1] = '\0';
    if (!expr[0])
        return rd_error(c, "no expression in \"%s\"", text);
    return fmt[0] ? check_format(c, fmt) : 0;
}

/* The text of EXPR FMT in scope: `meta.KEY` and (with a row) `variant` are text, the rest a
 * number. *numeric says which. 0, or -1 with c->err. */
static int figure_text(rd_ctx *c, const rd_scope *scope, const char *expr, const char *fmt,
                       char *out, size_t len, int *numeric)
{
    double v = NAN;
    *numeric = 0;
    if (strncmp(expr, "meta.", 5) == 0) {
        const char *value = uf_meta_get(&scope->t->meta, expr + 5);
        if (!value)
            return rd_error(c, "%s.csv has no metadata line \"%s\"", scope->t->scenario, expr + 5);
        if (fmt[0])
            return rd_error(c, "%s is text: it takes no format", expr);
        snprintf(out, len, "%s", value);
        return 0;
    }
    if (strcmp(expr, "variant") == 0) {
        if (!scope->variant[0])
            return rd_error(c, "\"variant\": no variant here");
        snprintf(out, len, "%s", scope->variant);
        return 0;
    }
    if (rd_eval(c, scope, expr, &v) != 0)
        return -1;
    format_value(v, fmt, out, len);
    *numeric = 1;
    return 0;
}

/* An inline spec "HEAD EXPR [FORMAT]" (between "<!-- uf " and "-->"). */
static int inline_figure(rd_ctx *c, const char *spec, char *out, size_t len)
{
    rd_scope scope;
    char expr[RD_TEXT_LEN], fmt[RD_TEXT_LEN];
    int numeric;
    if (parse_head(c, &spec, &scope) != 0 ||
        split_format(c, spec, expr, fmt, sizeof expr) != 0)
        return -1;
    return figure_text(c, &scope, expr, fmt, out, len, &numeric);
}

/* ---- tables ----------------------------------------------------------------------------- */

typedef struct rd_column {
    char label[UF_NAME_LEN * 2];
    char expr[RD_TEXT_LEN];
    char fmt[UF_NAME_LEN];
} rd_column;

typedef struct rd_tablespec {
    rd_scope head;
    rd_column cols[RD_MAX_COLS];
    int n_cols;
    rd_scope rows[RD_MAX_ROWS];
    int n_rows;
} rd_tablespec;

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
    size_t n = ident_len(ref);
    if (n >= sizeof row.variant || (n == 0 && !row.variant[0]))
        return rd_error(c, "bad row \"%.*s\": VARIANT[AXIS=VALUE,...]", (int)len, ref);
    if (n)
        snprintf(row.variant, sizeof row.variant, "%.*s", (int)n, ref);
    if (n < len) {
        if (ref[n] != '[' || ref[len - 1] != ']')
            return rd_error(c, "bad row \"%.*s\": VARIANT[AXIS=VALUE,...]", (int)len, ref);
        if (apply_where(c, row.t, ref + n + 1, len - n - 2, row.point, &star) != 0)
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
        point_text(row.t, row.point, where, sizeof where);
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
    if (split_format(c, eq + 1, col->expr, fmt, sizeof col->expr) != 0)
        return -1;
    if (strlen(fmt) >= sizeof col->fmt)
        return rd_error(c, "format too long: %s", fmt);
    snprintf(col->fmt, sizeof col->fmt, "%s", fmt);
    return 0;
}

/* The spec after "<!-- underfed:table ": a head, then lines "rows: ..." and columns. */
static int parse_table_spec(rd_ctx *c, const char *spec, rd_tablespec *ts)
{
    char line[RD_TEXT_LEN];
    const char *s = spec;
    memset(ts, 0, sizeof *ts);
    if (parse_head(c, &s, &ts->head) != 0)
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
static int render_table(rd_ctx *c, const rd_tablespec *ts, uf_strbuf *out)
{
    typedef char cell[UF_NAME_LEN * 2];
    cell *cells = malloc((size_t)ts->n_rows * RD_MAX_COLS * sizeof *cells);
    int numeric[RD_MAX_COLS] = {0};
    if (!cells)
        return rd_error(c, "out of memory");
    for (int r = 0; r < ts->n_rows; r++)
        for (int k = 0; k < ts->n_cols; k++) {
            int num;
            if (figure_text(c, &ts->rows[r], ts->cols[k].expr, ts->cols[k].fmt,
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
        if (inline_figure(c, spec, value, sizeof value) != 0) {
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
    } else if (parse_table_spec(c, spec, ts) != 0 || render_table(c, ts, &table) != 0) {
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

static void ctx_free(rd_ctx *c)
{
    for (int i = 0; i < c->n_src; i++)
        uf_table_free(&c->src[i].table);
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
    ctx_free(c);
    free(c);
    return rc ? rc : check && stale ? RD_STALE : 0;
}

/* Its line in `underfed --help`; it reads its own argv. */
const uf_command uf_readme_command = {
    "readme", "[--check] DIR FILE.md...", 0, 0, "",
    "rewrites the pages' figures from DIR (--check: only checks)", uf_cmd_readme, 0};

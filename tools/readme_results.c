/* What the figures of `underfed readme` read (readme_results.h): the results files of the
 * folder, each read once per run; a run's default point and a WHERE applied to it; the row of
 * a variant at a point and its metrics; the ceilings and the claims. The grammar of the pages
 * is at the top of readme_cmd.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "readme_results.h"
#include "expect.h"

int rd_error(rd_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

int rd_is_ident_char(int ch)
{
    return isalnum(ch) || ch == '_';
}

size_t rd_ident_len(const char *s)
{
    size_t n = 0;
    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    while (rd_is_ident_char((unsigned char)s[n]))
        n++;
    return n;
}

/* ---- results files and points ------------------------------------------------------------ */

/* The table of DIR/NAME.csv, read on first use; NULL with the reason in c->err. */
const uf_table *rd_table(rd_ctx *c, const char *name)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    for (int i = 0; i < c->n_src; i++)
        if (strcmp(c->src[i].name, name) == 0)
            return &c->src[i].table;
    for (const char *p = name; *p; p++)
        if (!rd_is_ident_char((unsigned char)*p)) {
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
void rd_default_point(const uf_table *t, double *point)
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
int rd_apply_where(rd_ctx *c, const uf_table *t, const char *where, size_t len, double *point,
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
void rd_point_text(const uf_table *t, const double *point, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int a = 0; a < t->n_axes && used < len; a++)
        used += (size_t)snprintf(out + used, len - used, "%s%s=%.10g", a ? "," : "",
                                 t->axis_names[a], point[a]);
}

/* The row of variant at point; NULL with the reason (no such variant, or none at the point). */
const uf_row *rd_row(rd_ctx *c, const uf_table *t, const char *variant, const double *point)
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
    rd_point_text(t, point, where, sizeof where);
    if (!known)
        rd_error(c, "%s.csv has no variant \"%s\"", t->scenario, variant);
    else
        rd_error(c, "%s.csv has no row of %s at %s", t->scenario, variant, where);
    return NULL;
}

/* A metric, extra column or axis of a row: -1 when the name is unknown or the value was not
 * measured (the row's skip_reason then says why). */
int rd_metric(rd_ctx *c, const uf_table *t, const uf_row *r, const char *name, double *out)
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
int rd_ceiling(rd_ctx *c, const uf_table *t, const char *name, double *out)
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
int rd_claims(rd_ctx *c, const uf_table *t, const char *what, double *out)
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

void rd_ctx_free(rd_ctx *c)
{
    for (int i = 0; i < c->n_src; i++)
        uf_table_free(&c->src[i].table);
}

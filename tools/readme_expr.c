/* The expressions of `underfed readme`'s figures (readme_expr.h): a recursive-descent parser
 * that evaluates as it reads. sum := product (('+'|'-') product)*, product := factor
 * (('*'|'/') factor)*, factor := '-' factor | '(' sum ')' | number | ref; a number may carry a
 * K/M/G suffix; a ref is looked up in the results (readme_results.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "readme_expr.h"

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
    size_t where_len = 0, n = rd_ident_len(p->s);
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
        n = rd_ident_len(p->s + 1);
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
        rc = where ? rd_apply_where(p->c, sc->t, where, where_len, point, NULL) : 0;
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
int rd_eval(rd_ctx *c, const rd_scope *scope, const char *expr, double *out)
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

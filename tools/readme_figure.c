/* One figure of `underfed readme` (readme_figure.h): its head (the scenario, a default variant
 * and a point), its expression and format split apart, and its text: a metadata line, the
 * variant, or the expression's value in its format (three significant digits without one). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "readme_figure.h"
#include "readme_expr.h"

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
int rd_parse_head(rd_ctx *c, const char **s, rd_scope *scope)
{
    char name[UF_NAME_LEN];
    size_t n = rd_ident_len(*s);
    if (n == 0 || n >= sizeof name)
        return rd_error(c, "expected a scenario name at \"%.40s\"", *s);
    snprintf(name, sizeof name, "%.*s", (int)n, *s);
    *s += n;
    memset(scope, 0, sizeof *scope);
    if ((scope->t = rd_table(c, name)) == NULL)
        return -1;
    rd_default_point(scope->t, scope->point);
    if (**s == '/') {
        n = rd_ident_len(*s + 1);
        if (n == 0 || n >= sizeof scope->variant)
            return rd_error(c, "expected a variant after \"%s/\"", name);
        snprintf(scope->variant, sizeof scope->variant, "%.*s", (int)n, *s + 1);
        *s += n + 1;
    }
    if (**s == '[') {
        const char *close = strchr(*s, ']');
        if (!close)
            return rd_error(c, "no ] in \"%s\"", *s);
        if (rd_apply_where(c, scope->t, *s + 1, (size_t)(close - *s - 1), scope->point, NULL) != 0)
            return -1;
        *s = close + 1;
    }
    if (**s && !isspace((unsigned char)**s))
        return rd_error(c, "unexpected \"%.20s\" after the scenario", *s);
    return 0;
}

/* Split "EXPR [FORMAT]" (the format starts at the first %) into its parts, trimmed. */
int rd_split_format(rd_ctx *c, const char *text, char *expr, char *fmt, size_t len)
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
int rd_figure_text(rd_ctx *c, const rd_scope *scope, const char *expr, const char *fmt,
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
int rd_inline_figure(rd_ctx *c, const char *spec, char *out, size_t len)
{
    rd_scope scope;
    char expr[RD_TEXT_LEN], fmt[RD_TEXT_LEN];
    int numeric;
    if (rd_parse_head(c, &spec, &scope) != 0 ||
        rd_split_format(c, spec, expr, fmt, sizeof expr) != 0)
        return -1;
    return rd_figure_text(c, &scope, expr, fmt, out, len, &numeric);
}

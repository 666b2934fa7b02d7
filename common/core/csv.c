/* The CSV dialect of underfed's files (see csv.h): the writing helpers and the strict
 * reader that the results, series and ceilings files share. */
#include "csv.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "strbuf.h"

/* ---- writing ---------------------------------------------------------------------------- */

/* A control character (a line break, a tab, an escape): a text holds none (bounds.h). */
static int is_control(char c)
{
    return (unsigned char)c < 0x20 || c == 0x7f;
}

void uf_csv_put_string(uf_strbuf *b, const char *s)
{
    int quote = strpbrk(s, ",\"") != NULL;
    if (quote)
        uf_sb_putn(b, "\"", 1);
    for (const char *c = s; *c != '\0'; c++) {
        if (*c == '"')
            uf_sb_putn(b, "\"", 1);
        uf_sb_putn(b, is_control(*c) ? " " : c, 1);
    }
    if (quote)
        uf_sb_putn(b, "\"", 1);
}

void uf_csv_put_number(uf_strbuf *b, double v)
{
    if (!isnan(v))
        uf_sb_printf(b, "%.10g", v);
}

/* `# KEY: VALUE` with any control character in the value (a line break first) a space. */
void uf_csv_put_meta(uf_strbuf *b, const char *key, const char *value)
{
    uf_sb_printf(b, "# %s: ", key);
    for (const char *c = value; *c != '\0'; c++)
        uf_sb_putn(b, is_control(*c) ? " " : c, 1);
    uf_sb_putn(b, "\n", 1);
}

/* The lines every CSV flavour starts with: magic, scenario (when given), metadata. */
void uf_csv_preamble(uf_strbuf *b, const char *magic, const char *scenario, const uf_meta *m)
{
    uf_sb_puts(b, magic);
    uf_sb_putn(b, "\n", 1);
    if (scenario != NULL)
        uf_csv_put_meta(b, "scenario", scenario);
    for (int i = 0; m != NULL && i < m->n; i++)
        if (scenario == NULL || strcmp(m->key[i], "scenario") != 0)
            uf_csv_put_meta(b, m->key[i], m->value[i]);
}

/* ---- the strict reader ------------------------------------------------------------------ */

static int rd_verror(const uf_csv_reader *r, int line, int col, char *err, size_t errlen,
                     const char *fmt, va_list ap)
{
    if (err == NULL || errlen == 0)
        return -1;
    int n = col > 0 ? snprintf(err, errlen, "%s:%d:%d: ", r->path, line, col)
                    : snprintf(err, errlen, "%s:%d: ", r->path, line);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    /* What a message quotes from the file reaches a terminal: no control character (C0,
     * DEL, or C1 as UTF-8, 0xc2 0x80..0x9f: CSI is 0xc2 0x9b) goes with it. */
    for (char *c = err; *c != '\0'; c++) {
        if (is_control(*c))
            *c = '?';
        else if ((unsigned char)c[0] == 0xc2 && (unsigned char)c[1] >= 0x80 &&
                 (unsigned char)c[1] <= 0x9f)
            c[0] = c[1] = '?';
    }
    return -1;
}

/* "PATH:LINE: message"; -1. */
int uf_csv_error(const uf_csv_reader *r, int line, char *err, size_t errlen, const char *fmt,
                 ...)
{
    va_list ap;
    va_start(ap, fmt);
    rd_verror(r, line, 0, err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* "PATH:LINE:COLUMN: message" (COLUMN counts characters from 1); -1. */
int uf_csv_error_at(const uf_csv_reader *r, int line, int col, char *err, size_t errlen,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rd_verror(r, line, col, err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The column (from 1) where field i of the current record starts. */
int uf_csv_field_col(const uf_csv_reader *r, int i)
{
    return (int)(r->fields[i] - r->rec_start) + 1;
}

/* The reader on a copy of data (len bytes, any content); path names it in messages. CR LF is
 * folded into LF; a NUL byte is an error (the files are text, and C strings would cut there). */
int uf_csv_open(uf_csv_reader *r, const char *path, const char *data, size_t len,
                char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->line = 1;
    r->buf = malloc(len + 1);
    if (r->buf == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    if (len > 0)
        memcpy(r->buf, data, len);
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        if (!(r->buf[i] == '\r' && i + 1 < len && r->buf[i + 1] == '\n'))
            r->buf[w++] = r->buf[i];
    r->len = w;
    r->buf[w] = '\0';
    const char *nul = memchr(r->buf, '\0', r->len);
    if (nul != NULL) {
        int line = 1;
        const char *line_start = r->buf;
        for (const char *c = r->buf; c < nul; c++)
            if (*c == '\n') {
                line++;
                line_start = c + 1;
            }
        return uf_csv_error_at(r, line, (int)(nul - line_start) + 1, err, errlen,
                               "NUL byte: not a text file");
    }
    return 0;
}

/* Does the loaded text start with the line `magic`? */
int uf_csv_has_magic(const uf_csv_reader *r, const char *magic)
{
    size_t mlen = strlen(magic);
    return r->len > mlen && memcmp(r->buf, magic, mlen) == 0 && r->buf[mlen] == '\n';
}

/* Check that the text starts with magic (the file's kind is `what`) and ends with a line
 * break; position after the magic line. */
int uf_csv_start(uf_csv_reader *r, const char *magic, const char *what, char *err,
                 size_t errlen)
{
    if (!uf_csv_has_magic(r, magic))
        return uf_csv_error(r, 1, err, errlen, "not an %s file (the first line is not '%s')", what,
                            magic);
    if (r->buf[r->len - 1] != '\n') {
        int lines = 1;
        for (size_t i = 0; i < r->len; i++)
            lines += r->buf[i] == '\n';
        return uf_csv_error(r, lines, err, errlen, "truncated: the last line has no line break");
    }
    r->pos = strlen(magic) + 1;
    r->line = 2;
    return 0;
}

void uf_csv_close(uf_csv_reader *r)
{
    free(r->buf);
    free(r->fields);
    r->buf = NULL;
    r->fields = NULL;
}

/* The next `#` line as key and value ("# KEY: VALUE"); *key NULL for a comment without ": ".
 * Returns 1 when a `#` line was consumed, 0 when the next line is not one. */
int uf_csv_meta(uf_csv_reader *r, char **key, char **value)
{
    if (r->pos >= r->len || r->buf[r->pos] != '#')
        return 0;
    char *line = r->buf + r->pos;
    char *nl = memchr(line, '\n', r->len - r->pos);
    if (nl == NULL)                 /* uf_csv_start checked the final line break */
        nl = r->buf + r->len;
    *nl = '\0';
    r->pos = (size_t)(nl - r->buf) + (nl < r->buf + r->len);
    r->line++;
    *key = *value = NULL;
    char *text = line + 1;
    while (*text == ' ')
        text++;
    char *sep = strstr(text, ": ");
    if (sep == NULL)
        return 1;
    *sep = '\0';
    *key = text;
    *value = sep + 2;
    return 1;
}

/* A metadata entry fits the table: key 1..UF_NAME_LEN-1 characters, value shorter than
 * UF_META_VALUE_LEN, key not seen before in `seen` (NULL: not checked). Line is the entry's. */
int uf_csv_check_meta(const uf_csv_reader *r, int line, const char *key, const char *value,
                      const uf_meta *seen, char *err, size_t errlen)
{
    char why[128];
    int at;
    if (key[0] == '\0')
        return uf_csv_error(r, line, err, errlen, "metadata line with an empty key");
    if (strlen(key) >= UF_NAME_LEN)
        return uf_csv_error(r, line, err, errlen, "metadata key longer than %d characters",
                            UF_NAME_LEN - 1);
    if ((at = uf_bound_name_at(key)) >= 0) {
        uf_bound_why(key, at, 1, why, sizeof why);
        return uf_csv_error(r, line, err, errlen, "metadata key: %s (a key is a name)", why);
    }
    if (strlen(value) >= UF_META_VALUE_LEN)
        return uf_csv_error(r, line, err, errlen, "metadata '%s': value longer than %d characters",
                            key, UF_META_VALUE_LEN - 1);
    if ((at = uf_bound_text_at(value)) >= 0) {
        uf_bound_why(value, at, 0, why, sizeof why);
        return uf_csv_error(r, line, err, errlen, "metadata '%s': %s of the value", key, why);
    }
    if (seen != NULL && uf_meta_get(seen, key) != NULL)
        return uf_csv_error(r, line, err, errlen, "metadata key '%s' appears twice", key);
    if (seen != NULL && seen->n >= UF_MAX_META)
        return uf_csv_error(r, line, err, errlen, "more than %d metadata lines", UF_MAX_META);
    return 0;
}

static int add_field(uf_csv_reader *r, char *field)
{
    char **fields = uf_grow(r->fields, &r->cap_fields, r->n_fields + 1, sizeof *fields, 64);
    if (fields == NULL)
        return -1;
    r->fields = fields;
    r->fields[r->n_fields++] = field;
    return 0;
}

/* One field starting at *pp; unescaped in place into w. Leaves *pp on its delimiter. */
static int parse_field(uf_csv_reader *r, char **pp, int start_line, char *err, size_t errlen)
{
    char *p = *pp, *end = r->buf + r->len, *w = p;
    if (*p == '"') {
        for (p++;; p++) {
            if (p >= end)
                return uf_csv_error(r, start_line, err, errlen, "unterminated quote");
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') {
                    *w++ = '"';
                    p++;
                    continue;
                }
                p++;
                break;
            }
            if (*p == '\n')
                r->line++;
            *w++ = *p;
        }
        if (*p != ',' && *p != '\n')
            return uf_csv_error(r, r->line, err, errlen, "text after a closing quote");
    } else {
        for (; *p != ',' && *p != '\n'; p++) {
            if (*p == '"')
                return uf_csv_error(r, r->line, err, errlen, "quote inside an unquoted field");
            *w++ = *p;
        }
    }
    *pp = p;
    char delim = *p;    /* w <= p: read the delimiter before terminating the field */
    *w = '\0';
    return delim == '\n' ? 1 : 0;
}

/* The next record into r->fields. Returns 1 with the record's first line in *line, 0 at the
 * end of the file, -1 on a format error. */
int uf_csv_record(uf_csv_reader *r, int *line, char *err, size_t errlen)
{
    r->n_fields = 0;
    if (r->pos >= r->len)
        return 0;
    *line = r->line;
    char *p = r->buf + r->pos;
    r->rec_start = p;
    for (;;) {
        char *field = p;
        int last = parse_field(r, &p, *line, err, errlen);
        if (last < 0)
            return -1;
        if (add_field(r, field) != 0)
            return uf_csv_error(r, *line, err, errlen, "out of memory");
        p++;    /* past the delimiter */
        if (last) {
            r->line++;
            break;
        }
    }
    r->pos = (size_t)(p - r->buf);
    return 1;
}

/* Plain decimal: [+-] digits [. digits] [e|E [+-] digits], at least one digit in the mantissa.
 * No "nan", "inf", hex floats, spaces or suffixes. */
static int is_decimal(const char *s)
{
    const char *c = s;
    int digits = 0;
    if (*c == '+' || *c == '-')
        c++;
    for (; *c >= '0' && *c <= '9'; c++)
        digits++;
    if (*c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++)
            digits++;
    if (digits == 0)
        return 0;
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return 0;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    return *c == '\0';
}

/* A number field: empty is NaN (not measured); otherwise plain decimal text of a finite
 * value (an overflow to infinity is refused, an underflow reads as the nearest double). */
int uf_csv_parse_number(const char *s, double *out)
{
    if (s[0] == '\0') {
        *out = NAN;
        return 0;
    }
    if (!is_decimal(s))
        return -1;
    double v = strtod(s, NULL);
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Field i as a number into *out; an error naming line, column and the column's name. */
int uf_csv_number(const uf_csv_reader *r, int line, int i, const char *col, double *out,
                  char *err, size_t errlen)
{
    if (uf_csv_parse_number(r->fields[i], out) != 0)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                               "column '%s': '%s' is not a number (plain decimal, finite; empty "
                               "if not measured)", col, r->fields[i]);
    return 0;
}

/* Field i as the metric m: a number within m's valid range. */
int uf_csv_metric(const uf_csv_reader *r, int line, int i, const uf_metric_desc *m,
                  double *out, char *err, size_t errlen)
{
    if (uf_csv_number(r, line, i, m->name, out, err, errlen) != 0)
        return -1;
    if (!uf_metric_valid(m, *out)) {
        char range[64];
        uf_metric_range_text(m, range, sizeof range);
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                               "column '%s': %s is outside its valid range %s (%s)", m->name,
                               r->fields[i], range, m->hint);
    }
    return 0;
}

/* Field i as a name (bounds.h) into dst; an error naming line, column and the column. */
int uf_csv_name(const uf_csv_reader *r, int line, int i, const char *col, char *dst,
                size_t dstlen, char *err, size_t errlen)
{
    const char *s = r->fields[i];
    int at = uf_bound_name_at(s);
    if (at >= 0) {
        char why[128];
        uf_bound_why(s, at, 1, why, sizeof why);
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i) + (s[0] ? at : 0), err, errlen,
                               "column '%s': %s (a %s is a name)", col, why, col);
    }
    if (strlen(s) >= dstlen)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                               "column '%s': longer than %zu characters", col, dstlen - 1);
    uf_copy_str(dst, dstlen, s);
    return 0;
}

/* Field i as a text (bounds.h) into dst; an error naming line, column and the column. */
int uf_csv_text(const uf_csv_reader *r, int line, int i, const char *col, char *dst,
                size_t dstlen, char *err, size_t errlen)
{
    const char *s = r->fields[i];
    int at = uf_bound_text_at(s);
    if (at >= 0) {
        char why[128];
        uf_bound_why(s, at, 0, why, sizeof why);
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen, "column '%s': %s",
                               col, why);
    }
    if (strlen(s) >= dstlen)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                               "column '%s': longer than %zu characters", col, dstlen - 1);
    uf_copy_str(dst, dstlen, s);
    return 0;
}

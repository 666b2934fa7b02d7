/* A growable text buffer (see strbuf.h). */
#include "strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"

void *uf_grow(void *items, int *cap, int need, size_t size, int first)
{
    if (need <= *cap)
        return items;
    int bigger = *cap > 0 ? 2 * *cap : first;
    while (bigger < need)
        bigger *= 2;
    void *grown = realloc(items, (size_t)bigger * size);
    if (grown != NULL)
        *cap = bigger;
    return grown;
}

void uf_copy_str(char *dst, size_t dstlen, const char *src)
{
    if (dstlen == 0)
        return;
    snprintf(dst, dstlen, "%s", src != NULL ? src : "");
}

static int reserve(uf_strbuf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap > 0 ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (data == NULL) {
        b->failed = 1;
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

void uf_sb_putn(uf_strbuf *b, const char *s, size_t n)
{
    if (reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void uf_sb_puts(uf_strbuf *b, const char *s)
{
    uf_sb_putn(b, s, strlen(s));
}

void uf_sb_printf(uf_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

size_t uf_utf8_len(const char *s)
{
    const unsigned char *c = (const unsigned char *)s;
    if (c[0] < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xbf;      /* the second byte's range */
    if (c[0] >= 0xc2 && c[0] <= 0xdf) {
        n = 2;
    } else if (c[0] >= 0xe0 && c[0] <= 0xef) {
        n = 3;
        if (c[0] == 0xe0)
            lo = 0xa0;                  /* not overlong */
        else if (c[0] == 0xed)
            hi = 0x9f;                  /* not a surrogate */
    } else if (c[0] >= 0xf0 && c[0] <= 0xf4) {
        n = 4;
        if (c[0] == 0xf0)
            lo = 0x90;                  /* not overlong */
        else if (c[0] == 0xf4)
            hi = 0x8f;                  /* not past U+10FFFF */
    } else {
        return 0;                       /* a continuation byte, 0xc0, 0xc1, 0xf5.. */
    }
    if (c[1] < lo || c[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (c[i] < 0x80 || c[i] > 0xbf)
            return 0;
    return n;
}

void uf_sb_json_string(uf_strbuf *b, const char *s)
{
    uf_sb_putn(b, "\"", 1);
    for (const char *c = s; *c != '\0';) {
        size_t n = uf_utf8_len(c);
        switch (*c) {
        case '"': uf_sb_puts(b, "\\\""); break;
        case '\\': uf_sb_puts(b, "\\\\"); break;
        case '\n': uf_sb_puts(b, "\\n"); break;
        case '\r': uf_sb_puts(b, "\\r"); break;
        case '\t': uf_sb_puts(b, "\\t"); break;
        default:
            if (n == 0)
                uf_sb_puts(b, "\\ufffd");
            else if ((unsigned char)*c < 0x20)
                uf_sb_printf(b, "\\u%04x", (unsigned char)*c);
            else
                uf_sb_putn(b, c, n);
        }
        c += n ? n : 1;
    }
    uf_sb_putn(b, "\"", 1);
}

void uf_sb_json_number(uf_strbuf *b, double v, int digits)
{
    if (isfinite(v))
        uf_sb_printf(b, "%.*g", digits, v);
    else
        uf_sb_puts(b, "null");
}

void uf_sb_item(uf_strbuf *b, const char *sep)
{
    if (b->n_items++ > 0)
        uf_sb_puts(b, sep);
}

int uf_sb_commit(uf_strbuf *b, const char *path, char *err, size_t errlen)
{
    int rc;
    if (b->failed)
        rc = uf_set_err(err, errlen, "%s: out of memory while formatting", path);
    else
        rc = uf_write_file_atomic(path, b->data != NULL ? b->data : "", b->len, err, errlen);
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    return rc;
}

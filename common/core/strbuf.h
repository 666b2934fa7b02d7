/* A growable text buffer for the writers (results CSV/JSON, trace export), and a bounded
 * string copy. Plain C, no CUDA. */
#ifndef UF_STRBUF_H
#define UF_STRBUF_H

#include <stddef.h>

#include "errors.h"     /* uf_set_err: the writers' error messages */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uf_strbuf {
    char *data;         /* NUL-terminated; NULL until the first write */
    size_t len, cap;
    int failed;         /* an allocation failed: the content is incomplete */
    size_t n_items;     /* list items written (see uf_sb_item) */
} uf_strbuf;

void uf_sb_putn(uf_strbuf *b, const char *s, size_t n);
void uf_sb_puts(uf_strbuf *b, const char *s);
void uf_sb_printf(uf_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal, quotes included, with the escapes JSON requires; a byte that does
 * not begin a valid UTF-8 sequence becomes \ufffd (U+FFFD), so the literal is valid UTF-8
 * whatever s holds. */
void uf_sb_json_string(uf_strbuf *b, const char *s);
/* A JSON number: v to `digits` significant digits (%.*g), or null where v is not finite (JSON
 * has no NaN or infinity). Every JSON writer's numbers come through here, each with the digits
 * its committed files have: the results JSON 10 (as its CSV, csv.h), the doctor's 6, and 15
 * for a whole number below 10^15 (every digit: 15 digits write it as %.0f does). */
void uf_sb_json_number(uf_strbuf *b, double v, int digits);
/* The length (1-4) of the valid UTF-8 sequence at s (NUL-terminated), 0 when the byte at s
 * does not begin one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
 * cut short). */
size_t uf_utf8_len(const char *s);
/* Start a list item: writes `sep` before every item but the first. */
void uf_sb_item(uf_strbuf *b, const char *sep);
/* Write the buffer to path atomically (uf_write_file_atomic), then free it. 0 or -1 with err. */
int uf_sb_commit(uf_strbuf *b, const char *path, char *err, size_t errlen);

/* An array of `size`-byte items with room for `need` of them: items itself when its capacity
 * *cap suffices, else reallocated to double the capacity (`first` the first time) and *cap
 * updated. NULL when out of memory (items and *cap unchanged, still the caller's). */
void *uf_grow(void *items, int *cap, int need, size_t size, int first);

/* Copy src (NULL: "") into dst with truncation; always terminated when dstlen > 0. */
void uf_copy_str(char *dst, size_t dstlen, const char *src);

#ifdef __cplusplus
}
#endif
#endif

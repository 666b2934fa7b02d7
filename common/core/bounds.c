/* The bounds of what a file may say (see bounds.h). */
#include "bounds.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "results.h"

int uf_bound_axis(double v)
{
    return isfinite(v) && v >= 0 && v <= UF_BOUND_COUNT;
}

int uf_bound_extra(double v)
{
    return isnan(v) || (isfinite(v) && fabs(v) <= UF_BOUND_COUNT);
}

double uf_bound_ceiling_max(const char *unit)
{
    static const struct {
        const char *unit;
        double max;
    } units[] = {
        {"GB/s", UF_BOUND_GBS}, {"TFLOP/s", UF_BOUND_TFLOPS}, {"us", UF_BOUND_US},
        {"ms", UF_BOUND_MS},    {"%", UF_BOUND_COUNTER_PCT},
    };
    for (size_t i = 0; unit != NULL && i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].unit, unit) == 0)
            return units[i].max;
    return UF_BOUND_COUNT;
}

int uf_bound_ceiling(double v, const char *unit)
{
    return isfinite(v) && v > 0 && v <= uf_bound_ceiling_max(unit);
}

static int name_char(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '@' || (!first && (c == '.' || c == '-'));
}

int uf_bound_name_at(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= UF_NAME_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i], i == 0))
            return (int)i;
    return -1;
}

/* The length of the UTF-8 sequence at s (2 to 4) when it is one, of a code point that is not
 * a C1 control (U+0080..U+009F), an overlong form or a surrogate; 0 otherwise. */
static int utf8_length(const unsigned char *s)
{
    unsigned c = s[0], cp;
    int len;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (int k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3f);
    }
    static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
        return 0;
    return len;
}

int uf_bound_text_at(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; u[i] != '\0';) {
        if (u[i] >= 0x20 && u[i] < 0x7f) {
            i++;
            continue;
        }
        int len = u[i] >= 0x80 ? utf8_length(u + i) : 0;
        if (len == 0)
            return (int)i;
        i += (size_t)len;
    }
    return -1;
}

void uf_bound_why(const char *s, int i, int is_name, char *out, unsigned outlen)
{
    size_t n = strlen(s);
    unsigned char c = (unsigned char)s[i < 0 ? 0 : i];
    if (is_name && n == 0)
        snprintf(out, outlen, "an empty name");
    else if (is_name && n >= UF_NAME_LEN)
        snprintf(out, outlen, "a name longer than %d characters", UF_NAME_LEN - 1);
    else if (is_name && c >= 0x20 && c < 0x7f)
        snprintf(out, outlen, "character %d ('%c') is not a letter, digit, _ @%s", i + 1, c,
                 i == 0 ? " (. and - only after the first)" : " . -");
    else if (is_name)
        snprintf(out, outlen, "character %d (byte 0x%02x) is not a letter, digit, _ @ . -",
                 i + 1, c);
    else if (c < 0x20 || c == 0x7f)
        snprintf(out, outlen, "byte %d (0x%02x) is a control character", i + 1, c);
    else
        snprintf(out, outlen, "byte %d (0x%02x) is not UTF-8 text (or is a C1 control)", i + 1,
                 c);
}

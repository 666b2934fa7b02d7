/* A strict JSON syntax checker for the unit tests (RFC 8259 grammar; no values are built).
 * json_valid(text) is 1 when the whole text is exactly one JSON value. */
#ifndef UF_TEST_JSON_CHECK_H
#define UF_TEST_JSON_CHECK_H

#include <ctype.h>
#include <string.h>

static inline const char *json_value(const char *p, int depth);

static inline const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static inline const char *json_string_end(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p != '"'; p++) {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 4;
            } else if (strchr("\"\\/bfnrt", *p) == NULL || *p == '\0') {
                return NULL;
            }
        }
    }
    return p + 1;
}

static inline const char *json_digits(const char *p)
{
    if (!isdigit((unsigned char)*p))
        return NULL;
    while (isdigit((unsigned char)*p))
        p++;
    return p;
}

static inline const char *json_number_end(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if ((p = json_digits(p)) == NULL)
        return NULL;
    if (*p == '.' && (p = json_digits(p + 1)) == NULL)
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if ((p = json_digits(p)) == NULL)
            return NULL;
    }
    return p;
}

static inline const char *json_container(const char *p, int depth, char close, int object)
{
    p = json_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if ((p = json_string_end(p)) == NULL)
                return NULL;
            p = json_ws(p);
            if (*p != ':')
                return NULL;
            p = json_ws(p + 1);
        }
        if ((p = json_value(p, depth + 1)) == NULL)
            return NULL;
        p = json_ws(p);
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return NULL;
        p = json_ws(p + 1);
    }
}

static inline const char *json_value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = json_ws(p);
    switch (*p) {
    case '{': return json_container(p, depth, '}', 1);
    case '[': return json_container(p, depth, ']', 0);
    case '"': return json_string_end(p);
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: return json_number_end(p);
    }
}

static inline int json_valid(const char *text)
{
    const char *end = json_value(text, 0);
    return end != NULL && *json_ws(end) == '\0';
}

/* Occurrences of needle in text. */
static inline int count_occurrences(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

#endif

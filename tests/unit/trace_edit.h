/* The doctor's trace tests' one check of a strict reading error (test_doctor.c,
 * test_doctor_trace.c): replace the first `from` in `text` (a formatted trace, freed here) with
 * `to`, parse it as "t.txt", and expect the parse to fail on `line` ("t.txt:LINE: ") with `what`
 * in the message. Criterion's cr_* macros, from the including test. */
#ifndef UF_TESTS_TRACE_EDIT_H
#define UF_TESTS_TRACE_EDIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_trace.h"

static void expect_edit_refused(char *text, const char *from, const char *to, int line,
                                const char *what)
{
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s not in\n%s", from, text);
    size_t len = strlen(text), nf = strlen(from), nt = strlen(to);
    char *edited = malloc(len - nf + nt + 1);
    memcpy(edited, text, (size_t)(at - text));
    memcpy(edited + (at - text), to, nt);
    strcpy(edited + (at - text) + nt, at + nf);
    free(text);
    uf_trace_file f;
    char err[256], where[64];
    cr_expect_eq(uf_trace_parse(edited, "t.txt", &f, err, sizeof err), -1, "%s -> %s", from, to);
    snprintf(where, sizeof where, "t.txt:%d: ", line);
    cr_expect(strstr(err, where) == err, "%s -> %s: %s: expected %s", from, to, err, where);
    cr_expect(strstr(err, what) != NULL, "%s -> %s: %s: expected \"%s\"", from, to, err, what);
}

#endif

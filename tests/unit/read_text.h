/* The tests' one reading of a file they wrote (test_results.c, test_trace_export.c): the whole
 * file, NUL-terminated, through the project's own reader (fileutil.h); the test fails when it
 * cannot be read. Criterion's cr_* macros, from the including test. The caller frees it. */
#ifndef UF_TESTS_READ_TEXT_H
#define UF_TESTS_READ_TEXT_H

#include <stddef.h>

#include "fileutil.h"

static char *read_text(const char *path)
{
    char *text = NULL, err[512];
    size_t len = 0;
    cr_assert_eq(uf_read_file(path, &text, &len, err, sizeof err), 0, "cannot open %s: %s", path,
                 err);
    return text;
}

#endif

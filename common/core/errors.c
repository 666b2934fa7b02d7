/* Reporting failures (see errors.h). */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>

void uf_report_failure(const char *file, int line, const char *expr, const char *msg)
{
    fprintf(stderr, "underfed: %s:%d: %s failed: %s\n", file, line, expr, msg ? msg : "");
}

int uf_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* How underfed says that something failed, at the bottom of every layer: a failed call on
 * stderr (behind the check macros: UF_CUDA_OR_GOTO, the cuBLAS and NCCL checks), and a message
 * into a caller's buffer (the host code's `err, errlen` convention). Plain C, no CUDA. */
#ifndef UF_ERRORS_H
#define UF_ERRORS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Report a failed call (expression, file, line, message) on stderr. */
void uf_report_failure(const char *file, int line, const char *expr, const char *msg);

/* Format an error message into err (when not NULL) and return -1. */
int uf_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif

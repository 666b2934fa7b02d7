/* File utilities: atomic whole-file writes, whole-file reads, mkdir -p, device-name slugs.
 * Plain C, no CUDA; below the results code and the text buffer, above errors.h only. */
#ifndef UF_FILEUTIL_H
#define UF_FILEUTIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write a whole file atomically (PATH.tmp.PID, fsync, rename). 0 or -1 with err. */
int uf_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen);
/* The whole file into *data (malloc'ed, NUL-terminated; *len bytes before the NUL).
 * 0, or -1 with err ("PATH: cannot open: ..."). */
int uf_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen);
/* mkdir -p. 0 or -1 with err. */
int uf_mkdirs(const char *path, char *err, size_t errlen);
/* "NVIDIA H200" -> "nvidia-h200": lower case, runs of other characters become one '-'. */
void uf_slug(const char *name, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif

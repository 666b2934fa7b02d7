/* File utilities: atomic whole-file writes, whole-file reads, mkdir -p, device-name slugs.
 * Plain C, no CUDA; below the results code and the text buffer, above errors.h only. */
#ifndef UF_FILEUTIL_H
#define UF_FILEUTIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write a whole file atomically: a temporary file created exclusively beside it
 * (PATH.tmp.RANDOM, O_EXCL|O_NOFOLLOW, mode 0666 less the umask), fsync, rename over path.
 * Only a new name or a regular file is replaced: a device (/dev/null), a FIFO, a folder, a
 * socket or a symbolic link (to anything, a regular file included: neither the link nor what
 * it names is touched) is refused with the reason, and nothing is written. 0, or -1 with err
 * naming the file. */
int uf_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen);
/* The most uf_read_file reads (1 GiB): results, ceilings, series and trace files are far
 * smaller; a larger one, or one that grows past it while read, is refused. */
#define UF_READ_MAX_BYTES (1 << 30)
/* The whole regular file (a symbolic link to one is followed) into *data (malloc'ed,
 * NUL-terminated; *len bytes before the NUL). A FIFO, a device or a folder is refused without
 * waiting or reading (a FIFO would block, /dev/zero never ends), as is a file over
 * UF_READ_MAX_BYTES. 0, or -1 with err ("PATH: cannot open: ...", "PATH: a FIFO, ..."). */
int uf_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen);
/* mkdir -p. 0 or -1 with err. */
int uf_mkdirs(const char *path, char *err, size_t errlen);
/* "NVIDIA H200" -> "nvidia-h200": lower case, runs of other characters become one '-'. */
void uf_slug(const char *name, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif

/* Which shared libraries the process has mapped, read from /proc/self/maps (Linux): how a run
 * records whether CUPTI was ever loaded into it, whoever loaded it. Plain C, unit-tested. */
#ifndef UF_PROC_MAPS_H
#define UF_PROC_MAPS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* In a maps file (lines "address perms offset dev inode path"), the first mapping whose file
 * name starts with `prefix` (e.g. "libcupti.so"): 1 with its path copied into path, else 0. */
int uf_maps_find_library(FILE *maps, const char *prefix, char *path, size_t path_len);

/* The same on this process's /proc/self/maps: 1 mapped (path set), 0 not mapped, -1 when the
 * file cannot be read (then path holds why). */
int uf_library_mapped(const char *prefix, char *path, size_t path_len);

#ifdef __cplusplus
}
#endif
#endif

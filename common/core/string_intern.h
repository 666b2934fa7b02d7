/* Interned strings: each distinct string stored once, so that records can point at their names
 * (kernel and API names) after the buffer that held them is gone. Used by the trace pass
 * (cupti_trace.c) and the doctor's recorder (recorder/underfed_inject.c). Plain C, no CUDA; not
 * thread-safe (its users hold their own lock). */
#ifndef UF_STRING_INTERN_H
#define UF_STRING_INTERN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Open addressing, capacity a power of two, at most half full. Zero-initialized: empty. */
typedef struct uf_name_table {
    char **slots;
    size_t capacity;
    size_t count;
} uf_name_table;

/* The stored copy of s (stored on first sight); NULL for NULL or when out of memory. The copy
 * lives until uf_names_free. */
const char *uf_intern(uf_name_table *t, const char *s);
/* Free every stored copy and the table (empty again). */
void uf_names_free(uf_name_table *t);

#ifdef __cplusplus
}
#endif
#endif

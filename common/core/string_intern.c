/* Interned strings (string_intern.h). */
#include "string_intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The slot where s is, or the empty slot where it belongs. */
static char **name_slot(char **slots, size_t capacity, const char *s)
{
    size_t i = (size_t)name_hash(s) & (capacity - 1);
    while (slots[i] && strcmp(slots[i], s) != 0)
        i = (i + 1) & (capacity - 1);
    return &slots[i];
}

static int name_table_grow(uf_name_table *t)
{
    size_t capacity = t->capacity ? 2 * t->capacity : 256;
    char **slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->capacity; i++)
        if (t->slots[i])
            *name_slot(slots, capacity, t->slots[i]) = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return 0;
}

const char *uf_intern(uf_name_table *t, const char *s)
{
    if (!s)
        return NULL;
    if (2 * (t->count + 1) > t->capacity && name_table_grow(t) != 0)
        return NULL;
    char **slot = name_slot(t->slots, t->capacity, s);
    if (!*slot) {
        size_t len = strlen(s) + 1;
        char *copy = malloc(len);
        if (!copy)
            return NULL;
        memcpy(copy, s, len);
        *slot = copy;
        t->count++;
    }
    return *slot;
}

void uf_names_free(uf_name_table *t)
{
    for (size_t i = 0; i < t->capacity; i++)
        free(t->slots[i]);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

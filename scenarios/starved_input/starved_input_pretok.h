/* starved_input: the pretokenized corpus (starved_input_pretok.cu). */
#ifndef SI_PRETOK_H
#define SI_PRETOK_H

#include <stddef.h>
#include <stdint.h>

#include "starved_input_source.h"

/* The offline preprocessing step: tokenize every batch of `text` once (threads over batches)
 * into a file in /tmp, mapped read-only into *map_out (*bytes_out bytes; munmap frees it); the
 * file is unlinked as soon as it is mapped. */
int pretok_build(const si_source *text, int32_t **map_out, size_t *bytes_out, char *err,
                 size_t errlen);

#endif

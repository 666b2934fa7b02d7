/* starved_input: the core-count helper, and where batches come from (text tokenized on the
 * fly, or the pretokenized map; starved_input_source.cu). Its clocks are clock.h's. */
#ifndef SI_SOURCE_H
#define SI_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "tokenizer.h"

/* ---- small helpers -------------------------------------------------------------------- */

static inline long online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* ---- batch sources -------------------------------------------------------------------- */

/* Where batches come from: text tokenized on the fly, or a pretokenized map. Batch k is
 * corpus batch k mod n_batches (steps cycle over the corpus, epoch after epoch). */
typedef struct si_source {
    const si_tokenizer *tok;
    const si_corpus *corpus;    /* text; NULL when pretokenized */
    const int32_t *pretok;      /* n_batches * rows * seq_len ids; NULL when text */
    int n_batches, rows, seq_len;
    int batch_passes;           /* text: tokenizer passes over a batch's documents in all
                                 * (>= rows; row_passes gives each row its share) */
} si_source;

/* Batch `batch` of src (corpus batch batch mod n_batches) into out (rows * seq_len ids):
 * tokenized with scratch s, src->batch_passes passes in all over its documents, or copied from
 * the pretokenized map. */
int produce_batch(const si_source *src, int64_t batch, int32_t *out, si_scratch *s, char *err,
                  size_t errlen);

#endif

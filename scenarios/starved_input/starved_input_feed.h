/* starved_input: a variant's feed, opened and closed, and the text source of a corpus
 * (starved_input_feed.cu). */
#ifndef SI_FEED_H
#define SI_FEED_H

#include <stddef.h>

#include "tokenizer.h"
#include "starved_input_state.h"

/* Open f for `variant` over src: sync's pageable batch and tokenizer scratch, or a pipeline of
 * st->workers producers (workers, pretokenized). */
int feed_open(si_state *st, si_feed *f, int variant, const si_source *src, char *err,
              size_t errlen);

/* Close f: no copy out of a staging buffer left in flight, the pipeline or buffers freed, f
 * zeroed (a zeroed feed closes as a no-op). */
void feed_close(si_state *st, si_feed *f);

/* The source of `corpus`'s first n_batches batches, tokenized by st's tokenizer with st's
 * calibrated passes per batch. */
void text_source(const si_state *st, const si_corpus *corpus, int n_batches, si_source *src);

#endif

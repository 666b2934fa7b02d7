/* starved_input: setup and teardown (starved_input_setup.cu). */
#ifndef SI_SETUP_H
#define SI_SETUP_H

#include "underfed.h"
#include "starved_input_state.h"

/* The scenario's setup at `shape`, with the story's feed_step: the language, the merge table,
 * the corpus and the weights from the seed, the device buffers and cuBLAS. */
int si_setup_shape(uf_ctx *ctx, const si_shape *shape, si_feed_step_fn feed_step);

/* The scenario's teardown (also after a failed setup: it frees what was made). */
void si_teardown(uf_ctx *ctx);

#endif

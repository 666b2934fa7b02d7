/* starved_input: setup and teardown (starved_input_setup.cu). */
#ifndef SI_SETUP_H
#define SI_SETUP_H

#include "underfed.h"
#include "starved_input_state.h"

/* The scenario's setup at `shape`, with the story's feed_step: the language, the merge table,
 * the corpus and the weights from the seed, the device buffers and cuBLAS; then the
 * calibration (#29): one thread's time for a first and a further tokenizer pass over a
 * batch's documents and the GPU step are measured, and a batch's passes set so that one
 * thread tokenizes it in tok_cost x tok_step_multiple GPU steps (st->first_pass_ms,
 * next_pass_ms, gpu_step_ms, batch_passes). */
int si_setup_shape(uf_ctx *ctx, const si_shape *shape, si_feed_step_fn feed_step,
                   double tok_step_multiple);

/* The scenario's teardown (also after a failed setup: it frees what was made). */
void si_teardown(uf_ctx *ctx);

#endif

/* small_batch: setup, teardown, begin/end_variant (small_batch_setup.cu). */
#ifndef SB_SETUP_H
#define SB_SETUP_H

#include "underfed.h"
#include "small_batch_state.h"

/* The scenario's setup, with the story's schedule (for verify and describe): the stack for
 * max(M, G) tokens, cuBLAS bound to ctx->stream, the inputs of ctx->seed. */
int sb_setup_schedule(uf_ctx *ctx, const sb_schedule *schedule);

/* The scenario's teardown, and begin_variant (where the variant runs; the chase table or the
 * wave GEMM's operands and plan) and end_variant (their release). */
void sb_teardown(uf_ctx *ctx);
int sb_begin_variant(uf_ctx *ctx, int variant);
int sb_end_variant(uf_ctx *ctx, int variant);

#endif

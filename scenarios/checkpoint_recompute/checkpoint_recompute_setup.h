/* checkpoint_recompute: setup and teardown, each variant's activation arena, and the cuBLAS
 * stream binding (checkpoint_recompute_setup.cu). */
#ifndef CR_SETUP_H
#define CR_SETUP_H

#include <cuda_runtime.h>

#include "underfed.h"
#include "checkpoint_recompute_state.h"

/* The scenario's setup, with the story's run_policy: plans every policy (dry runs), refuses a
 * size that cannot fit, then allocates and fills the point's model (ctx->state: a cr_state). */
int cr_setup_policies(uf_ctx *ctx, cr_policy_fn run_policy);

/* The scenario's teardown, begin_variant (the arena of the variant's plan; UF_SKIP for a
 * policy other than every_k away from the default k) and end_variant. */
void cr_teardown(uf_ctx *ctx);
int cr_begin_variant(uf_ctx *ctx, int variant);
int cr_end_variant(uf_ctx *ctx, int variant);

/* Binds the cuBLAS handle (and its explicit workspace) to the stream. */
int bind_stream(cr_state *st, cudaStream_t stream);

#endif

/* host_sync: setup, teardown, begin_variant, and what verification shares with them
 * (host_sync_setup.cu). */
#ifndef HS_SETUP_H
#define HS_SETUP_H

#include <stdint.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "host_sync_state.h"

/* The scenario's setup, with the story's step: the state (ctx->state), device and host
 * buffers, the pool, cuBLAS bound to ctx->stream, the inputs of ctx->seed, and the host's work
 * calibrated on back-to-back steps of enqueue_compute. */
int hs_setup_step(uf_ctx *ctx, hs_step_fn enqueue_compute);

/* The scenario's teardown, and begin_variant: every variant starts from step 0 with nothing
 * reported and an empty host log. */
void hs_teardown(uf_ctx *ctx);
int hs_begin_variant(uf_ctx *ctx, int variant);

/* Draw the input and the weights from seed on the device (hs_ref_rows redraws them), and the
 * labels' key. */
int hs_fill_inputs(hs_state *st, uint64_t seed, cudaStream_t stream);

/* Step 0, nothing reported, no step timed (the host log stays). */
void hs_reset_steps(hs_state *st);

#endif

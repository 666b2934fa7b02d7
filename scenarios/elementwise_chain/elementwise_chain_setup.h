/* elementwise_chain: setup (elementwise_chain_setup.cu) and what verification and teardown
 * share with it: the inputs, the state's release. */
#ifndef EW_SETUP_H
#define EW_SETUP_H

#include <stdint.h>

#include "underfed.h"
#include "elementwise_chain_state.h"

/* The scenario's setup: the tensors (far larger than the L2) on the device, the GELU's
 * reciprocal checked once, the inputs of ctx->seed; ctx->state is the ew_state. */
int ew_setup(uf_ctx *ctx);

/* Fresh random inputs (never zeros) and dropout seed from `seed`, enqueued on the stream. */
int ew_make_inputs(uf_ctx *ctx, ew_state *st, uint64_t seed);

/* Frees the device tensors and the state (NULL: nothing). */
void ew_free_state(ew_state *st);

#endif

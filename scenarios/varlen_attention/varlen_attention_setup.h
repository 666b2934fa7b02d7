/* varlen_attention: the kernel build and each variant's buffers and inputs
 * (varlen_attention_setup.cu). */
#ifndef VA_SETUP_H
#define VA_SETUP_H

#include <stdint.h>

#include "underfed.h"
#include "varlen_attention_state.h"

/* The kernel build: 32 rows per warp where a block may have its shared memory, else 16
 * (st->rows), its attributes set; UF_SKIP where the GPU cannot give a block even 16's. */
int va_prepare_kernel(uf_ctx *ctx, va_state *st);

/* Write fresh inputs (real and padding positions) into the active variant's Q, K, V. */
int va_fill_inputs(uf_ctx *ctx, va_state *st, int variant, uint64_t seed);

/* The scenario's begin_variant and end_variant: the variant's Q, K, V, O, sequence table and
 * block list on the device, inputs from ctx->seed, the clock probe zeroed; and their release. */
int va_begin_variant(uf_ctx *ctx, int variant);
int va_end_variant(uf_ctx *ctx, int variant);

#endif

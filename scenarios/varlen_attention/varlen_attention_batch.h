/* varlen_attention: the point's batch, the fp32 reference's buffers and their release
 * (varlen_attention_batch.cu). */
#ifndef VA_BATCH_H
#define VA_BATCH_H

#include "underfed.h"
#include "varlen_attention_state.h"

/* Read the point's axes (in range: the harness checked them against va_axes). */
int va_read_axes(uf_ctx *ctx, va_state *st);

/* Lengths, the packed offsets and the useful FLOPs (attention on real (query, key) pairs). */
int va_make_batch(uf_ctx *ctx, va_state *st);

/* The fp32 reference output, its sums and the packed offsets on the device (partial
 * allocations are freed by teardown). */
int va_alloc_reference(uf_ctx *ctx, va_state *st);

/* Frees the active variant's buffers; st->active = -1. */
void va_free_variant(va_state *st);

/* The scenario's teardown: everything the state holds, and the state. */
void va_teardown(uf_ctx *ctx);

#endif

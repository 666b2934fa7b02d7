/* elementwise_chain: describe and teardown (elementwise_chain_describe.cu). */
#ifndef EW_DESCRIBE_H
#define EW_DESCRIBE_H

#include "underfed.h"

/* The scenario's describe: flops, the least bytes (fused's), peak memory; extras in ew_extras
 * order: bytes moved, flops per byte, unfused/fused bytes. */
int ew_describe(uf_ctx *ctx, int variant, uf_row *row);

/* The scenario's teardown: the state and its device tensors. */
void ew_teardown(uf_ctx *ctx);

#endif

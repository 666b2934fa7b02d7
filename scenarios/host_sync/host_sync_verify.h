/* host_sync: verification (host_sync_verify.cu). */
#ifndef HS_VERIFY_H
#define HS_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify, on fresh inputs from `seed`: item's steps anchored on the fp64 host
 * reference (rows of the chain, the loss), then the variant's steps against item's bit for bit
 * (loss history, output, small kernels' counters) and its host reports at its lag. */
int hs_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

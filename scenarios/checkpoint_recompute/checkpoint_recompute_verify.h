/* checkpoint_recompute: verification (checkpoint_recompute_verify.cu). */
#ifndef CR_VERIFY_H
#define CR_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: the variant on a tiny model against the fp64 host reference (bf16
 * tolerance), and at the point's size its gradients against store_all's, bitwise (a bitwise
 * difference within the tolerance is recorded in grad_mismatch, a claim). */
int cr_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

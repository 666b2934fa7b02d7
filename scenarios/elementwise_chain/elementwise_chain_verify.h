/* elementwise_chain: verification (elementwise_chain_verify.cu). */
#ifndef EW_VERIFY_H
#define EW_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: fresh inputs, poisoned output, one step of the variant; every element
 * bitwise against the per-element device reference of the variant's rounding, and runs of
 * elements against the host reference. max_rel_err over the host-checked elements. */
int ew_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

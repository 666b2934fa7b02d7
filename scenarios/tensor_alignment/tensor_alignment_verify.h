/* tensor_alignment: verification (tensor_alignment_verify.cu). */
#ifndef TA_VERIFY_H
#define TA_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: on fresh inputs, sampled elements against the fp64 host reference
 * (max_rel_err), and for a variant with a partner, the whole real part against the partner's
 * (pair_rel_err, kept for describe). */
int ta_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

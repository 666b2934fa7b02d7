/* allreduce_overlap: verify (allreduce_overlap_verify.cu). */
#ifndef AR_VERIFY_H
#define AR_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: fresh inputs, the variant's full step; every rank's reduced gradients
 * bitwise equal, equal to the host's sum within AR_TOLERANCE, sampled dW equal to the host's. */
int ar_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

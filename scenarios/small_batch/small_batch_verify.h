/* small_batch: verification (small_batch_verify.cu). */
#ifndef SB_VERIFY_H
#define SB_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify, on fresh inputs from `seed`: a GEMM variant's schedule on a tiny stack
 * against the fp64 host reference and sampled outputs at the point's size; one_block's and
 * latency_bound's chains against the host's, exactly; the wave GEMM's sampled outputs. */
int sb_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

/* varlen_attention: verification (varlen_attention_verify.cu). */
#ifndef VA_VERIFY_H
#define VA_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: fresh inputs, poisoned output, one step; max_rel_err over every real
 * token against the fp32 reference kernel (tolerance 1e-2), and sampled rows against the host's
 * fp64. */
int va_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

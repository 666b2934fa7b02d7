/* starved_input: verification (starved_input_verify.cu). */
#ifndef SI_VERIFY_H
#define SI_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: steps of the variant fed its own way from a fresh corpus; the ids
 * each step read must equal a host tokenization of the same batches in the same order, and
 * sampled output rows of the last step the host reference. */
int si_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

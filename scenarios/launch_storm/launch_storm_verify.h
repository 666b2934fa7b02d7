/* launch_storm: verification of every variant (launch_storm_verify.cu). */
#ifndef LS_VERIFY_H
#define LS_VERIFY_H

#include <stdint.h>

#include "underfed.h"

/* The scenario's verify: fresh inputs from `seed`; the variant's output must be finite
 * everywhere, match the double reference within a tolerance that grows with K, and (graph,
 * fused) equal an eager run bitwise. The inputs stay in x_in afterwards. */
int ls_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

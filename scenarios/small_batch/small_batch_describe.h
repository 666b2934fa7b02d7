/* small_batch: describe (small_batch_describe.cu) and the extras it fills. */
#ifndef SB_DESCRIBE_H
#define SB_DESCRIBE_H

#include "underfed.h"

/* The extras, in sb_extras order. */
enum { X_TOKENS_PER_S, X_TOKENS_PER_STEP, X_MICRO_BATCHES, X_ACT_BYTES, X_TILE_ROWS, X_TILE_COLS,
       X_SPLITK, X_TILES, X_WAVES, X_WAVE_EFF, X_TILE_FILL, SB_N_EXTRAS };

/* The scenario's describe: FLOPs, the bytes the GEMMs must move, tokens per second, the
 * activations a micro-batch keeps, the wave GEMM's tiles against the SMs. */
int sb_describe(uf_ctx *ctx, int variant, uf_row *row);

#endif

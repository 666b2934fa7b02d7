/* tensor_alignment: describe (tensor_alignment_describe.cu) and the extras it fills. */
#ifndef TA_DESCRIBE_H
#define TA_DESCRIBE_H

#include "underfed.h"

/* The extras, in ta_extras order. */
enum { X_TFLOPS_EXEC, X_PCT_OWN, X_LD_ALIGNED, X_PAD_PCT, X_ALGO_ID, X_TILE_ID, X_STAGES_ID,
       X_SPLITK, X_ALIGN_BYTES, X_KERNEL_ID, X_KERNELS, X_PAIR_ERR, TA_N_EXTRAS };

/* The scenario's describe: FLOPs, bytes, shares of the measured ceilings, what cuBLAS chose
 * for the GEMM and the kernels it launches (on stderr too). */
int ta_describe(uf_ctx *ctx, int variant, uf_row *row);

#endif

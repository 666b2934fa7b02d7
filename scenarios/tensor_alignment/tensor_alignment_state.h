/* tensor_alignment: a variant's plan (its table is the story's), one cublasLt GEMM as it runs,
 * and the scenario's state, shared by the story, setup, verification and describe. */
#ifndef TA_STATE_H
#define TA_STATE_H

#include <stdint.h>
#include <cuda_runtime.h>
#include <cublasLt.h>

#include "underfed.h"
#include "tensor_alignment_ref.h"

enum { TA_LOGITS, TA_HIDDEN, TA_SQUARE };   /* which layer's GEMM */

typedef struct ta_plan {
    int layer;          /* TA_LOGITS: n = vocab, k = 768; TA_HIDDEN: n = 4096, k = dim;
                         * TA_SQUARE: n = k = 4096 */
    int pad;            /* the fix: n and k padded up to a multiple of TA_PAD, pads zero */
    int precision;      /* TA_BF16, TA_TF32 or TA_FP32 */
    int partner;        /* the variant computing the same product in the other layout; -1 */
} ta_plan;

/* The story's ta_variant_shape: the variant's GEMM at the current point. */
typedef ta_shape (*ta_shape_fn)(const uf_ctx *ctx, int variant);

#define TA_WS_BYTES ((size_t)32 << 20)  /* cuBLAS workspace, set explicitly (Hopper: 32 MiB) */
#define TA_NAMES_LEN 512

/* One GEMM Y = X·Wᵀ as cublasLt runs it. Column-major, cuBLAS sees the row-major tensors
 * transposed: A = W (k_run × n_run, ld k_run, op T), B = X (k_run × m, ld k_run), D = Y
 * (n_run × m, ld n_run): the "TN" GEMM of every nn.Linear forward. With W k × n (x @ w), A is
 * n_run × k_run, ld n_run, op N: the "NN" GEMM. */
typedef struct ta_gemm {
    ta_shape shape;
    void *x, *w, *y;                        /* device, pads included */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a_layout, b_layout, d_layout;
    cublasLtMatmulAlgo_t algo;              /* cuBLAS's first heuristic choice */
    int algo_id;
    unsigned int tile_id, stages_id, splitk;
    unsigned int align_bytes;               /* the least of the alignments the algorithm needs
                                             * of A, B, C and D (CUBLASLT_ALGO_CAP_MIN_ALIGNMENT) */
    int facts;                              /* 1 when cuBLAS told all of the above */
} ta_gemm;

typedef struct ta_state {
    cublasLtHandle_t lt;
    void *ws;
    ta_gemm gemm;                   /* this variant's (begin_variant .. end_variant); all
                                     * zero outside, which ta_gemm_free takes */
    double pair_rel_err;            /* verify: against the partner GEMM's real part; NaN: none */
    char kernels[TA_NAMES_LEN];     /* describe: the kernels one GEMM launches, " + " between */
    int n_kernels;
    uint32_t kernel_id;             /* ta_name_id of the first of them; 0 unknown */
    const ta_plan *plans;           /* the story's: each variant's layer, padding, partner */
    ta_shape_fn variant_shape;      /* the story's: a variant's GEMM at the current point */
} ta_state;

#endif

/* tensor_alignment: one cublasLt GEMM, the kernels it launches by name, and the scenario's
 * callbacks around them (tensor_alignment_setup.cu). */
#ifndef TA_SETUP_H
#define TA_SETUP_H

#include <stdint.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "tensor_alignment_ref.h"
#include "tensor_alignment_state.h"

/* The scenario's setup, with the story's plans and ta_variant_shape: the cublasLt handle and
 * workspace (each variant's GEMM is made by begin_variant). */
int ta_setup_plans(uf_ctx *ctx, const ta_plan *plans, ta_shape_fn variant_shape);

/* The scenario's teardown, begin_variant (the variant's GEMM at this point, its inputs from the
 * run's seed; UF_SKIP away from the default of an axis it does not use) and end_variant. */
void ta_teardown(uf_ctx *ctx);
int ta_begin_variant(uf_ctx *ctx, int variant);
int ta_end_variant(uf_ctx *ctx, int variant);

/* Allocate the shape's tensors and plan its GEMM; on failure g is freed. */
int ta_gemm_create(uf_ctx *ctx, ta_state *st, const ta_shape *s, ta_gemm *g);

/* Frees a GEMM's tensors and plan (an all-zero one too). */
void ta_gemm_free(ta_gemm *g);

/* X and W from seed: the real part random (the same values whatever the padding), pads zero. */
int ta_gemm_fill(const ta_gemm *g, uint64_t seed, cudaStream_t stream);

/* Y = X·Wᵀ on stream: one cublasLtMatmul with the algorithm cuBLAS chose (beta 0, C = D). */
int ta_gemm_enqueue(const ta_state *st, const ta_gemm *g, cudaStream_t stream);

/* Capture one GEMM on a stream of its own and name its kernel nodes into st. Never fails the
 * run: where the names cannot be had, st->kernels says why and the counts stay unknown. */
int ta_name_kernels(ta_state *st, const ta_gemm *g);

#endif

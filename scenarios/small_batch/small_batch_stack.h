/* small_batch's GEMMs (small_batch_stack.cu): the wave report's cublasLt GEMM and the layer
 * stack, one micro-batch's forward and backward through cuBLAS. */
#ifndef SB_STACK_H
#define SB_STACK_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>

#include "small_batch_ref.h"
#include "small_batch_kernels.h"

/* ---- the wave report's GEMM: cublasLt, the heuristic's first algorithm, its tile ------------ */

typedef struct sb_lt_gemm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    int tile_rows, tile_cols;       /* the algorithm's tile (cuBLAS's m × n); 0: not known */
    int splitk;
    size_t ws_bytes;
} sb_lt_gemm;

/* ---- the layer stack: its buffers, one micro-batch's forward and backward ------------------- */

#define SB_MAX_LAYERS 8

/* The weights and gradients of L layers, and activations and gradient scratch for up to t_max
 * tokens (row-major, token-major). h[l] is layer l's input for l >= 1 (layer 0 reads the
 * micro-batch's slice of x0), h[L] the stack's output. dqkv's Q and K columns are zeroed once
 * and never written: only V fed the layer, so only V gets a gradient. */
typedef struct sb_stack {
    int d, layers, t_max;
    cublasHandle_t blas;
    bf16 *w[SB_MAX_LAYERS][SB_N_LINEARS], *dw[SB_MAX_LAYERS][SB_N_LINEARS];
    bf16 *x0, *dy;                  /* inputs and upstream gradients of t_max tokens */
    bf16 *h[SB_MAX_LAYERS + 1], *qkv[SB_MAX_LAYERS], *o[SB_MAX_LAYERS], *u[SB_MAX_LAYERS];
    bf16 *g, *gu, *go, *dqkv;       /* gradients w.r.t. a layer's output, MLP hidden, O out, QKV */
    void *weights, *acts;           /* the two allocations */
} sb_stack;

/* Frees a plan (a zeroed one too) and zeroes it. */
void lt_gemm_free(sb_lt_gemm *g);

/* Y (T × N) = X (T × K) · Wᵀ (W N × K), planned with the heuristic: its first algorithm, the
 * tile and split-K it reports (unknown ones 0). */
int lt_gemm_plan(cublasLtHandle_t lt, int T, int K, int N, size_t ws_bytes, sb_lt_gemm *g);

/* Runs a planned GEMM on `stream` with workspace ws. */
int lt_gemm_run(cublasLtHandle_t lt, const sb_lt_gemm *g, const bf16 *x, const bf16 *w,
                bf16 *y, void *ws, cudaStream_t stream);

/* Device bytes of a stack of `layers` layers of width d for `tokens` tokens. */
size_t stack_bytes(int d, int layers, int tokens);

/* Frees a stack's two allocations. */
void stack_free(sb_stack *m);

/* Allocate and carve m (d, layers, t_max set); dqkv zeroed. */
int stack_alloc(sb_stack *m, cudaStream_t stream);

/* Weights, inputs and upstream gradients drawn from seed (as sb_host_reference draws them). */
int stack_fill(sb_stack *m, uint64_t seed, cudaStream_t stream);

/* Forward of T tokens from x (T × d): per layer QKV, O (reading V, the attention core's
 * stand-in), MLP up, MLP down; every output kept for the backward. */
int stack_forward(sb_stack *m, const bf16 *x, int T);

/* Backward of T tokens from the upstream gradient dy (T × d) and the forward's x: input and
 * weight gradients of every linear, the weight gradients added to the previous ones when beta
 * is 1 (gradient accumulation). Leaves dL/dx in m->g. */
int stack_backward(sb_stack *m, const bf16 *x, const bf16 *dy, int T, float beta);

#endif

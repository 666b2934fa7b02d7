/* small_batch's GEMMs: the three cuBLAS GEMMs of a linear layer (forward, input gradient,
 * weight gradient) in PyTorch's row-major convention, the cublasLt GEMM of the wave report with
 * the tile its heuristic picked, and the layer stack built on them. Which GEMMs a step runs, and
 * on how many tokens, is the story's (small_batch.cu). */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cublasLt.h>

#include "underfed.h"
#include "uf_cublas.h"
#include "uf_cublaslt.h"
#include "small_batch_ref.h"
#include "small_batch_kernels.h"
#include "small_batch_stack.h"

/* ---- the GEMMs of a linear layer (row-major, PyTorch's nn.Linear: W is out × in) -------------
 * cuBLAS is column-major: a row-major R × C matrix with row stride ld is its C × R transpose,
 * so each product below is written for the transposes. Inputs bf16, fp32 accumulation. */

static int gemm_bf16(cublasHandle_t blas, cublasOperation_t op_a, cublasOperation_t op_b, int m,
                     int n, int k, const bf16 *a, int lda, const bf16 *b, int ldb, float beta,
                     bf16 *c, int ldc)
{
    int rc = UF_OK;
    const float one = 1.0f;
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(blas, op_a, op_b, m, n, k, &one, a, CUDA_R_16BF, lda, b,
                                       CUDA_R_16BF, ldb, &beta, c, CUDA_R_16BF, ldc,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      out);
out:
    return rc;
}

/* Y (T × out, row stride ldy) = X (T × in, row stride ldx) · Wᵀ. */
static int linear_forward(cublasHandle_t blas, int T, int in, int out_f, const bf16 *x, int ldx,
                          const bf16 *w, bf16 *y, int ldy)
{
    return gemm_bf16(blas, CUBLAS_OP_T, CUBLAS_OP_N, out_f, T, in, w, in, x, ldx, 0.0f, y, ldy);
}

/* dX (T × in, row stride lddx) = dY (T × out, row stride lddy) · W. */
static int linear_dgrad(cublasHandle_t blas, int T, int in, int out_f, const bf16 *dy, int lddy,
                        const bf16 *w, bf16 *dx, int lddx)
{
    return gemm_bf16(blas, CUBLAS_OP_N, CUBLAS_OP_N, in, T, out_f, w, in, dy, lddy, 0.0f, dx,
                     lddx);
}

/* dW (out × in) = dYᵀ · X + beta·dW: beta 1 accumulates a micro-batch onto the previous. */
static int linear_wgrad(cublasHandle_t blas, int T, int in, int out_f, const bf16 *x, int ldx,
                        const bf16 *dy, int lddy, float beta, bf16 *dw)
{
    return gemm_bf16(blas, CUBLAS_OP_N, CUBLAS_OP_T, in, out_f, T, x, ldx, dy, lddy, beta, dw,
                     in);
}

/* ---- the wave report's GEMM: cublasLt, the heuristic's first algorithm, its tile ------------ */

/* cublasLt's tile ids 1..35 (the square-ish tiles of its GEMM kernels); another id (the
 * narrow 8..80-row tiles of later versions) leaves the tile unknown and its columns empty. */
#define SB_TILE(r, c) {CUBLASLT_MATMUL_TILE_##r##x##c, r, c}
static const struct { int id, rows, cols; } sb_tiles[] = {
    SB_TILE(8, 8),     SB_TILE(8, 16),    SB_TILE(16, 8),    SB_TILE(8, 32),
    SB_TILE(16, 16),   SB_TILE(32, 8),    SB_TILE(8, 64),    SB_TILE(16, 32),
    SB_TILE(32, 16),   SB_TILE(64, 8),    SB_TILE(32, 32),   SB_TILE(32, 64),
    SB_TILE(64, 32),   SB_TILE(32, 128),  SB_TILE(64, 64),   SB_TILE(128, 32),
    SB_TILE(64, 128),  SB_TILE(128, 64),  SB_TILE(64, 256),  SB_TILE(128, 128),
    SB_TILE(256, 64),  SB_TILE(64, 512),  SB_TILE(128, 256), SB_TILE(256, 128),
    SB_TILE(512, 64),  SB_TILE(64, 96),   SB_TILE(96, 64),   SB_TILE(96, 128),
    SB_TILE(128, 160), SB_TILE(160, 128), SB_TILE(192, 128), SB_TILE(128, 192),
    SB_TILE(128, 96),  SB_TILE(32, 256),  SB_TILE(256, 32),
};

static void tile_of(int id, int *rows, int *cols)
{
    *rows = *cols = 0;
    for (size_t i = 0; i < sizeof sb_tiles / sizeof sb_tiles[0]; i++)
        if (sb_tiles[i].id == id) {
            *rows = sb_tiles[i].rows;
            *cols = sb_tiles[i].cols;
        }
}

void lt_gemm_free(sb_lt_gemm *g)
{
    if (g->c)
        cublasLtMatrixLayoutDestroy(g->c);
    if (g->b)
        cublasLtMatrixLayoutDestroy(g->b);
    if (g->a)
        cublasLtMatrixLayoutDestroy(g->a);
    if (g->desc)
        cublasLtMatmulDescDestroy(g->desc);
    memset(g, 0, sizeof *g);
}

/* Y (T × N) = X (T × K) · Wᵀ (W N × K), as linear_forward, planned with the heuristic. */
int lt_gemm_plan(cublasLtHandle_t lt, int T, int K, int N, size_t ws_bytes, sb_lt_gemm *g)
{
    int rc = UF_OK, found = 0, tile_id = 0;
    const cublasOperation_t op_t = CUBLAS_OP_T;
    memset(g, 0, sizeof *g);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                         &op_t, sizeof op_t),
                      out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatrixLayoutCreate(&g->a, CUDA_R_16BF, K, N, K), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatrixLayoutCreate(&g->b, CUDA_R_16BF, K, T, K), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatrixLayoutCreate(&g->c, CUDA_R_16BF, N, T, N), out);
    UF_STATUS_OR_GOTO(rc, uf_lt_first_algo(lt, g->desc, g->a, g->b, g->c, ws_bytes, &g->algo,
                                           &found), out);
    if (found < 1) {
        uf_report_failure(__FILE__, __LINE__, "cublasLtMatmulAlgoGetHeuristic", "no algorithm");
        rc = UF_ERR;
        goto out;
    }
    g->ws_bytes = ws_bytes;
    g->splitk = 1;
    /* the tile and split-K as the algorithm reports them; unknown ones stay 0 */
    cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile_id,
                                         sizeof tile_id, NULL);
    cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &g->splitk,
                                         sizeof g->splitk, NULL);
    if (g->splitk < 1)
        g->splitk = 1;
    tile_of(tile_id, &g->tile_rows, &g->tile_cols);
out:
    if (rc != UF_OK)
        lt_gemm_free(g);
    return rc;
}

int lt_gemm_run(cublasLtHandle_t lt, const sb_lt_gemm *g, const bf16 *x, const bf16 *w,
                bf16 *y, void *ws, cudaStream_t stream)
{
    int rc = UF_OK;
    const float one = 1.0f, zero = 0.0f;
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmul(lt, g->desc, &one, w, g->a, x, g->b, &zero, y, g->c, y,
                                         g->c, &g->algo, ws, g->ws_bytes, stream),
                      out);
out:
    return rc;
}

/* ---- the layer stack: its buffers, one micro-batch's forward and backward ------------------- */

static size_t stack_weight_elems(int d, int layers)
{
    return (size_t)(2.0 * layers * sb_layer_params(d));    /* weights and their gradients */
}

/* inputs 2, h 1..L: L, qkv 3L, o L, u 4L, g 1, gu 4, go 1, dqkv 3 (in units of tokens × d) */
static size_t stack_act_elems(int d, int layers, int tokens)
{
    return (size_t)tokens * d * (9 * (size_t)layers + 11);
}

size_t stack_bytes(int d, int layers, int tokens)
{
    return (stack_weight_elems(d, layers) + stack_act_elems(d, layers, tokens)) * sizeof(bf16);
}

void stack_free(sb_stack *m)
{
    cudaFree(m->acts);
    cudaFree(m->weights);
    m->acts = m->weights = NULL;
}

/* Allocate and carve; dqkv zeroed (its Q and K columns stay zero). */
int stack_alloc(sb_stack *m, cudaStream_t stream)
{
    int rc = UF_OK;
    const size_t td = (size_t)m->t_max * m->d;
    bf16 *p;
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&m->weights, stack_weight_elems(m->d, m->layers) * sizeof(bf16)),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&m->acts, stack_act_elems(m->d, m->layers, m->t_max) *
                                                 sizeof(bf16)),
                    out);
    p = (bf16 *)m->weights;
    for (int l = 0; l < m->layers; l++)
        for (int j = 0; j < SB_N_LINEARS; j++) {
            const size_t n = (size_t)sb_in_features(j, m->d) * sb_out_features(j, m->d);
            m->w[l][j] = p;
            m->dw[l][j] = p + n;
            p += 2 * n;
        }
    p = (bf16 *)m->acts;
    m->x0 = p, p += td;
    m->dy = p, p += td;
    for (int l = 0; l < m->layers; l++) {
        m->h[l + 1] = p, p += td;
        m->qkv[l] = p, p += 3 * td;
        m->o[l] = p, p += td;
        m->u[l] = p, p += 4 * td;
    }
    m->g = p, p += td;
    m->gu = p, p += 4 * td;
    m->go = p, p += td;
    m->dqkv = p;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(m->dqkv, 0, 3 * td * sizeof(bf16), stream), out);
out:
    return rc;
}

/* Weights, inputs and upstream gradients drawn from seed (as sb_host_reference draws them). */
int stack_fill(sb_stack *m, uint64_t seed, cudaStream_t stream)
{
    int rc = UF_OK;
    const size_t td = (size_t)m->t_max * m->d;
    for (int l = 0; l < m->layers; l++)
        for (int j = 0; j < SB_N_LINEARS; j++)
            UF_STATUS_OR_GOTO(rc, fill_bf16(m->w[l][j],
                                            (size_t)sb_in_features(j, m->d) *
                                                sb_out_features(j, m->d),
                                            seed, SB_T_W + 4 * l + j, sb_weight_scale(j, m->d),
                                            stream),
                              out);
    UF_STATUS_OR_GOTO(rc, fill_bf16(m->x0, td, seed, SB_T_X0, 1.0f, stream), out);
    UF_STATUS_OR_GOTO(rc, fill_bf16(m->dy, td, seed, SB_T_DY, 1.0f, stream), out);
out:
    return rc;
}

/* Forward of T tokens from x (T × d): per layer QKV, O (reading V, the attention core's
 * stand-in), MLP up, MLP down; every output kept for the backward. */
int stack_forward(sb_stack *m, const bf16 *x, int T)
{
    int rc = UF_OK;
    const int d = m->d;
    for (int l = 0; l < m->layers; l++) {
        const bf16 *in = l == 0 ? x : m->h[l];
        UF_STATUS_OR_GOTO(rc, linear_forward(m->blas, T, d, 3 * d, in, d, m->w[l][SB_QKV],
                                             m->qkv[l], 3 * d), out);
        UF_STATUS_OR_GOTO(rc, linear_forward(m->blas, T, d, d, m->qkv[l] + 2 * d, 3 * d,
                                             m->w[l][SB_O], m->o[l], d), out);
        UF_STATUS_OR_GOTO(rc, linear_forward(m->blas, T, d, 4 * d, m->o[l], d, m->w[l][SB_UP],
                                             m->u[l], 4 * d), out);
        UF_STATUS_OR_GOTO(rc, linear_forward(m->blas, T, 4 * d, d, m->u[l], 4 * d,
                                             m->w[l][SB_DOWN], m->h[l + 1], d), out);
    }
out:
    return rc;
}

/* Backward of T tokens from the upstream gradient dy (T × d) and the forward's x: input and
 * weight gradients of every linear, the weight gradients added to the previous ones when beta
 * is 1 (gradient accumulation). Leaves dL/dx in m->g. */
int stack_backward(sb_stack *m, const bf16 *x, const bf16 *dy, int T, float beta)
{
    int rc = UF_OK;
    const int d = m->d;
    for (int l = m->layers - 1; l >= 0; l--) {
        const bf16 *gin = l == m->layers - 1 ? dy : m->g;
        const bf16 *in = l == 0 ? x : m->h[l];
        UF_STATUS_OR_GOTO(rc, linear_wgrad(m->blas, T, 4 * d, d, m->u[l], 4 * d, gin, d, beta,
                                           m->dw[l][SB_DOWN]), out);
        UF_STATUS_OR_GOTO(rc, linear_dgrad(m->blas, T, 4 * d, d, gin, d, m->w[l][SB_DOWN], m->gu,
                                           4 * d), out);
        UF_STATUS_OR_GOTO(rc, linear_wgrad(m->blas, T, d, 4 * d, m->o[l], d, m->gu, 4 * d, beta,
                                           m->dw[l][SB_UP]), out);
        UF_STATUS_OR_GOTO(rc, linear_dgrad(m->blas, T, d, 4 * d, m->gu, 4 * d, m->w[l][SB_UP],
                                           m->go, d), out);
        UF_STATUS_OR_GOTO(rc, linear_wgrad(m->blas, T, d, d, m->qkv[l] + 2 * d, 3 * d, m->go, d,
                                           beta, m->dw[l][SB_O]), out);
        UF_STATUS_OR_GOTO(rc, linear_dgrad(m->blas, T, d, d, m->go, d, m->w[l][SB_O],
                                           m->dqkv + 2 * d, 3 * d), out);
        UF_STATUS_OR_GOTO(rc, linear_wgrad(m->blas, T, d, 3 * d, in, d, m->dqkv, 3 * d, beta,
                                           m->dw[l][SB_QKV]), out);
        UF_STATUS_OR_GOTO(rc, linear_dgrad(m->blas, T, d, 3 * d, m->dqkv, 3 * d,
                                           m->w[l][SB_QKV], m->g, d), out);
    }
out:
    return rc;
}

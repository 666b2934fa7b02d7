/* checkpoint_recompute's model, built on its kernels: the activation arena, the block stack's
 * buffers, cuBLAS GEMMs, one block's forward and backward, and the dry run that plans a
 * policy. The policies that decide what to keep and what to recompute are in
 * checkpoint_recompute.cu. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>

#include "underfed.h"
#include "uf_cublas.h"
#include "checkpoint_recompute_ref.h"
#include "checkpoint_recompute_kernels.h"
#include "checkpoint_recompute_model.h"

#define CR_ALIGN_BYTES ((size_t)256)

/* ---- the activation arena ---------------------------------------------------------------- */

static size_t cr_round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

int arena_alloc(cr_arena *a, size_t bytes, void **out)
{
    const size_t need = cr_round_up(bytes, CR_ALIGN_BYTES);
    if (need > a->capacity - a->top) {
        char msg[192];
        snprintf(msg, sizeof msg, "activation arena exhausted: %zu B asked, %zu of %zu B in use",
                 need, a->top, a->capacity);
        uf_report_failure(__FILE__, __LINE__, "arena_alloc", msg);
        return UF_ERR;
    }
    *out = a->planning ? (void *)(uintptr_t)(CR_ALIGN_BYTES + a->top) : (void *)(a->base + a->top);
    a->top += need;
    if (a->top > a->peak)
        a->peak = a->top;
    return UF_OK;
}

void arena_free_to(cr_arena *a, size_t mark) { a->top = mark; }

/* ---- the model --------------------------------------------------------------------------- */

static bf16 *w1_of(const cr_model *m, int i) { return m->params + (size_t)i * w_elems(m); }
static bf16 *w2_of(const cr_model *m, int i) { return m->params + ((size_t)m->L + i) * w_elems(m); }
static float *gamma_of(const cr_model *m, int i) { return m->ln_params + (size_t)i * m->d; }
static float *beta_of(const cr_model *m, int i) { return m->ln_params + ((size_t)m->L + i) * m->d; }
static bf16 *dw1_of(const cr_model *m, int i) { return m->grads.bf + (size_t)i * w_elems(m); }
static bf16 *dw2_of(const cr_model *m, int i)
{
    return m->grads.bf + ((size_t)m->L + i) * w_elems(m);
}
static bf16 *dgrad_of(const cr_model *m) { return m->grads.bf + 2 * (size_t)m->L * w_elems(m); }
static float *dgamma_of(const cr_model *m, int i) { return m->grads.f32 + (size_t)i * m->d; }
static float *dbeta_of(const cr_model *m, int i)
{
    return m->grads.f32 + ((size_t)m->L + i) * m->d;
}
static int planning(const cr_model *m) { return m->arena->planning; }

static size_t params_bytes(const cr_model *m) { return 2 * (size_t)m->L * w_elems(m) * sizeof(bf16); }
static size_t ln_params_bytes(const cr_model *m) { return 2 * (size_t)m->L * m->d * sizeof(float); }
static size_t inputs_bytes(const cr_model *m) { return 2 * td_elems(m) * sizeof(bf16); }
static size_t partials_bytes(const cr_model *m)
{
    return 2 * (size_t)CR_LN_CHUNKS * m->d * sizeof(float);
}
size_t grads_bytes(const cr_model *m)
{
    return m->grads.n_bf * sizeof(bf16) + m->grads.n_f32 * sizeof(float);
}
/* Everything but the activations: parameters, inputs, gradients, LayerNorm scratch. */
size_t model_device_bytes(const cr_model *m)
{
    return params_bytes(m) + ln_params_bytes(m) + inputs_bytes(m) + grads_bytes(m) +
           partials_bytes(m);
}

/* ---- operations (no-ops while planning) -------------------------------------------------- */

static unsigned int ew_blocks(size_t n)
{
    const size_t b = (n + CR_EW_THREADS - 1) / CR_EW_THREADS;
    return (unsigned int)(b == 0 ? 1 : b > CR_EW_MAX_BLOCKS ? CR_EW_MAX_BLOCKS : b);
}

/* C = op(A)·op(B), bf16 in and out, fp32 accumulation, column-major. */
static int gemm_bf16(const cr_model *m, cublasOperation_t op_a, cublasOperation_t op_b, int rows,
                     int cols, int inner, const bf16 *a, int lda, const bf16 *b, int ldb, bf16 *c,
                     int ldc)
{
    int rc = UF_OK;
    const float one = 1.0f, zero = 0.0f;
    if (planning(m))
        return UF_OK;
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(m->blas, op_a, op_b, rows, cols, inner, &one, a, CUDA_R_16BF,
                                    lda, b, CUDA_R_16BF, ldb, &zero, c, CUDA_R_16BF, ldc,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   out);
out:
    return rc;
}

int ln_forward(const cr_model *m, int i, const bf16 *x, bf16 *xn, float *mean, float *rstd)
{
    int rc = UF_OK;
    if (planning(m))
        return UF_OK;
    ln_forward_kernel<<<m->T, CR_LN_THREADS, 0, m->stream>>>(x, gamma_of(m, i), beta_of(m, i), xn,
                                                            mean, rstd, m->d);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int ew_launch(const cr_model *m, ew_kernel kernel, const bf16 *src, bf16 *dst,
              size_t elems)
{
    int rc = UF_OK;
    const size_t n8 = elems / 8;
    if (planning(m))
        return UF_OK;
    kernel<<<ew_blocks(n8), CR_EW_THREADS, 0, m->stream>>>(src, dst, n8);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* LayerNorm backward of block i: dgamma, dbeta (deterministic two-step sums) and the input
 * gradient added in place to the running gradient. */
static int ln_backward(const cr_model *m, int i, const bf16 *dxn, const bf16 *x, const float *mean,
                       const float *rstd)
{
    int rc = UF_OK;
    const int rows_per_chunk = (m->T + CR_LN_CHUNKS - 1) / CR_LN_CHUNKS;
    const dim3 grid((unsigned int)(m->d + 255) / 256, CR_LN_CHUNKS);
    float *part_gamma = m->ln_partials, *part_beta = m->ln_partials + (size_t)CR_LN_CHUNKS * m->d;
    if (planning(m))
        return UF_OK;
    ln_backward_params_kernel<<<grid, 256, 0, m->stream>>>(dxn, x, mean, rstd, part_gamma,
                                                           part_beta, m->T, m->d, rows_per_chunk);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    ln_reduce_partials_kernel<<<(m->d + 255) / 256, 256, 0, m->stream>>>(
        part_gamma, part_beta, dgamma_of(m, i), dbeta_of(m, i), m->d, CR_LN_CHUNKS);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    ln_backward_dx_kernel<<<m->T, CR_LN_THREADS, 0, m->stream>>>(dxn, x, mean, rstd,
                                                                gamma_of(m, i), dgrad_of(m), m->d);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* The backward pass starts from the loss gradient at the top (drawn from the seed). */
int begin_backward(const cr_model *m)
{
    int rc = UF_OK;
    if (planning(m))
        return UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(dgrad_of(m), m->dy_top, td_elems(m) * sizeof(bf16),
                                        cudaMemcpyDeviceToDevice, m->stream),
                    out);
out:
    return rc;
}

/* ---- one block, forward and backward ---------------------------------------------------- */

/* Allocate the activations named in `what`, in a fixed order; other fields are left alone. */
int alloc_acts(const cr_model *m, cr_acts *a, int what)
{
    int rc = UF_OK;
    void *p = NULL;
    if (what & ACT_STATS) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, 2 * (size_t)m->T * sizeof(float), &p), out);
        a->mean = (float *)p;
        a->rstd = a->mean + m->T;
    }
    if (what & ACT_XN) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, td_elems(m) * sizeof(bf16), &p), out);
        a->xn = (bf16 *)p;
    }
    if (what & ACT_H) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, th_elems(m) * sizeof(bf16), &p), out);
        a->h = (bf16 *)p;
    }
    if (what & ACT_G) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, th_elems(m) * sizeof(bf16), &p), out);
        a->g = (bf16 *)p;
    }
    if (what & ACT_Y) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, td_elems(m) * sizeof(bf16), &p), out);
        a->y = (bf16 *)p;
    }
out:
    return rc;
}

/* The part of block i's forward that its backward needs: a->xn = LN(x), a->h = W1·xn,
 * a->g = gelu(h) (and the statistics when a->mean). */
int block_forward_to_g(const cr_model *m, int i, const bf16 *x, const cr_acts *a)
{
    int rc = UF_OK;
    const cublasOperation_t N = CUBLAS_OP_N;
    UF_STATUS_OR_GOTO(rc, ln_forward(m, i, x, a->xn, a->mean, a->rstd), out);
    UF_STATUS_OR_GOTO(rc, gemm_bf16(m, N, N, m->hidden, m->T, m->d, w1_of(m, i), m->hidden, a->xn,
                                    m->d, a->h, m->hidden),
                      out);
    UF_STATUS_OR_GOTO(rc, ew_launch(m, gelu_forward_kernel, a->h, a->g, th_elems(m)), out);
out:
    return rc;
}

/* y = x + W2·gelu(W1·LN(x)); writes a->xn, a->h, a->g (and the statistics when a->mean). */
int block_forward(const cr_model *m, int i, const bf16 *x, const cr_acts *a, bf16 *y)
{
    int rc = UF_OK;
    const cublasOperation_t N = CUBLAS_OP_N;
    UF_STATUS_OR_GOTO(rc, block_forward_to_g(m, i, x, a), out);
    UF_STATUS_OR_GOTO(rc, gemm_bf16(m, N, N, m->d, m->T, m->hidden, w2_of(m, i), m->d, a->g,
                                    m->hidden, y, m->d),
                      out);
    UF_STATUS_OR_GOTO(rc, ew_launch(m, residual_add_kernel, x, y, td_elems(m)), out);
out:
    return rc;
}

/* Backward of block i with input x. The running gradient (dgrad_of) holds dL/dy on entry and
 * dL/dx on return. Gradients overwrite dead activations: dL/dg and dL/dh go into g (dead once
 * dW2 is formed), dL/dxn into xn (dead once dW1 is formed). */
int block_backward(const cr_model *m, int i, const bf16 *x, const cr_acts *a)
{
    int rc = UF_OK;
    const cublasOperation_t N = CUBLAS_OP_N, Tr = CUBLAS_OP_T;
    bf16 *dy = dgrad_of(m);
    /* dW2 = dy·g^T (d × 4d) */
    UF_STATUS_OR_GOTO(rc, gemm_bf16(m, N, Tr, m->d, m->hidden, m->T, dy, m->d, a->g, m->hidden,
                                    dw2_of(m, i), m->d),
                      out);
    /* dg = W2^T·dy (4d × T), into g */
    UF_STATUS_OR_GOTO(rc, gemm_bf16(m, Tr, N, m->hidden, m->T, m->d, w2_of(m, i), m->d, dy, m->d,
                                    a->g, m->hidden),
                      out);
    UF_STATUS_OR_GOTO(rc, ew_launch(m, gelu_backward_kernel, a->h, a->g, th_elems(m)), out);
    /* dW1 = dh·xn^T (4d × d) */
    UF_STATUS_OR_GOTO(rc, gemm_bf16(m, N, Tr, m->hidden, m->d, m->T, a->g, m->hidden, a->xn, m->d,
                                    dw1_of(m, i), m->hidden),
                      out);
    /* dxn = W1^T·dh (d × T), into xn */
    UF_STATUS_OR_GOTO(rc, gemm_bf16(m, Tr, N, m->d, m->T, m->hidden, w1_of(m, i), m->hidden, a->g,
                                    m->hidden, a->xn, m->d),
                      out);
    UF_STATUS_OR_GOTO(rc, ln_backward(m, i, a->xn, x, a->mean, a->rstd), out);
out:
    return rc;
}

/* ---- model buffers ------------------------------------------------------------------------ */

void model_free(cr_model *m)
{
    cudaFree(m->params);
    cudaFree(m->ln_params);
    cudaFree(m->x0);
    cudaFree(m->dy_top);
    cudaFree(m->grads.bf);
    cudaFree(m->grads.f32);
    cudaFree(m->ln_partials);
    free(m->acts);
    free(m->ckpt);
    free(m->seg_mark);
    memset(m, 0, sizeof *m);
}

/* Dimensions and host bookkeeping only (enough to plan). */
int model_init_host(cr_model *m, int d, int T, int L)
{
    memset(m, 0, sizeof *m);
    m->d = d;
    m->hidden = 4 * d;
    m->T = T;
    m->L = L;
    m->grads.n_bf = 2 * (size_t)L * w_elems(m) + td_elems(m);
    m->grads.n_f32 = 2 * (size_t)L * d;
    m->acts = (cr_acts *)calloc((size_t)L, sizeof *m->acts);
    m->ckpt = (bf16 **)calloc((size_t)L + 1, sizeof *m->ckpt);
    m->seg_mark = (size_t *)calloc((size_t)L, sizeof *m->seg_mark);
    if (!m->acts || !m->ckpt || !m->seg_mark) {
        model_free(m);
        uf_report_failure(__FILE__, __LINE__, "calloc", "out of host memory");
        return UF_ERR;
    }
    return UF_OK;
}

int grads_alloc(cr_grads *g)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&g->bf, g->n_bf * sizeof(bf16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&g->f32, g->n_f32 * sizeof(float)), out);
out:
    return rc;
}

void grads_free(cr_grads *g)
{
    cudaFree(g->bf);
    cudaFree(g->f32);
    g->bf = NULL;
    g->f32 = NULL;
}

/* Device buffers of a model whose host part is set; on failure the caller frees the model. */
int model_alloc_device(cr_model *m)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&m->params, params_bytes(m)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&m->ln_params, ln_params_bytes(m)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&m->x0, td_elems(m) * sizeof(bf16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&m->dy_top, td_elems(m) * sizeof(bf16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&m->ln_partials, partials_bytes(m)), out);
    UF_STATUS_OR_GOTO(rc, grads_alloc(&m->grads), out);
out:
    return rc;
}

/* Weights, LayerNorm parameters, input and top gradient from the seed (never zeros). */
int model_fill(const cr_model *m, uint64_t seed)
{
    int rc = UF_OK;
    const size_t n_w = (size_t)m->L * w_elems(m), n_ln = (size_t)m->L * m->d;
    const size_t n_td = td_elems(m);
    cudaStream_t s = m->stream;
    fill_bf16_kernel<<<ew_blocks(n_w), CR_EW_THREADS, 0, s>>>(m->params, n_w, seed, CR_T_W1,
                                                              w1_scale(m->d), 0.0f);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    fill_bf16_kernel<<<ew_blocks(n_w), CR_EW_THREADS, 0, s>>>(m->params + n_w, n_w, seed, CR_T_W2,
                                                              w2_scale(m->d), 0.0f);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    fill_f32_kernel<<<ew_blocks(n_ln), CR_EW_THREADS, 0, s>>>(m->ln_params, n_ln, seed,
                                                              CR_T_GAMMA, 1.0f, 1.0f);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    fill_f32_kernel<<<ew_blocks(n_ln), CR_EW_THREADS, 0, s>>>(m->ln_params + n_ln, n_ln, seed,
                                                              CR_T_BETA, 0.5f, 0.0f);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    fill_bf16_kernel<<<ew_blocks(n_td), CR_EW_THREADS, 0, s>>>(m->x0, n_td, seed, CR_T_X0, 2.0f,
                                                               0.0f);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    fill_bf16_kernel<<<ew_blocks(n_td), CR_EW_THREADS, 0, s>>>(m->dy_top, n_td, seed, CR_T_DY,
                                                               2.0f, 0.0f);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int grads_poison(const cr_grads *g, int byte, cudaStream_t s)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(g->bf, byte, g->n_bf * sizeof(bf16), s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(g->f32, byte, g->n_f32 * sizeof(float), s), out);
out:
    return rc;
}

/* The peak activation bytes of a policy: a dry run of its allocation sequence (`run`, one step
 * of the policy, on a planning arena: no kernels). */
int plan_policy(cr_model *m, cr_policy_fn run, int policy, int k, size_t *peak_bytes)
{
    cr_arena plan = {.base = NULL, .capacity = SIZE_MAX, .top = 0, .peak = 0, .planning = 1};
    cr_arena *saved = m->arena;
    int rc;
    m->arena = &plan;
    rc = run(m, policy, k);
    m->arena = saved;
    *peak_bytes = plan.peak;
    return rc;
}

/* checkpoint_recompute's workload: the LayerNorm, GELU, residual, fill and compare kernels, and
 * the model built on them (the activation arena, the block stack's buffers, cuBLAS GEMMs, one
 * block's forward and backward). The policies that decide what to keep and what to recompute
 * are in checkpoint_recompute.cu. Included by checkpoint_recompute.cu. */
#ifndef CR_KERNELS_CUH
#define CR_KERNELS_CUH

#include <math.h>
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

typedef __nv_bfloat16 bf16;

/* What alloc_acts allocates for a block. */
enum { ACT_STATS = 1, ACT_XN = 2, ACT_H = 4, ACT_G = 8, ACT_Y = 16 };
#define CR_LN_THREADS 256           /* threads per LayerNorm row (one block per token) */
#define CR_LN_CHUNKS 64             /* token chunks of the deterministic dgamma/dbeta sums */
#define CR_EW_THREADS 256           /* elementwise kernels: threads per block */
#define CR_EW_MAX_BLOCKS 4096       /* elementwise kernels: grid-stride beyond this */
#define CR_ALIGN_BYTES ((size_t)256)

/* ---- kernels ----------------------------------------------------------------------------- */

/* 8 bf16 (16 bytes) at p, as floats; p is 16-byte aligned (d % 8 == 0, arena 256-aligned). */
__device__ static inline void load8(const bf16 *p, float f[8])
{
    const uint4 raw = *(const uint4 *)p;
    const __nv_bfloat162 *h2 = (const __nv_bfloat162 *)&raw;
    for (int k = 0; k < 4; k++) {
        const float2 v = __bfloat1622float2(h2[k]);
        f[2 * k] = v.x;
        f[2 * k + 1] = v.y;
    }
}

__device__ static inline void store8(bf16 *p, const float f[8])
{
    uint4 raw;
    __nv_bfloat162 *h2 = (__nv_bfloat162 *)&raw;
    for (int k = 0; k < 4; k++)
        h2[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
    *(uint4 *)p = raw;
}

/* Sum over the block, the same fixed order in every thread: deterministic. red holds one
 * float per warp; blockDim.x is a multiple of 32. */
__device__ static float block_sum(float v, float *red)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads(); /* red may still be read by the previous call */
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++)
        total += red[w];
    return total;
}

/* tanh through one exponential; |u| clamped where tanh is ±1 in fp32. */
__device__ static inline float fast_tanh(float u)
{
    u = fminf(fmaxf(u, -10.0f), 10.0f);
    return 1.0f - __fdividef(2.0f, __expf(2.0f * u) + 1.0f);
}

__device__ static inline float gelu_f(float v)
{
    const float t = fast_tanh(CR_GELU_C * (v + CR_GELU_A * v * v * v));
    return 0.5f * v * (1.0f + t);
}

__device__ static inline float gelu_grad_f(float v)
{
    const float t = fast_tanh(CR_GELU_C * (v + CR_GELU_A * v * v * v));
    return 0.5f * (1.0f + t) +
           0.5f * v * (1.0f - t * t) * CR_GELU_C * (1.0f + 3.0f * CR_GELU_A * v * v);
}

/* LayerNorm forward, one block per token row: two-pass fp32 statistics, then
 * xn = (x − mean)·rstd·gamma + beta. Statistics are stored when mean_out is not NULL. */
__global__ void ln_forward_kernel(const bf16 *x, const float *gamma, const float *beta, bf16 *xn,
                                  float *mean_out, float *rstd_out, int d)
{
    __shared__ float red[CR_LN_THREADS / 32];
    const size_t row = blockIdx.x;
    const bf16 *xr = x + row * (size_t)d;
    bf16 *yr = xn + row * (size_t)d;
    float f[8], o[8];
    float s = 0.0f;
    for (int j = threadIdx.x * 8; j < d; j += blockDim.x * 8) {
        load8(xr + j, f);
        for (int k = 0; k < 8; k++)
            s += f[k];
    }
    const float mean = block_sum(s, red) / (float)d;
    float q = 0.0f;
    for (int j = threadIdx.x * 8; j < d; j += blockDim.x * 8) {
        load8(xr + j, f);
        for (int k = 0; k < 8; k++)
            q += (f[k] - mean) * (f[k] - mean);
    }
    const float rstd = rsqrtf(block_sum(q, red) / (float)d + CR_LN_EPS);
    for (int j = threadIdx.x * 8; j < d; j += blockDim.x * 8) {
        load8(xr + j, f);
        for (int k = 0; k < 8; k++)
            o[k] = (f[k] - mean) * rstd * gamma[j + k] + beta[j + k];
        store8(yr + j, o);
    }
    if (threadIdx.x == 0 && mean_out) {
        mean_out[row] = mean;
        rstd_out[row] = rstd;
    }
}

/* LayerNorm backward, input gradient, one block per row, in place on dgrad:
 * dgrad += rstd·(g − mean(g) − xhat·mean(g·xhat)) with g = dxn·gamma (dgrad holds dL/dy of the
 * block on entry: the residual path's gradient). */
__global__ void ln_backward_dx_kernel(const bf16 *dxn, const bf16 *x, const float *mean,
                                      const float *rstd, const float *gamma, bf16 *dgrad, int d)
{
    __shared__ float red[CR_LN_THREADS / 32];
    const size_t row = blockIdx.x;
    const bf16 *gr = dxn + row * (size_t)d, *xr = x + row * (size_t)d;
    bf16 *dr = dgrad + row * (size_t)d;
    const float mu = mean[row], rs = rstd[row];
    float g8[8], x8[8], d8[8];
    float s1 = 0.0f, s2 = 0.0f;
    for (int j = threadIdx.x * 8; j < d; j += blockDim.x * 8) {
        load8(gr + j, g8);
        load8(xr + j, x8);
        for (int k = 0; k < 8; k++) {
            const float gd = g8[k] * gamma[j + k];
            s1 += gd;
            s2 += gd * (x8[k] - mu) * rs;
        }
    }
    const float m1 = block_sum(s1, red) / (float)d;
    const float m2 = block_sum(s2, red) / (float)d;
    for (int j = threadIdx.x * 8; j < d; j += blockDim.x * 8) {
        load8(gr + j, g8);
        load8(xr + j, x8);
        load8(dr + j, d8);
        for (int k = 0; k < 8; k++) {
            const float gd = g8[k] * gamma[j + k];
            const float xh = (x8[k] - mu) * rs;
            d8[k] += rs * (gd - m1 - xh * m2);
        }
        store8(dr + j, d8);
    }
}

/* dgamma/dbeta, step 1: per chunk of rows, one thread per column (no atomics). */
__global__ void ln_backward_params_kernel(const bf16 *dxn, const bf16 *x, const float *mean,
                                          const float *rstd, float *part_gamma,
                                          float *part_beta, int T, int d, int rows_per_chunk)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int chunk = blockIdx.y;
    if (j >= d)
        return;
    const int r0 = chunk * rows_per_chunk;
    const int r1 = min(r0 + rows_per_chunk, T);
    float acc_g = 0.0f, acc_b = 0.0f;
    for (int r = r0; r < r1; r++) {
        const size_t e = (size_t)r * d + j;
        const float g = __bfloat162float(dxn[e]);
        acc_g += g * (__bfloat162float(x[e]) - mean[r]) * rstd[r];
        acc_b += g;
    }
    part_gamma[(size_t)chunk * d + j] = acc_g;
    part_beta[(size_t)chunk * d + j] = acc_b;
}

/* dgamma/dbeta, step 2: sum the chunks in a fixed order. */
__global__ void ln_reduce_partials_kernel(const float *part_gamma, const float *part_beta,
                                          float *dgamma, float *dbeta, int d, int n_chunks)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= d)
        return;
    float sg = 0.0f, sb = 0.0f;
    for (int c = 0; c < n_chunks; c++) {
        sg += part_gamma[(size_t)c * d + j];
        sb += part_beta[(size_t)c * d + j];
    }
    dgamma[j] = sg;
    dbeta[j] = sb;
}

/* g = gelu(h) (tanh form), 8 elements per thread and iteration. */
__global__ void gelu_forward_kernel(const bf16 *h, bf16 *g, size_t n8)
{
    float f[8];
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n8;
         v += (size_t)gridDim.x * blockDim.x) {
        load8(h + v * 8, f);
        for (int k = 0; k < 8; k++)
            f[k] = gelu_f(f[k]);
        store8(g + v * 8, f);
    }
}

/* dh = dg·gelu'(h), in place on dg. */
__global__ void gelu_backward_kernel(const bf16 *h, bf16 *dg, size_t n8)
{
    float hv[8], gv[8];
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n8;
         v += (size_t)gridDim.x * blockDim.x) {
        load8(h + v * 8, hv);
        load8(dg + v * 8, gv);
        for (int k = 0; k < 8; k++)
            gv[k] *= gelu_grad_f(hv[k]);
        store8(dg + v * 8, gv);
    }
}

/* y = x + y: the residual, in place on the second GEMM's output. */
__global__ void residual_add_kernel(const bf16 *x, bf16 *y, size_t n8)
{
    float xv[8], yv[8];
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n8;
         v += (size_t)gridDim.x * blockDim.x) {
        load8(x + v * 8, xv);
        load8(y + v * 8, yv);
        for (int k = 0; k < 8; k++)
            yv[k] += xv[k];
        store8(y + v * 8, yv);
    }
}

__global__ void fill_bf16_kernel(bf16 *p, size_t n, uint64_t seed, uint64_t tensor, float scale,
                                 float offset)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = __float2bfloat16(cr_random(seed, tensor, i, scale, offset));
}

__global__ void fill_f32_kernel(float *p, size_t n, uint64_t seed, uint64_t tensor, float scale,
                                float offset)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = cr_random(seed, tensor, i, scale, offset);
}

/* Bitwise comparison of two gradient buffers: mismatching elements, non-finite elements, and
 * the largest |a − b| and |b| among finite pairs (floats ≥ 0 order like their bits). */
typedef struct cr_diff {
    unsigned long long mismatch, nonfinite;
    unsigned int max_diff_bits, max_ref_bits;
} cr_diff;

__device__ static void diff_flush(unsigned long long mismatch, unsigned long long nonfinite,
                                  float max_diff, float max_ref, cr_diff *out)
{
    for (int o = 16; o > 0; o >>= 1) {
        mismatch += __shfl_xor_sync(0xffffffffu, mismatch, o);
        nonfinite += __shfl_xor_sync(0xffffffffu, nonfinite, o);
        max_diff = fmaxf(max_diff, __shfl_xor_sync(0xffffffffu, max_diff, o));
        max_ref = fmaxf(max_ref, __shfl_xor_sync(0xffffffffu, max_ref, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out->mismatch, mismatch);
        atomicAdd(&out->nonfinite, nonfinite);
        atomicMax(&out->max_diff_bits, __float_as_uint(max_diff));
        atomicMax(&out->max_ref_bits, __float_as_uint(max_ref));
    }
}

__global__ void compare_bf16_kernel(const unsigned short *a, const unsigned short *b, size_t n,
                                    cr_diff *out)
{
    unsigned long long mismatch = 0, nonfinite = 0;
    float max_diff = 0.0f, max_ref = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float fa = __uint_as_float((unsigned int)a[i] << 16);
        const float fb = __uint_as_float((unsigned int)b[i] << 16);
        mismatch += a[i] != b[i];
        if (!isfinite(fa) || !isfinite(fb)) {
            nonfinite++;
            continue;
        }
        max_diff = fmaxf(max_diff, fabsf(fa - fb));
        max_ref = fmaxf(max_ref, fabsf(fb));
    }
    diff_flush(mismatch, nonfinite, max_diff, max_ref, out);
}

__global__ void compare_f32_kernel(const unsigned int *a, const unsigned int *b, size_t n,
                                   cr_diff *out)
{
    unsigned long long mismatch = 0, nonfinite = 0;
    float max_diff = 0.0f, max_ref = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float fa = __uint_as_float(a[i]), fb = __uint_as_float(b[i]);
        mismatch += a[i] != b[i];
        if (!isfinite(fa) || !isfinite(fb)) {
            nonfinite++;
            continue;
        }
        max_diff = fmaxf(max_diff, fabsf(fa - fb));
        max_ref = fmaxf(max_ref, fabsf(fb));
    }
    diff_flush(mismatch, nonfinite, max_diff, max_ref, out);
}

/* ---- the activation arena ---------------------------------------------------------------- */

/* Bump allocation with free-to-mark (the step's lifetimes are LIFO), peak recorded. While
 * planning (base NULL, unbounded) it hands out fake addresses and only measures. */
typedef struct cr_arena {
    char *base;
    size_t capacity, top, peak;
    int planning;
} cr_arena;

static size_t cr_round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static int arena_alloc(cr_arena *a, size_t bytes, void **out)
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

static void arena_free_to(cr_arena *a, size_t mark) { a->top = mark; }

/* ---- the model --------------------------------------------------------------------------- */

/* One block's activations; NULL where the policy does not hold them. */
typedef struct cr_acts {
    size_t mark;            /* arena top before this block's allocations */
    float *mean, *rstd;     /* LayerNorm statistics [T] */
    bf16 *xn, *h, *g, *y;   /* LN(x) [T·d], W1·LN(x) [T·4d], gelu(h) [T·4d], output [T·d] */
} cr_acts;

/* Gradients: bf16 dW1 [L][4d·d] | dW2 [L][d·4d] | dx0 [T·d]; fp32 dgamma [L][d] | dbeta [L][d].
 * dx0 is also the running activation gradient of the backward pass. */
typedef struct cr_grads {
    bf16 *bf;
    float *f32;
    size_t n_bf, n_f32;
} cr_grads;

/* Activations are row-major [token][feature] = column-major feature × T for cuBLAS. W1 is
 * column-major 4d × d (h = W1·xn), W2 column-major d × 4d (f = W2·g). */
typedef struct cr_model {
    int d, hidden, T, L;
    bf16 *params;           /* W1 [L][4d·d] | W2 [L][d·4d] */
    float *ln_params;       /* gamma [L][d] | beta [L][d] */
    bf16 *x0, *dy_top;      /* model input and loss gradient at the top [T·d] */
    cr_grads grads;
    float *ln_partials;     /* [2][CR_LN_CHUNKS][d] */
    cr_acts *acts;          /* host [L] */
    bf16 **ckpt;            /* host [L+1]: segment inputs (every_k, full) */
    size_t *seg_mark;       /* host [L]: arena top before each segment's checkpoint */
    cr_arena *arena;
    cublasHandle_t blas;
    cudaStream_t stream;
} cr_model;

static size_t w_elems(const cr_model *m) { return (size_t)m->hidden * m->d; }
static size_t td_elems(const cr_model *m) { return (size_t)m->T * m->d; }
static size_t th_elems(const cr_model *m) { return (size_t)m->T * m->hidden; }
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
static size_t grads_bytes(const cr_model *m)
{
    return m->grads.n_bf * sizeof(bf16) + m->grads.n_f32 * sizeof(float);
}
/* Everything but the activations: parameters, inputs, gradients, LayerNorm scratch. */
static size_t model_device_bytes(const cr_model *m)
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

static int ln_forward(const cr_model *m, int i, const bf16 *x, bf16 *xn, float *mean, float *rstd)
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

/* An elementwise kernel (8 bf16 per thread and iteration) over `elems` elements: dst from src
 * (gelu forward), or in place on dst (gelu backward, the residual). */
typedef void (*ew_kernel)(const bf16 *src, bf16 *dst, size_t n8);

static int ew_launch(const cr_model *m, ew_kernel kernel, const bf16 *src, bf16 *dst,
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
static int begin_backward(const cr_model *m)
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
static int alloc_acts(const cr_model *m, cr_acts *a, int what)
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
static int block_forward_to_g(const cr_model *m, int i, const bf16 *x, const cr_acts *a)
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
static int block_forward(const cr_model *m, int i, const bf16 *x, const cr_acts *a, bf16 *y)
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
static int block_backward(const cr_model *m, int i, const bf16 *x, const cr_acts *a)
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

static void model_free(cr_model *m)
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
static int model_init_host(cr_model *m, int d, int T, int L)
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

static int grads_alloc(cr_grads *g)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&g->bf, g->n_bf * sizeof(bf16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&g->f32, g->n_f32 * sizeof(float)), out);
out:
    return rc;
}

static void grads_free(cr_grads *g)
{
    cudaFree(g->bf);
    cudaFree(g->f32);
    g->bf = NULL;
    g->f32 = NULL;
}

/* Device buffers of a model whose host part is set; on failure the caller frees the model. */
static int model_alloc_device(cr_model *m)
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
static int model_fill(const cr_model *m, uint64_t seed)
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

static int grads_poison(const cr_grads *g, int byte, cudaStream_t s)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(g->bf, byte, g->n_bf * sizeof(bf16), s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(g->f32, byte, g->n_f32 * sizeof(float), s), out);
out:
    return rc;
}

#endif

/* checkpoint_recompute: activation checkpointing of a stack of transformer MLP blocks,
 * y = x + W2·gelu(W1·LN(x)), in bf16 with cuBLAS GEMMs and hand-written LayerNorm / GELU /
 * residual kernels, forward and backward (gradients of the input and of every weight).
 *
 * Four activation policies (variants) run the very same kernels; they differ only in what the
 * forward pass keeps for the backward pass and what the backward pass recomputes:
 *   store_all  keeps everything (no recompute): the time reference, most memory;
 *   full       keeps each block's input, re-runs each block's forward in backward (broken:
 *              the usual "checkpoint every layer" default, +1/6 GEMM FLOPs);
 *   every_k    keeps the input of every k-th block, re-runs k-block segments (as
 *              torch.utils.checkpoint_sequential does);
 *   selective  keeps each block's input and GEMM output h, recomputes only LN(x) and gelu(h)
 *              (Korthikanti et al. 2022): about half the memory at almost no extra time.
 *
 * Activations come from a bump arena (free-to-mark, LIFO) that records its peak. A dry run of
 * the step's allocation sequence (the same code, no kernels) sizes each variant's arena, so
 * cudaMemGetInfo around its cudaMalloc shows what the policy really holds. Because recompute
 * re-runs the same kernels on bitwise-equal inputs on one stream, every policy's gradients equal
 * store_all's bit for bit; verify checks that, and anchors store_all against an fp64 host
 * reference on a tiny model. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include "random.h"
#include "underfed.h"
#include "uf_cublas.h"

typedef __nv_bfloat16 bf16;

/* ---- constants ------------------------------------------------------------------------- */

enum { CR_STORE_ALL, CR_FULL, CR_EVERY_K, CR_SELECTIVE, CR_N_POLICIES };
enum { X_ACT_PEAK, X_MEMGETINFO, X_MFU, X_HFU, X_RECOMPUTE, X_GRAD_MISMATCH, CR_N_EXTRAS };
/* Tensor ids of the counter-based random inputs (host and device draw the same values). */
enum { CR_T_W1 = 1, CR_T_W2, CR_T_GAMMA, CR_T_BETA, CR_T_X0, CR_T_DY };
/* What alloc_acts allocates for a block. */
enum { ACT_STATS = 1, ACT_XN = 2, ACT_H = 4, ACT_G = 8, ACT_Y = 16 };

#define CR_LN_THREADS 256           /* threads per LayerNorm row (one block per token) */
#define CR_LN_CHUNKS 64             /* token chunks of the deterministic dgamma/dbeta sums */
#define CR_EW_THREADS 256           /* elementwise kernels: threads per block */
#define CR_EW_MAX_BLOCKS 4096       /* elementwise kernels: grid-stride beyond this */
#define CR_CMP_BLOCKS 1024
#define CR_ALIGN_BYTES ((size_t)256)
#define CR_BLAS_WS_BYTES ((size_t)32 << 20) /* cuBLAS workspace, set explicitly (Hopper: 32 MiB) */
#define CR_LN_EPS 1e-5f
#define CR_GELU_C 0.7978845608028654f     /* sqrt(2/pi) */
#define CR_GELU_A 0.044715f
/* bf16 tolerance, normwise (max|a-b| / max|ref| per gradient): every activation and gradient is
 * stored in bf16 (8 significant bits), and fp32 accumulation in another order than the fp64
 * reference flips roundings by one ulp (2^-8 = 0.4 %); the flips add up along the backward pass.
 * Measured with a host emulation of the kernels over 160 seeds: median 3.4e-3, max 8.9e-3.
 * 3e-2 is ~8 ulps; wiring faults (a missing GEMM, a stale buffer) give 0.2 to 0.8. */
#define CR_TOL 3e-2
#define CR_TINY_D 64                /* the tiny model of the host-reference anchor */
#define CR_TINY_T 32
#define CR_TINY_L 5                 /* 5 blocks: k = 2, 4 give uneven segments */
#define CR_POISON_RUN 0xFF          /* variant's gradients before verify: bf16/f32 NaN */
#define CR_POISON_REF 0x7F          /* reference's gradients: a different (finite) pattern */


/* ---- random inputs, identical on host and device ---------------------------------------- */

__host__ __device__ static inline uint64_t cr_mix64(uint64_t z)
{
    return uf_mix64(z + UF_GOLDEN64);
}

/* offset + scale·(u − ½), u uniform on 16 bits. With scale a power of two every operation is
 * exact in fp32, so the host reference regenerates bit-identical inputs. */
__host__ __device__ static inline float cr_random(uint64_t seed, uint64_t tensor, uint64_t i,
                                                  float scale, float offset)
{
    const uint64_t h = cr_mix64(cr_mix64(seed * 0x100000001B3ull + tensor) ^ i);
    const float centered = (float)(h >> 48) * (1.0f / 65536.0f) - 0.5f;
    return offset + scale * centered;
}

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

/* ---- the policies ------------------------------------------------------------------------ */

/* Keep every activation; backward frees each block's region after its own backward. */
static int step_store_all(cr_model *m)
{
    int rc = UF_OK;
    const bf16 *x = m->x0;
    for (int i = 0; i < m->L; i++) {
        cr_acts *a = &m->acts[i];
        memset(a, 0, sizeof *a);
        a->mark = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_STATS | ACT_XN | ACT_H | ACT_G | ACT_Y), out);
        UF_STATUS_OR_GOTO(rc, block_forward(m, i, x, a, a->y), out);
        x = a->y;
    }
    UF_STATUS_OR_GOTO(rc, begin_backward(m), out);
    for (int i = m->L - 1; i >= 0; i--) {
        UF_STATUS_OR_GOTO(rc, block_backward(m, i, i == 0 ? m->x0 : m->acts[i - 1].y, &m->acts[i]),
                          out);
        arena_free_to(m->arena, m->acts[i].mark);
    }
out:
    return rc;
}

/* Forward of segment [a, b) from its checkpoint, keeping nothing but its output checkpoint:
 * intermediate block outputs ping-pong between two buffers, per-block temporaries are freed. */
static int segment_forward(cr_model *m, int a, int b)
{
    int rc = UF_OK;
    void *p = NULL;
    bf16 *pp[2] = {NULL, NULL};
    size_t seg_top = 0, tmp_top = 0;
    m->seg_mark[a] = m->arena->top;
    UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, td_elems(m) * sizeof(bf16), &p), out);
    m->ckpt[b] = (bf16 *)p;
    seg_top = m->arena->top;
    for (int k = 0; k < 2 && k < b - a - 1; k++) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, td_elems(m) * sizeof(bf16), &p), out);
        pp[k] = (bf16 *)p;
    }
    tmp_top = m->arena->top;
    for (int i = a; i < b; i++) {
        cr_acts t;
        memset(&t, 0, sizeof t);
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, &t, ACT_XN | ACT_H | ACT_G), out);
        UF_STATUS_OR_GOTO(rc, block_forward(m, i, i == a ? m->ckpt[a] : pp[(i - a - 1) % 2], &t,
                                            i == b - 1 ? m->ckpt[b] : pp[(i - a) % 2]),
                          out);
        arena_free_to(m->arena, tmp_top);
    }
    arena_free_to(m->arena, seg_top);
out:
    return rc;
}

/* Backward of segment [a, b): free its output checkpoint (its consumer is done), re-run the
 * segment forward keeping everything its backward needs, then run the blocks' backward,
 * freeing each after its own. The recompute stops at the last tensor the backward needs, as
 * torch.utils.checkpoint does by default (non-reentrant, early stop): the last block's W2 GEMM
 * and residual, whose output is the next segment's checkpoint, are not re-run. */
static int segment_backward(cr_model *m, int a, int b)
{
    int rc = UF_OK;
    arena_free_to(m->arena, m->seg_mark[a]);
    for (int i = a; i < b; i++) {
        cr_acts *t = &m->acts[i];
        const bf16 *x = i == a ? m->ckpt[a] : m->acts[i - 1].y;
        const int last = i == b - 1;
        memset(t, 0, sizeof *t);
        t->mark = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, t, ACT_STATS | ACT_XN | ACT_H | ACT_G |
                                                   (last ? 0 : ACT_Y)),
                          out);
        if (last)
            UF_STATUS_OR_GOTO(rc, block_forward_to_g(m, i, x, t), out);
        else
            UF_STATUS_OR_GOTO(rc, block_forward(m, i, x, t, t->y), out);
    }
    for (int i = b - 1; i >= a; i--) {
        UF_STATUS_OR_GOTO(rc, block_backward(m, i, i == a ? m->ckpt[a] : m->acts[i - 1].y,
                                             &m->acts[i]),
                          out);
        arena_free_to(m->arena, m->acts[i].mark);
    }
out:
    return rc;
}

/* Checkpoint every k-th block (k = 1: every block, the "full" policy). */
static int step_segments(cr_model *m, int k)
{
    int rc = UF_OK;
    const int n_seg = (m->L + k - 1) / k;
    m->ckpt[0] = m->x0;
    for (int s = 0; s < n_seg; s++)
        UF_STATUS_OR_GOTO(rc, segment_forward(m, s * k, s * k + k < m->L ? s * k + k : m->L), out);
    UF_STATUS_OR_GOTO(rc, begin_backward(m), out);
    for (int s = n_seg - 1; s >= 0; s--)
        UF_STATUS_OR_GOTO(rc, segment_backward(m, s * k, s * k + k < m->L ? s * k + k : m->L),
                          out);
out:
    return rc;
}

/* Keep the block input (as the previous block's output), the LayerNorm statistics and the
 * GEMM output h; recompute LN(x) and gelu(h) in backward. */
static int step_selective(cr_model *m)
{
    int rc = UF_OK;
    const bf16 *x = m->x0;
    size_t tmp_top = 0;
    for (int i = 0; i < m->L; i++) {
        cr_acts *a = &m->acts[i];
        memset(a, 0, sizeof *a);
        a->mark = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_STATS | ACT_H | ACT_Y), out);
        tmp_top = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_XN | ACT_G), out);
        UF_STATUS_OR_GOTO(rc, block_forward(m, i, x, a, a->y), out);
        arena_free_to(m->arena, tmp_top);
        a->xn = a->g = NULL;
        x = a->y;
    }
    UF_STATUS_OR_GOTO(rc, begin_backward(m), out);
    for (int i = m->L - 1; i >= 0; i--) {
        cr_acts *a = &m->acts[i];
        const bf16 *xi = i == 0 ? m->x0 : m->acts[i - 1].y;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_XN | ACT_G), out);
        /* the same kernels on the same inputs: bitwise the activations of the forward */
        UF_STATUS_OR_GOTO(rc, ln_forward(m, i, xi, a->xn, NULL, NULL), out);
        UF_STATUS_OR_GOTO(rc, ew_launch(m, gelu_forward_kernel, a->h, a->g, th_elems(m)), out);
        UF_STATUS_OR_GOTO(rc, block_backward(m, i, xi, a), out);
        arena_free_to(m->arena, a->mark);
    }
out:
    return rc;
}

/* One training step (forward + backward) of a policy; the arena is empty before and after. */
static int run_policy(cr_model *m, int policy, int k)
{
    int rc = UF_ERR;
    m->arena->top = 0;
    switch (policy) {
    case CR_STORE_ALL: rc = step_store_all(m); break;
    case CR_FULL: rc = step_segments(m, 1); break;
    case CR_EVERY_K: rc = step_segments(m, k); break;
    case CR_SELECTIVE: rc = step_selective(m); break;
    default: break;
    }
    return rc;
}

/* The peak activation bytes of a policy: a dry run of its allocation sequence. */
static int plan_policy(cr_model *m, int policy, int k, size_t *peak_bytes)
{
    cr_arena plan = {.base = NULL, .capacity = SIZE_MAX, .top = 0, .peak = 0, .planning = 1};
    cr_arena *saved = m->arena;
    int rc;
    m->arena = &plan;
    rc = run_policy(m, policy, k);
    m->arena = saved;
    *peak_bytes = plan.peak;
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

/* Power of two nearest to v: keeps the random inputs exact in fp32 (see cr_random). */
static float pow2_near(double v) { return (float)exp2(round(log2(v))); }
static float w1_scale(int d) { return pow2_near(2.0 / sqrt((double)d)); } /* U(±1/√d) */
static float w2_scale(int d) { return pow2_near(1.0 / sqrt((double)d)); } /* U(±1/√(4d)) */

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

/* ---- the fp64 host reference (tiny model) ------------------------------------------------- */

static uint16_t host_f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even, as __float2bfloat16 */
    return (uint16_t)(u >> 16);
}

static float host_bf2f(uint16_t b)
{
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The device stores every activation and gradient in bf16: the reference rounds there too. */
static double ref_bf16(double v) { return host_bf2f(host_f2bf((float)v)); }

static double ref_gelu(double v)
{
    return 0.5 * v * (1.0 + tanh((double)CR_GELU_C * (v + (double)CR_GELU_A * v * v * v)));
}

static double ref_gelu_grad(double v)
{
    const double c = CR_GELU_C, a = CR_GELU_A;
    const double t = tanh(c * (v + a * v * v * v));
    return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * c * (1.0 + 3.0 * a * v * v);
}

/* The reference's gradients, in the device's layouts. */
typedef struct cr_ref {
    double *pool;
    double *dw1, *dw2, *dx0, *dgamma, *dbeta;
} cr_ref;

/* Forward of the whole stack in fp64 (storage rounded to bf16 where the device stores bf16).
 * x holds the L+1 block inputs, the rest one slice per block. */
static void ref_forward(int d, int T, int L, const double *w1, const double *w2, const double *gam,
                        const double *bet, double *x, double *xn, double *hh, double *g,
                        double *mean, double *rstd)
{
    const int h = 4 * d;
    const size_t w = (size_t)h * d, td = (size_t)T * d, th = (size_t)T * h;
    for (int i = 0; i < L; i++) {
        const double *xi = x + i * td, *W1 = w1 + i * w, *W2 = w2 + i * w;
        double *xo = x + (i + 1) * td, *xni = xn + i * td, *hi = hh + i * th, *gi = g + i * th;
        for (int t = 0; t < T; t++) {
            double mu = 0, var = 0;
            for (int j = 0; j < d; j++)
                mu += xi[(size_t)t * d + j];
            mu /= d;
            for (int j = 0; j < d; j++)
                var += (xi[(size_t)t * d + j] - mu) * (xi[(size_t)t * d + j] - mu);
            const double rs = 1.0 / sqrt(var / d + (double)CR_LN_EPS);
            mean[(size_t)i * T + t] = mu;
            rstd[(size_t)i * T + t] = rs;
            for (int j = 0; j < d; j++)
                xni[(size_t)t * d + j] = ref_bf16((xi[(size_t)t * d + j] - mu) * rs *
                                                      gam[(size_t)i * d + j] +
                                                  bet[(size_t)i * d + j]);
        }
        for (int t = 0; t < T; t++)
            for (int o = 0; o < h; o++) {
                double s = 0;
                for (int j = 0; j < d; j++)
                    s += W1[o + (size_t)j * h] * xni[(size_t)t * d + j];
                hi[(size_t)t * h + o] = ref_bf16(s);
                gi[(size_t)t * h + o] = ref_bf16(ref_gelu(hi[(size_t)t * h + o]));
            }
        for (int t = 0; t < T; t++)
            for (int j = 0; j < d; j++) {
                double s = 0;
                for (int o = 0; o < h; o++)
                    s += W2[j + (size_t)o * d] * gi[(size_t)t * h + o];
                xo[(size_t)t * d + j] = ref_bf16(xi[(size_t)t * d + j] + ref_bf16(s));
            }
    }
}

/* Backward of block i in fp64; dy holds dL/dy on entry, dL/dx on return. dg, dxn: scratch. */
static void ref_block_backward(int d, int T, int i, const double *W1, const double *W2,
                               const double *ga, const double *xi, const double *xni,
                               const double *hi, const double *gi, const double *mean,
                               const double *rstd, double *dy, double *dg, double *dxn,
                               cr_ref *out)
{
    const int h = 4 * d;
    const size_t w = (size_t)h * d;
    for (int o = 0; o < h; o++)
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (int t = 0; t < T; t++)
                s += dy[(size_t)t * d + j] * gi[(size_t)t * h + o];
            out->dw2[i * w + j + (size_t)o * d] = ref_bf16(s);
        }
    for (int t = 0; t < T; t++)
        for (int o = 0; o < h; o++) {
            double s = 0;
            for (int j = 0; j < d; j++)
                s += W2[j + (size_t)o * d] * dy[(size_t)t * d + j];
            dg[(size_t)t * h + o] = ref_bf16(ref_bf16(s) * ref_gelu_grad(hi[(size_t)t * h + o]));
        }
    for (int j = 0; j < d; j++)
        for (int o = 0; o < h; o++) {
            double s = 0;
            for (int t = 0; t < T; t++)
                s += dg[(size_t)t * h + o] * xni[(size_t)t * d + j];
            out->dw1[i * w + o + (size_t)j * h] = ref_bf16(s);
        }
    for (int t = 0; t < T; t++)
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (int o = 0; o < h; o++)
                s += W1[o + (size_t)j * h] * dg[(size_t)t * h + o];
            dxn[(size_t)t * d + j] = ref_bf16(s);
        }
    for (int j = 0; j < d; j++) {
        double sg = 0, sb = 0;
        for (int t = 0; t < T; t++) {
            const double xh = (xi[(size_t)t * d + j] - mean[t]) * rstd[t];
            sg += dxn[(size_t)t * d + j] * xh;
            sb += dxn[(size_t)t * d + j];
        }
        out->dgamma[(size_t)i * d + j] = sg;
        out->dbeta[(size_t)i * d + j] = sb;
    }
    for (int t = 0; t < T; t++) {
        double m1 = 0, m2 = 0;
        for (int j = 0; j < d; j++) {
            const double gd = dxn[(size_t)t * d + j] * ga[j];
            m1 += gd;
            m2 += gd * (xi[(size_t)t * d + j] - mean[t]) * rstd[t];
        }
        m1 /= d;
        m2 /= d;
        for (int j = 0; j < d; j++) {
            const double gd = dxn[(size_t)t * d + j] * ga[j];
            const double xh = (xi[(size_t)t * d + j] - mean[t]) * rstd[t];
            dy[(size_t)t * d + j] = ref_bf16(dy[(size_t)t * d + j] + rstd[t] * (gd - m1 - xh * m2));
        }
    }
}

/* The whole step in fp64 on inputs regenerated from the seed. */
static int host_reference(int d, int T, int L, uint64_t seed, cr_ref *out)
{
    const int h = 4 * d;
    const size_t w = (size_t)h * d, td = (size_t)T * d, th = (size_t)T * h;
    const size_t n_out = 2 * L * w + td + 2 * (size_t)L * d;
    const size_t n_work = 2 * L * w + 2 * (size_t)L * d + (L + 1) * td + L * td + 2 * L * th +
                          2 * (size_t)L * T + td + th + td;
    double *p, *w1, *w2, *gam, *bet, *x, *xn, *hh, *g, *mean, *rstd, *dy, *dg, *dxn;
    double *work = (double *)malloc(n_work * sizeof(double));
    out->pool = (double *)malloc(n_out * sizeof(double));
    if (!work || !out->pool) {
        free(work);
        free(out->pool);
        out->pool = NULL;
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory for the reference");
        return UF_ERR;
    }
    p = out->pool;
    out->dw1 = p; p += L * w;
    out->dw2 = p; p += L * w;
    out->dx0 = p; p += td;
    out->dgamma = p; p += (size_t)L * d;
    out->dbeta = p;
    p = work;
    w1 = p; p += L * w;
    w2 = p; p += L * w;
    gam = p; p += (size_t)L * d;
    bet = p; p += (size_t)L * d;
    x = p; p += (L + 1) * td;
    xn = p; p += L * td;
    hh = p; p += L * th;
    g = p; p += L * th;
    mean = p; p += (size_t)L * T;
    rstd = p; p += (size_t)L * T;
    dy = p; p += td;
    dg = p; p += th;
    dxn = p;
    for (size_t e = 0; e < L * w; e++) {
        w1[e] = ref_bf16(cr_random(seed, CR_T_W1, e, w1_scale(d), 0.0f));
        w2[e] = ref_bf16(cr_random(seed, CR_T_W2, e, w2_scale(d), 0.0f));
    }
    for (size_t e = 0; e < (size_t)L * d; e++) {
        gam[e] = cr_random(seed, CR_T_GAMMA, e, 1.0f, 1.0f);
        bet[e] = cr_random(seed, CR_T_BETA, e, 0.5f, 0.0f);
    }
    for (size_t e = 0; e < td; e++) {
        x[e] = ref_bf16(cr_random(seed, CR_T_X0, e, 2.0f, 0.0f));
        dy[e] = ref_bf16(cr_random(seed, CR_T_DY, e, 2.0f, 0.0f));
    }
    ref_forward(d, T, L, w1, w2, gam, bet, x, xn, hh, g, mean, rstd);
    for (int i = L - 1; i >= 0; i--)
        ref_block_backward(d, T, i, w1 + i * w, w2 + i * w, gam + (size_t)i * d, x + i * td,
                           xn + i * td, hh + i * th, g + i * th, mean + (size_t)i * T,
                           rstd + (size_t)i * T, dy, dg, dxn, out);
    memcpy(out->dx0, dy, td * sizeof(double));
    free(work);
    return UF_OK;
}

/* max |dev − ref| / max |ref|; infinite when dev holds a non-finite value. */
static double normwise_err(const float *dev, const double *ref, size_t n)
{
    double max_diff = 0, max_ref = 0;
    for (size_t e = 0; e < n; e++) {
        if (!isfinite(dev[e]))
            return INFINITY;
        max_diff = fmax(max_diff, fabs(dev[e] - ref[e]));
        max_ref = fmax(max_ref, fabs(ref[e]));
    }
    return max_ref > 0 ? max_diff / max_ref : max_diff > 0 ? INFINITY : 0.0;
}

/* ---- scenario state --------------------------------------------------------------------- */

typedef struct cr_state {
    cr_model m;                     /* this point's model */
    cr_arena arena;                 /* this variant's activations (begin_variant..end_variant) */
    int k;
    cublasHandle_t blas;
    void *blas_ws;
    cudaStream_t bound_stream;
    int stream_bound;
    size_t plan_bytes[CR_N_POLICIES];
    size_t setup_mem_bytes;         /* cudaMemGetInfo: what setup's allocations took */
    size_t arena_mem_bytes;         /* cudaMemGetInfo: what the variant's arena took */
    double grad_mismatch;           /* from verify; NaN until it ran */
} cr_state;

/* Bind the cuBLAS handle to the stream. cublasSetStream resets the workspace to cuBLAS's own
 * pool, so the explicit workspace is set again after it. */
static int bind_stream(cr_state *st, cudaStream_t stream)
{
    int rc = UF_OK;
    if (st->stream_bound && st->bound_stream == stream)
        return UF_OK;
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(st->blas, stream), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetWorkspace(st->blas, st->blas_ws, CR_BLAS_WS_BYTES), out);
    st->bound_stream = stream;
    st->stream_bound = 1;
    st->m.stream = stream;
out:
    return rc;
}

static size_t mem_free_bytes(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return 0;
    return free_b;
}

/* Device memory taken since free_before was read (0 if more is free now). */
static size_t mem_taken_since(size_t free_before)
{
    const size_t free_now = mem_free_bytes();
    return free_before > free_now ? free_before - free_now : 0;
}

/* Whole-number axis value in [lo, hi]. */
static int axis_int(uf_ctx *ctx, const char *name, int lo, int hi, int *out)
{
    const double v = uf_axis(ctx, name);
    if (!(v >= lo && v <= hi) || v != floor(v))
        return uf_fail(ctx, UF_USAGE, "%s=%g: must be a whole number in [%d, %d]", name, v, lo,
                       hi);
    *out = (int)v;
    return UF_OK;
}

/* ---- callbacks --------------------------------------------------------------------------- */

static void cr_teardown(uf_ctx *ctx)
{
    cr_state *st = (cr_state *)ctx->state;
    if (!st)
        return;
    cudaFree(st->arena.base);
    model_free(&st->m);
    cudaFree(st->blas_ws);
    if (st->blas)
        cublasDestroy(st->blas);
    free(st);
    ctx->state = NULL;
}

/* Plan every policy (dry runs), refuse a size that cannot fit, then allocate and fill. */
static int cr_setup(uf_ctx *ctx)
{
    int rc = UF_OK;
    int d = 0, T = 0, L = 0, k = 0;
    size_t need = 0, plan_max = 0, free0 = 0;
    cr_state *st = NULL;
    UF_STATUS_OR_GOTO(rc, axis_int(ctx, "k", 1, 4096, &k), out);
    UF_STATUS_OR_GOTO(rc, axis_int(ctx, "layers", 1, 4096, &L), out);
    UF_STATUS_OR_GOTO(rc, axis_int(ctx, "tokens", 1, 1 << 20, &T), out);
    UF_STATUS_OR_GOTO(rc, axis_int(ctx, "d_model", 64, 32768, &d), out);
    if (d % 64 != 0) {
        rc = uf_fail(ctx, UF_USAGE, "d_model=%d: must be a multiple of 64", d);
        goto out;
    }
    st = (cr_state *)calloc(1, sizeof *st);
    if (!st) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out;
    }
    ctx->state = st;
    st->k = k;
    st->grad_mismatch = NAN;
    UF_STATUS_OR_GOTO(rc, model_init_host(&st->m, d, T, L), out);
    st->m.arena = &st->arena;
    for (int p = 0; p < CR_N_POLICIES; p++) {
        UF_STATUS_OR_GOTO(rc, plan_policy(&st->m, p, k, &st->plan_bytes[p]), out);
        if (st->plan_bytes[p] > plan_max)
            plan_max = st->plan_bytes[p];
    }
    /* the model, the variant's arena, and what verify adds: a second set of gradients and a
     * store_all arena for the reference run */
    need = model_device_bytes(&st->m) + CR_BLAS_WS_BYTES + plan_max + grads_bytes(&st->m) +
           st->plan_bytes[CR_STORE_ALL];
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, need, "weights, gradients and activations"), out);

    free0 = mem_free_bytes();
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&st->blas), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->blas_ws, CR_BLAS_WS_BYTES), out);
    UF_STATUS_OR_GOTO(rc, model_alloc_device(&st->m), out);
    st->setup_mem_bytes = mem_taken_since(free0);
    st->m.blas = st->blas;
    UF_STATUS_OR_GOTO(rc, bind_stream(st, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, model_fill(&st->m, ctx->seed), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc; /* on failure the harness calls teardown, which frees what was made */
}

/* Size the variant's arena by its plan and measure what the allocation took. */
static int cr_begin_variant(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    cr_state *st = (cr_state *)ctx->state;
    const double k_default = ctx->scenario->axes[0].default_value;
    if (variant != CR_EVERY_K && uf_axis(ctx, "k") != k_default) {
        /* only every_k depends on k: the others are measured once, at the default k */
        snprintf(ctx->reason, sizeof ctx->reason,
                 "%s does not depend on k: measured at k=%g only",
                 ctx->scenario->variants[variant].name, k_default);
        return UF_SKIP;
    }
    const size_t bytes = st->plan_bytes[variant];
    size_t free0 = 0;
    cudaFree(st->arena.base);
    memset(&st->arena, 0, sizeof st->arena);
    st->grad_mismatch = NAN;
    free0 = mem_free_bytes();
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->arena.base, bytes), out);
    st->arena.capacity = bytes;
    st->arena_mem_bytes = mem_taken_since(free0);
out:
    return rc;
}

static int cr_end_variant(uf_ctx *ctx, int variant)
{
    cr_state *st = (cr_state *)ctx->state;
    (void)variant;
    cudaFree(st->arena.base);
    st->arena.base = NULL;
    st->arena.capacity = 0;
    return UF_OK;
}

static int cr_run_step(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    cr_state *st = (cr_state *)ctx->state;
    if (!st->arena.base)
        return uf_fail(ctx, UF_ERR, "run_step before begin_variant: no activation arena");
    UF_STATUS_OR_GOTO(rc, bind_stream(st, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, run_policy(&st->m, variant, st->k), out);
out:
    return rc;
}

/* Bitwise comparison of two gradient sets on the device; waits for the result. */
static int compare_grads(const cr_model *m, const cr_grads *ref, cr_diff host[2])
{
    int rc = UF_OK;
    cr_diff *dev = NULL;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&dev, 2 * sizeof *dev), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(dev, 0, 2 * sizeof *dev, m->stream), out_free);
    compare_bf16_kernel<<<CR_CMP_BLOCKS, 256, 0, m->stream>>>(
        (const unsigned short *)m->grads.bf, (const unsigned short *)ref->bf, m->grads.n_bf, dev);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out_free);
    compare_f32_kernel<<<CR_CMP_BLOCKS, 256, 0, m->stream>>>(
        (const unsigned int *)m->grads.f32, (const unsigned int *)ref->f32, m->grads.n_f32,
        dev + 1);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(host, dev, 2 * sizeof *dev, cudaMemcpyDeviceToHost,
                                        m->stream),
                    out_free);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(m->stream), out_free);
out_free:
    cudaFree(dev);
out:
    return rc;
}

static double diff_rel(const cr_diff *c)
{
    float max_diff, max_ref;
    memcpy(&max_diff, &c->max_diff_bits, sizeof max_diff);
    memcpy(&max_ref, &c->max_ref_bits, sizeof max_ref);
    return max_ref > 0 ? (double)max_diff / max_ref : max_diff > 0 ? INFINITY : 0.0;
}

/* At the point's size: the variant and store_all on the same fresh inputs; every gradient
 * element compared bitwise. */
static int verify_point(uf_ctx *ctx, cr_state *st, int variant, uint64_t seed,
                        unsigned long long *mismatch, unsigned long long *nonfinite, double *rel)
{
    int rc = UF_OK;
    cr_model ref = st->m;
    cr_arena ref_arena = st->arena;
    cr_diff diff[2];
    ref.grads.bf = NULL;
    ref.grads.f32 = NULL;
    ref_arena.base = NULL;
    UF_STATUS_OR_GOTO(rc, grads_alloc(&ref.grads), out_free);
    if (variant != CR_STORE_ALL) {
        ref_arena.capacity = st->plan_bytes[CR_STORE_ALL];
        UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&ref_arena.base, ref_arena.capacity), out_free);
    }
    ref.arena = variant == CR_STORE_ALL ? &st->arena : &ref_arena;
    UF_STATUS_OR_GOTO(rc, model_fill(&st->m, seed), out_free);
    UF_STATUS_OR_GOTO(rc, grads_poison(&st->m.grads, CR_POISON_RUN, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, grads_poison(&ref.grads, CR_POISON_REF, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, run_policy(&st->m, variant, st->k), out_free);
    UF_STATUS_OR_GOTO(rc, run_policy(&ref, CR_STORE_ALL, st->k), out_free);
    UF_STATUS_OR_GOTO(rc, compare_grads(&st->m, &ref.grads, diff), out_free);
    *mismatch = diff[0].mismatch + diff[1].mismatch;
    *nonfinite = diff[0].nonfinite + diff[1].nonfinite;
    /* non-finite elements (the NaN poison left unwritten) make the difference unbounded */
    *rel = *nonfinite ? INFINITY : fmax(diff_rel(&diff[0]), diff_rel(&diff[1]));
out_free:
    cudaFree(ref_arena.base);
    grads_free(&ref.grads);
    return rc;
}

/* Copy a tiny model's gradients to the host as floats. */
static int fetch_grads(const cr_model *m, float *bf_out, float *f32_out)
{
    int rc = UF_OK;
    uint16_t *raw = (uint16_t *)malloc(m->grads.n_bf * sizeof *raw);
    if (!raw) {
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory");
        return UF_ERR;
    }
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(raw, m->grads.bf, m->grads.n_bf * sizeof *raw,
                                        cudaMemcpyDeviceToHost, m->stream),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(f32_out, m->grads.f32, m->grads.n_f32 * sizeof(float),
                                        cudaMemcpyDeviceToHost, m->stream),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(m->stream), out);
    for (size_t e = 0; e < m->grads.n_bf; e++)
        bf_out[e] = host_bf2f(raw[e]);
out:
    free(raw);
    return rc;
}

/* The anchor: the variant on a tiny model (same kernels, same cuBLAS handle) against the fp64
 * host reference; normwise error, the largest over the five gradients. */
static int verify_anchor(uf_ctx *ctx, cr_state *st, int variant, uint64_t seed, double *err)
{
    int rc = UF_OK;
    cr_model tiny;
    cr_arena arena = {.base = NULL, .capacity = 0, .top = 0, .peak = 0, .planning = 0};
    cr_ref ref = {.pool = NULL, .dw1 = NULL, .dw2 = NULL, .dx0 = NULL, .dgamma = NULL,
                  .dbeta = NULL};
    float *dev_bf = NULL, *dev_f32 = NULL;
    size_t w = 0, td = 0, n_ln = 0;
    UF_STATUS_OR_GOTO(rc, model_init_host(&tiny, CR_TINY_D, CR_TINY_T, CR_TINY_L), out);
    tiny.arena = &arena;
    tiny.blas = st->blas;
    tiny.stream = ctx->stream;
    UF_STATUS_OR_GOTO(rc, plan_policy(&tiny, variant, st->k, &arena.capacity), out_free);
    UF_STATUS_OR_GOTO(rc, model_alloc_device(&tiny), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&arena.base, arena.capacity), out_free);
    UF_STATUS_OR_GOTO(rc, model_fill(&tiny, seed), out_free);
    UF_STATUS_OR_GOTO(rc, grads_poison(&tiny.grads, CR_POISON_RUN, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, run_policy(&tiny, variant, st->k), out_free);
    dev_bf = (float *)malloc(tiny.grads.n_bf * sizeof(float));
    dev_f32 = (float *)malloc(tiny.grads.n_f32 * sizeof(float));
    if (!dev_bf || !dev_f32) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, fetch_grads(&tiny, dev_bf, dev_f32), out_free);
    UF_STATUS_OR_GOTO(rc, host_reference(CR_TINY_D, CR_TINY_T, CR_TINY_L, seed, &ref), out_free);
    w = (size_t)CR_TINY_L * w_elems(&tiny);
    td = td_elems(&tiny);
    n_ln = (size_t)CR_TINY_L * CR_TINY_D;
    *err = normwise_err(dev_bf, ref.dw1, w);
    *err = fmax(*err, normwise_err(dev_bf + w, ref.dw2, w));
    *err = fmax(*err, normwise_err(dev_bf + 2 * w, ref.dx0, td));
    *err = fmax(*err, normwise_err(dev_f32, ref.dgamma, n_ln));
    *err = fmax(*err, normwise_err(dev_f32 + n_ln, ref.dbeta, n_ln));
out_free:
    free(ref.pool);
    free(dev_bf);
    free(dev_f32);
    cudaFree(arena.base);
    model_free(&tiny);
out:
    return rc;
}

/* Verify: (1) the variant on a tiny model against the fp64 host reference (bf16 tolerance);
 * (2) at the point's size, the variant's gradients against store_all's, bitwise (store_all
 * against a second run of itself: determinism). A bitwise difference within the tolerance is
 * recorded in grad_mismatch (a claim), not a wrong result. */
static int cr_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    cr_state *st = (cr_state *)ctx->state;
    const char *name = ctx->scenario->variants[variant].name;
    double anchor_err = NAN, point_rel = NAN;
    unsigned long long mismatch = 0, nonfinite = 0;
    UF_STATUS_OR_GOTO(rc, bind_stream(st, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, verify_anchor(ctx, st, variant, seed, &anchor_err), out);
    UF_STATUS_OR_GOTO(rc, verify_point(ctx, st, variant, seed, &mismatch, &nonfinite, &point_rel),
                      out);
    st->grad_mismatch = (double)mismatch;
    *max_rel_err = fmax(anchor_err, point_rel);
    if (!(anchor_err <= CR_TOL)) {
        rc = uf_fail(ctx, UF_ERR,
                     "%s: tiny-model gradients differ from the fp64 host reference by %.3g "
                     "(normwise; tolerance %.0e)",
                     name, anchor_err, CR_TOL);
        goto out;
    }
    if (nonfinite > 0 || !(point_rel <= CR_TOL)) {
        rc = uf_fail(ctx, UF_ERR,
                     "%s: gradients differ from store_all's: %llu elements, %llu not finite "
                     "(unwritten?), max relative difference %.3g",
                     name, mismatch, nonfinite, point_rel);
        goto out;
    }
    if (mismatch > 0)
        fprintf(stderr,
                "checkpoint_recompute: %s: %llu gradient elements differ bitwise from store_all "
                "(max relative difference %.3g, within %.0e): the recompute did not reproduce "
                "the forward bit for bit (a different cuBLAS algorithm or a nondeterministic "
                "kernel)\n",
                name, mismatch, point_rel, CR_TOL);
out:
    return rc;
}

static int cr_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    cr_state *st = (cr_state *)ctx->state;
    const cr_model *m = &st->m;
    const double gemm_flops = 2.0 * m->T * (double)m->d * m->hidden; /* one of the six */
    const double useful = 6.0 * m->L * gemm_flops;
    /* A recomputed segment of n blocks re-runs 2n - 1 GEMMs (not its last W2): over the
     * model 2L - segments, L for full (k = 1). */
    const int k = variant == CR_FULL ? 1 : variant == CR_EVERY_K ? (int)uf_axis(ctx, "k") : 0;
    const double recomputed_gemms = k > 0 ? 2.0 * m->L - (m->L + k - 1) / k : 0.0;
    const double executed = useful + recomputed_gemms * gemm_flops;
    const double ceiling_tflops = ctx->ceilings ? ctx->ceilings->gemm_bf16_tflops : NAN;
    const double step_ms = uf_step_ms(ctx, row);   /* the statistic tflops_useful uses */
    const double step_s = step_ms > 0 ? step_ms * 1e-3 : NAN;
    row->useful_flops = useful;
    row->executed_flops = executed;
    row->peak_mem_bytes =
        (double)(model_device_bytes(m) + CR_BLAS_WS_BYTES + st->arena.peak);
    row->extra[X_ACT_PEAK] = (double)st->arena.peak;
    row->extra[X_MEMGETINFO] = (double)(st->setup_mem_bytes + st->arena_mem_bytes);
    row->extra[X_MFU] = 100.0 * useful / step_s / (ceiling_tflops * 1e12);
    row->extra[X_HFU] = 100.0 * executed / step_s / (ceiling_tflops * 1e12);
    row->extra[X_RECOMPUTE] = 100.0 * (executed - useful) / useful;
    row->extra[X_GRAD_MISMATCH] = st->grad_mismatch;
    return UF_OK;
}

/* ---- the expectation ----------------------------------------------------------------------- */

/* At the largest size run (the issue's default in a full run, the quick size with --quick),
 * k at its default. */
#define CR_AT "layers=max,tokens=max,d_model=max"

static void cr_expect(const uf_report *rep, uf_expectations *ex)
{
    static const char *const checked[] = {"store_all", "full", "every_k", "selective"};
    const char *bitwise = "recompute re-runs the same kernels on bitwise-equal inputs on one "
                          "stream with a fixed cuBLAS workspace: gradients equal store_all's "
                          "bit for bit";
    const char *recompute_time = "re-running each block's forward up to gelu(h), as "
                                 "torch.utils.checkpoint does by default, adds 1 of its 6 GEMMs "
                                 "(+17 % GEMM FLOPs) and the LayerNorm and GELU kernels";
    uf_expect_ratio(ex, rep, "full", "store_all", CR_AT, "step_ms", UF_GE, 1.10, recompute_time);
    uf_expect_ratio(ex, rep, "full", "store_all", CR_AT, "step_ms", UF_LE, 1.30, recompute_time);
    uf_expect_ratio(ex, rep, "full", "store_all", CR_AT, "act_peak_bytes", UF_LE, 0.50,
                    "full's peak is the last block's forward: L kept block outputs plus that "
                    "block's LN(x), h and gelu(h) (9 T*d units), against store_all's 10 units "
                    "per block: (L+9)/(10L) = 0.14 at L=24, 0.21 at L=8");
    uf_expect_ratio(ex, rep, "selective", "store_all", CR_AT, "step_ms", UF_LE, 1.10,
                    "recomputing LayerNorm and GELU is memory-bound work worth a few % of a "
                    "block whose six GEMMs do 48*T*d^2 FLOPs");
    uf_expect_ratio(ex, rep, "selective", "store_all", CR_AT, "act_peak_bytes", UF_LE, 0.60,
                    "selective keeps x and h (5 of a block's 10 T*d units) plus one block's "
                    "recomputed LN(x) and gelu(h): (5L+5)/(10L) = 0.52 at L=24, 0.56 at L=8");
    uf_expect_metric(ex, rep, "store_all", CR_AT, "mfu_pct", UF_GE, 75.0,
                     "at d=4096 the GEMMs are ~94 % of the step (elementwise kernels move "
                     "~58*d bytes per token and block against 48*d^2 FLOPs) and large enough "
                     "to run near the measured ceiling");
    for (int v = 0; v < 4; v++)
        uf_expect_metric(ex, rep, checked[v], CR_AT, "grad_mismatch", UF_LE, 0.0, bitwise);
}

/* ---- the scenario table ------------------------------------------------------------------ */

static const uf_variant_desc cr_variants[CR_N_POLICIES] = {
    {.name = "store_all", .role = UF_FIXED,
     .summary = "no checkpointing: every activation kept for backward (the time reference)"},
    {.name = "full", .role = UF_BROKEN,
     .summary = "checkpoint every block: keep block inputs, re-run each block up to GELU in backward"},
    {.name = "every_k", .role = UF_BROKEN,
     .summary = "checkpoint every k-th block: keep segment inputs, re-run k-block segments"},
    {.name = "selective", .role = UF_FIXED,
     .summary = "keep block inputs and GEMM outputs, recompute only LayerNorm and GELU"},
};

static const double cr_k_values[] = {2, 4, 8};
static const double cr_k_quick[] = {4};
static const double cr_layers_values[] = {24};
static const double cr_layers_quick[] = {8};
static const double cr_tokens_values[] = {8192};
static const double cr_tokens_quick[] = {2048};
static const double cr_d_values[] = {4096};
static const double cr_d_quick[] = {4096};

static const uf_axis_desc cr_axes[] = {
    {.name = "k", .unit = "blocks",
     .summary = "every_k: a checkpoint every k blocks (the other policies ignore k)",
     .default_value = 4, .values = cr_k_values, .n_values = 3, .quick_values = cr_k_quick,
     .n_quick_values = 1},
    {.name = "layers", .unit = "blocks", .summary = "L: MLP blocks in the stack",
     .default_value = 24, .values = cr_layers_values, .n_values = 1,
     .quick_values = cr_layers_quick, .n_quick_values = 1},
    {.name = "tokens", .unit = "tokens", .summary = "T: tokens per step (batch x sequence)",
     .default_value = 8192, .values = cr_tokens_values, .n_values = 1,
     .quick_values = cr_tokens_quick, .n_quick_values = 1},
    {.name = "d_model", .unit = "features", .summary = "d: model width (hidden 4d, multiple of 64)",
     .default_value = 4096, .values = cr_d_values, .n_values = 1, .quick_values = cr_d_quick,
     .n_quick_values = 1},
};

static const uf_extra_desc cr_extras[CR_N_EXTRAS] = {
    {.name = "act_peak_bytes", .unit = "B",
     .summary = "peak of the activation arena: kept plus recomputed activations"},
    {.name = "memgetinfo_bytes", .unit = "B",
     .summary = "device memory the scenario's allocations took, by cudaMemGetInfo"},
    {.name = "mfu_pct", .unit = "%",
     .summary = "useful GEMM FLOPs / step time / measured bf16 GEMM ceiling"},
    {.name = "hfu_pct", .unit = "%",
     .summary = "executed GEMM FLOPs (recompute included) / step time / ceiling"},
    {.name = "recompute_pct", .unit = "%", .summary = "(executed - useful) / useful FLOPs"},
    {.name = "grad_mismatch", .unit = "elements",
     .summary = "gradient elements differing bitwise from store_all's (verify)"},
};

static const uf_scenario cr_scenario = {
    .name = "checkpoint_recompute",
    .title = "Activation checkpointing: full recompute vs selective, memory against step time",
    .failure = "Checkpointing every block keeps only block inputs and re-runs each block's "
               "forward (up to the last tensor its backward needs, as torch.utils.checkpoint "
               "does) in the backward pass: activation memory falls to a fraction, but a sixth "
               "more GEMM FLOPs run, so the step is ~1/6 slower while the tensor cores look as "
               "busy as ever (a seventh of their work is recompute).",
    .fix = "Keep the GEMM outputs and recompute only the cheap LayerNorm and GELU (selective "
           "recompute): about half of store_all's activation memory at almost no extra time.",
    .variants = cr_variants,
    .n_variants = CR_N_POLICIES,
    .axes = cr_axes,
    .n_axes = 4,
    .extras = cr_extras,
    .n_extras = CR_N_EXTRAS,
    .min_gpus = 1,
    .repeat = 10,
    .quick_repeat = 10,
    .warmup = 2,
    .step_stat = UF_STAT_MEDIAN,
    .setup = cr_setup,
    .begin_variant = cr_begin_variant,
    .end_variant = cr_end_variant,
    .run_step = cr_run_step,
    .verify = cr_verify,
    .describe = cr_describe,
    .teardown = cr_teardown,
    .expect = cr_expect,
};

int main(int argc, char **argv) { return uf_main(&cr_scenario, argc, argv); }

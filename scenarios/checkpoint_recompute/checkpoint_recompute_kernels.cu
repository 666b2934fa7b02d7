/* checkpoint_recompute's kernels: LayerNorm forward and backward, GELU, the residual add, the
 * fills from the seed and the bitwise gradient comparison. What the host launches them with is
 * declared in checkpoint_recompute_kernels.h; the device helpers are this unit's own. */
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "random.h"
#include "checkpoint_recompute_ref.h"
#include "checkpoint_recompute_kernels.h"

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

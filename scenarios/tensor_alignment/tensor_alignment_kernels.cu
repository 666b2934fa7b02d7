/* tensor_alignment's own kernels (the GEMMs are cuBLAS's): the fill of a padded matrix with
 * the random inputs, the gather of sampled output elements, and the comparison of two outputs
 * over their real part. */
#include <math.h>
#include <stddef.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "tensor_alignment_ref.h"
#include "tensor_alignment_kernels.h"

/* A rows_alloc × ld row-major matrix whose real part is rows × cols: element (r, c) of the real
 * part gets ta_uniform(key, r·cols + c) (rounded to bf16 for TA_BF16), the pads zero. The
 * value depends on (r, c), not on ld: a padded and an unpadded copy hold the same matrix. */
__global__ void ta_fill_kernel(void *dst, int precision, int rows, int cols, int rows_alloc,
                               int ld, uint32_t key)
{
    const size_t n = (size_t)rows_alloc * ld;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / ld), c = (int)(i % ld);
        const float v = r < rows && c < cols
                            ? ta_uniform(key, (uint32_t)r * (uint32_t)cols + (uint32_t)c)
                            : 0.0f;
        if (precision == TA_BF16)
            ((__nv_bfloat16 *)dst)[i] = __float2bfloat16_rn(v);
        else
            ((float *)dst)[i] = v;
    }
}

/* The element of a row-major matrix with leading dimension ld, as fp32. */
__device__ static float ta_load(const void *p, int precision, size_t index)
{
    return precision == TA_BF16 ? __bfloat162float(((const __nv_bfloat16 *)p)[index])
                                : ((const float *)p)[index];
}

/* out[s] = Y[rows[s], cols[s]] for the count sampled points. */
__global__ void ta_gather_kernel(const void *y, int precision, int ld, const int *rows,
                                 const int *cols, int count, float *out)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < count)
        out[s] = ta_load(y, precision, (size_t)rows[s] * ld + cols[s]);
}

/* a and b over the real rows × cols of two row-major matrices with their own leading
 * dimensions: the aligned and the misaligned GEMM's outputs on the same inputs. */
__global__ void ta_compare_kernel(const void *a, int lda, const void *b, int ldb, int precision,
                                  int rows, int cols, ta_diff *out)
{
    unsigned long long nonfinite = 0;
    float max_diff = 0.0f, max_ref = 0.0f;
    const size_t n = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / cols, c = i % cols;
        const float fa = ta_load(a, precision, r * lda + c);
        const float fb = ta_load(b, precision, r * ldb + c);
        if (!isfinite(fa) || !isfinite(fb)) {
            nonfinite++;
            continue;
        }
        max_diff = fmaxf(max_diff, fabsf(fa - fb));
        max_ref = fmaxf(max_ref, fabsf(fb));
    }
    for (int o = 16; o > 0; o >>= 1) {
        nonfinite += __shfl_xor_sync(0xffffffffu, nonfinite, o);
        max_diff = fmaxf(max_diff, __shfl_xor_sync(0xffffffffu, max_diff, o));
        max_ref = fmaxf(max_ref, __shfl_xor_sync(0xffffffffu, max_ref, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out->nonfinite, nonfinite);
        atomicMax(&out->max_diff_bits, __float_as_uint(max_diff));
        atomicMax(&out->max_ref_bits, __float_as_uint(max_ref));
    }
}

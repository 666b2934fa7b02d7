/* host_sync's kernels and its GEMM. One step is a chain of `layers` bf16 GEMMs
 * y = tanh(x W_l) (tokens x d times d x d, cuBLAS, fp32 accumulation), the small kernels that
 * pad it to `launches` launches, and a loss reduced on the device. Every variant runs exactly
 * these; they differ only in what happens around them. Which of them a step runs, in which
 * order, is the story's (host_sync.cu: enqueue_compute). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>

#include "underfed.h"
#include "host_sync_ref.h"
#include "host_sync_kernels.h"

/* ---- kernels ------------------------------------------------------------------------------- */

/* The block's sum of s, in a fixed tree order (HS_BLOCK threads, a power of two), returned
 * to every thread. */
__device__ float hs_block_sum(float s, float *sums)
{
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int half = HS_BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            sums[threadIdx.x] += sums[threadIdx.x + half];
        __syncthreads();
    }
    return sums[0];
}

/* tensor[i] = bf16(uniform of [-amplitude, amplitude) at (key, i)), as hs_ref_rows redraws it. */
__global__ void fill_kernel(bf16 *tensor, size_t n, uint32_t key, float amplitude)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        tensor[i] = __float2bfloat16_rn(hs_uniform(key, (uint32_t)i, amplitude));
}

/* The activation, in place on a GEMM's bf16 output. */
__global__ void tanh_kernel(bf16 *h, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        h[i] = __float2bfloat16_rn(tanhf(__bfloat162float(h[i])));
}

/* One of the step's small kernels (a bias, a scale, an optimizer's per-tensor op in a real
 * model): a microsecond of work whose cost is its launch. Counts on HS_AUX floats, so that
 * verify can check that every one of them ran (exact in fp32 up to 2^24). */
__global__ void tick_kernel(float *aux)
{
    aux[threadIdx.x] += 1.0f;
}

/* Block sums of (y_i - label_i)^2 over a fixed grid-stride assignment, reduced in a fixed tree:
 * the same bits on every run. */
__global__ void loss_partial_kernel(const bf16 *y, size_t n, uint32_t label_key, uint64_t step,
                                    float *partials)
{
    __shared__ float sums[HS_BLOCK];
    float s = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float diff = __bfloat162float(y[i]) - hs_label(label_key, step, (uint32_t)i);
        s = __fmaf_rn(diff, diff, s);
    }
    s = hs_block_sum(s, sums);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = s;
}

/* The partials summed in a fixed order: *loss = sum / n. One block. */
__global__ void loss_final_kernel(const float *partials, int n_partials, size_t n, float *loss)
{
    __shared__ float sums[HS_BLOCK];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n_partials; i += blockDim.x)
        s += partials[i];
    s = hs_block_sum(s, sums);
    if (threadIdx.x == 0)
        *loss = s / (float)n;
}

/* ---- as the host launches them ------------------------------------------------------------ */

/* Grid of an elementwise kernel over n elements: enough blocks to fill the GPU, no more. */
static unsigned elementwise_blocks(size_t n)
{
    size_t blocks = (n + HS_BLOCK - 1) / HS_BLOCK;
    return (unsigned)(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

int hs_fill(bf16 *tensor, size_t n, uint32_t key, float amplitude, cudaStream_t stream)
{
    int rc = UF_OK;
    fill_kernel<<<elementwise_blocks(n), HS_BLOCK, 0, stream>>>(tensor, n, key, amplitude);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int hs_tanh(bf16 *h, size_t n, cudaStream_t stream)
{
    int rc = UF_OK;
    tanh_kernel<<<elementwise_blocks(n), HS_BLOCK, 0, stream>>>(h, n);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int hs_tick(float *aux, cudaStream_t stream)
{
    int rc = UF_OK;
    tick_kernel<<<1, HS_AUX, 0, stream>>>(aux);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int hs_loss(const bf16 *y, size_t n, uint32_t label_key, uint64_t step, float *partials,
            float *loss, cudaStream_t stream)
{
    int rc = UF_OK;
    loss_partial_kernel<<<HS_LOSS_BLOCKS, HS_BLOCK, 0, stream>>>(y, n, label_key, step,
                                                                 partials);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    loss_final_kernel<<<1, HS_BLOCK, 0, stream>>>(partials, HS_LOSS_BLOCKS, n, loss);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Column-major cuBLAS computes out^T = w^T in^T with the same buffers. */
int hs_gemm_bf16(cublasHandle_t blas, const bf16 *in, const bf16 *w, bf16 *out, int tokens,
                 int d)
{
    int rc = UF_OK;
    const float one = 1.0f, zero = 0.0f;
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, d, tokens, d, &one, w,
                                       CUDA_R_16BF, d, in, CUDA_R_16BF, d, &zero, out,
                                       CUDA_R_16BF, d, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      out);
out:
    return rc;
}

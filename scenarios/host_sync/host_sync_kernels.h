/* host_sync's kernels (host_sync_kernels.cu) as the host launches them: the inputs' fill, the
 * activation, the small kernels that pad a step to `launches` launches, the loss reduced on the
 * device, and the step's GEMM (cuBLAS). Each launch is followed by its cudaGetLastError. */
#ifndef HS_KERNELS_H
#define HS_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>

typedef __nv_bfloat16 bf16;

#define HS_BLOCK 256
#define HS_LOSS_BLOCKS 264          /* loss partials: a fixed grid, so the sum's order is fixed */
#define HS_AUX 256                  /* floats the small kernels touch */

/* tensor[i] = bf16(hs_uniform(key, i, amplitude)) for i < n, on `stream` (hs_ref_rows redraws
 * it). */
int hs_fill(bf16 *tensor, size_t n, uint32_t key, float amplitude, cudaStream_t stream);

/* The activation, in place on a GEMM's n bf16 outputs. */
int hs_tanh(bf16 *h, size_t n, cudaStream_t stream);

/* One small kernel <<<1, HS_AUX>>>: adds 1 to each of the HS_AUX floats of aux. */
int hs_tick(float *aux, cudaStream_t stream);

/* The loss of `step` on y (n bf16): HS_LOSS_BLOCKS block sums of (y_i - label_i)^2 into
 * partials, then *loss = their sum / n, in a fixed order (the same bits on every run). */
int hs_loss(const bf16 *y, size_t n, uint32_t label_key, uint64_t step, float *partials,
            float *loss, cudaStream_t stream);

/* out (tokens x d, row-major) = in (tokens x d) · w (d x d, row-major), bf16 in and out, fp32
 * accumulation, on blas's stream. */
int hs_gemm_bf16(cublasHandle_t blas, const bf16 *in, const bf16 *w, bf16 *out, int tokens,
                 int d);

#endif

/* checkpoint_recompute's kernels (checkpoint_recompute_kernels.cu) as the host launches them:
 * LayerNorm forward (a block of CR_LN_THREADS per token) and backward (the input gradient, then
 * dgamma and dbeta as deterministic sums over CR_LN_CHUNKS token chunks), GELU forward and
 * backward and the residual add (8 bf16 per thread and iteration, grid-stride), the fills from
 * the seed, and the bitwise comparison of two gradient buffers into a cr_diff. */
#ifndef CR_KERNELS_H
#define CR_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

typedef __nv_bfloat16 bf16;

#define CR_LN_THREADS 256           /* threads per LayerNorm row (one block per token) */
#define CR_LN_CHUNKS 64             /* token chunks of the deterministic dgamma/dbeta sums */
#define CR_EW_THREADS 256           /* elementwise kernels: threads per block */
#define CR_EW_MAX_BLOCKS 4096       /* elementwise kernels: grid-stride beyond this */

/* Bitwise comparison of two gradient buffers: mismatching elements, non-finite elements, and
 * the largest |a − b| and |b| among finite pairs (floats ≥ 0 order like their bits). */
typedef struct cr_diff {
    unsigned long long mismatch, nonfinite;
    unsigned int max_diff_bits, max_ref_bits;
} cr_diff;

__global__ void ln_forward_kernel(const bf16 *x, const float *gamma, const float *beta, bf16 *xn,
                                  float *mean_out, float *rstd_out, int d);
__global__ void ln_backward_dx_kernel(const bf16 *dxn, const bf16 *x, const float *mean,
                                      const float *rstd, const float *gamma, bf16 *dgrad, int d);
__global__ void ln_backward_params_kernel(const bf16 *dxn, const bf16 *x, const float *mean,
                                          const float *rstd, float *part_gamma,
                                          float *part_beta, int T, int d, int rows_per_chunk);
__global__ void ln_reduce_partials_kernel(const float *part_gamma, const float *part_beta,
                                          float *dgamma, float *dbeta, int d, int n_chunks);
__global__ void gelu_forward_kernel(const bf16 *h, bf16 *g, size_t n8);
__global__ void gelu_backward_kernel(const bf16 *h, bf16 *dg, size_t n8);
__global__ void residual_add_kernel(const bf16 *x, bf16 *y, size_t n8);
__global__ void fill_bf16_kernel(bf16 *p, size_t n, uint64_t seed, uint64_t tensor, float scale,
                                 float offset);
__global__ void fill_f32_kernel(float *p, size_t n, uint64_t seed, uint64_t tensor, float scale,
                                float offset);
__global__ void compare_bf16_kernel(const unsigned short *a, const unsigned short *b, size_t n,
                                    cr_diff *out);
__global__ void compare_f32_kernel(const unsigned int *a, const unsigned int *b, size_t n,
                                   cr_diff *out);

#endif

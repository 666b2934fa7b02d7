/* small_batch's kernels (small_batch_kernels.cu) as the host launches them: the inputs' fill,
 * one_block's spinning block, latency_bound's chase table and its pointer chase. */
#ifndef SB_KERNELS_H
#define SB_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

typedef __nv_bfloat16 bf16;

#define SB_FILL_THREADS 256
#define SB_FILL_MAX_BLOCKS 8192
#define SB_SPIN_THREADS 128         /* one_block: the block's threads, one chain each */

/* x[i] = bf16(sb_random(seed, tensor, i, scale)) for i < n, on `stream`. */
int fill_bf16(bf16 *x, size_t n, uint64_t seed, uint64_t tensor, float scale,
              cudaStream_t stream);

/* one_block: <<<1, SB_SPIN_THREADS>>>, each thread a dependent hash chain of `iters` rounds. */
__global__ void spin_kernel(uint32_t *out, uint64_t seed, long iters);

/* The chase table (slot i: the next slot of one cycle), and latency_bound's chase: a block per
 * SM whose first thread follows its chain `hops` times. */
__global__ void chase_fill_kernel(uint32_t *next, uint32_t mask);
__global__ void chase_kernel(const uint32_t *next, uint32_t mask, uint64_t seed, long hops,
                             uint32_t *out);

#endif

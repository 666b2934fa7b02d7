/* small_batch's kernels: the fill kernel, and the two kernels that fool nvidia-smi (one block
 * spinning; one warp per SM chasing pointers through HBM). Which of them a step runs is the
 * story's (small_batch.cu). */
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "underfed.h"
#include "small_batch_ref.h"
#include "small_batch_kernels.h"

/* ---- kernels ------------------------------------------------------------------------------- */

/* x[i] = bf16(sb_random(seed, tensor, i, scale)): the inputs the host reference regenerates. */
__global__ void fill_kernel(bf16 *x, size_t n, uint64_t seed, uint64_t tensor, float scale)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __float2bfloat16_rn(sb_random(seed, tensor, i, scale));
}

/* one_block: one block whose threads each run a dependent hash chain for the whole step. One
 * SM of the GPU has work; the others have none, and NVML still counts every period busy. */
__global__ void spin_kernel(uint32_t *out, uint64_t seed, long iters)
{
    uint32_t h = sb_spin_start(seed, threadIdx.x);
    for (long i = 0; i < iters; i++)
        h = sb_spin_round(h, (uint32_t)i);
    out[threadIdx.x] = h;
}

/* The chase table: slot i holds the next slot of the single cycle (sb_chase_next). */
__global__ void chase_fill_kernel(uint32_t *next, uint32_t mask)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i <= mask;
         i += (size_t)gridDim.x * blockDim.x)
        next[i] = sb_chase_next((uint32_t)i, mask);
}

/* latency_bound: one block per SM (its dynamic shared memory keeps a second one out), whose
 * first thread follows its chain `hops` times: each load waits for the previous one, so every
 * SM holds a warp for the whole step while HBM and the tensor pipes idle. */
__global__ void chase_kernel(const uint32_t *next, uint32_t mask, uint64_t seed, long hops,
                             uint32_t *out)
{
    if (threadIdx.x != 0)
        return;
    uint32_t i = sb_chase_start(seed, blockIdx.x, mask);
    for (long h = 0; h < hops; h++)
        i = __ldcg(next + i);
    out[blockIdx.x] = i;
}

int fill_bf16(bf16 *x, size_t n, uint64_t seed, uint64_t tensor, float scale,
              cudaStream_t stream)
{
    int rc = UF_OK;
    size_t blocks = (n + SB_FILL_THREADS - 1) / SB_FILL_THREADS;
    if (blocks > SB_FILL_MAX_BLOCKS)
        blocks = SB_FILL_MAX_BLOCKS;
    fill_kernel<<<(unsigned)blocks, SB_FILL_THREADS, 0, stream>>>(x, n, seed, tensor, scale);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

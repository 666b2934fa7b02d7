/* allreduce_overlap's kernels: the inputs' fill and the gradients' checksum. */
#include <stddef.h>
#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "random.h"
#include "allreduce_overlap_kernels.h"

__global__ void ar_fill_kernel(__nv_bfloat16 *p, size_t n, uint64_t key)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = __float2bfloat16_rn((float)ar_input_int(key, i) / 64.0f);
}

/* Order-independent 64-bit checksum of the bit patterns: equal on two ranks iff (but for a
 * 2^-64 chance) their buffers are bitwise equal. */
__global__ void ar_checksum_kernel(const unsigned short *p, size_t n, unsigned long long *out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += ar_mix64(((uint64_t)i << 16) ^ p[i]);
    atomicAdd(out, acc);
}

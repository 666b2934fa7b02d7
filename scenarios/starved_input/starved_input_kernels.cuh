/* starved_input's GPU step, besides its two cuBLAS GEMMs: the embedding lookup, the GELU
 * between the GEMMs, and verify's checksum of the ids a step read. Included by
 * starved_input.cu. */
#ifndef SI_KERNELS_CUH
#define SI_KERNELS_CUH

#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "starved_input_ref.h"

/* x[t, :] = table[ids[t], :], 8 bf16 (16 bytes) per thread. An id out of range writes NaN,
 * so that verify fails instead of the kernel reading out of bounds. */
__global__ void embed_kernel(const int32_t *ids, const __nv_bfloat16 *table, __nv_bfloat16 *x,
                             int64_t n_vec, int vec_per_row, int vocab)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_vec)
        return;
    int64_t t = i / vec_per_row;
    int64_t c = i - t * vec_per_row;
    int32_t id = ids[t];
    uint4 v = make_uint4(0x7FC07FC0u, 0x7FC07FC0u, 0x7FC07FC0u, 0x7FC07FC0u);
    if (id >= 0 && id < vocab)
        v = reinterpret_cast<const uint4 *>(table)[(int64_t)id * vec_per_row + c];
    reinterpret_cast<uint4 *>(x)[i] = v;
}

/* h = gelu(h) in place, 8 bf16 per thread, computed in fp32. */
__global__ void gelu_kernel(__nv_bfloat16 *h, int64_t n_vec)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_vec)
        return;
    uint4 v = reinterpret_cast<uint4 *>(h)[i];
    __nv_bfloat162 *pair = reinterpret_cast<__nv_bfloat162 *>(&v);
    for (int k = 0; k < 4; k++) {
        float2 f = __bfloat1622float2(pair[k]);
        pair[k] = __floats2bfloat162_rn(si_gelu(f.x), si_gelu(f.y));
    }
    reinterpret_cast<uint4 *>(h)[i] = v;
}

/* *sum += the checksum terms of ids[0..n): verify's record of what each step consumed. */
__global__ void checksum_kernel(const int32_t *ids, int64_t n, unsigned long long *sum)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long v = i < n ? (unsigned long long)si_id_term(i, ids[i]) : 0ull;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(sum, v);
}

#endif

/* allreduce_overlap: the deterministic inputs, which host and device agree on (element i of a
 * tensor from its key; a key from the seed, rank, layer and tensor), and the two kernels
 * (allreduce_overlap_kernels.cu): the fill and the order-independent checksum. */
#ifndef AR_KERNELS_H
#define AR_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "random.h"

/* ---- deterministic inputs (host and device agree) --------------------------------------- */

__host__ __device__ static inline uint64_t ar_mix64(uint64_t x)
{
    return uf_mix64(x + UF_GOLDEN64);
}

/* Element i of an input tensor: an integer in [-64, 64]; the value is that / 64, exact in bf16,
 * so that every product is a multiple of 2^-12 and the host can recompute any dW element. */
__host__ __device__ static inline int ar_input_int(uint64_t key, size_t i)
{
    return (int)(uf_hash_at(key, i) % 129u) - 64;
}

enum { TENSOR_X = 1, TENSOR_DY = 2 };

static inline uint64_t ar_input_key(uint64_t seed, int rank, int slot, int tensor)
{
    uint64_t k = ar_mix64(seed);
    k = ar_mix64(k ^ (uint64_t)(unsigned)rank);
    return ar_mix64(k ^ ((uint64_t)(unsigned)slot << 8 | (uint64_t)tensor));
}

/* p[i] = the input of `key` at i (an integer in [-64, 64], / 64: exact in bf16), grid-stride. */
__global__ void ar_fill_kernel(__nv_bfloat16 *p, size_t n, uint64_t key);

/* Adds to *out an order-independent 64-bit checksum of the bit patterns of p[0..n). */
__global__ void ar_checksum_kernel(const unsigned short *p, size_t n, unsigned long long *out);

#endif

/* starved_input's GPU step: the embedding lookup, the GELU between the two cuBLAS GEMMs,
 * verify's checksum of the ids a step read, and the step every variant enqueues. */
#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "uf_cublas.h"
#include "starved_input_ref.h"
#include "starved_input_state.h"
#include "starved_input_kernels.h"

enum {
    SI_BLOCK = 256              /* threads per block of the elementwise kernels */
};

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

/* ---- the GPU step --------------------------------------------------------------------- */

static unsigned int grid_for(int64_t n_threads)
{
    return (unsigned int)((n_threads + SI_BLOCK - 1) / SI_BLOCK);
}

/* One step on `stream`: x = embed(ids); h = gelu(x W1); y = h W2 (bf16, fp32 accumulation).
 * d_checksum (verify only): also add the checksum of the ids the step read. */
int enqueue_step(si_state *st, cudaStream_t stream, const int32_t *d_ids,
                 unsigned long long *d_checksum)
{
    int rc = UF_OK;
    const float one = 1.0f, zero = 0.0f;
    int d = st->shape.hidden, f = st->shape.ffn, n_tokens = (int)st->tokens;
    int64_t x_vec = st->tokens * d / 8, h_vec = st->tokens * f / 8;
    embed_kernel<<<grid_for(x_vec), SI_BLOCK, 0, stream>>>(d_ids, st->d_emb, st->d_x, x_vec, d / 8,
                                                           st->tok.vocab_size);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    if (d_checksum) {
        checksum_kernel<<<grid_for(st->tokens), SI_BLOCK, 0, stream>>>(d_ids, st->tokens,
                                                                      d_checksum);
        UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    }
    /* row-major h[T][f] = x[T][d] W1[d][f] is column-major h^T = W1^T x^T */
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(st->blas, CUBLAS_OP_N, CUBLAS_OP_N, f, n_tokens, d, &one,
                                    st->d_w1, CUDA_R_16BF, f, st->d_x, CUDA_R_16BF, d, &zero,
                                    st->d_h, CUDA_R_16BF, f, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT), out);
    gelu_kernel<<<grid_for(h_vec), SI_BLOCK, 0, stream>>>(st->d_h, h_vec);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(st->blas, CUBLAS_OP_N, CUBLAS_OP_N, d, n_tokens, f, &one,
                                    st->d_w2, CUDA_R_16BF, d, st->d_h, CUDA_R_16BF, f, &zero,
                                    st->d_y, CUDA_R_16BF, d, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT), out);
out:
    return rc;
}

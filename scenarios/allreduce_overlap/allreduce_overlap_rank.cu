/* allreduce_overlap: one rank's GPU work on its worker thread: the inputs' fill, a watched
 * stream wait, and the layer GEMM dW = dYᵀ·X both variants run. */
#include <stddef.h>
#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "multigpu.h"
#include "underfed.h"
#include "uf_cublas.h"
#include "allreduce_overlap_kernels.h"
#include "allreduce_overlap_state.h"
#include "allreduce_overlap_rank.h"

#define AR_FILL_BLOCKS 4096

/* ---- one rank's GPU work (runs on its worker thread, its device current) --------------- */

/* Fill a device tensor with the inputs of `key` on the compute stream. */
static int rank_fill(ar_rank *rk, __nv_bfloat16 *p, size_t n, uint64_t key)
{
    int rc = UF_OK;
    size_t blocks = (n + AR_THREADS - 1) / AR_THREADS;
    if (blocks > AR_FILL_BLOCKS)
        blocks = AR_FILL_BLOCKS;
    ar_fill_kernel<<<(unsigned)blocks, AR_THREADS, 0, rk->compute_stream>>>(p, n, key);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Fill layer `slot`'s X and dY with the inputs rank `rank` draws from `seed`. */
int rank_fill_layer(ar_rank *rk, uint64_t seed, int rank, int slot)
{
    const ar_shape *sh = &rk->st->shape;
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, rank_fill(rk, rk->x + (size_t)slot * sh->x_elems, sh->x_elems,
                                    ar_input_key(seed, rank, slot, TENSOR_X)), out);
    UF_STATUS_OR_GOTO(rc, rank_fill(rk, rk->dy + (size_t)slot * sh->dy_elems, sh->dy_elems,
                                    ar_input_key(seed, rank, slot, TENSOR_DY)), out);
out:
    return rc;
}

/* Wait for a stream on this rank's worker, watched (multigpu.h: a deadline, NCCL's async
 * errors, lost ranks, another local rank's failure). */
int rank_wait(ar_rank *rk, cudaStream_t s, const char *what)
{
    return uf_mg_wait(rk->mg, s, what);
}

/* dW_slot = dYᵀ · X for one layer, on the compute stream, through `handle` (rk->cublas, or
 * rk->cublas_overlap with its SM count target; both on the compute stream). Row-major dW (N × K)
 * is column-major K × N = Xᵀ(col-major K × T) · dY(col-major N × T)ᵀ, so cuBLAS sees C = A · Bᵀ. */
int rank_layer_gemm(ar_rank *rk, cublasHandle_t handle, int slot)
{
    const ar_shape *sh = &rk->st->shape;
    const float alpha = 1.0f, beta = 0.0f;
    int rc = UF_OK;
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, sh->cols, sh->rows,
                                    sh->tokens, &alpha, rk->x + (size_t)slot * sh->x_elems,
                                    CUDA_R_16BF, sh->cols, rk->dy + (size_t)slot * sh->dy_elems,
                                    CUDA_R_16BF, sh->rows, &beta,
                                    rk->grads + (size_t)slot * sh->layer_elems, CUDA_R_16BF,
                                    sh->cols, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), out);
out:
    return rc;
}

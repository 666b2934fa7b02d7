/* allreduce_overlap: one rank's GPU work (allreduce_overlap_rank.cu), on its worker thread with
 * its device current. */
#ifndef AR_RANK_H
#define AR_RANK_H

#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "allreduce_overlap_state.h"

/* Fill layer `slot`'s X and dY with the inputs rank `rank` draws from `seed`. */
int rank_fill_layer(ar_rank *rk, uint64_t seed, int rank, int slot);

/* Wait for a stream on this rank's worker, watched (multigpu.h). */
int rank_wait(ar_rank *rk, cudaStream_t s, const char *what);

/* dW_slot = dYᵀ · X for one layer, on the compute stream, through `handle`. */
int rank_layer_gemm(ar_rank *rk, cublasHandle_t handle, int slot);

#endif

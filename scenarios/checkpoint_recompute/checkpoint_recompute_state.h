/* checkpoint_recompute: the policies' ids and the scenario's state (the point's model, the
 * variant's arena, cuBLAS, the plans and what was measured), shared by the story, setup and
 * verification. */
#ifndef CR_STATE_H
#define CR_STATE_H

#include <stddef.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "checkpoint_recompute_model.h"

enum { CR_STORE_ALL, CR_FULL, CR_EVERY_K, CR_SELECTIVE, CR_N_POLICIES };

#define CR_BLAS_WS_BYTES ((size_t)32 << 20) /* cuBLAS workspace, set explicitly (Hopper: 32 MiB) */

typedef struct cr_state {
    cr_model m;                     /* this point's model */
    cr_arena arena;                 /* this variant's activations (begin_variant..end_variant) */
    int k;
    cublasHandle_t blas;
    void *blas_ws;
    cudaStream_t bound_stream;
    int stream_bound;
    size_t plan_bytes[CR_N_POLICIES];
    size_t setup_mem_bytes;         /* cudaMemGetInfo: what setup's allocations took */
    size_t arena_mem_bytes;         /* cudaMemGetInfo: what the variant's arena took */
    double grad_mismatch;           /* from verify; NaN until it ran */
    cr_policy_fn run_policy;        /* the story's one step of a policy (setup plans, verify runs) */
} cr_state;

#endif

/* small_batch: the variants, the constants the story and its units share, the story's schedule
 * as the units call it, and the scenario's state. */
#ifndef SB_STATE_H
#define SB_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>

#include "small_batch_kernels.h"
#include "small_batch_stack.h"

enum { SB_MICRO1, SB_ACCUMULATE, SB_LARGE_MICRO, SB_ONE_BLOCK, SB_LATENCY_BOUND, SB_WAVE,
       SB_N_VARIANTS };

#define SB_LAYERS 4                 /* at d = 4096: 1.6 GB of bf16 weights, 27x the L2 */
#define SB_BLAS_WS_BYTES ((size_t)32 << 20) /* cuBLAS workspace, set explicitly (Hopper: 32 MiB) */
#define SB_MAX_MICRO 128            /* accumulate: at most this many micro-batches per step */
#define SB_SPIN_ITERS (1L << 19)    /* one_block: rounds of ~6 dependent integer ops, ~5-10 ms */
#define SB_CHASE_MASK ((1u << 28) - 1)  /* latency_bound: 2^28 slots, 1 GiB: 17x the L2 */
#define SB_CHASE_HOPS (1L << 14)    /* dependent HBM loads per chain, ~1 us each */
#define SB_MAX_CHAINS 1024          /* SMs the chase verifies at most */
#define SB_WAVE_N 8192              /* the wave report's GEMM: M × SB_WAVE_K × SB_WAVE_N */
#define SB_WAVE_K 8192

struct sb_state;

/* The story's schedule (small_batch.cu), which verify runs on fresh inputs (and on a tiny stack)
 * and describe counts: a GEMM variant's micro-batch shape and its step on a stack, and the
 * chain kernels of one_block and latency_bound. */
typedef struct sb_schedule {
    void (*step_shape)(int M, int G, int variant, int *micro, int *n_micro);
    int (*run_schedule)(sb_stack *m, int micro, int n_micro);
    int (*enqueue_chains)(struct sb_state *st, int variant, uint64_t seed, cudaStream_t stream);
} sb_schedule;

typedef struct sb_state {
    sb_stack m;                     /* the layer stack of this point */
    int tokens, global_tokens;      /* M (tokens per micro-batch) and G (the global batch) */
    int sms;
    uint64_t seed;                  /* the inputs of the timed steps (spin and chase starts) */
    cublasHandle_t blas;            /* bound to ctx->stream, the run's one stream, by setup */
    cublasLtHandle_t lt;
    void *blas_ws;
    uint32_t *small_out;            /* one_block's and latency_bound's results */
    uint32_t *chase;                /* latency_bound: the chase table (begin_variant) */
    int chase_smem;                 /* its dynamic shared memory: one block per SM */
    bf16 *wave_x, *wave_w, *wave_y; /* wave: M × K, N × K, M × N (begin_variant) */
    sb_lt_gemm wave;
    const sb_schedule *schedule;    /* the story's: what a variant's step runs */
} sb_state;

#endif

/* allreduce_overlap: the run's state (shape, jobs, ranks) and the constants the story and its
 * units share (the variants, the axes' defaults, the sizes). */
#ifndef AR_STATE_H
#define AR_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "multigpu.h"
#include "timing.h"

enum { VAR_SEQUENTIAL = 0, VAR_BUCKETED = 1 };

/* The axes' defaults: the point the claims are checked at, and what --quick runs.
 * NCCL's and cuBLAS's own settings: on two H200s neither a CTA cap nor an SM margin made
 * bucketed faster (README "The clock and the shared GPU": the overlapped GEMMs lose to a lower
 * clock and to NCCL's kernels running beside them, not to a fixed number of SMs). */
#define AR_DEFAULT_BUCKET_MIB 64
#define AR_DEFAULT_COMM_CTAS 0      /* 0: NCCL's own number of CTAs for bucketed's all-reduces */
#define AR_DEFAULT_SM_MARGIN 0      /* 0: no cuBLAS SM count target for bucketed's GEMMs */

/* Set to 1 in the environment, bucketed's all-reduces run on the compute stream: overlap
 * broken on purpose, to show that the claims on the fix then fail (README, Try). */
#define AR_BROKEN_OVERLAP_ENV "UF_AR_BROKEN_OVERLAP"

/* 16 layers of 4096 × 8192 bf16 weights: 16 × 64 MiB = 1 GiB of gradients per GPU (0.5 B
 * parameters). The same in --quick: the expectation is at 64 MiB buckets, and fewer than ~16
 * buckets could not hide 75 % of the communication (README). */
#define AR_LAYERS 16
#define AR_ROWS 4096            /* N: output features of a layer, rows of dW */
#define AR_COLS 8192            /* K: input features of a layer, columns of dW */
#define AR_MAX_BUCKETS 16384    /* all-reduce calls per step we accept (64 KiB buckets of 1 GiB) */
#define AR_TIMED_REPS 20        /* all-reduce alone / backward alone / steps, at setup */
#define AR_SPOT_SAMPLES 8       /* dW elements per layer and rank checked against host dYᵀ·X */
#define AR_TOLERANCE 1e-2       /* max_rel_err of each gradient (README: Verification) */
#define AR_THREADS 256

typedef struct ar_shape {
    int layers, rows, cols, tokens;     /* L, N, K, T */
    size_t layer_elems;                 /* N × K: one layer's gradient */
    size_t grad_elems, grad_bytes;      /* all L gradients: one flat buffer, backward order */
    size_t x_elems, dy_elems;           /* one layer's inputs: X is T × K, dY is T × N */
    size_t bucket_elems;                /* bucketed variant: elements per bucket */
    int n_buckets;
} ar_shape;

/* A gemm mark's place in its pair. */
enum { GEMM_BEGIN = 0, GEMM_END = 1 };

/* The jobs each rank's worker runs (multigpu.h). STEP only enqueues; every other job waits
 * for its own GPU work. */
enum { JOB_FILL = 1, JOB_STEP, JOB_BACKWARD, JOB_ALLREDUCE, JOB_CHECKSUM, JOB_REFERENCE };

typedef struct ar_job {
    int kind;
    int variant;                /* JOB_STEP; JOB_ALLREDUCE: whose communicator */
    int target;                 /* local index of the one worker that runs it, -1: all */
    uint64_t seed;              /* JOB_FILL, JOB_REFERENCE */
    int mark;                   /* JOB_STEP, JOB_BACKWARD: 1 + index of the pair of gemm marks
                                 * recorded around the GEMMs; 0: none */
} ar_job;

/* What a verify job found on one rank. */
typedef struct ar_check {
    double max_err;             /* max_rel_err (verify.h), the largest over the gradients */
    size_t n_bad, n_nan, n_spot_bad;    /* n_bad: gradients out of tolerance */
    int bad_slot;               /* first gradient out of tolerance, and its element */
    size_t bad_index;
    float bad_got, bad_want;
    unsigned long long checksum, checksum_min, checksum_max;
} ar_check;

struct ar_state;

/* The communicators of a rank (uf_mg_rank.comm): NCCL's defaults, and bucketed's own. */
enum { AR_COMM_DEFAULT = 0, AR_COMM_OVERLAP = 1 };

/* One NCCL rank driven by this process: one GPU, its streams and buffers; the runner's rank
 * (mg) holds its worker thread and communicators. */
typedef struct ar_rank {
    struct ar_state *st;
    uf_mg_rank *mg;
    int local;                  /* index among this process's ranks */
    int rank;                   /* global NCCL rank */
    int device;
    cudaStream_t compute_stream, comm_stream;   /* comm_stream has the highest priority */
    int sm_count;               /* SMs of this GPU */
    cublasHandle_t cublas;      /* cuBLAS's defaults: every GEMM but bucketed's overlapped ones */
    cublasHandle_t cublas_overlap;  /* sm_margin > 0: SM count target sm_count - sm_margin, for
                                     * bucketed's GEMMs that may run beside an all-reduce */
    __nv_bfloat16 *grads;       /* L gradients, slot j = j-th produced by backward */
    __nv_bfloat16 *x, *dy;      /* L layers of inputs */
    unsigned long long *checksum_dev;           /* [0] mine, [1] max over ranks, [2] min */
    cudaEvent_t layer_done[AR_LAYERS];
    cudaEvent_t comm_done, step_done;
    /* timed, on compute_stream: pair i (marks 2i + GEMM_BEGIN, 2i + GEMM_END) the i-th timed
     * job's start and the end of its last GEMM (setup) */
    uf_marks gemm;
    ar_check check;
} ar_rank;

/* The story's schedule (allreduce_overlap.cu): enqueue a rank's JOB_STEP, JOB_BACKWARD or
 * JOB_ALLREDUCE, bracketed by the harness's begin event and the rank's step_done. */
typedef int (*ar_enqueue_fn)(ar_rank *rk, const ar_job *job);

typedef struct ar_state {
    ar_shape shape;
    uf_mg *mg;                  /* the multi-GPU runner: workers, communicators, watched waits */
    int n_ranks;                /* global */
    int n_local;                /* ranks (GPUs) this process drives */
    int comm_ctas;              /* CTAs (channels) per collective of bucketed's communicator
                                 * (minCTAs = maxCTAs); 0: NCCL's default, bucketed uses comm */
    int sm_margin;              /* SMs bucketed's overlapped GEMMs leave free; 0: no target */
    int broken_overlap;         /* UF_AR_BROKEN_OVERLAP=1: bucketed's all-reduces on the compute
                                 * stream (a check of the claims, not the fix) */
    ar_rank *ranks;

    cudaEvent_t step_begin;     /* on ctx->stream: every rank's step waits on it */
    uf_marks timing;            /* on ctx->stream: mark i before timed job i, i + 1 after it */

    double compute_ms;          /* backward alone (median, setup) */
    double comm_ms[2];          /* the all-reduce alone on each variant's communicator (median,
                                 * setup); equal when bucketed shares comm (comm_ctas = 0) */
    double in_step_ms[2];       /* the GEMMs' span inside each variant's step (median, setup) */
    double held_bytes;          /* device memory this point holds on the primary GPU */
    ar_enqueue_fn enqueue;      /* the story's schedule: a rank's step, backward or all-reduce */
} ar_state;

#endif

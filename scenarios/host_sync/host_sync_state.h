/* host_sync: the variants, the constants the story and its units share, the story's step as
 * setup calibrates on it, and the scenario's state. */
#ifndef HS_STATE_H
#define HS_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "host_sync_kernels.h"

enum { V_ITEM, V_SYNC_TIMING, V_MALLOC_FREE, V_PAGEABLE_COPY, V_DEFERRED, V_POOL, HS_N_VARIANTS };

#define HS_LAYERS 8                             /* GEMMs per step, as in the step */
#define HS_BASE_LAUNCHES (2 * HS_LAYERS + 2)    /* GEMM + tanh per layer, 2 loss kernels */
#define HS_LAG 3            /* deferred: the loss of step s is read at step s + HS_LAG */
#define HS_HISTORY 64       /* loss slots on the device and reports kept on the host */
#define HS_LOG_STEPS 8192   /* host-side times kept per variant: a full timing pass (~2000) */

/* The host's side of one step with host work (warm-up and timed steps; verify runs none):
 * when it began, and how long its CUDA calls took on the host clock. */
typedef struct hs_host_step {
    double begin_us;    /* hs_now_us() at the start of run_step */
    double queue_us;    /* to the step's kernels queued (malloc_free: its cudaMallocs too) */
    double finish_us;   /* the variant's own call after them: its sync, or its late read */
} hs_host_step;

struct hs_state;

/* The story's enqueue_compute (host_sync.cu): one step's kernels on stream, the intermediate
 * outputs in tmp. Setup calibrates the host's work on it. */
typedef int (*hs_step_fn)(struct hs_state *st, bf16 *const tmp[2], cudaStream_t stream);

typedef struct hs_state {
    int tokens, d, launches;
    int ticks_per_layer[HS_LAYERS];         /* small kernels before each layer's GEMM */
    double host_us;                         /* the host's own work per step (calibrated) */
    double gpu_step_ms;                     /* the step with no sync and no host work */
    int spin;                               /* 0 while verify runs steps: no host work */
    cublasHandle_t blas;
    void *blas_ws;
    bf16 *x, *w, *y;                        /* input, the layers' weights, the last output */
    bf16 *tmp[2];                           /* intermediate outputs (all but malloc_free, pool) */
    size_t tmp_bytes;
    float *partials, *losses, *aux;         /* losses: one slot per step, HS_HISTORY of them */
    uint32_t label_key;
    cudaMemPool_t pool;                     /* pool: stream-ordered temporaries */
    float *loss_pinned;                     /* item: the loss read every step */
    float *ring_pinned;                     /* deferred: HS_LAG slots */
    float *ring_pageable;                   /* pageable_copy: HS_LAG slots, plain malloc */
    cudaEvent_t ring_done[HS_LAG];          /* a slot's copy has landed */
    long long step;                         /* steps run since begin_variant (or verify's reset) */
    float reported[HS_HISTORY];             /* reported[s % HS_HISTORY]: the loss the host read at
                                             * step s (NaN: none) */
    double step_wall_us[HS_HISTORY];        /* sync_timing's log of host-timed steps */
    hs_host_step *host_log;                 /* HS_LOG_STEPS, since begin_variant */
    int n_host_log;
    /* verify's findings, for describe */
    double loss_mismatch, loss_lag;
    uint64_t anchor_seed;                   /* the seed whose host reference is cached */
    double anchor_err;                      /* max_rel_err of item against it */
    size_t device_bytes;
    hs_step_fn enqueue_compute;             /* the story's: one step's kernels (calibration) */
} hs_state;

/* Elements of an activation: tokens x d. */
static inline size_t hs_act_elems(const hs_state *st)
{
    return (size_t)st->tokens * (size_t)st->d;
}

#endif

/* host_sync: the inputs, the calibration of the host's work, setup and teardown, and each
 * variant's fresh start (begin_variant). The step calibrated on is the story's
 * (enqueue_compute, through the state). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "stats.h"
#include "timing.h"
#include "underfed.h"
#include "uf_cublas.h"
#include "host_sync_ref.h"
#include "host_sync_kernels.h"
#include "host_sync_state.h"
#include "host_sync_setup.h"

#define HS_BLAS_WS_BYTES ((size_t)32 << 20) /* cuBLAS workspace, set explicitly (Hopper: 32 MiB) */
/* Calibration: back-to-back steps for at least HS_CAL_WARMUP_MS, then the median of
 * HS_CAL_STEPS more. The warm-up covers the step's settling under the load: on the H200 (#29)
 * a calibration of 3 + 10 steps caught it in 2 of 11 runs, 6-8 steps at 0.487 ms, then 0.465
 * from ~5 ms of load on, and set a host_us 20 us (4 %) longer than the step it was meant to
 * equal (item's step then read 15 us under gpu_step + host_us). */
#define HS_CAL_WARMUP_MS 20.0
#define HS_CAL_BATCH 8                      /* warm-up steps between looks at the clock */
#define HS_CAL_STEPS 20

/* Draw the input and the weights from seed on the device (hs_ref_rows redraws them). */
int hs_fill_inputs(hs_state *st, uint64_t seed, cudaStream_t stream)
{
    int rc = UF_OK;
    const size_t wn = (size_t)st->d * (size_t)st->d;
    UF_STATUS_OR_GOTO(rc, hs_fill(st->x, hs_act_elems(st), hs_key(seed, HS_T_X), 1.0f, stream),
                      out);
    for (int l = 0; l < HS_LAYERS; l++)
        UF_STATUS_OR_GOTO(rc, hs_fill(st->w + (size_t)l * wn, wn,
                                      hs_key(seed, HS_T_W + (uint32_t)l),
                                      hs_w_amplitude(st->d), stream), out);
    st->label_key = hs_key(seed, HS_T_LABEL);
out:
    return rc;
}

/* Spread the launches beyond the bare step's over the layers, the first layers taking the
 * remainder: launches = HS_BASE_LAUNCHES + the small kernels. */
static void spread_ticks(hs_state *st)
{
    const int extra = st->launches - HS_BASE_LAUNCHES;
    for (int l = 0; l < HS_LAYERS; l++)
        st->ticks_per_layer[l] = extra / HS_LAYERS + (l < extra % HS_LAYERS);
}

/* The step (the story's, st->enqueue_compute) with nothing in its way (no sync, no host work),
 * timed with events: what the host's work per step is a share of. The median of HS_CAL_STEPS
 * back-to-back steps, after HS_CAL_WARMUP_MS of them (batches of HS_CAL_BATCH, each waited
 * for: the host clock then says how long the GPU has been at it). */
static int enqueue_compute(void *arg, cudaStream_t stream)
{
    hs_state *st = (hs_state *)arg;
    return st->enqueue_compute(st, st->tmp, stream);
}

static int calibrate(uf_ctx *ctx, hs_state *st)
{
    int rc = uf_calibrate_step_ms(ctx, ctx->stream, enqueue_compute, st, HS_CAL_WARMUP_MS,
                                  HS_CAL_BATCH, HS_CAL_STEPS, &st->gpu_step_ms);
    if (rc == UF_OK)
        st->host_us = uf_axis(ctx, "host_pct") / 100.0 * st->gpu_step_ms * 1e3;
    return rc;
}

void hs_teardown(uf_ctx *ctx)
{
    hs_state *st = (hs_state *)ctx->state;
    if (!st)
        return;
    uf_teardown_drain(ctx);
    for (int i = 0; i < HS_LAG; i++)
        if (st->ring_done[i])
            cudaEventDestroy(st->ring_done[i]);
    if (st->pool)
        cudaMemPoolDestroy(st->pool);
    cudaFreeHost(st->loss_pinned);
    cudaFreeHost(st->ring_pinned);
    free(st->ring_pageable);
    cudaFree(st->partials);
    cudaFree(st->losses);
    cudaFree(st->aux);
    cudaFree(st->tmp[0]);
    cudaFree(st->tmp[1]);
    cudaFree(st->y);
    cudaFree(st->w);
    cudaFree(st->x);
    cudaFree(st->blas_ws);
    if (st->blas)
        cublasDestroy(st->blas);
    free(st->host_log);
    free(st);
    ctx->state = NULL;
}

/* The pool of `pool`: device memory kept by the pool once freed (release threshold: never). */
static int create_pool(uf_ctx *ctx, hs_state *st)
{
    int rc = UF_OK, pools = 0;
    cudaMemPoolProps props;
    uint64_t keep_all = UINT64_MAX;
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported,
                                               ctx->device), out);
    if (!pools)
        return uf_fail(ctx, UF_SKIP, "this GPU or driver has no stream-ordered memory pools "
                       "(cudaMallocAsync), which the pool variant needs");
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ctx->device;
    UF_CUDA_OR_GOTO(rc, cudaMemPoolCreate(&st->pool, &props), out);
    UF_CUDA_OR_GOTO(rc, cudaMemPoolSetAttribute(st->pool, cudaMemPoolAttrReleaseThreshold,
                                                &keep_all), out);
out:
    return rc;
}

/* The workspace, x, y, tmp[2] and the layers' weights: what setup allocates but the floats. */
static size_t resident_bytes(const hs_state *st)
{
    return HS_BLAS_WS_BYTES + 4 * hs_act_elems(st) * sizeof(bf16) +
           (size_t)HS_LAYERS * st->d * st->d * sizeof(bf16);
}

static int alloc_device(hs_state *st)
{
    int rc = UF_OK;
    const size_t act_bytes = hs_act_elems(st) * sizeof(bf16);
    const size_t w_bytes = (size_t)HS_LAYERS * st->d * st->d * sizeof(bf16);
    st->tmp_bytes = act_bytes;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->blas_ws, HS_BLAS_WS_BYTES), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->x, act_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->w, w_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->y, act_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->tmp[0], act_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->tmp[1], act_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->partials, HS_LOSS_BLOCKS * sizeof(float)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->losses, HS_HISTORY * sizeof(float)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->aux, HS_AUX * sizeof(float)), out);
    st->device_bytes = resident_bytes(st) + (HS_LOSS_BLOCKS + HS_HISTORY + HS_AUX) * sizeof(float);
out:
    return rc;
}

static int alloc_host(hs_state *st)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMallocHost((void **)&st->loss_pinned, sizeof(float)), out);
    UF_CUDA_OR_GOTO(rc, cudaMallocHost((void **)&st->ring_pinned, HS_LAG * sizeof(float)), out);
    st->ring_pageable = (float *)malloc(HS_LAG * sizeof(float));
    st->host_log = (hs_host_step *)malloc(HS_LOG_STEPS * sizeof *st->host_log);
    if (!st->ring_pageable || !st->host_log) {
        fprintf(stderr, "host_sync: out of host memory\n");
        rc = UF_ERR;
        goto out;
    }
    for (int i = 0; i < HS_LAG; i++)
        UF_CUDA_OR_GOTO(rc, cudaEventCreateWithFlags(&st->ring_done[i], cudaEventDisableTiming),
                        out);
out:
    return rc;
}

int hs_setup_step(uf_ctx *ctx, hs_step_fn enqueue_compute)
{
    int rc = UF_OK;
    hs_state *st = (hs_state *)calloc(1, sizeof *st);
    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    ctx->state = st;
    st->enqueue_compute = enqueue_compute;
    /* whole numbers in range: the harness checked them against hs_axes */
    st->tokens = (int)uf_axis(ctx, "tokens");
    st->d = (int)uf_axis(ctx, "d_model");
    st->launches = (int)uf_axis(ctx, "launches");
    if (st->d % 8 != 0)
        return uf_fail(ctx, UF_USAGE, "d_model=%d: must be a multiple of 8 (bf16 GEMM rows)",
                       st->d);
    spread_ticks(st);
    st->spin = 1;
    st->loss_mismatch = st->loss_lag = st->anchor_err = NAN;
    const size_t need = resident_bytes(st) +
                        2 * hs_act_elems(st) * sizeof(bf16); /* pool / malloc_free temporaries */
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, need, "weights, activations and temporaries"), out);
    UF_STATUS_OR_GOTO(rc, alloc_device(st), out);
    UF_STATUS_OR_GOTO(rc, alloc_host(st), out);
    UF_STATUS_OR_GOTO(rc, create_pool(ctx, st), out);
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&st->blas), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(st->blas, ctx->stream), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetWorkspace(st->blas, st->blas_ws, HS_BLAS_WS_BYTES), out);
    UF_STATUS_OR_GOTO(rc, hs_fill_inputs(st, ctx->seed, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->aux, 0, HS_AUX * sizeof(float), ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, calibrate(ctx, st), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc; /* on failure the harness calls teardown, which frees what was made */
}

/* Every variant starts from step 0 with nothing reported (its ring's events are waited on only
 * from step HS_LAG, by which time this variant has recorded them). */
void hs_reset_steps(hs_state *st)
{
    st->step = 0;
    for (int i = 0; i < HS_HISTORY; i++) {
        st->reported[i] = NAN;
        st->step_wall_us[i] = NAN;
    }
}

int hs_begin_variant(uf_ctx *ctx, int variant)
{
    (void)variant;
    hs_state *st = (hs_state *)ctx->state;
    st->loss_mismatch = st->loss_lag = NAN;
    st->n_host_log = 0;     /* verify's reset keeps it: describe reads it after verify */
    hs_reset_steps(st);
    return UF_OK;
}

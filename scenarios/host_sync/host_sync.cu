/* host_sync: a training loop whose host waits for the device every step. The step itself is
 * fixed (8 bf16 GEMMs of tokens x d x d with their activations, small kernels up to `launches`
 * launches, a loss reduced on the device); the variants differ only in what the host does
 * around it:
 *   item           reads the loss every step: a copy to the host and a stream synchronize
 *                  (PyTorch's loss.item());
 *   sync_timing    times each step with cudaDeviceSynchronize and a host clock;
 *   malloc_free    takes its temporaries from cudaMalloc and gives them back with cudaFree,
 *                  which synchronizes the device;
 *   pageable_copy  copies the loss asynchronously, but into pageable memory: cudaMemcpyAsync to
 *                  pageable memory returns only once the copy is done;
 *   deferred       (fix) copies the loss asynchronously into a pinned ring and reads it HS_LAG
 *                  steps later, behind an event;
 *   pool           (fix) stream-ordered temporaries: cudaMallocAsync / cudaFreeAsync on a pool.
 * Then the host does its own work (logging, data preparation, a framework's Python): a spin of
 * host_pct % of the step's GPU time. Without a sync the host runs ahead and that work hides
 * under the GPU's; after a sync the queue is empty, the GPU waits for all of it and for the
 * next step's first launches. See README.md. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include "underfed.h"
#include "host_sync_ref.h"      /* random inputs, fp64 reference, loss lag, the host's work */
#include "host_sync_kernels.h"  /* fill, tanh, small and loss kernels; the GEMM */
#include "host_sync_state.h"    /* the variants, the constants, the state */
#include "host_sync_setup.h"    /* inputs, calibration, setup, teardown, begin_variant */
#include "host_sync_verify.h"   /* verify */
#include "host_sync_describe.h" /* useful FLOPs, calibration figures, loss lag */

/* ---- the step: the same device work for every variant -------------------------------------- */

/* One step's kernels on stream: per layer its small kernels, the GEMM and the activation (the
 * intermediate outputs in tmp, the last in st->y), then the loss into its history slot. */
static int enqueue_compute(hs_state *st, bf16 *const tmp[2], cudaStream_t stream)
{
    int rc = UF_OK;
    const size_t n = hs_act_elems(st), wn = (size_t)st->d * st->d;
    const bf16 *src = st->x;
    for (int l = 0; l < HS_LAYERS; l++) {
        for (int t = 0; t < st->ticks_per_layer[l]; t++)
            UF_STATUS_OR_GOTO(rc, hs_tick(st->aux, stream), out);
        bf16 *dst = l == HS_LAYERS - 1 ? st->y : tmp[l % 2];
        UF_STATUS_OR_GOTO(rc, hs_gemm_bf16(st->blas, src, st->w + (size_t)l * wn, dst,
                                           st->tokens, st->d), out);
        UF_STATUS_OR_GOTO(rc, hs_tanh(dst, n, stream), out);
        src = dst;
    }
    UF_STATUS_OR_GOTO(rc, hs_loss(st->y, n, st->label_key, (uint64_t)st->step, st->partials,
                                  st->losses + st->step % HS_HISTORY, stream), out);
out:
    return rc;
}

/* The scenario's setup, calibrated on this step. */
static int hs_setup(uf_ctx *ctx)
{
    return hs_setup_step(ctx, enqueue_compute);
}

/* ---- the failures: a synchronization every step ------------------------------------------- */

/* item: loss.item(). The copy is tiny; the stream synchronize is what costs: it returns only
 * when the GPU has run everything queued, so the queue is empty when the host goes on. */
static int read_loss_now(hs_state *st, cudaStream_t stream)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->loss_pinned, st->losses + st->step % HS_HISTORY,
                                        sizeof(float), cudaMemcpyDeviceToHost, stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(stream), out);
    st->reported[st->step % HS_HISTORY] = *st->loss_pinned;
out:
    return rc;
}

/* sync_timing: "how long did the step take?" with a host clock, which needs the device done. */
static int time_step_on_host(hs_state *st, double t0_us)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaDeviceSynchronize(), out);
    st->step_wall_us[st->step % HS_HISTORY] = hs_now_us() - t0_us;
out:
    return rc;
}

/* malloc_free: temporaries from cudaMalloc (tmp[0], tmp[1]), and back with cudaFree, which
 * waits until the device is idle before it returns. */
static int malloc_temporaries(const hs_state *st, bf16 *tmp[2])
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&tmp[0], st->tmp_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&tmp[1], st->tmp_bytes), out);
out:
    return rc;
}

static int free_temporaries(bf16 *tmp[2])     /* cudaFree(NULL) does nothing */
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaFree(tmp[0]), out_second);
out_second:
    UF_CUDA_OR_GOTO(rc, cudaFree(tmp[1]), out);
out:
    tmp[0] = tmp[1] = NULL;
    return rc;
}

/* ---- the fixes: nothing inside the step waits for the device ------------------------------- */

/* deferred (ring pinned) and pageable_copy (ring pageable): the loss of step s - HS_LAG is read
 * from its ring slot once that slot's copy has landed (an event of HS_LAG steps ago: the GPU
 * still has the steps since queued), then step s's loss is copied into the slot. Into pinned
 * memory the copy is queued and the call returns at once; into pageable memory the driver must
 * stage it, and cudaMemcpyAsync returns only when the copy is done: a sync in disguise. */
static int read_loss_late(hs_state *st, float *ring, cudaStream_t stream)
{
    int rc = UF_OK;
    const int slot = (int)(st->step % HS_LAG);
    if (st->step >= HS_LAG) {
        cudaError_t landed = cudaEventQuery(st->ring_done[slot]);
        if (landed == cudaErrorNotReady) {
            (void)cudaGetLastError();   /* "not ready" is an answer, not an error */
            landed = cudaEventSynchronize(st->ring_done[slot]);
        }
        UF_CUDA_OR_GOTO(rc, landed, out);
        st->reported[st->step % HS_HISTORY] = ring[slot];
    }
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(ring + slot, st->losses + st->step % HS_HISTORY,
                                        sizeof(float), cudaMemcpyDeviceToHost, stream), out);
    UF_CUDA_OR_GOTO(rc, cudaEventRecord(st->ring_done[slot], stream), out);
out:
    return rc;
}

/* pool: the same temporaries, stream-ordered: allocated and freed in the stream's order from a
 * pool that keeps its memory, so neither call waits for the device. */
static int pool_temporaries(const hs_state *st, bf16 *tmp[2], cudaStream_t stream)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMallocFromPoolAsync((void **)&tmp[0], st->tmp_bytes, st->pool,
                                                stream), out);
    UF_CUDA_OR_GOTO(rc, cudaMallocFromPoolAsync((void **)&tmp[1], st->tmp_bytes, st->pool,
                                                stream), out);
out:
    return rc;
}

static int pool_free(bf16 *tmp[2], cudaStream_t stream)
{
    int rc = UF_OK;
    if (tmp[0])
        UF_CUDA_OR_GOTO(rc, cudaFreeAsync(tmp[0], stream), out_second);
out_second:
    if (tmp[1])
        UF_CUDA_OR_GOTO(rc, cudaFreeAsync(tmp[1], stream), out);
out:
    tmp[0] = tmp[1] = NULL;
    return rc;
}

/* What the variant does after the step's kernels are queued: its sync, or its way around one. */
static int finish_step(hs_state *st, int variant, bf16 *tmp[2], double t0_us,
                       cudaStream_t stream)
{
    switch (variant) {
    case V_ITEM: return read_loss_now(st, stream);
    case V_SYNC_TIMING: return time_step_on_host(st, t0_us);
    case V_MALLOC_FREE: return free_temporaries(tmp);
    case V_PAGEABLE_COPY: return read_loss_late(st, st->ring_pageable, stream);
    case V_DEFERRED: return read_loss_late(st, st->ring_pinned, stream);
    case V_POOL: return pool_free(tmp, stream);
    default: return UF_ERR;
    }
}

/* One step: temporaries (malloc_free, pool), the kernels, the variant's finish, then the host's
 * own work: logging the loss, preparing the next batch. */
static int hs_run_step(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    hs_state *st = (hs_state *)ctx->state;
    const int own_temporaries = variant == V_MALLOC_FREE || variant == V_POOL;
    bf16 *tmp[2] = {own_temporaries ? NULL : st->tmp[0], own_temporaries ? NULL : st->tmp[1]};
    const double t0_us = hs_now_us();
    double queued_us;
    if (variant < 0 || variant >= HS_N_VARIANTS)
        return uf_fail(ctx, UF_ERR, "unknown variant %d", variant);
    if (variant == V_MALLOC_FREE)
        UF_STATUS_OR_GOTO(rc, malloc_temporaries(st, tmp), out_free);
    if (variant == V_POOL)
        UF_STATUS_OR_GOTO(rc, pool_temporaries(st, tmp, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, enqueue_compute(st, tmp, ctx->stream), out_free);
    queued_us = hs_now_us();
    UF_STATUS_OR_GOTO(rc, finish_step(st, variant, tmp, t0_us, ctx->stream), out);
    if (st->spin) {
        const double finished_us = hs_now_us();
        hs_host_work(st->host_us);
        if (st->n_host_log < HS_LOG_STEPS)
            st->host_log[st->n_host_log++] = (hs_host_step){
                .begin_us = t0_us, .queue_us = queued_us - t0_us,
                .finish_us = finished_us - queued_us};
    }
    st->step++;
    return UF_OK;
out_free:   /* a step that failed half-way still gives its temporaries back */
    if (variant == V_MALLOC_FREE)
        (void)free_temporaries(tmp);
    if (variant == V_POOL)
        (void)pool_free(tmp, ctx->stream);
out:
    return rc;
}

/* ---- the variants: the claims below take the broken and the fixed ones from this table ------ */

static const uf_variant_desc hs_variants[HS_N_VARIANTS] = {
    {.name = "item", .role = UF_BROKEN,
     .summary = "loss copied to the host and the stream synchronized every step (loss.item())"},
    {.name = "sync_timing", .role = UF_BROKEN,
     .summary = "each step timed with cudaDeviceSynchronize and a host clock"},
    {.name = "malloc_free", .role = UF_BROKEN,
     .summary = "temporaries from cudaMalloc, returned with cudaFree (a device synchronize)"},
    {.name = "pageable_copy", .role = UF_BROKEN,
     .summary = "loss copied with cudaMemcpyAsync into pageable memory: returns when done"},
    {.name = "deferred", .role = UF_FIXED,
     .summary = "loss copied async into a pinned ring, read 3 steps later behind an event"},
    {.name = "pool", .role = UF_FIXED,
     .summary = "temporaries stream-ordered: cudaMallocAsync / cudaFreeAsync on a pool"},
};

/* ---- the expectation ------------------------------------------------------------------------ */

/* The claims' point: the host's own work is 30 % of the GPU step, the bare step's launches;
 * and the same with no host work at all, the step's own busy share. */
#define HS_STR_(x) #x
#define HS_POINT(pct) "host_pct=" HS_STR_(pct)
#define HS_AT_PCT 30
#define HS_BARE_PCT 0
#define HS_AT HS_POINT(HS_AT_PCT)
#define HS_BARE HS_POINT(HS_BARE_PCT)
/* Busy points a fixed variant may lose to the host's work at HS_AT against HS_BARE: none is
 * expected (measured on the H200: 0.1 and 0.9), 2 leaves room for run-to-run noise. */
#define HS_BUSY_LOSS_PTS 2.0
/* Drains a broken variant makes per step, at least. Each step's wait is a drain when the call
 * is in flight as the device runs out of work; in a step whose host is late the device has
 * already run out when the call starts, and the step's idle is the host's, not the sync's
 * (timeline.h). On the H200 (ac3d474, 61 quick runs) 4 runs had one such step of ~170 (0.994):
 * for 3 ms the host's launch calls took 3x their median while its trivial calls did not. The
 * mechanism is one drain a step, a fixed variant's is none (<= 0.1): 0.9 tells them apart and
 * leaves a late step in ten. */
#define HS_DRAINS_MIN 0.9

/* Each broken variant's sync, as the trace sees it: a call that drained the device, the
 * record or copy that says which kind, and the idle time it leaves. */
static void hs_expect_broken(const uf_report *rep, uf_expectations *ex)
{
    for (int v = 0; v < HS_N_VARIANTS; v++) {
        if (hs_variants[v].role != UF_BROKEN)
            continue;
        const char *broken = hs_variants[v].name;
        uf_expect_metric(ex, rep, broken, HS_AT, "drains_per_step", UF_GE, HS_DRAINS_MIN,
                         "the variant waits for the device once a step: an API call (stream or "
                         "device synchronize, cudaFree, a copy to pageable memory) that returns "
                         "only after the device ran out of queued work (a step whose host was "
                         "late finds the device already idle: HS_DRAINS_MIN)");
        uf_expect_metric(ex, rep, broken, HS_AT, "idle_host_pct", UF_GE, 20.0,
                         "after the sync the queue is empty: the GPU waits through the host's "
                         "own work (30 % of its step: 23 % of the longer step) and the next "
                         "step's first launch");
    }
    uf_expect_metric(ex, rep, "item", HS_AT, "stream_syncs_per_step", UF_GE, 1.0,
                     "loss.item() is a cudaStreamSynchronize: CUPTI records a stream "
                     "synchronization every step");
    uf_expect_metric(ex, rep, "sync_timing", HS_AT, "context_syncs_per_step", UF_GE, 1.0,
                     "cudaDeviceSynchronize is a context synchronization, every step");
    uf_expect_metric(ex, rep, "pageable_copy", HS_AT, "pageable_copies_per_step", UF_GE, 1.0,
                     "the loss goes into pageable memory every step: CUPTI's memory kind of "
                     "the copy's destination says so");
}

/* The fixes: nothing drains the device, and the host's work costs no busy time. */
static void hs_expect_fixed(const uf_report *rep, uf_expectations *ex)
{
    char claim[UF_REASON_LEN];
    for (int v = 0; v < HS_N_VARIANTS; v++) {
        if (hs_variants[v].role != UF_FIXED)
            continue;
        const char *fixed = hs_variants[v].name;
        uf_expect_metric(ex, rep, fixed, HS_AT, "drains_per_step", UF_LE, 0.1,
                         "no call inside the step waits for an idle device (deferred waits at "
                         "most for a copy HS_LAG steps old, with the steps since still queued)");
        uf_expect_metric(ex, rep, fixed, HS_AT, "idle_host_pct", UF_LE, 1.0,
                         "the host runs ahead of the GPU, so its own work (30 % of a step) and "
                         "its launches hide under the queued steps: no idle time waits for it");
        snprintf(claim, sizeof claim,
                 "%s busy_pct @ " HS_AT " - busy_pct @ " HS_BARE " >= -%.0f points: the host's "
                 "work hides, so the step keeps the busy share it has with no host work at all "
                 "(the bare step itself is not 100 %% busy: the gaps between its queued kernels, "
                 "README)", fixed, HS_BUSY_LOSS_PTS);
        double at = uf_value(rep, uf_find(rep, fixed, HS_AT), "busy_pct");
        double bare = uf_value(rep, uf_find(rep, fixed, HS_BARE), "busy_pct");
        uf_expect(ex, claim, at - bare, UF_GE, -HS_BUSY_LOSS_PTS);
    }
}

/* With host work as long as the GPU step (HS_SERIAL_AT), item's step is the two one after the
 * other, gpu_step + host_us; deferred's is the longer of the GPU's step and the host's own
 * step, and the host's own step is its work plus its CUDA calls (queue_us + finish_us), ~0.1
 * ms a step on the H200: deferred is host-bound there, its step host_us + queue_us +
 * finish_us within 1.4-3.3 us in 11 runs (#29). So the ratio item/deferred is not 2 but
 * (gpu_step + host_us) / max(gpu_step, host_us + calls): 1.55-1.67 on the H200, set by how
 * fast the CPU makes CUDA calls (queue_us 92-134 us between runs of the same build), which
 * is why "ratio >= 1.6" failed 3 of 7 quick runs in the issue (1.47 once) and 1 of these 10
 * (1.52, queue_us 134 us). The claim is the ratio
 * against that model, measured/model 0.980-1.003 in those 11 runs; 0.9 leaves the GPU step
 * at item's clocks differing from the calibrated one (item's step within -15..+6 us of
 * gpu_step + host_us) and the sync's wake-up, while an item that overlapped, or a deferred
 * that serialized, reads ~0.6. */
#define HS_SERIAL_PCT 100
#define HS_SERIAL_AT HS_POINT(HS_SERIAL_PCT)
#define HS_MODEL_SHARE 0.9

static void hs_expect_serial(const uf_report *rep, uf_expectations *ex)
{
    const uf_row *item = uf_find(rep, "item", HS_SERIAL_AT);
    const uf_row *deferred = uf_find(rep, "deferred", HS_SERIAL_AT);
    const double gpu_us = 1e3 * uf_value(rep, deferred, "gpu_step_ms");
    const double host_us = uf_value(rep, deferred, "host_us");
    const double calls_us = uf_value(rep, deferred, "queue_us") +
                            uf_value(rep, deferred, "finish_us");
    const double model = (gpu_us + host_us) / fmax(gpu_us, host_us + calls_us);
    const double ratio = uf_value(rep, item, "step_ms") / uf_value(rep, deferred, "step_ms");
    char claim[400];
    snprintf(claim, sizeof claim,
             "item/deferred step_ms @ " HS_SERIAL_AT " over its model >= %.1f: synchronized, "
             "the GPU's step and the host's work run one after the other (gpu_step + host_us); "
             "unsynchronized, the GPU's step hides under the host's own, its work plus its CUDA "
             "calls (max(gpu_step, host_us + queue_us + finish_us)): a ratio of 1.5-1.7 on the "
             "H200, not 2, as the host's calls take ~0.2 of the step", HS_MODEL_SHARE);
    uf_expect(ex, claim, ratio / model, UF_GE, HS_MODEL_SHARE);
}

static void hs_expect(const uf_report *rep, uf_expectations *ex)
{
    hs_expect_broken(rep, ex);
    hs_expect_fixed(rep, ex);
    uf_expect_metric(ex, rep, "deferred", HS_AT, "loss_mismatch", UF_LE, 0.0,
                     "the same kernels on the same inputs on one stream: every loss deferred "
                     "reports equals item's of HS_LAG (3) steps before, bit for bit");
    uf_expect_metric(ex, rep, "deferred", HS_AT, "loss_lag_steps", UF_GE, (double)HS_LAG,
                     "the losses differ from step to step (fresh labels), so no shorter lag "
                     "explains deferred's reports: they really are 3 steps late");
    hs_expect_serial(rep, ex);
}

/* --quick runs every variant at the claims' point (HS_AT) but, at the other two, only the
 * variants a claim reads there: deferred and pool at HS_BARE (their busy share with no host
 * work), item and deferred at HS_SERIAL_AT. The other 8 cells (~7 s of the per-commit lane's
 * 128 s, #29) are the full run's. */
static const struct { double host_pct; int variant; } hs_quick_cells[] = {
    {HS_BARE_PCT, V_DEFERRED}, {HS_BARE_PCT, V_POOL},
    {HS_SERIAL_PCT, V_ITEM}, {HS_SERIAL_PCT, V_DEFERRED}};

static int hs_begin_cell(uf_ctx *ctx, int variant)
{
    const double pct = uf_axis(ctx, "host_pct");
    int claimed = !ctx->quick || (pct != HS_BARE_PCT && pct != HS_SERIAL_PCT);
    for (size_t i = 0; i < sizeof hs_quick_cells / sizeof hs_quick_cells[0]; i++)
        claimed |= hs_quick_cells[i].host_pct == pct && hs_quick_cells[i].variant == variant;
    if (!claimed) {
        snprintf(ctx->reason, sizeof ctx->reason, "--quick: no claim reads %s at host_pct=%g "
                 "(the full run measures it)", ctx->scenario->variants[variant].name, pct);
        return UF_SKIP;
    }
    return hs_begin_variant(ctx, variant);
}

/* ---- the tables ------------------------------------------------------------------------------ */

/* The full sweep is 8 points (about 80 s on the H200): host work none, the claims' 30 %, as
 * long as the GPU step, longer; at the bare step's launches and at 530. README says what was
 * cut. */
static const double host_pct_values[] = {0, 30, 100, 150};
static const double host_pct_quick[] = {0, 30, 100};
static const double launches_values[] = {HS_BASE_LAUNCHES, 530};
static const double launches_quick[] = {HS_BASE_LAUNCHES};
static const double tokens_values[] = {1024};
static const double d_values[] = {4096};

static const uf_axis_desc hs_axes[] = {
    {.name = "host_pct", .unit = "% of GPU step",
     .summary = "the host's own work per step, as a share of the step's GPU time (calibrated)",
     UF_AXIS_FLOATS(0, 1000), .default_value = 30,
     .values = host_pct_values, .n_values = sizeof host_pct_values / sizeof host_pct_values[0],
     .quick_values = host_pct_quick,
     .n_quick_values = sizeof host_pct_quick / sizeof host_pct_quick[0]},
    {.name = "launches", .unit = "launches",
     .summary = "kernel launches per step: 8 GEMMs, 8 activations, 2 loss kernels, small ones",
     UF_AXIS_INTS(HS_BASE_LAUNCHES, 8192), .default_value = HS_BASE_LAUNCHES,
     .values = launches_values, .n_values = sizeof launches_values / sizeof launches_values[0],
     .quick_values = launches_quick,
     .n_quick_values = sizeof launches_quick / sizeof launches_quick[0]},
    {.name = "tokens", .unit = "tokens", .summary = "rows of every GEMM (batch x sequence)",
     UF_AXIS_INTS(1, 65536), .default_value = 1024, .values = tokens_values, .n_values = 1,
     .quick_values = tokens_values, .n_quick_values = 1},
    {.name = "d_model", .unit = "features", .summary = "d: every GEMM is tokens x d x d",
     UF_AXIS_INTS(8, 16384), .default_value = 4096, .values = d_values, .n_values = 1,
     .quick_values = d_values, .n_quick_values = 1},
};

static const uf_extra_desc hs_extras[HS_N_EXTRAS] = {
    {.name = "host_us", .unit = "us", .summary = "the host's own work per step (host_pct of gpu_step_ms)"},
    {.name = "gpu_step_ms", .unit = "ms",
     .summary = "the step with no sync and no host work, timed back to back at setup"},
    {.name = "slowdown_pct", .unit = "%", .summary = "step_ms / gpu_step_ms - 1: what the loop costs"},
    {.name = "loss_lag_steps", .unit = "steps",
     .summary = "how many steps late the host reads each loss (verify; empty: not read)"},
    {.name = "loss_mismatch", .unit = "steps",
     .summary = "losses (device history, host reports) differing bitwise from item's (verify)"},
    {.name = "queue_us", .unit = "us",
     .summary = "host time to queue a step's kernels (median over the timing pass's steps)"},
    {.name = "finish_us", .unit = "us",
     .summary = "host time in the variant's call after the kernels: its sync, or its late read "
                "(median, timing pass)"},
    {.name = "host_period_us", .unit = "us",
     .summary = "host time from one step's start to the next's (median, timing pass): a "
                "host-bound loop's step"},
};

static const uf_scenario hs_scenario = {
    .name = "host_sync",
    .title = "A sync every step: loss.item(), cudaFree and pageable copies drain the GPU's queue",
    .failure = "Reading the loss every step, timing steps with cudaDeviceSynchronize, freeing "
               "temporaries with cudaFree or copying into pageable memory makes the host wait "
               "until the GPU has run everything queued; the host's own work and the next "
               "step's launches then happen while the GPU sits idle.",
    .fix = "Keep the loss on the device and read it a few steps late behind an event (pinned "
           "ring), and take temporaries from a stream-ordered pool: the host runs ahead and its "
           "work hides under the GPU's.",
    .variants = hs_variants,
    .n_variants = HS_N_VARIANTS,
    .axes = hs_axes,
    .n_axes = sizeof hs_axes / sizeof hs_axes[0],
    .extras = hs_extras,
    .n_extras = HS_N_EXTRAS,
    .min_gpus = 1,
    .repeat = 30,
    .quick_repeat = 20,
    .warmup = 3,
    .warmup_min_ms = 0,
    .step_stat = UF_STAT_MEDIAN,
    .setup = hs_setup,
    .begin_variant = hs_begin_cell,
    .end_variant = NULL,
    .run_step = hs_run_step,
    .verify = hs_verify,
    .describe = hs_describe,
    .teardown = hs_teardown,
    .expect = hs_expect,
};

int main(int argc, char **argv) { return uf_main(&hs_scenario, argc, argv); }

/* serial_decode: setup and teardown (the point's model, cuBLAS), each variant's preparation
 * (begin_variant: where it is measured, its graph, the persistent kernel's plan), and what a
 * row counts (describe: bytes, tokens per second, and graph_b1's GEMV chain timed alone). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "serial_decode_state.h"
#include "stats.h"
#include "timing.h"
#include "uf_cublas.h"

#define SD_CHAIN_WARMUP 3       /* describe: replays of the GEMV chain before the timed ones */
#define SD_CHAIN_REPLAYS 10     /* per timed batch */
#define SD_CHAIN_BATCHES 5      /* batches: the median batch's mean */

void sd_teardown(uf_ctx *ctx)
{
    sd_state *st = (sd_state *)ctx->state;
    if (!st)
        return;
    uf_teardown_drain(ctx);
    if (st->graph)
        cudaGraphExecDestroy(st->graph);
    sd_model_free(&st->m);
    cudaFree(st->blas_ws);
    if (st->blas)
        cublasDestroy(st->blas);
    free(st);
    ctx->state = NULL;
}

int sd_setup(uf_ctx *ctx)
{
    int rc = UF_OK;
    char why[UF_REASON_LEN];
    sd_shape s;
    sd_state *st = NULL;
    if (sd_shape_make((int)uf_axis(ctx, "d_model"), SD_LAYERS, SD_VOCAB, SD_CACHE, SD_BATCH, &s,
                      why, sizeof why) != 0)
        return uf_fail(ctx, UF_USAGE, "%s", why);
    if (!sd_attn_splits_valid(&s, SD_ATTN_SPLITS))
        return uf_fail(ctx, UF_USAGE, "SD_ATTN_SPLITS=%d does not divide the cache's %d chunks "
                       "of %d positions", SD_ATTN_SPLITS, s.cache / SD_CHUNK, SD_CHUNK);
    st = (sd_state *)calloc(1, sizeof *st);
    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    ctx->state = st;
    st->bps = (int)uf_axis(ctx, "p_bps");
    st->warps = (int)uf_axis(ctx, "p_warps");
    st->ring_kib = (int)uf_axis(ctx, "p_ring_kib");
    st->bitwise_diff = st->steps_compared = st->chain_ms = NAN;
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, sd_model_bytes(&s) + SD_BLAS_WS_BYTES,
                                        "the weights, the caches of 64 sequences and the "
                                        "activations"), out);
    UF_STATUS_OR_GOTO(rc, sd_model_alloc(&st->m, &s, ctx->device), out);
    st->m.attn_splits = SD_ATTN_SPLITS;
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&st->blas), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->blas_ws, SD_BLAS_WS_BYTES), out);
    /* cublasSetStream resets the workspace, so it is set after */
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(st->blas, ctx->stream), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetWorkspace(st->blas, st->blas_ws, SD_BLAS_WS_BYTES), out);
    UF_STATUS_OR_GOTO(rc, sd_model_fill(&st->m, ctx->seed, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;  /* on failure the harness calls teardown, which frees what was made */
}

/* The persistent kernel's tunables are axes of their own: the other variants are measured at
 * their defaults only. */
static int sd_applies(uf_ctx *ctx, int variant)
{
    static const char *const tunables[] = {"p_bps", "p_warps", "p_ring_kib"};
    if (variant == V_PERSISTENT)
        return UF_OK;
    for (size_t i = 0; i < sizeof tunables / sizeof tunables[0]; i++) {
        int rc = uf_only_at_default(ctx, variant, tunables[i]);
        if (rc != UF_OK)
            return rc;
    }
    return UF_OK;
}

int sd_begin_variant(uf_ctx *ctx, int variant)
{
    sd_state *st = (sd_state *)ctx->state;
    char why[UF_REASON_LEN];
    int rc = sd_applies(ctx, variant);
    if (rc != UF_OK)
        return rc;
    st->bitwise_diff = st->steps_compared = st->chain_ms = NAN;
    switch (variant) {
    case V_PERSISTENT:
        if (sd_persistent_plan(&st->m, st->bps, st->warps, st->ring_kib, SD_P_BULK, &st->plan, why,
                               sizeof why) != 0)
            return uf_fail(ctx, UF_SKIP, "%s", why);
        /* its barrier counts from a fresh epoch with this grid */
        UF_STATUS_OR_GOTO(rc, sd_model_restart(&st->m, ctx->seed, ctx->stream), out);
        break;
    case V_GRAPH_B1:
    case V_BATCHED:
        UF_STATUS_OR_GOTO(rc, sd_capture(st, variant, 0, ctx->stream, &st->graph), out);
        break;
    default:
        break;
    }
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

int sd_end_variant(uf_ctx *ctx, int variant)
{
    sd_state *st = (sd_state *)ctx->state;
    int rc = UF_OK;
    (void)variant;
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    if (st->graph)
        cudaGraphExecDestroy(st->graph);
    st->graph = NULL;
    return rc;
}

/* graph_b1's GEMV kernels alone (the same launches, attention, embedding and argmax left
 * out), replayed as their own graph: the median of SD_CHAIN_BATCHES batches' mean replay. */
static int time_gemv_chain(uf_ctx *ctx, sd_state *st, double *ms)
{
    int rc = UF_OK;
    cudaGraphExec_t chain = NULL;
    uf_marks marks = {NULL, 0};
    double batch_ms[SD_CHAIN_BATCHES];
    *ms = NAN;
    UF_STATUS_OR_GOTO(rc, sd_capture(st, V_GRAPH_B1, 1, ctx->stream, &chain), out);
    UF_STATUS_OR_GOTO(rc, uf_marks_create(&marks, SD_CHAIN_BATCHES + 1), out);
    for (int i = 0; i < SD_CHAIN_WARMUP; i++)
        UF_CUDA_OR_GOTO(rc, cudaGraphLaunch(chain, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, 0, ctx->stream), out);
    for (int b = 0; b < SD_CHAIN_BATCHES; b++) {
        for (int i = 0; i < SD_CHAIN_REPLAYS; i++)
            UF_CUDA_OR_GOTO(rc, cudaGraphLaunch(chain, ctx->stream), out);
        UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, b + 1, ctx->stream), out);
    }
    UF_STATUS_OR_GOTO(rc, uf_wait_event(ctx, uf_marks_event(&marks, SD_CHAIN_BATCHES),
                                        "the GEMV chain"), out);
    for (int b = 0; b < SD_CHAIN_BATCHES; b++) {
        float t = 0.0f;
        UF_STATUS_OR_GOTO(rc, uf_marks_ms(&marks, b, b + 1, &t), out);
        batch_ms[b] = t / SD_CHAIN_REPLAYS;
    }
    *ms = uf_median(batch_ms, SD_CHAIN_BATCHES);
    /* the chain wrote q, the cache and x from its stale inputs: the decode starts again */
    UF_STATUS_OR_GOTO(rc, sd_model_restart(&st->m, ctx->seed, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    uf_marks_free(&marks);
    if (chain)
        cudaGraphExecDestroy(chain);
    return rc;
}

int sd_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    sd_state *st = (sd_state *)ctx->state;
    const sd_shape *s = &st->m.s;
    const int batch = variant == V_BATCHED ? s->batch : 1;
    const double step_s = uf_step_ms(ctx, row) * 1e-3;
    const double weights = sd_weight_bytes(s), cache = sd_cache_bytes(s) / s->batch * batch;
    const double params = weights / 2.0;
    const double attn_flops = 4.0 * s->heads * SD_HEAD_DIM * s->cache * s->layers;
    int rc = UF_OK;
    row->min_bytes = weights + cache;
    row->useful_flops = row->executed_flops = batch * (2.0 * params + attn_flops);
    row->peak_mem_bytes = (double)(sd_model_bytes(s) + SD_BLAS_WS_BYTES);
    row->extra[X_TOKENS_PER_S] = step_s > 0 ? batch / step_s : NAN;
    row->extra[X_BATCH] = batch;
    row->extra[X_WEIGHT_BYTES] = weights;
    row->extra[X_CACHE_BYTES] = cache;
    row->extra[X_LAUNCHES] = variant == V_EAGER_B1 ? 5.0 * s->layers + 3 : 1.0;
    row->extra[X_BITWISE_DIFF] = st->bitwise_diff;
    row->extra[X_STEPS_COMPARED] = st->steps_compared;
    if (variant == V_PERSISTENT) {
        row->extra[X_P_STAGES] = st->plan.stages;
        row->extra[X_P_GRID] = st->plan.grid;
        row->extra[X_P_BULK] = st->plan.bulk;
    }
    if (variant == V_GRAPH_B1) {
        UF_STATUS_OR_GOTO(rc, time_gemv_chain(ctx, st, &st->chain_ms), out);
        row->extra[X_GEMV_CHAIN_MS] = st->chain_ms;
        row->extra[X_GEMV_CHAIN_PCT] = 100.0 * weights / (st->chain_ms * 1e-3) / 1e9 /
                                       ctx->ceilings->copy_d2d_gbs;
    }
out:
    return rc;
}

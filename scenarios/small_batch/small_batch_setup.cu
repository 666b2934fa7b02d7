/* small_batch: setup and teardown, and what each variant allocates for itself (begin_variant /
 * end_variant: the wave GEMM's operands and plan, the chase table) and where it runs (the
 * points it is measured at). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>

#include "underfed.h"
#include "uf_cublas.h"
#include "small_batch_ref.h"
#include "small_batch_kernels.h"
#include "small_batch_stack.h"
#include "small_batch_state.h"
#include "small_batch_setup.h"

void sb_teardown(uf_ctx *ctx)
{
    sb_state *st = (sb_state *)ctx->state;
    if (!st)
        return;
    uf_teardown_drain(ctx);
    lt_gemm_free(&st->wave);
    cudaFree(st->wave_x);
    cudaFree(st->wave_w);
    cudaFree(st->wave_y);
    cudaFree(st->chase);
    cudaFree(st->small_out);
    stack_free(&st->m);
    cudaFree(st->blas_ws);
    if (st->lt)
        cublasLtDestroy(st->lt);
    if (st->blas)
        cublasDestroy(st->blas);
    free(st);
    ctx->state = NULL;
}

/* The stack for max(M, G) tokens (accumulate reads G tokens of inputs, micro1 M). */
int sb_setup_schedule(uf_ctx *ctx, const sb_schedule *schedule)
{
    int rc = UF_OK;
    sb_state *st = NULL;
    const int d = (int)uf_axis(ctx, "d_model");
    const int M = (int)uf_axis(ctx, "tokens"), G = (int)uf_axis(ctx, "global_tokens");
    if (d % 64 != 0)
        return uf_fail(ctx, UF_USAGE, "d_model=%d: must be a multiple of 64", d);
    st = (sb_state *)calloc(1, sizeof *st);
    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    ctx->state = st;
    st->schedule = schedule;
    st->tokens = M;
    st->global_tokens = G;
    st->seed = ctx->seed;
    st->m.d = d;
    st->m.layers = SB_LAYERS;
    st->m.t_max = M > G ? M : G;
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, stack_bytes(d, SB_LAYERS, st->m.t_max) +
                                                 SB_BLAS_WS_BYTES,
                                        "weights, gradients and activations"),
                      out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&st->sms, cudaDevAttrMultiProcessorCount,
                                               ctx->device), out);
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&st->blas), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtCreate(&st->lt), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->blas_ws, SB_BLAS_WS_BYTES), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->small_out,
                                   (size_t)(st->sms > SB_SPIN_THREADS ? st->sms : SB_SPIN_THREADS) *
                                       sizeof(uint32_t)),
                    out);
    st->m.blas = st->blas;
    /* cublasSetStream resets the workspace, so it is set after */
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(st->blas, ctx->stream), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetWorkspace(st->blas, st->blas_ws, SB_BLAS_WS_BYTES), out);
    UF_STATUS_OR_GOTO(rc, stack_alloc(&st->m, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, stack_fill(&st->m, ctx->seed, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc; /* on failure the harness calls teardown, which frees what was made */
}

/* Where a variant is measured: UF_OK, or UF_SKIP with the reason in ctx->reason. */
static int sb_applies(uf_ctx *ctx, int variant)
{
    sb_state *st = (sb_state *)ctx->state;
    const int n_micro = st->global_tokens / st->tokens;
    switch (variant) {
    case SB_ACCUMULATE:
        if (st->global_tokens % st->tokens != 0 || n_micro < 2 || n_micro > SB_MAX_MICRO)
        {
            snprintf(ctx->reason, sizeof ctx->reason,
                     "accumulate: global_tokens=%d is not 2..%d micro-batches of tokens=%d (at "
                     "more, a step takes seconds; each micro-batch is micro1's step)",
                     st->global_tokens, SB_MAX_MICRO, st->tokens);
            return UF_SKIP;
        }
        return UF_OK;
    case SB_LARGE_MICRO:
    case SB_ONE_BLOCK:
    case SB_LATENCY_BOUND:
        return uf_only_at_default(ctx, variant, "tokens");
    default:
        return UF_OK;
    }
}

/* latency_bound's table, filled once; its blocks ask for more than half an SM's shared memory,
 * so that no SM holds two of them (left at 0 where the GPU does not allow that much). */
static int chase_prepare(uf_ctx *ctx, sb_state *st)
{
    int rc = UF_OK, per_sm = 0, per_block = 0;
    const size_t bytes = ((size_t)SB_CHASE_MASK + 1) * sizeof(uint32_t);
    if (st->sms > SB_MAX_CHAINS)
        return uf_fail(ctx, UF_SKIP, "latency_bound: %d SMs, more chains than verify checks (%d)",
                       st->sms, SB_MAX_CHAINS);
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, bytes, "the pointer-chase table"), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->chase, bytes), out);
    chase_fill_kernel<<<SB_FILL_MAX_BLOCKS, SB_FILL_THREADS, 0, ctx->stream>>>(st->chase,
                                                                              SB_CHASE_MASK);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                               ctx->device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                               ctx->device), out);
    st->chase_smem = per_sm / 2 + 1024 <= per_block ? per_sm / 2 + 1024 : 0;
    UF_CUDA_OR_GOTO(rc, cudaFuncSetAttribute(chase_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             st->chase_smem), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* wave: M × SB_WAVE_K inputs, SB_WAVE_N × SB_WAVE_K weights, the heuristic's plan. */
static int wave_prepare(uf_ctx *ctx, sb_state *st)
{
    int rc = UF_OK;
    const size_t x = (size_t)st->tokens * SB_WAVE_K, w = (size_t)SB_WAVE_N * SB_WAVE_K;
    const size_t y = (size_t)st->tokens * SB_WAVE_N;
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, (x + w + y) * sizeof(bf16), "the wave GEMM"), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->wave_x, x * sizeof(bf16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->wave_w, w * sizeof(bf16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->wave_y, y * sizeof(bf16)), out);
    UF_STATUS_OR_GOTO(rc, fill_bf16(st->wave_x, x, st->seed, SB_T_WAVE_X, 1.0f, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, fill_bf16(st->wave_w, w, st->seed, SB_T_WAVE_W,
                                    (float)sqrt(3.0 / SB_WAVE_K), ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, lt_gemm_plan(st->lt, st->tokens, SB_WAVE_K, SB_WAVE_N, SB_BLAS_WS_BYTES,
                                       &st->wave), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

int sb_end_variant(uf_ctx *ctx, int variant)
{
    sb_state *st = (sb_state *)ctx->state;
    int rc = UF_OK;
    (void)variant;
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    lt_gemm_free(&st->wave);
    cudaFree(st->wave_x);
    cudaFree(st->wave_w);
    cudaFree(st->wave_y);
    cudaFree(st->chase);
    st->wave_x = st->wave_w = st->wave_y = NULL;
    st->chase = NULL;
    return rc;
}

int sb_begin_variant(uf_ctx *ctx, int variant)
{
    sb_state *st = (sb_state *)ctx->state;
    int rc = sb_applies(ctx, variant);
    if (rc != UF_OK)
        return rc;
    if (variant == SB_LATENCY_BOUND)
        return chase_prepare(ctx, st);
    if (variant == SB_WAVE)
        return wave_prepare(ctx, st);
    return UF_OK;
}

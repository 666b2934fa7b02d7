/* checkpoint_recompute: the cuBLAS stream binding, device-memory probes, setup and teardown,
 * and each variant's activation arena (begin/end_variant). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "underfed.h"
#include "uf_cublas.h"
#include "checkpoint_recompute_model.h"
#include "checkpoint_recompute_state.h"
#include "checkpoint_recompute_setup.h"

/* Bind the cuBLAS handle to the stream. cublasSetStream resets the workspace to cuBLAS's own
 * pool, so the explicit workspace is set again after it. */
int bind_stream(cr_state *st, cudaStream_t stream)
{
    int rc = UF_OK;
    if (st->stream_bound && st->bound_stream == stream)
        return UF_OK;
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(st->blas, stream), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetWorkspace(st->blas, st->blas_ws, CR_BLAS_WS_BYTES), out);
    st->bound_stream = stream;
    st->stream_bound = 1;
    st->m.stream = stream;
out:
    return rc;
}

static size_t mem_free_bytes(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return 0;
    return free_b;
}

/* Device memory taken since free_before was read (0 if more is free now). */
static size_t mem_taken_since(size_t free_before)
{
    const size_t free_now = mem_free_bytes();
    return free_before > free_now ? free_before - free_now : 0;
}

/* ---- callbacks --------------------------------------------------------------------------- */

void cr_teardown(uf_ctx *ctx)
{
    cr_state *st = (cr_state *)ctx->state;
    if (!st)
        return;
    cudaFree(st->arena.base);
    model_free(&st->m);
    cudaFree(st->blas_ws);
    if (st->blas)
        cublasDestroy(st->blas);
    free(st);
    ctx->state = NULL;
}

/* Plan every policy (dry runs of run_policy), refuse a size that cannot fit, then allocate and
 * fill. */
int cr_setup_policies(uf_ctx *ctx, cr_policy_fn run_policy)
{
    int rc = UF_OK;
    int d = 0, T = 0, L = 0, k = 0;
    size_t need = 0, plan_max = 0, free0 = 0;
    cr_state *st = NULL;
    /* whole numbers in range: the harness checked them against cr_axes */
    k = (int)uf_axis(ctx, "k");
    L = (int)uf_axis(ctx, "layers");
    T = (int)uf_axis(ctx, "tokens");
    d = (int)uf_axis(ctx, "d_model");
    if (d % 64 != 0) {
        rc = uf_fail(ctx, UF_USAGE, "d_model=%d: must be a multiple of 64", d);
        goto out;
    }
    st = (cr_state *)calloc(1, sizeof *st);
    if (!st) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out;
    }
    ctx->state = st;
    st->k = k;
    st->grad_mismatch = NAN;
    st->run_policy = run_policy;
    UF_STATUS_OR_GOTO(rc, model_init_host(&st->m, d, T, L), out);
    st->m.arena = &st->arena;
    for (int p = 0; p < CR_N_POLICIES; p++) {
        UF_STATUS_OR_GOTO(rc, plan_policy(&st->m, run_policy, p, k, &st->plan_bytes[p]), out);
        if (st->plan_bytes[p] > plan_max)
            plan_max = st->plan_bytes[p];
    }
    /* the model, the variant's arena, and what verify adds: a second set of gradients and a
     * store_all arena for the reference run */
    need = model_device_bytes(&st->m) + CR_BLAS_WS_BYTES + plan_max + grads_bytes(&st->m) +
           st->plan_bytes[CR_STORE_ALL];
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, need, "weights, gradients and activations"), out);

    free0 = mem_free_bytes();
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&st->blas), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->blas_ws, CR_BLAS_WS_BYTES), out);
    UF_STATUS_OR_GOTO(rc, model_alloc_device(&st->m), out);
    st->setup_mem_bytes = mem_taken_since(free0);
    st->m.blas = st->blas;
    UF_STATUS_OR_GOTO(rc, bind_stream(st, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, model_fill(&st->m, ctx->seed), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc; /* on failure the harness calls teardown, which frees what was made */
}

/* Size the variant's arena by its plan and measure what the allocation took. */
int cr_begin_variant(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    cr_state *st = (cr_state *)ctx->state;
    /* only every_k depends on k: the others are measured once, at the default k */
    if (variant != CR_EVERY_K && uf_only_at_default(ctx, variant, "k") != UF_OK)
        return UF_SKIP;
    const size_t bytes = st->plan_bytes[variant];
    size_t free0 = 0;
    cudaFree(st->arena.base);
    memset(&st->arena, 0, sizeof st->arena);
    st->grad_mismatch = NAN;
    free0 = mem_free_bytes();
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->arena.base, bytes), out);
    st->arena.capacity = bytes;
    st->arena_mem_bytes = mem_taken_since(free0);
out:
    return rc;
}

int cr_end_variant(uf_ctx *ctx, int variant)
{
    cr_state *st = (cr_state *)ctx->state;
    (void)variant;
    cudaFree(st->arena.base);
    st->arena.base = NULL;
    st->arena.capacity = 0;
    return UF_OK;
}

/* elementwise_chain: the tensor size, the inputs and setup (with its once-per-setup check of
 * the GELU's reciprocal). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "random.h"
#include "underfed.h"
#include "elementwise_chain_ref.h"
#include "elementwise_chain_kernels.h"
#include "elementwise_chain_setup.h"

#define EW_MIB ((size_t)1 << 20)
#define EW_GIB ((size_t)1 << 30)

/* Tensor size: far larger than the L2, so that every op really goes to HBM. Full: 1 GiB or
 * 16x the L2; quick: 64 MiB or 4x the L2 (256 MiB on an H200, whose L2 is 50 MiB: a 64 MiB
 * tensor would partly stay in L2 between the unfused kernels and flatter them). */
static size_t ew_tensor_bytes(int quick, int l2_bytes)
{
    size_t floor_bytes = quick ? 64 * EW_MIB : EW_GIB;
    size_t want = (size_t)(l2_bytes > 0 ? l2_bytes : 0) * (quick ? 4 : 16);
    size_t bytes = floor_bytes;
    while (bytes < want)
        bytes *= 2;
    return bytes;
}

void ew_free_state(ew_state *st)
{
    if (st == NULL)
        return;
    cudaFree(st->d_bad);
    cudaFree(st->bias);
    cudaFree(st->y);
    cudaFree(st->residual);
    cudaFree(st->x);
    free(st);
}

static int ew_fill(uf_ctx *ctx, const ew_state *st, void *p, size_t n, uint32_t key,
                   float amplitude)
{
    int rc = UF_OK;
    ew_fill_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(p, n, st->bits, key, amplitude);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Fresh random inputs (never zeros) and dropout seed from `seed`, enqueued on the stream. */
int ew_make_inputs(uf_ctx *ctx, ew_state *st, uint64_t seed)
{
    int rc = UF_OK;
    uint32_t base = uf_mix32((uint32_t)seed ^ uf_mix32((uint32_t)(seed >> 32) + 0x51ed27u));
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->x, st->n, uf_mix32(base + 1), 2.0f), out);
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->residual, st->n, uf_mix32(base + 2), 1.0f), out);
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->bias, EW_HIDDEN, uf_mix32(base + 3), 0.5f), out);
    st->seed = uf_mix32(base + 4);
out:
    return rc;
}

/* The GELU's reciprocal must be correctly rounded for the device and host results to agree:
 * checked once per setup on every value it can take (ew_rcp_check_kernel). */
static int ew_check_rcp(uf_ctx *ctx, const ew_state *st)
{
    int rc = UF_OK;
    unsigned long long bad = 0;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_bad, 0, sizeof *st->d_bad, ctx->stream), out);
    ew_rcp_check_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(st->d_bad);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(&bad, st->d_bad, sizeof bad, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
    if (bad != 0)
        rc = uf_fail(ctx, UF_ERR, "the branch-free reciprocal of the GELU differs from "
                     "__frcp_rn at %llu values of [27, 108]", bad);
out:
    return rc;
}

/* ---- callbacks ------------------------------------------------------------------------- */

int ew_setup(uf_ctx *ctx)
{
    int rc = UF_OK, l2_bytes = 0, sms = 0;
    double ops = uf_axis(ctx, "ops"), bits = uf_axis(ctx, "bits");
    ew_state *st = NULL;

    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ctx->device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->device),
                    out);
    st = (ew_state *)calloc(1, sizeof *st);
    if (st == NULL)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    st->n_ops = (int)ops;
    st->bits = (int)bits;
    st->elem_bytes = st->bits / 8;
    st->tensor_bytes = ew_tensor_bytes(ctx->quick, l2_bytes);
    st->n = st->tensor_bytes / st->elem_bytes;
    st->bias_bytes = EW_HIDDEN * st->elem_bytes;
    if (st->n % EW_HIDDEN != 0 || st->n >= ((size_t)1 << 32)) {
        rc = uf_fail(ctx, UF_ERR, "%zu elements: need a multiple of %d below 2^32", st->n,
                     (int)EW_HIDDEN);
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, 3 * st->tensor_bytes + st->bias_bytes + 64,
                                        "input, residual and output tensors"), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->x, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->residual, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->y, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->bias, st->bias_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->d_bad, 2 * sizeof *st->d_bad), out_free);
    st->check_blocks = 8 * sms;
    UF_STATUS_OR_GOTO(rc, ew_check_rcp(ctx, st), out_free);
    UF_STATUS_OR_GOTO(rc, ew_make_inputs(ctx, st, ctx->seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out_free);
    ctx->state = st;
    return UF_OK;
out_free:
    ew_free_state(st);
out:
    return rc;
}

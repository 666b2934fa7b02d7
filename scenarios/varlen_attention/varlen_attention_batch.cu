/* varlen_attention: the point's batch (axes, lengths, packed offsets, useful FLOPs), the fp32
 * reference's buffers, and their release (va_free_variant, va_teardown). */
#include <stdlib.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "varlen_attention_ref.h"
#include "varlen_attention_state.h"
#include "varlen_attention_batch.h"

/* Read the point's axes (in range: the harness checked them against va_axes). */
int va_read_axes(uf_ctx *ctx, va_state *st)
{
    const double dist = uf_axis(ctx, "dist"), batch = uf_axis(ctx, "batch");
    const double heads = uf_axis(ctx, "heads"), causal = uf_axis(ctx, "causal");
    st->dist = (int)dist;
    st->n_seqs = st->dist == VA_DIST_FIXED ? ((int)batch + 1) / 2 : (int)batch;
    st->heads = (int)heads;
    st->causal = (int)causal;
    return UF_OK;
}

/* Lengths, the packed offsets and the useful FLOPs (attention on real (query, key) pairs). */
int va_make_batch(uf_ctx *ctx, va_state *st)
{
    st->len = (int *)calloc((size_t)st->n_seqs, sizeof *st->len);
    st->cu_real = (int *)calloc((size_t)st->n_seqs + 1, sizeof *st->cu_real);
    if (!st->len || !st->cu_real)
        return uf_fail(ctx, UF_ERR, "out of host memory for the lengths");
    va_draw_lengths(st->dist, ctx->seed, st->n_seqs, st->len);
    st->max_len = 0;
    st->useful_flops = 0.0;
    for (int b = 0; b < st->n_seqs; b++) {
        const double n = st->len[b];
        const double pairs = st->causal ? n * (n + 1) / 2 : n * n;
        st->useful_flops += 4.0 * st->heads * VA_HEAD_DIM * pairs;
        st->cu_real[b + 1] = st->cu_real[b] + st->len[b];
        st->max_len = st->len[b] > st->max_len ? st->len[b] : st->max_len;
    }
    st->real_tokens = st->cu_real[st->n_seqs];
    return UF_OK;
}

int va_alloc_reference(uf_ctx *ctx, va_state *st)
{
    int rc = UF_OK;
    const size_t ref_bytes = (size_t)st->real_tokens * st->heads * VA_HEAD_DIM * sizeof(float);
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, ref_bytes, "the fp32 reference output"), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_ref_out, ref_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_sums, 3 * sizeof(double)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_cu_real, ((size_t)st->n_seqs + 1) * sizeof(int)), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpy(st->d_cu_real, st->cu_real, ((size_t)st->n_seqs + 1) * sizeof(int),
                                   cudaMemcpyHostToDevice), out);
    /* from pageable memory: the call may return before the DMA lands, and the kernels that read
     * it run on the harness's non-blocking stream, which does not wait for the legacy one */
    UF_CUDA_OR_GOTO(rc, cudaDeviceSynchronize(), out);
out:
    return rc; /* partial allocations are freed by teardown */
}

void va_free_variant(va_state *st)
{
    cudaFree(st->d_q);
    cudaFree(st->d_k);
    cudaFree(st->d_v);
    cudaFree(st->d_o);
    cudaFree(st->d_seqs);
    cudaFree(st->d_items);
    cudaFree(st->d_probe);
    st->d_q = st->d_k = st->d_v = st->d_o = NULL;
    st->d_seqs = NULL;
    st->d_items = NULL;
    st->d_probe = NULL;
    st->active = -1;
}

void va_teardown(uf_ctx *ctx)
{
    va_state *st = (va_state *)ctx->state;
    if (!st)
        return;
    va_free_variant(st);
    cudaFree(st->d_ref_out);
    cudaFree(st->d_sums);
    cudaFree(st->d_cu_real);
    for (int v = 0; v < VA_N_VARIANTS; v++) {
        free(st->plan[v].seqs);
        free(st->plan[v].items);
    }
    free(st->len);
    free(st->cu_real);
    free(st);
    ctx->state = NULL;
}

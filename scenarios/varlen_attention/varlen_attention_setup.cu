/* varlen_attention: the kernel build (va_prepare_kernel, for setup) and each variant's buffers
 * and inputs (va_fill_inputs, va_begin_variant, va_end_variant). */
#include <stdint.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "varlen_attention_kernels.h"
#include "varlen_attention_state.h"
#include "varlen_attention_batch.h"
#include "varlen_attention_setup.h"

/* The kernel build: 32 rows per warp where a block may have its shared memory, else 16;
 * refused (skip) where the GPU cannot give a block even that. */
int va_prepare_kernel(uf_ctx *ctx, va_state *st)
{
    int rc = UF_OK, smem_optin = 0;
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                               ctx->device), out);
    if (smem_optin < VA_SMEM_BYTES(16))
        return uf_fail(ctx, UF_SKIP, "the kernel needs %d bytes of shared memory per block, the "
                       "GPU allows %d", VA_SMEM_BYTES(16), smem_optin);
    st->rows = smem_optin >= VA_SMEM_BYTES(32) ? 32 : 16;
    UF_CUDA_OR_GOTO(rc, va_kernel_attributes(st->rows), out);
out:
    return rc;
}

/* Write fresh inputs (real and padding positions) into the active variant's Q, K, V. */
int va_fill_inputs(uf_ctx *ctx, va_state *st, int variant, uint64_t seed)
{
    int rc = UF_OK, max_computed = 0;
    const va_plan *p = &st->plan[variant];
    for (int s = 0; s < p->n_seqs; s++)
        max_computed = p->seqs[s].computed_len > max_computed ? p->seqs[s].computed_len : max_computed;
    const long long chunks = (long long)max_computed * st->heads * VA_CHUNKS_PER_ROW;
    const dim3 grid((unsigned)((chunks + 255) / 256), (unsigned)p->n_seqs);
    va_fill_kernel<<<grid, 256, 0, ctx->stream>>>(st->d_q, st->d_k, st->d_v, st->d_seqs, st->heads,
                                                  seed);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int va_begin_variant(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    va_state *st = (va_state *)ctx->state;
    const va_plan *p = &st->plan[variant];
    const size_t tensor_bytes = (size_t)p->stored_tokens * st->heads * VA_HEAD_DIM * 2;
    const size_t seqs_bytes = (size_t)p->n_seqs * sizeof(va_seq);
    const size_t items_bytes = (size_t)p->n_items * sizeof(va_item);
    va_free_variant(st);
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, 4 * tensor_bytes + seqs_bytes + items_bytes,
                                        "Q, K, V and O of the variant"), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_q, tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_k, tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_v, tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_o, tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_seqs, seqs_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_items, items_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_probe, sizeof *st->d_probe), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_probe, 0, sizeof *st->d_probe, ctx->stream),
                    out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_seqs, p->seqs, seqs_bytes, cudaMemcpyHostToDevice,
                                        ctx->stream), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_items, p->items, items_bytes, cudaMemcpyHostToDevice,
                                        ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, va_fill_inputs(ctx, st, variant, ctx->seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_o, 0, tensor_bytes, ctx->stream), out_free);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out_free);
    st->active = variant;
    st->variant_bytes = (double)(4 * tensor_bytes + seqs_bytes + items_bytes);
    return UF_OK;
out_free:
    va_free_variant(st);
out:
    return rc;
}

int va_end_variant(uf_ctx *ctx, int variant)
{
    va_state *st = (va_state *)ctx->state;
    (void)variant;
    va_free_variant(st);
    return UF_OK;
}

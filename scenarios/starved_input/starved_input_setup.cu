/* starved_input: setup and teardown (the corpus, tokenizer and host weights; device buffers and
 * cuBLAS). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "uf_cublas.h"
#include "tokenizer.h"
#include "starved_input_ref.h"
#include "starved_input_source.h"
#include "starved_input_state.h"
#include "starved_input_feed.h"
#include "starved_input_setup.h"

enum {
    SI_VOCAB_WORDS = 4096,      /* words of the generated language */
    SI_TRAIN_WORDS = 1500,      /* the most frequent words the merge table is trained on */
    SI_MERGES = 2000,           /* BPE merges trained (fewer if the training words run out) */
};

static size_t device_bytes_needed(const si_shape *sh, int vocab_size)
{
    size_t t = (size_t)sh->rows * (size_t)sh->seq_len, d = (size_t)sh->hidden;
    size_t f = (size_t)sh->ffn;
    size_t bf16_elems = (size_t)vocab_size * d + 2 * d * f + 2 * t * d + t * f;
    return bf16_elems * sizeof(__nv_bfloat16) + 2 * t * sizeof(int32_t);
}

/* The language, the merge table, the corpus and the weights, from the seed. Weights are
 * uniform with variance 1/fan_in, so activations stay O(1). */
static int build_host(uf_ctx *ctx, si_state *st)
{
    const si_shape *sh = &st->shape;
    size_t d = (size_t)sh->hidden, f = (size_t)sh->ffn;
    uint64_t rng = ctx->seed ^ 0x243F6A8885A308D3ULL;
    if (vocab_build(&st->vocab, ctx->seed, SI_VOCAB_WORDS) != UF_OK ||
        tokenizer_train(&st->tok, &st->vocab, SI_TRAIN_WORDS, SI_MERGES, st->tok_cost) != UF_OK ||
        corpus_build(&st->corpus, &st->vocab, ctx->seed, sh->corpus_batches * sh->rows) != UF_OK)
        return uf_fail(ctx, UF_ERR, "out of host memory building the corpus and the tokenizer");
    size_t n_emb = (size_t)st->tok.vocab_size * d;
    st->h_emb = (uint16_t *)malloc(n_emb * sizeof(uint16_t));
    st->h_w1 = (uint16_t *)malloc(d * f * sizeof(uint16_t));
    st->h_w2 = (uint16_t *)malloc(f * d * sizeof(uint16_t));
    if (!st->h_emb || !st->h_w1 || !st->h_w2)
        return uf_fail(ctx, UF_ERR, "out of host memory for the weights");
    fill_uniform_bf16(st->h_emb, n_emb, 1.0f, &rng);
    fill_uniform_bf16(st->h_w1, d * f, sqrtf(3.0f / (float)d), &rng);
    fill_uniform_bf16(st->h_w2, f * d, sqrtf(3.0f / (float)f), &rng);
    return UF_OK;
}

static int build_device(uf_ctx *ctx, si_state *st)
{
    int rc = UF_OK;
    size_t d = (size_t)st->shape.hidden, f = (size_t)st->shape.ffn, t = (size_t)st->tokens;
    size_t emb_bytes = (size_t)st->tok.vocab_size * d * sizeof(__nv_bfloat16);
    size_t w_bytes = d * f * sizeof(__nv_bfloat16);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_emb, emb_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_w1, w_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_w2, w_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_x, t * d * sizeof(__nv_bfloat16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_h, t * f * sizeof(__nv_bfloat16)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_y, t * d * sizeof(__nv_bfloat16)), out);
    for (int k = 0; k < 2; k++) {
        UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->d_ids[k], st->batch_bytes), out);
        UF_CUDA_OR_GOTO(rc, cudaEventCreateWithFlags(&st->step_done[k], cudaEventDisableTiming),
                        out);
    }
    UF_CUDA_OR_GOTO(rc, cudaMemcpy(st->d_emb, st->h_emb, emb_bytes, cudaMemcpyHostToDevice), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpy(st->d_w1, st->h_w1, w_bytes, cudaMemcpyHostToDevice), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpy(st->d_w2, st->h_w2, w_bytes, cudaMemcpyHostToDevice), out);
    /* A cudaMemcpy from pageable memory may return before its DMA lands, and the harness's
     * non-blocking stream does not wait for the legacy stream the copies ran on: wait here. */
    UF_CUDA_OR_GOTO(rc, cudaDeviceSynchronize(), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithFlags(&st->copy_stream, cudaStreamNonBlocking), out);
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&st->blas), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(st->blas, ctx->stream), out);
    st->device_bytes = device_bytes_needed(&st->shape, st->tok.vocab_size);
out:
    if (rc != UF_OK)
        uf_fail(ctx, rc, "setting up the step's device buffers failed (reported above)");
    return rc;
}

void si_teardown(uf_ctx *ctx)
{
    si_state *st = (si_state *)ctx->state;
    if (!st)
        return;
    feed_close(st, &st->feed);
    if (ctx->stream)
        cudaStreamSynchronize(ctx->stream);
    if (st->pretok)
        munmap(st->pretok, st->pretok_bytes);
    if (st->blas)
        cublasDestroy(st->blas);
    for (int k = 0; k < 2; k++) {
        if (st->step_done[k])
            cudaEventDestroy(st->step_done[k]);
        cudaFree(st->d_ids[k]);
    }
    if (st->copy_stream)
        cudaStreamDestroy(st->copy_stream);
    cudaFree(st->d_emb);
    cudaFree(st->d_w1);
    cudaFree(st->d_w2);
    cudaFree(st->d_x);
    cudaFree(st->d_h);
    cudaFree(st->d_y);
    free(st->h_emb);
    free(st->h_w1);
    free(st->h_w2);
    corpus_free(&st->corpus);
    tokenizer_free(&st->tok);
    vocab_free(&st->vocab);
    free(st);
    ctx->state = NULL;
}

/* The shape is the story's (full or --quick), and so is feed_step (verify feeds its own steps). */
int si_setup_shape(uf_ctx *ctx, const si_shape *shape, si_feed_step_fn feed_step)
{
    int rc = UF_OK;
    /* whole numbers in range: the harness checked them against si_axes */
    const int workers = (int)uf_axis(ctx, "workers"), tok_cost = (int)uf_axis(ctx, "tok_cost");
    si_state *st;
    if (workers > online_cores())
        fprintf(stderr, "starved_input: warning: %d workers on %ld online CPU cores: the workers "
                "share cores (and with the step thread)\n", workers, online_cores());
    st = (si_state *)calloc(1, sizeof *st);
    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    ctx->state = st;
    st->shape = *shape;
    st->feed_step = feed_step;
    st->device = ctx->device;
    st->workers = workers;
    st->tok_cost = tok_cost;
    st->tokens = (int64_t)st->shape.rows * st->shape.seq_len;
    st->batch_bytes = (size_t)st->tokens * sizeof(int32_t);
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, device_bytes_needed(&st->shape, 259 + SI_MERGES),
                                        "starved_input's weights and activations"), out_teardown);
    UF_STATUS_OR_GOTO(rc, build_host(ctx, st), out_teardown);
    UF_STATUS_OR_GOTO(rc, build_device(ctx, st), out_teardown);
    return UF_OK;
out_teardown:
    si_teardown(ctx);
    return rc;
}

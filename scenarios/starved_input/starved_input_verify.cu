/* starved_input: verification (every variant's batches and step outputs against the host
 * tokenizer and the host reference rows). The steps are fed by the story's feed_step (the
 * state's), each variant's own way. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "verify.h"
#include "tokenizer.h"
#include "starved_input_ref.h"
#include "starved_input_source.h"
#include "starved_input_state.h"
#include "starved_input_feed.h"
#include "starved_input_pretok.h"
#include "starved_input_verify.h"

enum {
    SI_VERIFY_BATCHES = 3,      /* verify's corpus */
    SI_VERIFY_STEPS = 5,        /* verify's steps: cycles past the end of its corpus */
    SI_VERIFY_ROWS = 6,         /* output rows checked against the host reference */
};
#define SI_TOLERANCE 1e-2       /* verify: max_rel_err (verify.h) per checked row */

/* Compare sampled output rows of the last step with the host reference: a BOS, the last
 * position of the first sequence (EOS or PAD), and random positions. */
static int check_rows(uf_ctx *ctx, si_state *st, const int32_t *ids, uint64_t seed,
                      double *max_rel_err)
{
    int rc = UF_OK, d = st->shape.hidden, f = st->shape.ffn;
    uint64_t rng = seed ^ 0x13198A2E03707344ULL;
    double worst = 0.0;
    int64_t worst_at = 0;
    char msg[UF_REASON_LEN] = "";
    double *h_acc = (double *)malloc((size_t)f * sizeof(double));
    double *y_acc = (double *)malloc((size_t)d * sizeof(double));
    float *h = (float *)malloc((size_t)f * sizeof(float));
    float *y = (float *)malloc((size_t)d * sizeof(float));
    uint16_t *gpu = (uint16_t *)malloc((size_t)d * sizeof(uint16_t));
    if (!h_acc || !y_acc || !h || !y || !gpu) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for the reference");
        goto out_free;
    }
    for (int r = 0; r < SI_VERIFY_ROWS; r++) {
        int64_t t = r == 0 ? 0
                  : r == 1 ? st->shape.seq_len - 1
                           : (int64_t)rng_below(&rng, (uint32_t)st->tokens);
        UF_CUDA_OR_GOTO(rc, cudaMemcpy(gpu, st->d_y + t * d, (size_t)d * sizeof(uint16_t),
                                       cudaMemcpyDeviceToHost), out_free);
        reference_row(st->h_emb, st->h_w1, st->h_w2, d, f, st->tok.vocab_size, ids[t], h_acc,
                      h, y_acc, y);
        uf_err err;
        uf_err_init(&err);
        for (int j = 0; j < d; j++)
            uf_err_add(&err, (size_t)j, uf_bf16_value(gpu[j]), y[j]);
        if (uf_err_value(&err) > worst || r == 0) {
            worst = uf_err_value(&err);
            worst_at = t;
            uf_err_check(&err, SI_TOLERANCE, msg, sizeof msg);
        }
    }
    *max_rel_err = worst;
    if (!(worst <= SI_TOLERANCE))
        rc = uf_fail(ctx, UF_ERR, "the output row of token %lld (id %d) differs from the host "
                     "reference: %s", (long long)worst_at, ids[worst_at], msg);
out_free:
    free(h_acc);
    free(y_acc);
    free(h);
    free(y);
    free(gpu);
    return rc;
}

/* Feed SI_VERIFY_STEPS steps of the variant from a fresh corpus (seed), through the variant's
 * own path (its workers, its pretokenized file), recording on the GPU the checksum of the ids
 * each step read. They must equal a single-threaded host tokenization of the same batches in
 * the same order, and sampled output rows of the last step must match the host reference. */
int si_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    si_state *st = (si_state *)ctx->state;
    int rc = UF_OK;
    char err[UF_REASON_LEN] = "";
    si_corpus corpus;
    si_scratch scratch;
    si_feed feed;
    si_source text, src;
    int32_t *ref_ids = NULL, *pretok = NULL;
    size_t pretok_bytes = 0;
    uint64_t ref_sum[SI_VERIFY_STEPS];
    unsigned long long gpu_sum[SI_VERIFY_STEPS], *d_sum = NULL;
    memset(&corpus, 0, sizeof corpus);
    memset(&scratch, 0, sizeof scratch);
    memset(&feed, 0, sizeof feed);
    *max_rel_err = NAN;
    ctx->reason[0] = '\0';

    if (corpus_build(&corpus, &st->vocab, seed, SI_VERIFY_BATCHES * st->shape.rows) != UF_OK ||
        scratch_alloc(&scratch) != UF_OK || !(ref_ids = (int32_t *)malloc(st->batch_bytes))) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for verify");
        goto out_free;
    }
    text_source(st, &corpus, SI_VERIFY_BATCHES, &text);
    for (int m = 0; m < SI_VERIFY_STEPS; m++) {     /* ref_ids ends holding the last batch */
        if (produce_batch(&text, m, ref_ids, &scratch, err, sizeof err) != UF_OK) {
            rc = uf_fail(ctx, UF_ERR, "the reference tokenization failed: %s", err);
            goto out_free;
        }
        ref_sum[m] = batch_checksum(ref_ids, st->tokens);
    }
    src = text;
    if (variant == SI_PRETOKENIZED) {
        if (pretok_build(&text, &pretok, &pretok_bytes, err, sizeof err) != UF_OK) {
            rc = uf_fail(ctx, UF_ERR, "pretokenizing verify's corpus failed: %s", err);
            goto out_free;
        }
        src.corpus = NULL;
        src.pretok = pretok;
    }
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&d_sum, sizeof gpu_sum), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(d_sum, 0, sizeof gpu_sum, ctx->stream), out_free);
    /* poison the output: an element the step does not write reads NaN */
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_y, 0xFF, (size_t)st->tokens * st->shape.hidden *
                                        sizeof(__nv_bfloat16), ctx->stream), out_free);
    if (feed_open(st, &feed, variant, &src, err, sizeof err) != UF_OK) {
        rc = uf_fail(ctx, UF_ERR, "%s", err);
        goto out_free;
    }
    for (int m = 0; m < SI_VERIFY_STEPS && rc == UF_OK; m++)
        if (st->feed_step(st, &feed, ctx->stream, d_sum + m, err, sizeof err) != UF_OK)
            rc = uf_fail(ctx, UF_ERR, "%s", err[0] ? err : "a verify step failed");
    if (rc == UF_OK)
        UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out_close);
out_close:
    feed_close(st, &feed);
    if (rc != UF_OK)
        goto out_free;
    UF_CUDA_OR_GOTO(rc, cudaMemcpy(gpu_sum, d_sum, sizeof gpu_sum, cudaMemcpyDeviceToHost),
                    out_free);
    for (int m = 0; m < SI_VERIFY_STEPS; m++) {
        if (gpu_sum[m] != ref_sum[m]) {
            rc = uf_fail(ctx, UF_ERR, "verify step %d read other token ids than the host "
                         "tokenizer made for batch %d (checksum %016llx, expected %016llx)", m,
                         m % SI_VERIFY_BATCHES, gpu_sum[m], (unsigned long long)ref_sum[m]);
            goto out_free;
        }
    }
    rc = check_rows(ctx, st, ref_ids, seed, max_rel_err);
out_free:
    if (rc != UF_OK && !ctx->reason[0])
        uf_fail(ctx, rc, "a CUDA call failed during verify (reported above)");
    cudaFree(d_sum);
    if (pretok)
        munmap(pretok, pretok_bytes);
    free(ref_ids);
    scratch_free(&scratch);
    corpus_free(&corpus);
    return rc;
}

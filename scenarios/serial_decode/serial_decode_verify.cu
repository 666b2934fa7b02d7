/* serial_decode: verification, on fresh weights, cache and first tokens drawn from verify's
 * seed, each decode SD_VERIFY_STEPS greedy steps long (each step's argmax fed back), its
 * logits poisoned (NaN) before every step so that a row no kernel wrote cannot pass:
 *   eager_b1     anchored on the host: a model of width SD_ANCHOR_D (the point's own when
 *                smaller) decoded by eager_b1's kernels against the fp64 reference
 *                teacher-forced on the device's tokens (sd_ref_decode): logits within
 *                SD_TOL_HOST, each token the reference's argmax unless its top-2 margin is
 *                within that tolerance;
 *   graph_b1     the same kernels: logits and tokens bit for bit eager_b1's;
 *   persistent   the same arithmetic (the same device functions) in another kernel: bit for
 *                bit eager_b1's too (on the H200, 2026-12-01: 0 logits of 8 x 32768 differed).
 *                Round 3 sums attention in another order than round 2 (16-byte value loads:
 *                each lane 8 features of every fourth position, then the 4 position groups;
 *                the chunks' combine sequential in chunk order) but in one order for every
 *                batch-1 variant: the per-op kernel (one block per KV head, or SD_ATTN_SPLITS
 *                blocks combined through memory) and the persistent kernel (a block per KV
 *                head) compute each 32-position chunk's partial alike and combine them in
 *                chunk order; the argmax's answer (the largest logit's lowest index) depends
 *                on no order. So bit for bit still holds, and the host tolerance stands;
 *   batched      cuBLAS GEMMs (another summation order): sequences 0 and SD_BATCH - 1 against
 *                eager_b1 decoding each alone on its own cache, within SD_TOL_DEVICE.
 * Why these tolerances: the device accumulates in fp32 and rounds every normed input, K, V,
 * attention output and MLP activation to bf16; where fp32 and fp64 (or two fp32 summation
 * orders) land on either side of a bf16 rounding boundary one element moves by one bf16 ulp,
 * and through 16 layers of a random model such differences grow: on the H200 (2026-12-01)
 * eager_b1 read 4.4e-3 to 5.6e-3 from the fp64 reference and batched (cuBLAS's order) 5.6e-3
 * to 6.2e-3 from eager_b1. Both tolerances are 2e-2, 3x the largest seen; a wrong kernel (a
 * missing layer, a wrong row, an unwritten logit) is off by tens of %, or NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "serial_decode_state.h"
#include "verify.h"

#define SD_ANCHOR_D 1024        /* the host anchor's width: rows of several segments */
#define SD_ANCHOR_STEPS 3       /* its steps (the fp64 reference: ~0.6 G multiply-adds) */

/* What one decode of one sequence produced: steps x vocab logits, the tokens chosen. */
typedef struct decode_out {
    float *logits;
    int *tok;
} decode_out;

static int decode_alloc(decode_out *o, int steps, int vocab)
{
    o->logits = (float *)malloc((size_t)steps * vocab * sizeof(float));
    o->tok = (int *)malloc((size_t)steps * sizeof(int));
    return o->logits && o->tok ? UF_OK : UF_ERR;
}

static void decode_free(decode_out *o)
{
    free(o->logits);
    free(o->tok);
    o->logits = NULL;
    o->tok = NULL;
}

/* `steps` steps from the state sd_model_restart drew: eager_b1's launches on `eager` (a
 * model or a sequence's view), else the variant's step. Before each step every logit of
 * `full` is poisoned (NaN); after it, the logits and token of sequences seqs[0..n) into out. */
static int run_decode(uf_ctx *ctx, sd_state *st, const sd_model *full, const sd_model *eager,
                      int variant, int steps, const int *seqs, int n, decode_out *out)
{
    int rc = UF_OK;
    const int vocab = full->s.vocab;
    for (int t = 0; t < steps; t++) {
        UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(full->logits, 0xFF, (size_t)full->s.batch * vocab *
                                            sizeof(float), ctx->stream), out);
        if (eager)
            UF_STATUS_OR_GOTO(rc, sd_enqueue_ops(eager, 0, ctx->stream), out);
        else
            UF_STATUS_OR_GOTO(rc, sd_enqueue(st, variant, ctx->stream), out);
        for (int i = 0; i < n; i++) {
            UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(out[i].logits + (size_t)t * vocab,
                                                full->logits + (size_t)seqs[i] * vocab,
                                                (size_t)vocab * sizeof(float),
                                                cudaMemcpyDeviceToHost, ctx->stream), out);
            UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(out[i].tok + t, full->tok + seqs[i], sizeof(int),
                                                cudaMemcpyDeviceToHost, ctx->stream), out);
        }
    }
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* A match's verdict: UF_OK, or UF_ERR with the reason (what, which sequence). */
static int judge(uf_ctx *ctx, const char *what, int seq, const sd_match *mt, double tol)
{
    if (mt->nonfinite)
        return uf_fail(ctx, UF_ERR, "%s, sequence %d: a logit is not finite (unwritten: the "
                       "logits are NaN before every step)", what, seq);
    if (mt->bad_step >= 0)
        return uf_fail(ctx, UF_ERR, "%s, sequence %d: step %d chose another token than the "
                       "reference although its top-2 margin exceeds the tolerance", what, seq,
                       mt->bad_step);
    if (!(mt->max_rel_err <= tol))
        return uf_fail(ctx, UF_ERR, "%s, sequence %d: logits differ from the reference's by "
                       "%.3g (max_rel_err; tolerance %.0e) over %d steps", what, seq,
                       mt->max_rel_err, tol, mt->steps_compared);
    return UF_OK;
}

/* eager_b1 against the fp64 host reference, on a model of width min(d, SD_ANCHOR_D). */
static int verify_anchor(uf_ctx *ctx, sd_state *st, uint64_t seed, double *err)
{
    int rc = UF_OK, own = st->m.s.d <= SD_ANCHOR_D, seq0 = 0;
    const int steps = own && st->m.s.d < SD_ANCHOR_D ? SD_VERIFY_STEPS : SD_ANCHOR_STEPS;
    char why[UF_REASON_LEN];
    sd_shape s;
    sd_model anchor, view;
    decode_out got = {NULL, NULL};
    double *want = NULL;
    int *inputs = NULL;
    sd_match mt;
    memset(&anchor, 0, sizeof anchor);
    if (sd_shape_make(own ? st->m.s.d : SD_ANCHOR_D, SD_LAYERS, SD_VOCAB, SD_CACHE, 1, &s, why,
                      sizeof why) != 0)
        return uf_fail(ctx, UF_ERR, "the anchor's shape: %s", why);
    if (!own) {
        UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, sd_model_bytes(&s), "the host anchor's model"),
                          out);
        UF_STATUS_OR_GOTO(rc, sd_model_alloc(&anchor, &s, ctx->device), out);
        UF_STATUS_OR_GOTO(rc, sd_model_fill(&anchor, seed, ctx->stream), out);
    }
    view = sd_sequence_view(own ? &st->m : &anchor, 0);
    want = (double *)malloc((size_t)steps * s.vocab * sizeof *want);
    inputs = (int *)malloc((size_t)steps * sizeof *inputs);
    if (!want || !inputs || decode_alloc(&got, steps, s.vocab) != UF_OK) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out;
    }
    UF_STATUS_OR_GOTO(rc, run_decode(ctx, st, own ? &st->m : &anchor, &view, V_EAGER_B1, steps,
                                     &seq0, 1, &got), out);
    /* teacher-forced: the reference is fed the tokens the device chose */
    inputs[0] = sd_start_token(seed, 0, s.vocab);
    for (int t = 1; t < steps; t++)
        inputs[t] = got.tok[t - 1];
    if (sd_ref_decode(&s, seed, 0, steps, inputs, want) != 0) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for the host reference");
        goto out;
    }
    sd_compare(got.logits, got.tok, want, NULL, steps, s.vocab, SD_TOL_HOST, &mt);
    *err = mt.max_rel_err;
    st->steps_compared = mt.steps_compared;
    rc = judge(ctx, "eager_b1 against the fp64 host reference", 0, &mt, SD_TOL_HOST);
out:
    if (!own) {
        cudaStreamSynchronize(ctx->stream);
        sd_model_free(&anchor);
    }
    decode_free(&got);
    free(want);
    free(inputs);
    return rc;
}

/* graph_b1, persistent, batched against eager_b1 on the point's model. */
static int verify_against_eager(uf_ctx *ctx, sd_state *st, int variant, uint64_t seed,
                                double *err)
{
    int rc = UF_OK;
    const char *name = ctx->scenario->variants[variant].name;
    const sd_shape *s = &st->m.s;
    const int seqs[2] = {0, s->batch - 1}, n = variant == V_BATCHED ? 2 : 1;
    const int steps = SD_VERIFY_STEPS;
    decode_out ref[2] = {{NULL, NULL}, {NULL, NULL}}, got[2] = {{NULL, NULL}, {NULL, NULL}};
    double *want = (double *)malloc((size_t)steps * s->vocab * sizeof *want);
    char msg[UF_REASON_LEN];
    if (!want)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    for (int i = 0; i < n; i++)
        if (decode_alloc(&ref[i], steps, s->vocab) != UF_OK ||
            decode_alloc(&got[i], steps, s->vocab) != UF_OK) {
            rc = uf_fail(ctx, UF_ERR, "out of host memory");
            goto out;
        }
    for (int i = 0; i < n; i++) {   /* eager_b1 decoding each sequence alone */
        const sd_model view = sd_sequence_view(&st->m, seqs[i]);
        UF_STATUS_OR_GOTO(rc, sd_model_restart(&st->m, seed, ctx->stream), out);
        UF_STATUS_OR_GOTO(rc, run_decode(ctx, st, &st->m, &view, V_EAGER_B1, steps, &seqs[i], 1,
                                         &ref[i]), out);
    }
    UF_STATUS_OR_GOTO(rc, sd_model_restart(&st->m, seed, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, run_decode(ctx, st, &st->m, NULL, variant, steps, seqs, n, got), out);
    st->bitwise_diff = 0.0;
    st->steps_compared = steps;
    *err = 0.0;
    for (int i = 0; i < n && rc == UF_OK; i++) {
        sd_match mt;
        for (size_t k = 0; k < (size_t)steps * s->vocab; k++)
            want[k] = ref[i].logits[k];
        sd_compare(got[i].logits, got[i].tok, want, ref[i].tok, steps, s->vocab,
                   SD_TOL_DEVICE, &mt);
        st->bitwise_diff += mt.bitwise_diff;
        st->steps_compared = fmin(st->steps_compared, mt.steps_compared);
        *err = fmax(*err, mt.max_rel_err);
        if (variant != V_BATCHED) {     /* the same arithmetic: the same bits */
            if (uf_check_bitwise(got[i].logits, ref[i].logits, (size_t)steps * s->vocab,
                                 sizeof(float), msg, sizeof msg) != 0 ||
                uf_check_bitwise(got[i].tok, ref[i].tok, (size_t)steps, sizeof(int), msg,
                                 sizeof msg) != 0)
                rc = uf_fail(ctx, UF_ERR, "%s against eager_b1 (the same arithmetic, so the "
                             "same bits): %s", name, msg);
            continue;
        }
        rc = judge(ctx, name, seqs[i], &mt, SD_TOL_DEVICE);
    }
out:
    for (int i = 0; i < 2; i++) {
        decode_free(&ref[i]);
        decode_free(&got[i]);
    }
    free(want);
    return rc;
}

int sd_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    sd_state *st = (sd_state *)ctx->state;
    int rc = UF_OK;
    *max_rel_err = NAN;
    st->bitwise_diff = st->steps_compared = NAN;
    UF_STATUS_OR_GOTO(rc, sd_model_fill(&st->m, seed, ctx->stream), out);
    if (variant == V_EAGER_B1)
        rc = verify_anchor(ctx, st, seed, max_rel_err);
    else
        rc = verify_against_eager(ctx, st, variant, seed, max_rel_err);
out:
    return rc;
}

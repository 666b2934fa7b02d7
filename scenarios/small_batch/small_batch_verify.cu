/* small_batch: verification, on fresh inputs drawn from verify's seed. The GEMM variants: (1)
 * their schedule on a tiny stack against the fp64 host reference (the whole step: outputs,
 * input gradients, every accumulated weight gradient), so micro-batch and large batch are
 * checked to give the same per-token results and the same summed gradients; (2) at the
 * point's size, sampled outputs of three of the step's GEMMs against fp64 dot products of the
 * bf16 operands the device read. one_block and latency_bound: every thread's chain against
 * the host's, exactly. wave: sampled outputs. The step is the story's schedule (the state's). */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "small_batch_ref.h"
#include "small_batch_kernels.h"
#include "small_batch_stack.h"
#include "small_batch_state.h"
#include "small_batch_verify.h"

#define SB_SAMPLES 16               /* sampled outputs per checked GEMM */
#define SB_TINY_D 64                /* the anchor's stack: the shape the tolerance was tested on */
#define SB_TINY_LAYERS 2
#define SB_TINY_MICRO 8
#define SB_TINY_N_MICRO 4

/* height × width bf16 of a row-major device matrix (row stride pitch elements) as floats. */
static int fetch(const bf16 *src, size_t pitch, size_t width, size_t height, float *dst,
                 cudaStream_t stream)
{
    int rc = UF_OK;
    uint16_t *raw = (uint16_t *)malloc(width * height * sizeof *raw);
    if (!raw) {
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory");
        return UF_ERR;
    }
    UF_CUDA_OR_GOTO(rc, cudaMemcpy2DAsync(raw, width * sizeof *raw, src, pitch * sizeof(bf16),
                                          width * sizeof(bf16), height, cudaMemcpyDeviceToHost,
                                          stream),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(stream), out);
    for (size_t i = 0; i < width * height; i++)
        dst[i] = uf_bf16_value(raw[i]);
out:
    free(raw);
    return rc;
}

/* The bf16 value the device drew for element e of a tensor. */
static double drawn(uint64_t seed, uint64_t tensor, uint64_t e, float scale)
{
    return uf_bf16_round(sb_random(seed, tensor, e, scale));
}

static uint64_t pick(uint64_t seed, uint64_t i, uint64_t n) { return uf_hash_at(seed, i) % n; }

/* Sampled outputs of three GEMMs of the step just run (its last micro-batch: T tokens from
 * global token t0): the last layer's MLP-down forward, the first layer's QKV input gradient
 * (dL/dx), and, when the step had one micro-batch, the last layer's MLP-down weight gradient. */
static int check_stack(sb_state *st, int T, int t0, int n_micro, uint64_t seed,
                       cudaStream_t stream, double *err)
{
    int rc = UF_OK;
    sb_stack *m = &st->m;
    const int d = m->d, L = m->layers;
    const uint64_t w_down = (uint64_t)SB_T_W + 4 * (L - 1) + (uint64_t)SB_DOWN;
    const uint64_t w_qkv = (uint64_t)SB_T_W + (uint64_t)SB_QKV;
    const float s_down = sb_weight_scale(SB_DOWN, d), s_qkv = sb_weight_scale(SB_QKV, d);
    float *row = (float *)malloc((size_t)(4 * d > T ? 4 * d : T) * sizeof(float));
    float got;
    uf_err fwd, dgrad, wgrad;
    uf_err_init(&fwd);
    uf_err_init(&dgrad);
    uf_err_init(&wgrad);
    if (!row) {
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory");
        return UF_ERR;
    }
    for (int s = 0; s < SB_SAMPLES; s++) {
        const size_t t = pick(seed, 4 * s, T), o = pick(seed, 4 * s + 1, d);
        const size_t i = pick(seed, 4 * s + 2, d), i4 = pick(seed, 4 * s + 3, 4 * d);
        double want = 0.0;
        /* forward: h[L][t][o] = u[L-1][t] · W_down[o] */
        UF_STATUS_OR_GOTO(rc, fetch(m->u[L - 1] + t * 4 * d, 4 * d, 4 * d, 1, row, stream), out);
        for (int k = 0; k < 4 * d; k++)
            want += row[k] * drawn(seed, w_down, o * 4 * d + k, s_down);
        UF_STATUS_OR_GOTO(rc, fetch(m->h[L] + t * d + o, 1, 1, 1, &got, stream), out);
        uf_err_add(&fwd, s, got, want);
        /* input gradient: g[t][i] = Σ_o dV[t][o] · W_qkv[2d + o][i] */
        want = 0.0;
        UF_STATUS_OR_GOTO(rc, fetch(m->dqkv + t * 3 * d + 2 * d, d, d, 1, row, stream), out);
        for (int k = 0; k < d; k++)
            want += row[k] * drawn(seed, w_qkv, (size_t)(2 * d + k) * d + i, s_qkv);
        UF_STATUS_OR_GOTO(rc, fetch(m->g + t * d + i, 1, 1, 1, &got, stream), out);
        uf_err_add(&dgrad, s, got, want);
        if (n_micro != 1)
            continue;   /* the accumulated gradient's earlier micro-batches are gone: anchor */
        /* weight gradient: dW_down[o][i4] = Σ_t dy[t0 + t][o] · u[L-1][t][i4] */
        want = 0.0;
        UF_STATUS_OR_GOTO(rc, fetch(m->u[L - 1] + i4, 4 * d, 1, T, row, stream), out);
        for (int k = 0; k < T; k++)
            want += row[k] * drawn(seed, SB_T_DY, (size_t)(t0 + k) * d + o, 1.0f);
        UF_STATUS_OR_GOTO(rc, fetch(m->dw[L - 1][SB_DOWN] + o * 4 * d + i4, 1, 1, 1, &got, stream),
                          out);
        uf_err_add(&wgrad, s, got, want);
    }
    *err = fmax(fmax(uf_err_value(&fwd), uf_err_value(&dgrad)), uf_err_value(&wgrad));
out:
    free(row);
    return rc;
}

/* max_rel_err of n device values (row-major, the reference's layout) against ref. */
static int compare_dev(const bf16 *dev, size_t n, const double *ref, cudaStream_t stream,
                       double *err)
{
    int rc = UF_OK;
    uf_err e;
    float *got = (float *)malloc(n * sizeof *got);
    if (!got) {
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory");
        return UF_ERR;
    }
    UF_STATUS_OR_GOTO(rc, fetch(dev, n, n, 1, got, stream), out);
    uf_err_init(&e);
    for (size_t i = 0; i < n; i++)
        uf_err_add(&e, i, got[i], ref[i]);
    *err = fmax(*err, uf_err_value(&e));
out:
    free(got);
    return rc;
}

/* The variant's schedule on a tiny stack against the fp64 reference of the same tokens. */
static int verify_anchor(uf_ctx *ctx, sb_state *st, int variant, uint64_t seed, double *err)
{
    int rc = UF_OK;
    sb_stack tiny;
    sb_ref_out ref;
    sb_ref_shape shape = {.d = SB_TINY_D, .layers = SB_TINY_LAYERS, .tokens = 0, .micro = 0};
    int micro = 0, n_micro = 0;
    st->schedule->step_shape(SB_TINY_MICRO, SB_TINY_MICRO * SB_TINY_N_MICRO, variant, &micro,
                             &n_micro);
    const size_t last = (size_t)(n_micro - 1) * micro * SB_TINY_D;     /* its first value */
    memset(&tiny, 0, sizeof tiny);
    memset(&ref, 0, sizeof ref);
    tiny.d = SB_TINY_D;
    tiny.layers = SB_TINY_LAYERS;
    tiny.t_max = micro * n_micro;
    tiny.blas = st->blas;
    shape.tokens = micro * n_micro;
    shape.micro = micro;
    *err = 0.0;
    UF_STATUS_OR_GOTO(rc, stack_alloc(&tiny, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, stack_fill(&tiny, seed, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, st->schedule->run_schedule(&tiny, micro, n_micro), out);
    if (sb_host_reference(&shape, seed, 0, &ref) != 0) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for the host reference");
        goto out;
    }
    /* outputs and input gradients: the last micro-batch's tokens (its buffers are reused) */
    UF_STATUS_OR_GOTO(rc, compare_dev(tiny.h[SB_TINY_LAYERS], (size_t)micro * SB_TINY_D,
                                      ref.y + last, ctx->stream, err), out);
    UF_STATUS_OR_GOTO(rc, compare_dev(tiny.g, (size_t)micro * SB_TINY_D, ref.dx0 + last,
                                      ctx->stream, err), out);
    for (int l = 0; l < SB_TINY_LAYERS; l++)
        for (int j = 0; j < SB_N_LINEARS; j++)
            UF_STATUS_OR_GOTO(rc, compare_dev(tiny.dw[l][j],
                                              (size_t)sb_in_features(j, SB_TINY_D) *
                                                  sb_out_features(j, SB_TINY_D),
                                              ref.dw[l][j], ctx->stream, err), out);
out:
    free(ref.pool);
    cudaStreamSynchronize(ctx->stream);
    stack_free(&tiny);
    return rc;
}

/* The GEMM variants: the anchor, then the sampled GEMMs of a step at the point's size. */
static int verify_stack(uf_ctx *ctx, sb_state *st, int variant, uint64_t seed, double *err)
{
    int rc = UF_OK;
    const char *name = ctx->scenario->variants[variant].name;
    double anchor = NAN, sampled = NAN;
    int micro = 0, n_micro = 0;
    st->schedule->step_shape(st->tokens, st->global_tokens, variant, &micro, &n_micro);
    UF_STATUS_OR_GOTO(rc, verify_anchor(ctx, st, variant, seed, &anchor), out);
    UF_STATUS_OR_GOTO(rc, stack_fill(&st->m, seed, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, st->schedule->run_schedule(&st->m, micro, n_micro), out);
    UF_STATUS_OR_GOTO(rc, check_stack(st, micro, (n_micro - 1) * micro, n_micro, seed,
                                      ctx->stream, &sampled), out);
    *err = fmax(anchor, sampled);
    if (!(anchor <= SB_TOL_ANCHOR))
        rc = uf_fail(ctx, UF_ERR, "%s: the tiny stack's step differs from the fp64 reference by "
                     "%.3g (max_rel_err; tolerance %.0e)", name, anchor, SB_TOL_ANCHOR);
    else if (!(sampled <= SB_TOL_SAMPLED))
        rc = uf_fail(ctx, UF_ERR, "%s: sampled GEMM outputs differ from fp64 dot products of "
                     "their operands by %.3g (max_rel_err; tolerance %.0e)", name, sampled,
                     SB_TOL_SAMPLED);
out:
    return rc;
}

/* one_block and latency_bound: every chain's end value, exactly. */
static int verify_chains(uf_ctx *ctx, sb_state *st, int variant, uint64_t seed, double *err)
{
    int rc = UF_OK;
    const int n = variant == SB_ONE_BLOCK ? SB_SPIN_THREADS : st->sms;
    uint32_t got[SB_MAX_CHAINS];
    uf_err e;
    uf_err_init(&e);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->small_out, 0xFF, (size_t)n * sizeof(uint32_t),
                                        ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, st->schedule->enqueue_chains(st, variant, seed, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(got, st->small_out, (size_t)n * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
    for (int c = 0; c < n; c++) {
        const uint32_t want = variant == SB_ONE_BLOCK
                                  ? sb_spin_host(sb_spin_start(seed, c), SB_SPIN_ITERS)
                                  : sb_chase_host(sb_chase_start(seed, c, SB_CHASE_MASK),
                                                  SB_CHASE_MASK, SB_CHASE_HOPS);
        uf_err_add(&e, c, got[c], want);
    }
    *err = uf_err_value(&e);
    if (*err != 0.0)
        rc = uf_fail(ctx, UF_ERR, "%s: chain end values differ from the host's (max_rel_err %.3g)",
                     ctx->scenario->variants[variant].name, *err);
out:
    return rc;
}

/* wave: sampled outputs Y[t][o] = X[t] · W[o] on fresh operands. */
static int verify_wave(uf_ctx *ctx, sb_state *st, uint64_t seed, double *err)
{
    int rc = UF_OK;
    const float w_scale = (float)sqrt(3.0 / SB_WAVE_K);
    float *row = (float *)malloc(SB_WAVE_K * sizeof(float)), got;
    uf_err e;
    uf_err_init(&e);
    if (!row)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    UF_STATUS_OR_GOTO(rc, fill_bf16(st->wave_x, (size_t)st->tokens * SB_WAVE_K, seed,
                                    SB_T_WAVE_X, 1.0f, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, fill_bf16(st->wave_w, (size_t)SB_WAVE_N * SB_WAVE_K, seed, SB_T_WAVE_W,
                                    w_scale, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, lt_gemm_run(st->lt, &st->wave, st->wave_x, st->wave_w, st->wave_y,
                                      st->blas_ws, ctx->stream), out);
    for (int s = 0; s < SB_SAMPLES; s++) {
        const size_t t = pick(seed, 2 * s, st->tokens), o = pick(seed, 2 * s + 1, SB_WAVE_N);
        double want = 0.0;
        UF_STATUS_OR_GOTO(rc, fetch(st->wave_x + t * SB_WAVE_K, SB_WAVE_K, SB_WAVE_K, 1, row,
                                    ctx->stream), out);
        for (int k = 0; k < SB_WAVE_K; k++)
            want += row[k] * drawn(seed, SB_T_WAVE_W, o * SB_WAVE_K + k, w_scale);
        UF_STATUS_OR_GOTO(rc, fetch(st->wave_y + t * SB_WAVE_N + o, 1, 1, 1, &got, ctx->stream),
                          out);
        uf_err_add(&e, s, got, want);
    }
    *err = uf_err_value(&e);
    if (!(*err <= SB_TOL_SAMPLED))
        rc = uf_fail(ctx, UF_ERR, "wave: sampled outputs differ from fp64 dot products by %.3g "
                     "(max_rel_err; tolerance %.0e)", *err, SB_TOL_SAMPLED);
out:
    free(row);
    return rc;
}

int sb_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    sb_state *st = (sb_state *)ctx->state;
    switch (variant) {
    case SB_ONE_BLOCK:
    case SB_LATENCY_BOUND:
        return verify_chains(ctx, st, variant, seed, max_rel_err);
    case SB_WAVE:
        return verify_wave(ctx, st, seed, max_rel_err);
    default:
        return verify_stack(ctx, st, variant, seed, max_rel_err);
    }
}

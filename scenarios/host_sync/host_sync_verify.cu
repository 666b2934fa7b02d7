/* host_sync: verification. Every variant runs HS_VERIFY_STEPS steps on fresh inputs next to
 * item (the reference run); the device's loss history, the output and the small kernels'
 * counters must equal item's bit for bit, and the losses the host read must be item's, at the
 * variant's lag (item 0, deferred and pageable_copy HS_LAG). item's output is anchored on the
 * fp64 host reference (a few rows of the chain) and its loss on an fp64 sum over its output.
 * A step is the scenario's own run_step (ctx->scenario), as the harness runs it. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "verify.h"
#include "host_sync_ref.h"
#include "host_sync_kernels.h"
#include "host_sync_state.h"
#include "host_sync_setup.h"
#include "host_sync_verify.h"

#define HS_VERIFY_STEPS (4 * HS_LAG)    /* <= HS_HISTORY */
#define HS_CHECK_ROWS 4
/* bf16 tolerance of the rows (verify.h's max_rel_err): every GEMM output and activation is
 * stored in bf16 (8 significant bits); fp32 accumulation in another order than fp64 flips a
 * rounding by one ulp (2^-8 = 0.4 %) here and there, and 8 layers carry the flips on. 3e-2 is
 * ~8 ulps; a missing layer or a wrong weight moves the rows by tens of %. */
#define HS_ROW_TOL 3e-2
/* The loss: an fp32 tree sum of tokens x d terms against fp64, ~log2(n) * 2^-24 = 1.3e-6. */
#define HS_LOSS_TOL 1e-5

/* What one verify run left behind: the loss history, the host's reports, the output and the
 * small kernels' counters. */
typedef struct hs_run_out {
    float hist[HS_VERIFY_STEPS], reported[HS_VERIFY_STEPS];
    uint16_t *y;                /* hs_act_elems bf16 */
    float aux[HS_AUX];
} hs_run_out;

/* Run `variant` HS_VERIFY_STEPS steps from step 0 with no host work, and collect what it left. */
static int run_for_verify(uf_ctx *ctx, hs_state *st, int variant, hs_run_out *o)
{
    int rc = UF_OK;
    hs_reset_steps(st);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->y, 0xFF, hs_act_elems(st) * sizeof(bf16),
                                        ctx->stream), out);  /* NaN: an output not written shows */
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->aux, 0, HS_AUX * sizeof(float), ctx->stream), out);
    st->spin = 0;
    for (int s = 0; s < HS_VERIFY_STEPS; s++)
        UF_STATUS_OR_GOTO(rc, ctx->scenario->run_step(ctx, variant), out_spin);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(o->hist, st->losses, sizeof o->hist,
                                        cudaMemcpyDeviceToHost, ctx->stream), out_spin);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(o->y, st->y, hs_act_elems(st) * sizeof(bf16),
                                        cudaMemcpyDeviceToHost, ctx->stream), out_spin);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(o->aux, st->aux, sizeof o->aux, cudaMemcpyDeviceToHost,
                                        ctx->stream), out_spin);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, ctx->stream, "the verify steps"), out_spin);
    memcpy(o->reported, st->reported, sizeof o->reported);
out_spin:
    st->spin = 1;
out:
    return rc;
}

/* item's output against the fp64 chain on HS_CHECK_ROWS rows, and its last loss against an
 * fp64 sum over its output: the larger max_rel_err. Cached per seed (every variant at a point
 * is verified on the same seed). UF_ERR with the reason beyond the tolerances. */
static int anchor_on_host(uf_ctx *ctx, hs_state *st, uint64_t seed, const hs_run_out *ref)
{
    const size_t n = hs_act_elems(st);
    int rows[HS_CHECK_ROWS];
    double *want = NULL;
    float *y = NULL;
    char msg[UF_REASON_LEN];
    uf_err rows_err;
    double loss_want = NAN, loss_err = NAN;
    int rc = UF_OK;
    if (st->anchor_seed == seed && !isnan(st->anchor_err))
        return UF_OK;
    want = (double *)malloc((size_t)HS_CHECK_ROWS * st->d * sizeof *want);
    y = (float *)malloc(n * sizeof *y);
    if (!want || !y) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for the host reference");
        goto out;
    }
    for (int r = 0; r < HS_CHECK_ROWS; r++)
        rows[r] = (int)((long long)r * (st->tokens - 1) / (HS_CHECK_ROWS - 1));
    if (hs_ref_rows(seed, st->tokens, st->d, HS_LAYERS, rows, HS_CHECK_ROWS, want) != 0) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for the host reference");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = uf_bf16_value(ref->y[i]);
    uf_err_init(&rows_err);
    for (int r = 0; r < HS_CHECK_ROWS; r++)
        for (int j = 0; j < st->d; j++)
            uf_err_add(&rows_err, (size_t)rows[r] * st->d + j, y[(size_t)rows[r] * st->d + j],
                       want[(size_t)r * st->d + j]);
    if (uf_err_check(&rows_err, HS_ROW_TOL, msg, sizeof msg) != 0) {
        rc = uf_fail(ctx, UF_ERR, "item's output against the fp64 chain: %s", msg);
        goto out;
    }
    loss_want = hs_ref_loss(y, n, st->label_key, HS_VERIFY_STEPS - 1);
    loss_err = fabs(ref->hist[HS_VERIFY_STEPS - 1] - loss_want) / fabs(loss_want);
    if (!(loss_err <= HS_LOSS_TOL)) {
        rc = uf_fail(ctx, UF_ERR, "item's loss %.9g against the fp64 sum %.9g: relative error "
                     "%.3g > %.0e", ref->hist[HS_VERIFY_STEPS - 1], loss_want, loss_err,
                     HS_LOSS_TOL);
        goto out;
    }
    st->anchor_seed = seed;
    st->anchor_err = fmax(uf_err_value(&rows_err), loss_err);
out:
    free(y);
    free(want);
    return rc;
}

/* The variant against item's run: bitwise history, output and counters; its reports at its lag.
 * Sets st->loss_mismatch and st->loss_lag. UF_ERR with the reason on any difference. */
static int compare_with_item(uf_ctx *ctx, hs_state *st, int variant, const hs_run_out *ref,
                             const hs_run_out *got)
{
    const int lag = variant == V_ITEM ? 0
                  : variant == V_DEFERRED || variant == V_PAGEABLE_COPY ? HS_LAG : -1;
    const float ticks = (float)HS_VERIFY_STEPS * (float)(st->launches - HS_BASE_LAUNCHES);
    char msg[UF_REASON_LEN];
    int bad = hs_loss_mismatch(got->hist, ref->hist, HS_VERIFY_STEPS, 0);
    if (lag >= 0) {
        bad += hs_loss_mismatch(got->reported, ref->reported, HS_VERIFY_STEPS, lag);
        st->loss_lag = hs_loss_lag(got->reported, ref->reported, HS_VERIFY_STEPS, 2 * HS_LAG);
    }
    st->loss_mismatch = bad;
    if (bad)
        return uf_fail(ctx, UF_ERR, "%d of %d steps' losses differ from item's (expected lag "
                       "%d)", bad, HS_VERIFY_STEPS, lag);
    if (uf_check_bitwise(got->y, ref->y, hs_act_elems(st), sizeof(bf16), msg, sizeof msg))
        return uf_fail(ctx, UF_ERR, "output against item's: %s", msg);
    for (int i = 0; i < HS_AUX; i++)
        if (got->aux[i] != ticks)
            return uf_fail(ctx, UF_ERR, "small kernels: counter %d is %g, expected %g", i,
                           got->aux[i], ticks);
    return UF_OK;
}

int hs_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    hs_state *st = (hs_state *)ctx->state;
    hs_run_out *ref = (hs_run_out *)calloc(2, sizeof *ref), *got = ref + 1;
    const size_t y_bytes = hs_act_elems(st) * sizeof(bf16);
    if (!ref)
        return uf_fail(ctx, UF_ERR, "out of host memory for verify");
    ref->y = (uint16_t *)malloc(y_bytes);
    got->y = (uint16_t *)malloc(y_bytes);
    if (!ref->y || !got->y) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for verify");
        goto out;
    }
    UF_STATUS_OR_GOTO(rc, hs_fill_inputs(st, seed, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, run_for_verify(ctx, st, V_ITEM, ref), out);
    UF_STATUS_OR_GOTO(rc, anchor_on_host(ctx, st, seed, ref), out);
    UF_STATUS_OR_GOTO(rc, run_for_verify(ctx, st, variant, got), out);
    UF_STATUS_OR_GOTO(rc, compare_with_item(ctx, st, variant, ref, got), out);
    *max_rel_err = st->anchor_err;
out:
    free(got->y);
    free(ref->y);
    free(ref);
    return rc;
}

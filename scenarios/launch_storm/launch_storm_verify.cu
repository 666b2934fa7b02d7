/* launch_storm: verification of every variant (finite, against the host reference, eager and
 * graph bitwise equal to each other), through common/core/verify.h. A step is the scenario's own
 * run_step (ctx->scenario), as the harness runs it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "verify.h"
#include "launch_storm_ref.h"
#include "launch_storm_setup.h"
#include "launch_storm_state.h"
#include "launch_storm_verify.h"

#define LS_REF_WORK 16777216.0       /* host reference budget: elements checked x ops */

/* ---- verification ------------------------------------------------------------------------- */

/* Poison x_out (0xFFFFFFFF is a NaN, so an unwritten element fails), run the variant once,
 * copy the output back and wait. */
static int run_once(uf_ctx *ctx, int variant, float *host_out)
{
    const ls_state *st = (const ls_state *)ctx->state;
    size_t bytes = st->n * sizeof(float);
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->x_out, 0xFF, bytes, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, ctx->scenario->run_step(ctx, variant), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(host_out, st->x_out, bytes, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* Every element finite: catches unwritten (poisoned) elements and overflow. */
static int check_finite(uf_ctx *ctx, int variant, const float *out, size_t n)
{
    char msg[UF_REASON_LEN];
    if (uf_check_finite_f32(out, n, msg, sizeof msg) == 0)
        return UF_OK;
    return uf_fail(ctx, UF_ERR, "%s: %s", ctx->scenario->variants[variant].name, msg);
}

/* Tolerance of the normwise relative error after K fp32 ops. Each op rounds a handful of
 * times (unit roundoff u = 2^-24); its transcendental part (tanhf, expf: <= 2 ulp) enters
 * scaled by |c| <= 0.025, so one op adds at most about 2u of the running magnitude. The chain
 * hardly amplifies errors (the derivative of any stretch of it stays below ~1.4: the constants
 * change sign on every pass), so after K ops the error is at most about 2Ku, times that gain;
 * we allow 4Ku (2.4e-4 at K = 1000), and at least 1e-6 for chains of a few ops. Rounding
 * errors mostly cancel: a host simulation gives ~2e-6 at K = 1000 (100x below). A missing,
 * repeated or misordered op moves the larger values by ~1 % or more: forty times the
 * tolerance or more. */
static double tolerance(int n_ops)
{
    return fmax(4.0 * n_ops * 0x1.0p-24, 1e-6);
}

/* The j-th of m checked elements, spread over [0, n): one per stretch of n/m elements, at a
 * varying offset inside it (so all thread positions of a block are visited). */
static size_t sample_index(size_t j, size_t m, size_t n)
{
    if (m == n)
        return j;
    size_t stretch = n / m;
    return j * stretch + (j * 7919u) % stretch;
}

/* Host reference in double on up to LS_REF_WORK / K elements (all of them for small tensors):
 * max_rel_err over them (verify.h). */
static int check_reference(uf_ctx *ctx, int variant, const float *in, const float *out,
                           double *max_rel_err)
{
    const ls_state *st = (const ls_state *)ctx->state;
    double budget = fmax(LS_REF_WORK / st->n_ops, 256.0);
    size_t m = (double)st->n < budget ? st->n : (size_t)budget;
    char msg[UF_REASON_LEN];
    uf_err err;
    uf_err_init(&err);
    for (size_t j = 0; j < m; ++j) {
        size_t i = sample_index(j, m, st->n);
        double x = in[i];
        for (int k = 0; k < st->n_ops; ++k)
            x = ls_reference_op(st->ops[k].kind, x, st->ops[k].c);
        uf_err_add(&err, i, out[i], x);
    }
    *max_rel_err = uf_err_value(&err);
    if (uf_err_check(&err, tolerance(st->n_ops), msg, sizeof msg) == 0)
        return UF_OK;
    return uf_fail(ctx, UF_ERR, "%s: against the double reference on %zu of %zu elements: %s",
                   ctx->scenario->variants[variant].name, m, st->n, msg);
}

/* graph and fused must equal eager bit for bit: same ops, same roundings, same order. */
static int check_bitwise(uf_ctx *ctx, int variant, const float *out, const float *eager_out,
                         size_t n)
{
    char msg[UF_REASON_LEN];
    if (uf_check_bitwise(out, eager_out, n, sizeof(float), msg, sizeof msg) == 0)
        return UF_OK;
    return uf_fail(ctx, UF_ERR, "%s against eager: %s", ctx->scenario->variants[variant].name,
                   msg);
}

/* Fresh inputs from `seed`; the variant's output must be finite everywhere, match the double
 * reference within tolerance(K), and (graph, fused) equal an eager run bitwise. The inputs
 * stay in x_in afterwards: later passes do the same work on other values of the same law. */
int ls_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    ls_state *st = (ls_state *)ctx->state;
    size_t bytes = st->n * sizeof(float);
    int rc = UF_OK;
    *max_rel_err = NAN;
    float *in = (float *)malloc(bytes);
    float *out = (float *)malloc(bytes);
    float *eager_out = variant == V_EAGER ? NULL : (float *)malloc(bytes);
    if (!in || !out || (variant != V_EAGER && !eager_out)) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for %zu elements", st->n);
        goto out_free_host;
    }
    UF_STATUS_OR_GOTO(rc, ls_upload_inputs(ctx, st, seed, in), out_free_host);
    UF_STATUS_OR_GOTO(rc, run_once(ctx, variant, out), out_free_host);
    UF_STATUS_OR_GOTO(rc, check_finite(ctx, variant, out, st->n), out_free_host);
    UF_STATUS_OR_GOTO(rc, check_reference(ctx, variant, in, out, max_rel_err), out_free_host);
    if (variant != V_EAGER) {
        UF_STATUS_OR_GOTO(rc, run_once(ctx, V_EAGER, eager_out), out_free_host);
        UF_STATUS_OR_GOTO(rc, check_bitwise(ctx, variant, out, eager_out, st->n),
                          out_free_host);
    }
out_free_host:
    free(eager_out);
    free(out);
    free(in);
    return rc;
}

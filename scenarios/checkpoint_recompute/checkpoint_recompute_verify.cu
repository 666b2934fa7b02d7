/* checkpoint_recompute: verification (each policy's gradients bitwise against store_all's at
 * the point's size, store_all anchored on the fp64 host reference of a tiny model). The
 * policies run through the story's run_policy (the state's). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "checkpoint_recompute_ref.h"
#include "checkpoint_recompute_kernels.h"
#include "checkpoint_recompute_model.h"
#include "checkpoint_recompute_state.h"
#include "checkpoint_recompute_setup.h"
#include "checkpoint_recompute_verify.h"

#define CR_CMP_BLOCKS 1024
/* bf16 tolerance of max_rel_err (verify.h: max|a-b| / max|ref|, per gradient): every activation and gradient is
 * stored in bf16 (8 significant bits), and fp32 accumulation in another order than the fp64
 * reference flips roundings by one ulp (2^-8 = 0.4 %); the flips add up along the backward pass.
 * Measured with a host emulation of the kernels over 160 seeds: median 3.4e-3, max 8.9e-3.
 * 3e-2 is ~8 ulps; wiring faults (a missing GEMM, a stale buffer) give 0.2 to 0.8. */
#define CR_TOL 3e-2
#define CR_TINY_D 64                /* the tiny model of the host-reference anchor */
#define CR_TINY_T 32
#define CR_TINY_L 5                 /* 5 blocks: k = 2, 4 give uneven segments */
#define CR_POISON_RUN 0xFF          /* variant's gradients before verify: bf16/f32 NaN */
#define CR_POISON_REF 0x7F          /* reference's gradients: a different (finite) pattern */

/* Bitwise comparison of two gradient sets on the device; waits for the result. */
static int compare_grads(const cr_model *m, const cr_grads *ref, cr_diff host[2])
{
    int rc = UF_OK;
    cr_diff *dev = NULL;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&dev, 2 * sizeof *dev), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(dev, 0, 2 * sizeof *dev, m->stream), out_free);
    compare_bf16_kernel<<<CR_CMP_BLOCKS, 256, 0, m->stream>>>(
        (const unsigned short *)m->grads.bf, (const unsigned short *)ref->bf, m->grads.n_bf, dev);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out_free);
    compare_f32_kernel<<<CR_CMP_BLOCKS, 256, 0, m->stream>>>(
        (const unsigned int *)m->grads.f32, (const unsigned int *)ref->f32, m->grads.n_f32,
        dev + 1);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(host, dev, 2 * sizeof *dev, cudaMemcpyDeviceToHost,
                                        m->stream),
                    out_free);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(m->stream), out_free);
out_free:
    cudaFree(dev);
out:
    return rc;
}

/* max_rel_err (verify.h) from the maxima the compare kernels reduced. */
static double diff_rel(const cr_diff *c)
{
    float max_diff, max_ref;
    memcpy(&max_diff, &c->max_diff_bits, sizeof max_diff);
    memcpy(&max_ref, &c->max_ref_bits, sizeof max_ref);
    return uf_rel_err(max_diff, max_ref);
}

/* max_rel_err (verify.h) of one gradient of the tiny model against the host reference. */
static double grad_err(const float *dev, const double *ref, size_t n)
{
    uf_err err;
    uf_err_init(&err);
    for (size_t e = 0; e < n; e++)
        uf_err_add(&err, e, dev[e], ref[e]);
    return uf_err_value(&err);
}

/* At the point's size: the variant and store_all on the same fresh inputs; every gradient
 * element compared bitwise. */
static int verify_point(uf_ctx *ctx, cr_state *st, int variant, uint64_t seed,
                        unsigned long long *mismatch, unsigned long long *nonfinite, double *rel)
{
    int rc = UF_OK;
    cr_model ref = st->m;
    cr_arena ref_arena = st->arena;
    cr_diff diff[2];
    ref.grads.bf = NULL;
    ref.grads.f32 = NULL;
    ref_arena.base = NULL;
    UF_STATUS_OR_GOTO(rc, grads_alloc(&ref.grads), out_free);
    if (variant != CR_STORE_ALL) {
        ref_arena.capacity = st->plan_bytes[CR_STORE_ALL];
        UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&ref_arena.base, ref_arena.capacity), out_free);
    }
    ref.arena = variant == CR_STORE_ALL ? &st->arena : &ref_arena;
    UF_STATUS_OR_GOTO(rc, model_fill(&st->m, seed), out_free);
    UF_STATUS_OR_GOTO(rc, grads_poison(&st->m.grads, CR_POISON_RUN, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, grads_poison(&ref.grads, CR_POISON_REF, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, st->run_policy(&st->m, variant, st->k), out_free);
    UF_STATUS_OR_GOTO(rc, st->run_policy(&ref, CR_STORE_ALL, st->k), out_free);
    UF_STATUS_OR_GOTO(rc, compare_grads(&st->m, &ref.grads, diff), out_free);
    *mismatch = diff[0].mismatch + diff[1].mismatch;
    *nonfinite = diff[0].nonfinite + diff[1].nonfinite;
    /* non-finite elements (the NaN poison left unwritten) make the difference unbounded */
    *rel = *nonfinite ? INFINITY : fmax(diff_rel(&diff[0]), diff_rel(&diff[1]));
out_free:
    cudaFree(ref_arena.base);
    grads_free(&ref.grads);
    return rc;
}

/* Copy a tiny model's gradients to the host as floats. */
static int fetch_grads(const cr_model *m, float *bf_out, float *f32_out)
{
    int rc = UF_OK;
    uint16_t *raw = (uint16_t *)malloc(m->grads.n_bf * sizeof *raw);
    if (!raw) {
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory");
        return UF_ERR;
    }
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(raw, m->grads.bf, m->grads.n_bf * sizeof *raw,
                                        cudaMemcpyDeviceToHost, m->stream),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(f32_out, m->grads.f32, m->grads.n_f32 * sizeof(float),
                                        cudaMemcpyDeviceToHost, m->stream),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(m->stream), out);
    for (size_t e = 0; e < m->grads.n_bf; e++)
        bf_out[e] = uf_bf16_value(raw[e]);
out:
    free(raw);
    return rc;
}

/* The anchor: the variant on a tiny model (same kernels, same cuBLAS handle) against the fp64
 * host reference; max_rel_err (verify.h), the largest over the five gradients. */
static int verify_anchor(uf_ctx *ctx, cr_state *st, int variant, uint64_t seed, double *err)
{
    int rc = UF_OK;
    cr_model tiny;
    cr_arena arena = {.base = NULL, .capacity = 0, .top = 0, .peak = 0, .planning = 0};
    cr_ref ref = {.pool = NULL, .dw1 = NULL, .dw2 = NULL, .dx0 = NULL, .dgamma = NULL,
                  .dbeta = NULL};
    float *dev_bf = NULL, *dev_f32 = NULL;
    size_t w = 0, td = 0, n_ln = 0;
    UF_STATUS_OR_GOTO(rc, model_init_host(&tiny, CR_TINY_D, CR_TINY_T, CR_TINY_L), out);
    tiny.arena = &arena;
    tiny.blas = st->blas;
    tiny.stream = ctx->stream;
    UF_STATUS_OR_GOTO(rc, plan_policy(&tiny, st->run_policy, variant, st->k, &arena.capacity),
                      out_free);
    UF_STATUS_OR_GOTO(rc, model_alloc_device(&tiny), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&arena.base, arena.capacity), out_free);
    UF_STATUS_OR_GOTO(rc, model_fill(&tiny, seed), out_free);
    UF_STATUS_OR_GOTO(rc, grads_poison(&tiny.grads, CR_POISON_RUN, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, st->run_policy(&tiny, variant, st->k), out_free);
    dev_bf = (float *)malloc(tiny.grads.n_bf * sizeof(float));
    dev_f32 = (float *)malloc(tiny.grads.n_f32 * sizeof(float));
    if (!dev_bf || !dev_f32) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, fetch_grads(&tiny, dev_bf, dev_f32), out_free);
    if (host_reference(CR_TINY_D, CR_TINY_T, CR_TINY_L, seed, &ref) != 0) {
        uf_report_failure(__FILE__, __LINE__, "malloc", "out of host memory for the reference");
        rc = UF_ERR;
        goto out_free;
    }
    w = (size_t)CR_TINY_L * w_elems(&tiny);
    td = td_elems(&tiny);
    n_ln = (size_t)CR_TINY_L * CR_TINY_D;
    *err = grad_err(dev_bf, ref.dw1, w);
    *err = fmax(*err, grad_err(dev_bf + w, ref.dw2, w));
    *err = fmax(*err, grad_err(dev_bf + 2 * w, ref.dx0, td));
    *err = fmax(*err, grad_err(dev_f32, ref.dgamma, n_ln));
    *err = fmax(*err, grad_err(dev_f32 + n_ln, ref.dbeta, n_ln));
out_free:
    free(ref.pool);
    free(dev_bf);
    free(dev_f32);
    cudaFree(arena.base);
    model_free(&tiny);
out:
    return rc;
}

/* Verify: (1) the variant on a tiny model against the fp64 host reference (bf16 tolerance);
 * (2) at the point's size, the variant's gradients against store_all's, bitwise (store_all
 * against a second run of itself: determinism). A bitwise difference within the tolerance is
 * recorded in grad_mismatch (a claim), not a wrong result. */
int cr_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    cr_state *st = (cr_state *)ctx->state;
    const char *name = ctx->scenario->variants[variant].name;
    double anchor_err = NAN, point_rel = NAN;
    unsigned long long mismatch = 0, nonfinite = 0;
    UF_STATUS_OR_GOTO(rc, bind_stream(st, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, verify_anchor(ctx, st, variant, seed, &anchor_err), out);
    UF_STATUS_OR_GOTO(rc, verify_point(ctx, st, variant, seed, &mismatch, &nonfinite, &point_rel),
                      out);
    st->grad_mismatch = (double)mismatch;
    *max_rel_err = fmax(anchor_err, point_rel);
    if (!(anchor_err <= CR_TOL)) {
        rc = uf_fail(ctx, UF_ERR,
                     "%s: tiny-model gradients differ from the fp64 host reference by %.3g "
                     "(max_rel_err; tolerance %.0e)",
                     name, anchor_err, CR_TOL);
        goto out;
    }
    if (nonfinite > 0 || !(point_rel <= CR_TOL)) {
        rc = uf_fail(ctx, UF_ERR,
                     "%s: gradients differ from store_all's: %llu elements, %llu not finite "
                     "(unwritten?), max relative difference %.3g",
                     name, mismatch, nonfinite, point_rel);
        goto out;
    }
    if (mismatch > 0)
        fprintf(stderr,
                "checkpoint_recompute: %s: %llu gradient elements differ bitwise from store_all "
                "(max relative difference %.3g, within %.0e): the recompute did not reproduce "
                "the forward bit for bit (a different cuBLAS algorithm or a nondeterministic "
                "kernel)\n",
                name, mismatch, point_rel, CR_TOL);
out:
    return rc;
}

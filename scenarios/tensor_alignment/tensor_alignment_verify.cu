/* tensor_alignment: verification. On fresh inputs from the verify seed, the variant's GEMM is
 * checked at sampled elements against the fp64 host reference (max_rel_err), and, for the
 * vocabulary and hidden pairs, its whole real part against its partner's (the aligned and the
 * misaligned GEMM give the same product on the real part: pair_rel_err). The partner and its
 * shape are the story's (the state's plans and variant_shape). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "verify.h"
#include "tensor_alignment_ref.h"
#include "tensor_alignment_kernels.h"
#include "tensor_alignment_state.h"
#include "tensor_alignment_setup.h"
#include "tensor_alignment_verify.h"

#define TA_SAMPLES 1024
#define TA_POISON 0xFF      /* outputs before the GEMM: NaN in bf16 and fp32, never a result */

/* Inputs from seed, the output poisoned, one GEMM; waits for it. */
static int ta_run_fresh(uf_ctx *ctx, const ta_state *st, const ta_gemm *g, uint64_t seed)
{
    int rc = UF_OK;
    const ta_shape *s = &g->shape;
    const size_t y_bytes = (size_t)s->m * s->n_run * ta_elem_bytes(s->precision);
    UF_STATUS_OR_GOTO(rc, ta_gemm_fill(g, seed, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(g->y, TA_POISON, y_bytes, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, ta_gemm_enqueue(st, g, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, ctx->stream, "the GEMM under verification"), out);
out:
    return rc;
}

/* The sampled elements of the output, read back: out[i] = Y[rows[i], cols[i]]. */
static int ta_gather(uf_ctx *ctx, const ta_gemm *g, const int *rows, const int *cols, int count,
                     float *out)
{
    int rc = UF_OK;
    int *d_idx = NULL;
    float *d_out = NULL;
    const size_t idx_bytes = (size_t)count * sizeof(int);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&d_idx, 2 * idx_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&d_out, (size_t)count * sizeof(float)), out);
    /* on the kernel's stream: a cudaMemcpy from pageable memory may return before its DMA
     * lands, and the harness's stream does not wait for the legacy default stream */
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(d_idx, rows, idx_bytes, cudaMemcpyHostToDevice,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(d_idx + count, cols, idx_bytes, cudaMemcpyHostToDevice,
                                        ctx->stream), out);
    ta_gather_kernel<<<(count + TA_BLOCK - 1) / TA_BLOCK, TA_BLOCK, 0, ctx->stream>>>(
        g->y, g->shape.precision, g->shape.n_run, d_idx, d_idx + count, count, d_out);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(out, d_out, (size_t)count * sizeof(float),
                                        cudaMemcpyDeviceToHost, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, ctx->stream, "the sampled outputs"), out);
out:
    cudaFree(d_out);
    cudaFree(d_idx);
    return rc;
}

/* max_rel_err of the sampled elements against the fp64 reference; UF_ERR beyond tolerance. */
static int ta_check_samples(uf_ctx *ctx, const ta_gemm *g, uint64_t seed, double *err)
{
    int rc = UF_OK;
    const ta_shape *s = &g->shape;
    int *rows = (int *)malloc(2 * TA_SAMPLES * sizeof(int));
    float *got = (float *)malloc(TA_SAMPLES * sizeof(float));
    uint32_t key_x = 0, key_w = 0;
    char msg[UF_REASON_LEN];
    uf_err e;
    if (!rows || !got) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for verification");
        goto out;
    }
    ta_sample_points(seed, s->m, s->n, TA_SAMPLES, rows, rows + TA_SAMPLES);
    UF_STATUS_OR_GOTO(rc, ta_gather(ctx, g, rows, rows + TA_SAMPLES, TA_SAMPLES, got), out);
    ta_keys(seed, &key_x, &key_w);
    uf_err_init(&e);
    for (int i = 0; i < TA_SAMPLES; i++)
        uf_err_add(&e, (size_t)rows[i] * s->n + rows[TA_SAMPLES + i], got[i],
                   ta_ref_element(s, key_x, key_w, rows[i], rows[TA_SAMPLES + i]));
    *err = uf_err_value(&e);
    if (uf_err_check(&e, ta_tolerance(s->precision), msg, sizeof msg))
        rc = uf_fail(ctx, UF_ERR, "against the fp64 reference: %s", msg);
out:
    free(got);
    free(rows);
    return rc;
}

/* max|a − b| / max|b| over the real part of two outputs of the same product. */
static int ta_compare_real(uf_ctx *ctx, const ta_gemm *a, const ta_gemm *b, double *rel)
{
    int rc = UF_OK;
    ta_diff *dev = NULL, host;
    float max_diff = 0.0f, max_ref = 0.0f;
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&dev, sizeof *dev), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(dev, 0, sizeof *dev, ctx->stream), out);
    ta_compare_kernel<<<TA_GRID, TA_BLOCK, 0, ctx->stream>>>(
        a->y, a->shape.n_run, b->y, b->shape.n_run, a->shape.precision, a->shape.m, a->shape.n,
        dev);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(&host, dev, sizeof host, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, ctx->stream, "the real-part comparison"), out);
    memcpy(&max_diff, &host.max_diff_bits, sizeof max_diff);
    memcpy(&max_ref, &host.max_ref_bits, sizeof max_ref);
    *rel = host.nonfinite ? INFINITY : uf_rel_err(max_diff, max_ref);
out:
    cudaFree(dev);
    return rc;
}

/* The partner GEMM (the other layout of the same layer) on the same inputs; its real part
 * against this one's into st->pair_rel_err. */
static int ta_check_partner(uf_ctx *ctx, ta_state *st, int variant, uint64_t seed)
{
    int rc = UF_OK;
    ta_gemm partner;
    const ta_shape s = st->variant_shape(ctx, st->plans[variant].partner);
    UF_STATUS_OR_GOTO(rc, ta_gemm_create(ctx, st, &s, &partner), out);
    UF_STATUS_OR_GOTO(rc, ta_run_fresh(ctx, st, &partner, seed), out_free);
    UF_STATUS_OR_GOTO(rc, ta_compare_real(ctx, &st->gemm, &partner, &st->pair_rel_err), out_free);
    if (!(st->pair_rel_err <= ta_tolerance(s.precision)))
        rc = uf_fail(ctx, UF_ERR, "real part differs from %s's on the same inputs: "
                     "max_rel_err %.3g > %.3g", ctx->scenario->variants[st->plans[variant].partner].name,
                     st->pair_rel_err, ta_tolerance(s.precision));
out_free:
    ta_gemm_free(&partner);
out:
    return rc;
}

int ta_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    ta_state *st = (ta_state *)ctx->state;
    st->pair_rel_err = NAN;
    UF_STATUS_OR_GOTO(rc, ta_run_fresh(ctx, st, &st->gemm, seed), out);
    UF_STATUS_OR_GOTO(rc, ta_check_samples(ctx, &st->gemm, seed, max_rel_err), out);
    if (st->plans[variant].partner >= 0)
        UF_STATUS_OR_GOTO(rc, ta_check_partner(ctx, st, variant, seed), out);
out:
    return rc;
}

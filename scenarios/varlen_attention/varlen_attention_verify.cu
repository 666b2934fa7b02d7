/* varlen_attention: verification (the tiled output against the fp32 reference kernel, anchored
 * on sampled rows computed in fp64 on the host). A step is the scenario's own run_step
 * (ctx->scenario), as the harness runs it. */
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "underfed.h"
#include "verify.h"
#include "varlen_attention_ref.h"
#include "varlen_attention_kernels.h"
#include "varlen_attention_state.h"
#include "varlen_attention_setup.h"
#include "varlen_attention_verify.h"

#define VA_VERIFY_TOL 1e-2          /* tiled vs fp32 reference, ‖out−ref‖/‖ref‖ on real tokens */
#define VA_ANCHOR_TOL 1e-3          /* fp32 reference vs host fp64, sampled rows */

/* max_rel_err (verify.h) of one row of VA_HEAD_DIM values against the host's. */
static double row_err(const double *want, const double *got)
{
    uf_err err;
    uf_err_init(&err);
    for (int d = 0; d < VA_HEAD_DIM; d++)
        uf_err_add(&err, (size_t)d, got[d], want[d]);
    return uf_err_value(&err);
}

/* Anchor the fp32 reference kernel (and the tiled output) on a few rows computed on the host in
 * fp64: the first row of the first sequence, the last row of the last, the middle of the
 * middle one, in the variant's sequence order, with heads first, last and middle. */
static int va_check_sampled_rows(uf_ctx *ctx, va_state *st, int variant, uint64_t seed)
{
    int rc = UF_OK;
    const va_plan *p = &st->plan[variant];
    const int pick[3] = {0, p->n_seqs - 1, p->n_seqs / 2};
    const int heads_at[3] = {0, st->heads - 1, st->heads / 2};
    for (int s = 0; s < 3; s++) {
        const va_seq *seq = &p->seqs[pick[s]];
        const int pos = s == 0 ? 0 : (s == 1 ? seq->real_len - 1 : seq->real_len / 2);
        const int head = heads_at[s];
        float ref_f[VA_HEAD_DIM];
        __nv_bfloat16 out_b[VA_HEAD_DIM];
        double want[VA_HEAD_DIM], ref[VA_HEAD_DIM], out[VA_HEAD_DIM];
        const size_t ref_at = ((size_t)(st->cu_real[seq->logical] + pos) * st->heads + head) * VA_HEAD_DIM;
        const size_t out_at = ((size_t)(seq->offset + pos) * st->heads + head) * VA_HEAD_DIM;
        UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(ref_f, st->d_ref_out + ref_at, sizeof ref_f,
                                            cudaMemcpyDeviceToHost, ctx->stream), out);
        UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(out_b, st->d_o + out_at, sizeof out_b,
                                            cudaMemcpyDeviceToHost, ctx->stream), out);
        UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
        va_host_row(seed, seq->logical, st->len[seq->logical], st->causal, pos, head, want);
        for (int d = 0; d < VA_HEAD_DIM; d++) {
            ref[d] = ref_f[d];
            out[d] = __bfloat162float(out_b[d]);
        }
        const double ref_err = row_err(want, ref);
        const double out_err = row_err(want, out);
        if (!(ref_err <= VA_ANCHOR_TOL))
            return uf_fail(ctx, UF_ERR, "%s: the fp32 reference differs from host fp64 by %.3g "
                           "(> %g) at sequence %d row %d head %d", ctx->scenario->variants[variant].name,
                           ref_err, VA_ANCHOR_TOL, seq->logical, pos, head);
        if (!(out_err <= VA_VERIFY_TOL))
            return uf_fail(ctx, UF_ERR, "%s: output differs from host fp64 by %.3g (> %g) at "
                           "sequence %d row %d head %d", ctx->scenario->variants[variant].name, out_err,
                           VA_VERIFY_TOL, seq->logical, pos, head);
    }
out:
    return rc;
}

/* Fresh inputs, poisoned output (bf16 0xFFFF is a NaN: an unwritten element fails), one step,
 * then max_rel_err (verify.h: max |out−ref| / max |ref|) over every real token against the fp32
 * reference. Tolerance 1e-2: P is rounded to bf16 before P·V and O to bf16 at the end (2^-9
 * relative each, of at most max |V| and max |O|); fp32 accumulation adds far less. */
int va_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    va_state *st = (va_state *)ctx->state;
    const va_plan *p = &st->plan[variant];
    const size_t tensor_bytes = (size_t)p->stored_tokens * st->heads * VA_HEAD_DIM * 2;
    double sums[3] = {0.0, 0.0, 0.0};
    if (st->active != variant)
        return uf_fail(ctx, UF_ERR, "verify of %s before its begin_variant", ctx->scenario->variants[variant].name);
    UF_STATUS_OR_GOTO(rc, va_fill_inputs(ctx, st, variant, seed), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_o, 0xFF, tensor_bytes, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, ctx->scenario->run_step(ctx, variant), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_sums, 0, sizeof sums, ctx->stream), out);
    {
        const dim3 grid((unsigned)((st->max_len + VA_REF_WARPS - 1) / VA_REF_WARPS),
                        (unsigned)st->heads, (unsigned)p->n_seqs);
        va_reference_kernel<<<grid, VA_REF_WARPS * 32, 0, ctx->stream>>>(
            st->d_q, st->d_k, st->d_v, st->d_o, st->d_seqs, st->d_cu_real, st->heads, st->causal,
            (float)(1.0 / sqrt((double)VA_HEAD_DIM)), st->d_ref_out, st->d_sums);
    }
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(sums, st->d_sums, sizeof sums, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
    *max_rel_err = sums[2] > 0 ? INFINITY : uf_rel_err(sums[0], sums[1]);
    if (sums[2] > 0)
        return uf_fail(ctx, UF_ERR, "%s: %.0f output elements of real tokens are not finite "
                       "(unwritten or overflowed)", ctx->scenario->variants[variant].name, sums[2]);
    if (!(*max_rel_err <= VA_VERIFY_TOL))
        return uf_fail(ctx, UF_ERR, "%s: max_rel_err %.3g over real tokens (> %g; a device "
                       "reduction: no element index)",
                       ctx->scenario->variants[variant].name, *max_rel_err, VA_VERIFY_TOL);
    UF_STATUS_OR_GOTO(rc, va_check_sampled_rows(ctx, st, variant, seed), out);
out:
    return rc;
}

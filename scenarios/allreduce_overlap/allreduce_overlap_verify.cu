/* allreduce_overlap: verify (every rank's reduced gradients bitwise equal, and equal to the
 * host's sum and dY^T X samples). */
#include <math.h>
#include <stdint.h>

#include "underfed.h"
#include "allreduce_overlap_state.h"
#include "allreduce_overlap_runner.h"
#include "allreduce_overlap_verify.h"

/* Fresh inputs from `seed`, the variant's full step, then: every rank's reduced gradients
 * bitwise equal (checksum max == min over ranks), and this process's first rank's equal to the
 * host fp32 sum of every rank's backward output, max_rel_err (verify.h) within AR_TOLERANCE per
 * gradient; sampled dW elements equal to the host's dYᵀ·X. */
int ar_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    ar_state *st = (ar_state *)ctx->state;
    ar_job fill = {.kind = JOB_FILL, .variant = 0, .target = -1, .seed = seed, .mark = 0};
    ar_job checksum = {.kind = JOB_CHECKSUM, .variant = 0, .target = -1, .seed = 0, .mark = 0};
    ar_job reference = {.kind = JOB_REFERENCE, .variant = 0, .target = 0, .seed = seed, .mark = 0};
    const ar_check *ck;
    int rc = UF_OK;

    *max_rel_err = NAN;
    UF_STATUS_OR_GOTO(rc, run_job(ctx, st, fill, "filling the verify inputs"), out);
    UF_STATUS_OR_GOTO(rc, enqueue_bracketed(ctx, st, JOB_STEP, variant, 0, "the verify step"), out);
    UF_STATUS_OR_GOTO(rc, wait_ctx_stream(ctx, st, "the verify step"), out);
    UF_STATUS_OR_GOTO(rc, run_job(ctx, st, checksum, "comparing the ranks' results"), out);
    UF_STATUS_OR_GOTO(rc, run_job(ctx, st, reference, "the host reference"), out);

    ck = &st->ranks[0].check;
    *max_rel_err = ck->max_err;
    for (int i = 0; i < st->n_local; i++) {
        const ar_check *c = &st->ranks[i].check;
        if (c->checksum_min != c->checksum_max)
            return uf_fail(ctx, UF_ERR, "the ranks' reduced gradients differ (checksums from "
                           "%016llx to %016llx over the %d ranks)", c->checksum_min,
                           c->checksum_max, st->n_ranks);
    }
    if (ck->n_spot_bad)
        return uf_fail(ctx, UF_ERR, "%zu of %d sampled dW elements differ from the host's "
                       "dY^T X: the backward GEMM is wrong", ck->n_spot_bad,
                       AR_SPOT_SAMPLES * st->shape.layers * st->n_ranks);
    if (ck->n_nan)
        return uf_fail(ctx, UF_ERR, "%zu reduced gradient elements are NaN (never written: "
                       "still the poison)", ck->n_nan);
    if (ck->n_bad)
        return uf_fail(ctx, UF_ERR, "%zu of %d reduced gradients differ from the host sum: "
                       "max_rel_err %.3g > %g; first: gradient %d, its largest difference at "
                       "element %zu, got %g, want %g", ck->n_bad, st->shape.layers, ck->max_err,
                       AR_TOLERANCE, ck->bad_slot, ck->bad_index, (double)ck->bad_got,
                       (double)ck->bad_want);
out:
    return rc;
}

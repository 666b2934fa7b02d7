/* allreduce_overlap: describe (the row's setup figures, and on stderr the NCCL and cuBLAS
 * settings each variant ran with) and teardown. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "underfed.h"
#include "allreduce_overlap_state.h"
#include "allreduce_overlap_runner.h"
#include "allreduce_overlap_describe.h"

/* The row's setup figures, each on the variant's own communicator and cuBLAS handle, and what
 * those were made with (also on stderr, so that no run hides which settings it measured). */
int ar_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const ar_state *st = (const ar_state *)ctx->state;
    const ar_shape *sh = &st->shape;
    int bucketed = variant == VAR_BUCKETED;
    double n = st->n_ranks;
    double comm_ms = st->comm_ms[bucketed ? VAR_BUCKETED : VAR_SEQUENTIAL];
    double busbw_gbs = (double)sh->grad_bytes / (comm_ms * 1e-3) * 2.0 * (n - 1.0) / n / 1e9;
    double ceiling_gbs = ctx->ceilings ? ctx->ceilings->nccl_busbw_gbs : NAN;
    double in_step_ms = st->in_step_ms[bucketed ? VAR_BUCKETED : VAR_SEQUENTIAL];
    /* the same GEMMs inside sequential's steps: same step, nothing running beside them */
    double base_ms = st->in_step_ms[VAR_SEQUENTIAL];
    int nccl_ctas = bucketed ? st->comm_ctas : 0;
    int sm_count = st->ranks[0].sm_count;
    int sm_target = bucketed && st->sm_margin > 0 ? sm_count - st->sm_margin : 0;

    row->useful_flops = 2.0 * sh->tokens * (double)sh->rows * sh->cols * sh->layers;
    row->executed_flops = row->useful_flops;
    row->peak_mem_bytes = st->held_bytes;
    row->extra[EX_GRAD_BYTES] = (double)sh->grad_bytes;
    row->extra[EX_COMPUTE_MS] = st->compute_ms;
    row->extra[EX_COMM_MS] = comm_ms;
    row->extra[EX_BUSBW_GBS] = busbw_gbs;
    row->extra[EX_BUSBW_PCT] = isfinite(ceiling_gbs) && ceiling_gbs > 0
                                   ? 100.0 * busbw_gbs / ceiling_gbs : NAN;
    row->extra[EX_BUCKETS] = variant == VAR_SEQUENTIAL ? 1.0 : (double)sh->n_buckets;
    row->extra[EX_RANKS] = n;
    row->extra[EX_COMPUTE_IN_STEP_MS] = in_step_ms;
    row->extra[EX_COMPUTE_SLOWDOWN_PCT] = base_ms > 0.0 ? 100.0 * (in_step_ms / base_ms - 1.0)
                                                        : NAN;
    row->extra[EX_NCCL_CTAS] = nccl_ctas;
    row->extra[EX_GEMM_SM_TARGET] = sm_target;

    fprintf(stderr, "[allreduce_overlap] %s: NCCL CTAs per all-reduce: ", bucketed ? "bucketed"
                                                                                 : "sequential");
    if (nccl_ctas > 0)
        fprintf(stderr, "%d (minCTAs = maxCTAs, own communicator)", nccl_ctas);
    else
        fprintf(stderr, "NCCL's default");
    if (!bucketed)
        fprintf(stderr, "; GEMMs: cuBLAS's default, all %d SMs\n", sm_count);
    else if (sm_target > 0)
        fprintf(stderr, "; GEMMs after the first bucket: cuBLAS SM count target %d of %d SMs\n",
                sm_target, sm_count);
    else
        fprintf(stderr, "; GEMMs: no cuBLAS SM count target (all %d SMs)\n", sm_count);
    if (bucketed && st->broken_overlap) {
        /* in the results too, after the notes already there: these rows are not the fix */
        size_t used = strlen(row->skip_reason);
        snprintf(row->skip_reason + used, sizeof row->skip_reason - used, "%s%s=1: the bucket "
                 "all-reduces ran on the compute stream, overlap broken on purpose (not the "
                 "fix)", used ? "; " : "", AR_BROKEN_OVERLAP_ENV);
        fprintf(stderr, "[allreduce_overlap] bucketed: %s=1: its all-reduces run on the compute "
                "stream (overlap broken on purpose)\n", AR_BROKEN_OVERLAP_ENV);
    }
    return UF_OK;
}

void ar_teardown(uf_ctx *ctx)
{
    destroy_state(ctx, (ar_state *)ctx->state);
    ctx->state = NULL;
}

/* host_sync: what the scenario counts for a row (describe): useful FLOPs, the memory it
 * holds, the calibration, the loss lag verify found, and the host's side of the timed steps. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "stats.h"
#include "underfed.h"
#include "host_sync_state.h"
#include "host_sync_describe.h"

/* The syncs, pageable copies, drains and the gap after a sync are the harness's trace
 * columns (syncs_per_step ... sync_gap_us): nothing to count here. */

/* The median of one part of the logged steps (part: offset of a field of hs_host_step), or of
 * the host period between consecutive steps (part < 0). NaN with fewer than 2 steps. */
static double host_log_median(const hs_state *st, ptrdiff_t part)
{
    const int n = part < 0 ? st->n_host_log - 1 : st->n_host_log;
    if (n < 1 || st->n_host_log < 2)
        return NAN;
    double *v = (double *)malloc((size_t)n * sizeof *v);
    if (!v)
        return NAN;
    for (int i = 0; i < n; i++) {
        const hs_host_step *h = &st->host_log[i];
        v[i] = part < 0 ? st->host_log[i + 1].begin_us - h->begin_us
                        : *(const double *)((const char *)h + part);
    }
    const double m = uf_median(v, n);
    free(v);
    return m;
}

int hs_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const hs_state *st = (const hs_state *)ctx->state;
    row->useful_flops = 2.0 * HS_LAYERS * st->tokens * (double)st->d * st->d;
    row->executed_flops = row->useful_flops;
    row->peak_mem_bytes = (double)st->device_bytes +   /* + the step's own temporaries */
                          (variant == V_MALLOC_FREE || variant == V_POOL ? 2.0 * st->tmp_bytes : 0);
    row->extra[X_HOST_US] = st->host_us;
    row->extra[X_GPU_STEP_MS] = st->gpu_step_ms;
    row->extra[X_SLOWDOWN] = 100.0 * (uf_step_ms(ctx, row) / st->gpu_step_ms - 1.0);
    row->extra[X_LOSS_LAG] = st->loss_lag;
    row->extra[X_LOSS_MISMATCH] = st->loss_mismatch;
    row->extra[X_QUEUE_US] = host_log_median(st, offsetof(hs_host_step, queue_us));
    row->extra[X_FINISH_US] = host_log_median(st, offsetof(hs_host_step, finish_us));
    row->extra[X_HOST_PERIOD_US] = host_log_median(st, -1);
    return UF_OK;
}

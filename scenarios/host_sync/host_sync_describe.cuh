/* host_sync: what the scenario counts for a row (describe). Included once by host_sync.cu, at
 * this point of its text. */

enum { X_HOST_US, X_GPU_STEP_MS, X_SLOWDOWN, X_LOSS_LAG, X_LOSS_MISMATCH, HS_N_EXTRAS };

/* The syncs, pageable copies, drains and the gap after a sync are the harness's trace
 * columns (syncs_per_step ... sync_gap_us): nothing to count here. */

static int hs_describe(uf_ctx *ctx, int variant, uf_row *row)
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
    return UF_OK;
}


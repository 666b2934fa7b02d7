/* elementwise_chain: what a step moves and computes (ew_bytes_moved, ew_describe and its
 * extras) and the teardown. */
#include <stddef.h>

#include "underfed.h"
#include "elementwise_chain_ref.h"
#include "elementwise_chain_setup.h"
#include "elementwise_chain_state.h"
#include "elementwise_chain_describe.h"

/* Bytes through DRAM per step. fused: input, residual (if any op needs it) and bias read once,
 * output written once: the minimum the chain must move. unfused: per op, the whole tensor
 * read and written, plus the residual or bias that op reads. */
static double ew_bytes_moved(const ew_state *st, int variant)
{
    double t = (double)st->tensor_bytes, bias = (double)st->bias_bytes;
    if (variant == EW_FUSED)
        return 2.0 * t + (ew_ops_read(0, st->n_ops, 0) ? t : 0.0) +
               (ew_ops_read(0, st->n_ops, 1) ? bias : 0.0);
    double bytes = 0.0;
    for (int k = 0; k < st->n_ops; ++k)
        bytes += 2.0 * t + (ew_ops_read(k, k + 1, 0) ? t : 0.0) +
                 (ew_ops_read(k, k + 1, 1) ? bias : 0.0);
    return bytes;
}

/* Extras, in ew_extras order. */
enum { EW_X_BYTES_MOVED, EW_X_INTENSITY, EW_X_BYTES_RATIO };

int ew_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const ew_state *st = (const ew_state *)ctx->state;
    double fused = ew_bytes_moved(st, EW_FUSED), unfused = ew_bytes_moved(st, EW_UNFUSED);
    double moved = variant == EW_FUSED ? fused : unfused;
    double flops = (double)ew_flops_per_element(st->n_ops) * (double)st->n;
    row->useful_flops = flops;
    row->executed_flops = flops;
    row->min_bytes = fused;
    row->peak_mem_bytes = 3.0 * (double)st->tensor_bytes + (double)st->bias_bytes;
    row->extra[EW_X_BYTES_MOVED] = moved;
    row->extra[EW_X_INTENSITY] = flops / moved;
    row->extra[EW_X_BYTES_RATIO] = unfused / fused;
    return UF_OK;
}

void ew_teardown(uf_ctx *ctx)
{
    ew_free_state((ew_state *)ctx->state);
    ctx->state = NULL;
}

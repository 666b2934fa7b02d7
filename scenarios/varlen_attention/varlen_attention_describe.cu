/* varlen_attention: va_describe (useful and executed FLOPs, bytes, the padding extras, the SM
 * clock the kernel counted in the timed steps). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "varlen_attention_ref.h"
#include "varlen_attention_state.h"
#include "varlen_attention_describe.h"

/* The clock probe of the timing pass's timed steps, read back: their SM clock in MHz,
 * 1e3 * cycles / ns; NaN with a note in the row where it counted nothing. */
static int va_probe_mhz(uf_ctx *ctx, const va_state *st, uf_row *row, double *mhz)
{
    int rc = UF_OK;
    va_clock_probe seen = {0, 0};
    *mhz = NAN;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(&seen, st->d_probe, sizeof seen, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, ctx->stream, "the clock probe's read-back"), out);
    if (seen.cycles > 0 && seen.ns > 0) {
        *mhz = 1e3 * (double)seen.cycles / (double)seen.ns;
    } else {
        const size_t used = strlen(row->skip_reason);
        snprintf(row->skip_reason + used, sizeof row->skip_reason - used,
                 "%ssm_clock_kernel_mhz: the clock probe counted %llu cycles in %llu ns over the "
                 "timed steps", used ? "; " : "", seen.cycles, seen.ns);
    }
out:
    return rc;
}

int va_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const va_state *st = (const va_state *)ctx->state;
    const va_plan *p = &st->plan[variant];
    row->useful_flops = st->useful_flops;
    row->executed_flops = p->executed_flops;
    /* At least Q, K, V of the real tokens read and O written once. */
    row->min_bytes = 4.0 * (double)st->real_tokens * st->heads * VA_HEAD_DIM * 2;
    row->peak_mem_bytes = st->variant_bytes;
    row->extra[VA_X_PADDING] = 100.0 * (1.0 - st->useful_flops / p->executed_flops);
    row->extra[VA_X_TOKEN_PADDING] =
        100.0 * (1.0 - (double)st->real_tokens / (double)p->stored_tokens);
    row->extra[VA_X_EXEC_RATIO] = p->executed_flops / st->useful_flops;
    row->extra[VA_X_TFLOPS_EXEC] = p->executed_flops / (uf_step_ms(ctx, row) * 1e-3) / 1e12;
    row->extra[VA_X_SEQS] = st->n_seqs;
    row->extra[VA_X_REAL_TOKENS] = (double)st->real_tokens;
    row->extra[VA_X_STORED_TOKENS] = (double)p->stored_tokens;
    row->extra[VA_X_WARP_ROWS] = st->rows;
    return va_probe_mhz(ctx, st, row, &row->extra[VA_X_SM_CLOCK_KERNEL]);
}

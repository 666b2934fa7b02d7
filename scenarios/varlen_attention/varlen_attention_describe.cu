/* varlen_attention: va_describe (useful and executed FLOPs, bytes, the padding extras). */
#include "underfed.h"
#include "varlen_attention_ref.h"
#include "varlen_attention_state.h"
#include "varlen_attention_describe.h"

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
    return UF_OK;
}

/* small_batch: what a step counts (describe): FLOPs, the bytes its GEMMs must move, tokens per
 * second, the activations a micro-batch keeps, and the wave GEMM's tiles against the SMs.
 * A GEMM variant's tokens are the story's step_shape (the state's schedule). */

#include <math.h>

#include "underfed.h"
#include "small_batch_ref.h"
#include "small_batch_stack.h"
#include "small_batch_state.h"
#include "small_batch_describe.h"

/* wave: one GEMM's FLOPs and operands (its memory on top of the stack's, which stays), and its
 * tiles against the SMs. Tiles are cuBLAS's m × n: m runs over the N = 8192 output features, n
 * over the M tokens. */
static void describe_wave(const sb_state *st, uf_row *row)
{
    const double M = st->tokens, N = SB_WAVE_N, K = SB_WAVE_K;
    sb_waves w;
    row->useful_flops = row->executed_flops = 2.0 * M * N * K;
    row->min_bytes = 2.0 * (M * K + N * K + M * N);
    row->peak_mem_bytes += row->min_bytes;
    if (sb_wave_report(N, M, st->wave.tile_rows, st->wave.tile_cols, st->wave.splitk, st->sms,
                       &w) != 0)
        return;     /* a tile cublasLt did not name: the tile columns stay empty */
    row->extra[X_TILE_ROWS] = st->wave.tile_rows;
    row->extra[X_TILE_COLS] = st->wave.tile_cols;
    row->extra[X_SPLITK] = st->wave.splitk;
    row->extra[X_TILES] = w.tiles;
    row->extra[X_WAVES] = w.waves;
    row->extra[X_WAVE_EFF] = w.wave_eff_pct;
    row->extra[X_TILE_FILL] = w.tile_fill_pct;
}

int sb_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const sb_state *st = (const sb_state *)ctx->state;
    const int d = st->m.d, L = st->m.layers;
    const double step_s = uf_step_ms(ctx, row) * 1e-3;
    int micro = 0, n_micro = 0;
    row->peak_mem_bytes = (double)(stack_bytes(d, L, st->m.t_max) + SB_BLAS_WS_BYTES);
    if (variant == SB_WAVE) {
        describe_wave(st, row);
        return UF_OK;
    }
    if (variant == SB_LATENCY_BOUND) {
        row->min_bytes = 4.0 * SB_CHASE_HOPS * st->sms;    /* one 4-byte load per hop */
        row->peak_mem_bytes += 4.0 * ((double)SB_CHASE_MASK + 1);
    }
    if (variant == SB_ONE_BLOCK || variant == SB_LATENCY_BOUND)
        return UF_OK;
    st->schedule->step_shape(st->tokens, st->global_tokens, variant, &micro, &n_micro);
    row->useful_flops = row->executed_flops = sb_step_flops(d, L, (double)micro * n_micro);
    row->min_bytes = sb_step_bytes(d, L, micro, n_micro);
    row->extra[X_TOKENS_PER_STEP] = (double)micro * n_micro;
    row->extra[X_TOKENS_PER_S] = step_s > 0 ? (double)micro * n_micro / step_s : NAN;
    row->extra[X_MICRO_BATCHES] = n_micro;
    row->extra[X_ACT_BYTES] = sb_act_bytes(d, L, micro);
    return UF_OK;
}

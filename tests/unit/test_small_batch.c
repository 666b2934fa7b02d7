/* Unit tests of small_batch's plain-C parts (scenarios/small_batch/small_batch_ref.c): the byte
 * and FLOP counts the figures divide by, the fp64 host reference that verify compares with
 * (adjoint identities: the gradients are those of the loss Σ dY·y), the anchor tolerance
 * against a bf16 emulation of the device, the pointer chase's single cycle, the spin chain, and
 * the wave arithmetic of the wave-quantization report. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "small_batch_ref.h"
#include "verify.h"

#define SEED 7u

static double input_at(uint64_t tensor, uint64_t e)
{
    return uf_bf16_round(sb_random(SEED, tensor, e, 1.0f));
}

static double weight_at(int l, int j, int d, uint64_t e)
{
    return uf_bf16_round(sb_random(SEED, SB_T_W + 4 * l + j, e, sb_weight_scale(j, d)));
}

Test(small_batch_ref, counts)
{
    const int d = 64, L = 2;
    const double params = 12.0 * d * d;
    cr_assert_float_eq(sb_layer_params(d), params, 1e-9);
    cr_assert_float_eq(sb_step_flops(d, L, 8), 6.0 * 8 * params * L, 1e-6);
    /* one micro-batch: every weight read twice and its gradient written once, plus the
     * activations: per linear 3 reads/writes of X (M·in) and of Y (M·out), bf16 */
    double act = 0.0;
    for (int j = 0; j < SB_N_LINEARS; j++)
        act += 3.0 * 2.0 * 8 * (sb_in_features(j, d) + sb_out_features(j, d));
    cr_assert_float_eq(sb_step_bytes(d, L, 8, 1), L * (3.0 * 2.0 * params + act), 1e-6);
    /* n micro-batches: n times that, and n - 1 read-backs of the accumulated gradients */
    cr_assert_float_eq(sb_step_bytes(d, L, 8, 4),
                       4.0 * sb_step_bytes(d, L, 8, 1) + 3.0 * L * 2.0 * params, 1e-6);
    cr_assert_float_eq(sb_act_bytes(d, L, 8), 2.0 * 9.0 * d * 8 * L, 1e-9);
}

/* Σ_t dY_t·y_t of the reference's inputs and output. */
static double loss_of(const sb_ref_shape *s, const sb_ref_out *r)
{
    double loss = 0.0;
    for (size_t e = 0; e < (size_t)s->tokens * s->d; e++)
        loss += input_at(SB_T_DY, e) * r->y[e];
    return loss;
}

/* The stack is linear in its input and in each weight on its own, so the gradients of
 * L = Σ dY·y satisfy ⟨dx0, x0⟩ = L and ⟨dW, W⟩ = L for every weight. */
Test(small_batch_ref, gradients_are_the_adjoint)
{
    const sb_ref_shape s = {.d = 16, .layers = 2, .tokens = 6, .micro = 3};
    sb_ref_out r;
    cr_assert_eq(sb_host_reference(&s, SEED, 0, &r), 0);
    const double loss = loss_of(&s, &r);
    cr_assert(fabs(loss) > 1e-3, "a degenerate loss proves nothing");
    double dot = 0.0;
    for (size_t e = 0; e < (size_t)s.tokens * s.d; e++)
        dot += r.dx0[e] * input_at(SB_T_X0, e);
    cr_assert_float_eq(dot, loss, 1e-9 * fabs(loss), "dx0: %g vs %g", dot, loss);
    for (int l = 0; l < s.layers; l++)
        for (int j = 0; j < SB_N_LINEARS; j++) {
            const size_t n = (size_t)sb_in_features(j, s.d) * sb_out_features(j, s.d);
            double wdot = 0.0;
            for (size_t e = 0; e < n; e++)
                wdot += r.dw[l][j][e] * weight_at(l, j, s.d, e);
            cr_assert_float_eq(wdot, loss, 1e-9 * fabs(loss), "layer %d linear %d: %g vs %g", l,
                               j, wdot, loss);
        }
    free(r.pool);
}

/* Gradient accumulation over micro-batches computes the gradients of the whole batch. */
Test(small_batch_ref, micro_batches_sum_to_the_batch)
{
    const sb_ref_shape one = {.d = 16, .layers = 2, .tokens = 8, .micro = 8};
    const sb_ref_shape four = {.d = 16, .layers = 2, .tokens = 8, .micro = 2};
    sb_ref_out a, b;
    cr_assert_eq(sb_host_reference(&one, SEED, 0, &a), 0);
    cr_assert_eq(sb_host_reference(&four, SEED, 0, &b), 0);
    for (int j = 0; j < SB_N_LINEARS; j++) {
        const size_t n = (size_t)sb_in_features(j, 16) * sb_out_features(j, 16);
        for (size_t e = 0; e < n; e++)
            cr_assert_float_eq(a.dw[1][j][e], b.dw[1][j][e], 1e-12);
    }
    free(a.pool);
    free(b.pool);
}

static double rel_err(const double *got, const double *want, size_t n)
{
    uf_err e;
    uf_err_init(&e);
    for (size_t i = 0; i < n; i++)
        uf_err_add(&e, i, got[i], want[i]);
    return uf_err_value(&e);
}

/* Largest max_rel_err of the emulated step against fp64 over y, dx0 and every dW. */
static double emulated_err(const sb_ref_shape *s, uint64_t seed)
{
    sb_ref_out exact, bf;
    cr_assert_eq(sb_host_reference(s, seed, 0, &exact), 0);
    cr_assert_eq(sb_host_reference(s, seed, 1, &bf), 0);
    const size_t td = (size_t)s->tokens * s->d;
    double err = fmax(rel_err(bf.y, exact.y, td), rel_err(bf.dx0, exact.dx0, td));
    for (int l = 0; l < s->layers; l++)
        for (int j = 0; j < SB_N_LINEARS; j++)
            err = fmax(err, rel_err(bf.dw[l][j], exact.dw[l][j],
                                    (size_t)sb_in_features(j, s->d) * sb_out_features(j, s->d)));
    free(exact.pool);
    free(bf.pool);
    return err;
}

/* The anchor's tolerance holds bf16 storage with room (the tiny anchor's shape: d 64, 2
 * layers, 4 micro-batches of 8 tokens), and a wiring fault (one layer missing) breaks it. */
Test(small_batch_ref, anchor_tolerance_covers_bf16_not_faults)
{
    const sb_ref_shape s = {.d = 64, .layers = 2, .tokens = 32, .micro = 8};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        const double err = emulated_err(&s, seed);
        cr_assert(err > 0.0 && err <= SB_TOL_ANCHOR / 2, "seed %llu: bf16 error %g",
                  (unsigned long long)seed, err);
    }
    const sb_ref_shape one_layer = {.d = 64, .layers = 1, .tokens = 32, .micro = 8};
    sb_ref_out two, one;
    cr_assert_eq(sb_host_reference(&s, SEED, 0, &two), 0);
    cr_assert_eq(sb_host_reference(&one_layer, SEED, 0, &one), 0);
    cr_assert(rel_err(one.y, two.y, (size_t)32 * 64) > 10 * SB_TOL_ANCHOR);
    free(two.pool);
    free(one.pool);
}

Test(small_batch_ref, bad_shapes_are_refused)
{
    sb_ref_out r;
    const sb_ref_shape uneven = {.d = 16, .layers = 1, .tokens = 6, .micro = 4};
    const sb_ref_shape none = {.d = 16, .layers = 0, .tokens = 4, .micro = 4};
    cr_assert_eq(sb_host_reference(&uneven, SEED, 0, &r), -1);
    cr_assert_eq(sb_host_reference(&none, SEED, 0, &r), -1);
}

/* The chase table is one cycle through every slot: no chain is caught in a short loop. */
Test(small_batch_ref, chase_is_one_cycle)
{
    const uint32_t mask = (1u << 12) - 1;
    unsigned char *seen = calloc(mask + 1, 1);
    uint32_t i = 77;
    for (uint32_t h = 0; h <= mask; h++) {
        cr_assert_eq(seen[i], 0, "slot %u visited twice after %u hops", i, h);
        seen[i] = 1;
        i = sb_chase_next(i, mask);
    }
    cr_assert_eq(i, 77u, "back at the start after mask + 1 hops");
    free(seen);
    cr_assert_eq(sb_chase_host(77, mask, 0), 77u);
    cr_assert_eq(sb_chase_host(sb_chase_host(77, mask, 100), mask, 23),
                 sb_chase_host(77, mask, 123));
    cr_assert_eq(sb_chase_start(SEED, 3, mask) & ~mask, 0u);
}

Test(small_batch_ref, spin_chain)
{
    const uint32_t h = sb_spin_start(SEED, 5);
    cr_assert_eq(sb_spin_host(h, 0), h);
    cr_assert_eq(sb_spin_host(h, 2), sb_spin_round(sb_spin_round(h, 0), 1));
    cr_assert_neq(sb_spin_host(h, 1000), sb_spin_host(h + 1, 1000));
}

/* M × 8192 outputs in 128 × 256 tiles on 132 SMs (the wave points). */
Test(small_batch_ref, wave_report)
{
    sb_waves w;
    cr_assert_eq(sb_wave_report(8192, 2048, 128, 256, 1, 132, &w), 0);
    cr_assert_float_eq(w.tiles, 64.0 * 8, 1e-9);
    cr_assert_float_eq(w.waves, 512.0 / 132, 1e-9);
    cr_assert_float_eq(w.wave_eff_pct, 100.0 * 512 / (4 * 132), 1e-9);
    cr_assert_float_eq(w.tile_fill_pct, 100.0, 1e-9);
    cr_assert_eq(sb_wave_report(8192, 2176, 128, 256, 1, 132, &w), 0);
    cr_assert_float_eq(w.tiles, 64.0 * 9, 1e-9);                    /* 8.5 tile columns */
    cr_assert_float_eq(w.wave_eff_pct, 100.0 * 576 / (5 * 132), 1e-9);
    cr_assert_float_eq(w.tile_fill_pct, 100.0 * 2176 / 2304, 1e-9);
    cr_assert_eq(sb_wave_report(8192, 2048, 128, 256, 2, 132, &w), 0); /* split-K: 2 per tile */
    cr_assert_float_eq(w.tiles, 1024.0, 1e-9);
    cr_assert_eq(sb_wave_report(8192, 2048, 0, 256, 1, 132, &w), -1);
    cr_assert_eq(sb_wave_report(8192, 0, 128, 256, 1, 132, &w), -1);
    cr_assert_eq(sb_wave_report(8192, 2048, 128, 256, 1, 0, &w), -1);
}

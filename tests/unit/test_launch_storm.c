/* Unit tests of launch_storm's plain-C host side (scenarios/launch_storm/launch_storm_ref.c):
 * the properties its verify relies on. The op table cycles through the kinds with constants
 * whose signs flip on every pass; the double reference op computes each kind's formula; the
 * inputs lie in [-2, 2) and follow the seed; through K = 1000 ops the values stay bounded and
 * every output keeps depending on its own input, with a gain below the ~1.4 the tolerance of
 * verify assumes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "launch_storm_ref.h"

Test(launch_storm_ref, op_table_cycles_kinds_and_flips_signs)
{
    enum { K = 3 * OP_KINDS };
    ls_op ops[K];
    ls_build_op_table(ops, K);
    for (int k = 0; k < K; ++k) {
        cr_assert_eq(ops[k].kind, k % OP_KINDS, "op %d", k);
        int pass = k / OP_KINDS;
        switch (ops[k].kind) {
        case OP_SCALE:      /* exp(a): above 1 on even passes, below on odd ones */
            cr_assert(pass % 2 == 0 ? ops[k].c > 1.0f : ops[k].c < 1.0f, "op %d: %g", k,
                      (double)ops[k].c);
            break;
        case OP_CLAMP:      /* offset 4, amplitude 0 */
            cr_assert_float_eq(ops[k].c, 4.0f, 0.0f, "op %d", k);
            break;
        default:            /* offset 0: the sign of a, magnitude within amplitude x 1.25 */
            cr_assert(pass % 2 == 0 ? ops[k].c > 0.0f : ops[k].c < 0.0f, "op %d: %g", k,
                      (double)ops[k].c);
            cr_assert_lt(fabs(ops[k].c), 0.07, "op %d: %g", k, (double)ops[k].c);
        }
    }
    ls_op again[K];
    ls_build_op_table(again, K);
    cr_assert_arr_eq(ops, again, sizeof ops, "the table is part of the program: the same each time");
}

Test(launch_storm_ref, reference_op_formulas)
{
    cr_assert_float_eq(ls_reference_op(OP_SCALE, 1.5, 2.0), 3.0, 0.0);
    cr_assert_float_eq(ls_reference_op(OP_BIAS, 1.5, 0.25), 1.75, 0.0);
    cr_assert_float_eq(ls_reference_op(OP_RESIDUAL, 2.0, 0.5), 3.0, 0.0);
    cr_assert_float_eq(ls_reference_op(OP_CLAMP, -5.0, 4.0), -4.0, 0.0);
    cr_assert_float_eq(ls_reference_op(OP_CLAMP, 3.0, 4.0), 3.0, 0.0);
    cr_assert_float_eq(ls_reference_op(OP_NORM, 1.0, 0.5), 1.0, 0.0);   /* a fixed point */
    cr_assert_float_eq(ls_reference_op(OP_SILU, 0.0, 0.5), 0.0, 0.0);
    /* GELU(x) ~ x for large x: x + c*GELU(x) ~ (1 + c) x */
    cr_assert_float_eq(ls_reference_op(OP_GELU, 6.0, 0.5), 9.0, 1e-6);
    cr_assert(isnan(ls_reference_op(OP_KINDS, 1.0, 1.0)), "an unknown kind poisons the output");
}

Test(launch_storm_ref, inputs_in_range_and_follow_the_seed)
{
    enum { N = 1 << 16 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    cr_assert(a && b);
    ls_fill_inputs(a, N, 7);
    ls_fill_inputs(b, N, 7);
    cr_assert_arr_eq(a, b, N * sizeof *a);
    double lo = 1e9, hi = -1e9;
    for (int i = 0; i < N; ++i) {
        lo = fmin(lo, a[i]);
        hi = fmax(hi, a[i]);
    }
    cr_assert(lo >= -2.0 && hi < 2.0 && lo < -1.99 && hi > 1.99, "[%g, %g]", lo, hi);
    ls_fill_inputs(b, N, 8);
    int same = 0;
    for (int i = 0; i < N; ++i)
        same += a[i] == b[i];
    cr_assert_lt(same, N / 1000, "%d of %d equal under another seed", same, N);
    free(b);
    free(a);
}

/* The chain at K = 1000 on 4096 inputs: |x| <= 2.3 throughout (the clamp at 4 never acts), and
 * d out / d in in [0.1, 1.4] (finite differences in double). */
Test(launch_storm_ref, chain_stays_bounded_and_sensitive)
{
    enum { K = 1000, N = 4096 };
    ls_op *ops = malloc(K * sizeof *ops);
    float *x = malloc(N * sizeof *x);
    cr_assert(ops && x);
    ls_build_op_table(ops, K);
    ls_fill_inputs(x, N, 42);
    double biggest = 0.0, gain_lo = 1e9, gain_hi = 0.0;
    for (int i = 0; i < N; ++i) {
        const double h = 1e-6;
        double v = x[i], w = x[i] + h;
        for (int k = 0; k < K; ++k) {
            v = ls_reference_op(ops[k].kind, v, ops[k].c);
            w = ls_reference_op(ops[k].kind, w, ops[k].c);
            biggest = fmax(biggest, fabs(v));
        }
        gain_lo = fmin(gain_lo, (w - v) / h);
        gain_hi = fmax(gain_hi, (w - v) / h);
    }
    cr_assert_leq(biggest, 2.3, "largest |x| %g", biggest);
    cr_assert(gain_lo >= 0.1 && gain_hi <= 1.4, "d out / d in in [%g, %g]", gain_lo, gain_hi);
    free(x);
    free(ops);
}

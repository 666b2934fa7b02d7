/* Unit tests of host_sync's plain-C parts (scenarios/host_sync/host_sync_ref.c): the loss lag
 * and mismatch count that verify and the deferred claim rely on, the fp64 chain on inputs whose
 * answer is known, the loss, and the host's timed work. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "host_sync_ref.h"

#define N 12

/* Distinct losses of steps 0..N-1 (item's reports). */
static void item_losses(float *ref)
{
    for (int s = 0; s < N; s++)
        ref[s] = 1.0f + 0.125f * (float)s;
}

/* What a variant reading each loss `lag` steps late reports. */
static void late_reports(const float *ref, int lag, float *reported)
{
    for (int s = 0; s < N; s++)
        reported[s] = s < lag ? NAN : ref[s - lag];
}

Test(host_sync_ref, item_reports_at_lag_zero)
{
    float ref[N], rep[N];
    item_losses(ref);
    late_reports(ref, 0, rep);
    cr_assert_eq(hs_loss_lag(rep, ref, N, 6), 0);
    cr_assert_eq(hs_loss_mismatch(rep, ref, N, 0), 0);
}

Test(host_sync_ref, deferred_reports_three_steps_late)
{
    float ref[N], rep[N];
    item_losses(ref);
    late_reports(ref, 3, rep);
    cr_assert_eq(hs_loss_lag(rep, ref, N, 6), 3);
    cr_assert_eq(hs_loss_mismatch(rep, ref, N, 3), 0);
    /* read at the wrong lag, every report is wrong, and so is the early one */
    cr_assert_eq(hs_loss_mismatch(rep, ref, N, 2), N - 2);
}

Test(host_sync_ref, one_wrong_report_is_counted_and_no_lag_explains_it)
{
    float ref[N], rep[N];
    item_losses(ref);
    late_reports(ref, 3, rep);
    rep[7] = nextafterf(rep[7], 10.0f);     /* one ulp off: not the same loss */
    cr_assert_eq(hs_loss_mismatch(rep, ref, N, 3), 1);
    cr_assert_eq(hs_loss_lag(rep, ref, N, 6), -1);
}

Test(host_sync_ref, a_missing_or_early_report_is_a_mismatch)
{
    float ref[N], rep[N];
    item_losses(ref);
    late_reports(ref, 3, rep);
    rep[5] = NAN;                           /* a step that reported nothing */
    cr_assert_eq(hs_loss_mismatch(rep, ref, N, 3), 1);
    late_reports(ref, 3, rep);
    rep[1] = 2.0f;                          /* a value before any loss was copied */
    cr_assert_eq(hs_loss_mismatch(rep, ref, N, 3), 1);
}

Test(host_sync_ref, constant_losses_do_not_prove_a_lag)
{
    /* with every loss equal, lag 0 explains a late reader's values except its empty start */
    float ref[N], rep[N];
    for (int s = 0; s < N; s++)
        ref[s] = 2.0f;
    late_reports(ref, 3, rep);
    cr_assert_eq(hs_loss_lag(rep, ref, N, 6), 3);
    for (int s = 0; s < N; s++)
        rep[s] = 2.0f;
    cr_assert_eq(hs_loss_lag(rep, ref, N, 6), 0);
}

/* One layer of width 1: y = bf16(tanh(bf16(x w))), with x and w redrawn as the device draws
 * them. */
Test(host_sync_ref, one_by_one_chain_matches_its_formula)
{
    const uint64_t seed = 7;
    const int row = 0;
    double got = 0;
    cr_assert_eq(hs_ref_rows(seed, 1, 1, 1, &row, 1, &got), 0);
    const float x = uf_bf16_round(hs_uniform(hs_key(seed, HS_T_X), 0, 1.0f));
    const float w = uf_bf16_round(hs_uniform(hs_key(seed, HS_T_W), 0, hs_w_amplitude(1)));
    const double want = uf_bf16_round((float)tanh(uf_bf16_round((float)((double)x * w))));
    cr_assert_eq(got, want);
}

/* Split over threads, the rows are bitwise those of one thread (every sum in the same order),
 * for a width that does not divide evenly and more threads than cores. */
Test(host_sync_ref, threads_give_the_same_rows_bit_for_bit)
{
    enum { D = 203 };
    const int rows[3] = {0, 5, 11};
    static double one[3 * D], many[3 * D], other[3 * D];
    cr_assert_eq(hs_ref_rows_threads(5, 12, D, 3, rows, 3, one, 1), 0);
    cr_assert_eq(hs_ref_rows_threads(5, 12, D, 3, rows, 3, many, 7), 0);
    cr_assert_eq(hs_ref_rows(5, 12, D, 3, rows, 3, other), 0);
    cr_assert_eq(memcmp(one, many, sizeof one), 0, "7 threads differ from one");
    cr_assert_eq(memcmp(one, other, sizeof one), 0, "the online CPUs' threads differ from one");
    cr_assert_eq(hs_ref_rows_threads(5, 12, D, 3, rows, 3, many, 0), 0, "0 threads: one");
    cr_assert_eq(memcmp(one, many, sizeof one), 0);
}

/* Width 64, 8 layers: the chain stays bounded by tanh and non-zero, rows differ, and a row
 * outside the tokens is refused. */
Test(host_sync_ref, chain_rows_are_bounded_and_distinct)
{
    enum { D = 64 };
    const int rows[2] = {0, 9};
    double out[2 * D];
    cr_assert_eq(hs_ref_rows(3, 10, D, 8, rows, 2, out), 0);
    double energy = 0;
    int differ = 0;
    for (int j = 0; j < D; j++) {
        cr_assert(fabs(out[j]) <= 1.0 && fabs(out[D + j]) <= 1.0);
        energy += out[j] * out[j];
        differ += out[j] != out[D + j];
    }
    cr_assert_gt(energy / D, 1e-3, "the chain died out: mean square %g", energy / D);
    cr_assert_gt(differ, D / 2);
    const int outside = 10;
    cr_assert_eq(hs_ref_rows(3, 10, D, 8, &outside, 1, out), 1);
}

Test(host_sync_ref, loss_is_the_mean_square_against_the_labels)
{
    enum { n = 1000 };
    float y[n];
    const uint32_t key = hs_key(5, HS_T_LABEL);
    for (int i = 0; i < n; i++)
        y[i] = hs_label(key, 4, (uint32_t)i);
    cr_assert_eq(hs_ref_loss(y, n, key, 4), 0.0);
    /* the labels of another step differ: uniform of [-1/2, 1/2) twice, E[(a-b)^2] = 1/6 */
    const double other = hs_ref_loss(y, n, key, 5);
    cr_assert(other > 0.12 && other < 0.21, "loss against another step's labels: %g", other);
    for (int i = 0; i < n; i++)
        y[i] = hs_label(key, 4, (uint32_t)i) + 0.5f;
    cr_assert_float_eq(hs_ref_loss(y, n, key, 4), 0.25, 1e-9);
}

Test(host_sync_ref, host_work_lasts_at_least_what_was_asked)
{
    const double t0 = hs_now_us();
    hs_host_work(3000.0);
    const double took = hs_now_us() - t0;
    cr_assert_geq(took, 3000.0);
    cr_assert_lt(took, 1e6);
    const double t1 = hs_now_us();
    hs_host_work(0.0);
    hs_host_work(-5.0);
    cr_assert_lt(hs_now_us() - t1, 1e4);
}

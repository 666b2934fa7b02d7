/* tools/claimstats.c: the claims of several runs side by side (what ci/repeat.sh prints). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "claimstats.h"

/* A run of scenario "s" whose metadata holds the claim lines given (claim.1, claim.2, ...). */
static void add_run(cs_set *set, const char *const *lines, int n)
{
    uf_table t;
    char err[UF_REASON_LEN] = "";
    uf_table_init(&t, "s");
    uf_meta_set(&t.meta, "mode", "quick");
    uf_meta_set(&t.meta, "git", "abc1234");
    for (int i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof key, "claim.%d", i + 1);
        uf_meta_set(&t.meta, key, "%s", lines[i]);
    }
    cr_assert_eq(cs_add_table(set, "s", &t, err, sizeof err), 0, "%s", err);
    uf_table_free(&t);
}

static const cs_claim *claim(const cs_set *set, int index)
{
    for (int i = 0; i < set->n_claims; i++)
        if (set->claims[i].index == index)
            return &set->claims[i];
    cr_assert_fail("no claim.%d", index);
    return NULL;
}

/* The ratio claim of 5 runs: 1.60 1.62 1.66 1.70 1.71 against >= 1.6. Median 1.66; absolute
 * deviations 0.06 0.04 0 0.04 0.05, their median 0.04, spread 1.4826 x 0.04; margin
 * (1.66 - 1.6) / spread = 1.01, worst (1.60 - 1.6) / spread = 0. */
Test(claimstats, median_spread_and_margins_of_five_runs)
{
    static const double v[] = {1.60, 1.71, 1.66, 1.62, 1.70};
    cs_set set;
    cs_set_init(&set);
    for (int r = 0; r < 5; r++) {
        char line[200];
        snprintf(line, sizeof line, "[held] (measured %.6g, bound >= 1.6) a/b step_ms >= 1.6: why",
                 v[r]);
        const char *lines[] = {line};
        add_run(&set, lines, 1);
    }
    const cs_claim *c = claim(&set, 1);
    cs_summary sum;
    cs_summarize(c, &sum);
    cr_assert_eq(c->held, 5);
    cr_assert_eq(sum.judged, 5);
    cr_assert_float_eq(sum.min, 1.60, 1e-12);
    cr_assert_float_eq(sum.median, 1.66, 1e-12);
    cr_assert_float_eq(sum.max, 1.71, 1e-12);
    cr_assert_float_eq(sum.spread, CS_MAD_TO_SIGMA * 0.04, 1e-9);
    cr_assert_float_eq(sum.margin, 0.06 / (CS_MAD_TO_SIGMA * 0.04), 1e-6);
    cr_assert_float_eq(sum.worst_margin, 0.0, 1e-9);
    cr_assert_float_eq(sum.room_pct, 100.0 * 0.06 / 1.6, 1e-9);
    cr_assert_eq(cs_standing_of(c, &sum, 5, 3.0), CS_LOW, "held 5/5 but within 1 spread");
    cr_assert_eq(cs_standing_of(c, &sum, 5, 1.0), CS_STEADY);
    cr_assert_str_eq(set.scenarios[0].mode, "quick");
    cr_assert_eq(set.scenarios[0].runs, 5);
    cs_set_free(&set);
}

/* A <= claim: the holding side is below the bound, and the worst run is the largest. */
Test(claimstats, a_less_or_equal_claim_counts_its_margin_downwards)
{
    static const double v[] = {10, 12, 11};
    cs_set set;
    cs_set_init(&set);
    for (int r = 0; r < 3; r++) {
        char line[200];
        snprintf(line, sizeof line, "[held] (measured %g, bound <= 20) x idle_pct <= 20: why", v[r]);
        const char *lines[] = {line};
        add_run(&set, lines, 1);
    }
    cs_summary sum;
    cs_summarize(claim(&set, 1), &sum);
    cr_assert_float_eq(sum.spread, CS_MAD_TO_SIGMA * 1.0, 1e-9);
    cr_assert_float_eq(sum.margin, 9.0 / CS_MAD_TO_SIGMA, 1e-9);
    cr_assert_float_eq(sum.worst_margin, 8.0 / CS_MAD_TO_SIGMA, 1e-9);
    cr_assert_float_eq(sum.room_pct, 45.0, 1e-9, "(20 - 11) / 20 on the holding side");
    cr_assert_eq(cs_standing_of(claim(&set, 1), &sum, 3, 3.0), CS_STEADY);
    cs_set_free(&set);
}

/* Failed once, missing once, n/a without a legitimate reason: each is FLAKY. A count exactly at
 * its bound every run is steady; every run n/a for a legitimate reason is n/a. */
Test(claimstats, standings)
{
    cs_set set;
    cs_set_init(&set);
    const char *run1[] = {"[held] (measured 1.7, bound >= 1.6) r: w",
                          "[held] (measured 1, bound >= 1) drains >= 1: w",
                          "[n/a] (needs a full run, this is --quick: w; legitimate) f >= 2: w",
                          "[held] (measured 5, bound <= 9) n: w",
                          "[held] (measured 5, bound <= 9) m: w"};
    const char *run2[] = {"[FAILED] (measured 1.5, bound >= 1.6) r: w",
                          "[held] (measured 1, bound >= 1) drains >= 1: w",
                          "[n/a] (needs a full run, this is --quick: w; legitimate) f >= 2: w",
                          "[n/a] (trace pass recorded nothing; not legitimate) n: w"};
    const char *run3[] = {"[held] (measured 1.8, bound >= 1.6) r: w",
                          "[held] (measured 1, bound >= 1) drains >= 1: w",
                          "[n/a] (needs a full run, this is --quick: w; legitimate) f >= 2: w",
                          "[held] (measured 5, bound <= 9) n: w",
                          "[held] (measured 5, bound <= 9) m: w"};
    add_run(&set, run1, 5);
    add_run(&set, run2, 4);
    add_run(&set, run3, 5);
    static const cs_standing want[] = {CS_FLAKY, CS_STEADY, CS_UNJUDGED, CS_FLAKY, CS_FLAKY};
    for (int k = 1; k <= 5; k++) {
        cs_summary sum;
        cs_summarize(claim(&set, k), &sum);
        cr_assert_eq(cs_standing_of(claim(&set, k), &sum, 3, 3.0), want[k - 1], "claim.%d: %s", k,
                     cs_standing_name(cs_standing_of(claim(&set, k), &sum, 3, 3.0)));
    }
    cr_assert_eq(claim(&set, 1)->failed, 1);
    cr_assert_eq(claim(&set, 5)->runs, 2, "claim.5 missing from run 2");
    cs_set_free(&set);
}

/* Bounds: a line of the older format with free wording has none (LOW: nothing says how safe
 * the claim is); runs that state different bounds have none either. */
Test(claimstats, unknown_or_differing_bounds_are_not_steady)
{
    cs_set set;
    cs_set_init(&set);
    for (int r = 0; r < 3; r++) {
        char a[200], b[200];
        snprintf(a, sizeof a, "[held] (measured %d) the step is faster by >= 40 %% of it: w", 60 + r);
        snprintf(b, sizeof b, "[held] (measured %d, bound >= %d) x >= %d: w", 60 + r, r ? 2 : 1,
                 r ? 2 : 1);
        const char *lines[] = {a, b};
        add_run(&set, lines, 2);
    }
    for (int k = 1; k <= 2; k++) {
        cs_summary sum;
        cs_summarize(claim(&set, k), &sum);
        cr_assert(!claim(&set, k)->bound_known, "claim.%d", k);
        cr_assert(isnan(sum.margin));
        cr_assert_eq(cs_standing_of(claim(&set, k), &sum, 3, 3.0), CS_LOW);
    }
    cr_assert_eq(claim(&set, 2)->bounds_differ, 2, "runs 2 and 3 state another bound than run 1");
    cs_set_free(&set);
}

/* Fewer than 3 judged runs: no spread, no margin. A zero spread: +-inf beside the bound. */
Test(claimstats, spread_needs_three_runs_and_a_zero_spread_is_infinite)
{
    cs_set set;
    cs_set_init(&set);
    const char *lines[] = {"[held] (measured 0, bound <= 1) idle <= 1: w"};
    add_run(&set, lines, 1);
    add_run(&set, lines, 1);
    cs_summary sum;
    cs_summarize(claim(&set, 1), &sum);
    cr_assert(isnan(sum.spread) && isnan(sum.margin));
    cr_assert_eq(cs_standing_of(claim(&set, 1), &sum, 2, 3.0), CS_LOW);
    add_run(&set, lines, 1);
    cs_summarize(claim(&set, 1), &sum);
    cr_assert_float_eq(sum.spread, 0.0, 0.0);
    cr_assert(isinf(sum.margin) && sum.margin > 0);
    cr_assert_eq(cs_standing_of(claim(&set, 1), &sum, 3, 3.0), CS_STEADY);
    cs_set_free(&set);
}

/* What is not a claim line, or not a claim key, is an error naming the key. */
Test(claimstats, refuses_malformed_claims)
{
    cs_set set;
    uf_table t;
    char err[UF_REASON_LEN] = "";
    cs_set_init(&set);
    uf_table_init(&t, "s");
    uf_meta_set(&t.meta, "claim.1", "[held] fixture claim: eager busy_pct <= 30 (measured 25)");
    cr_assert_eq(cs_add_table(&set, "s", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "claim.1: not a claim line"), "%s", err);
    uf_table_free(&t);
    uf_table_init(&t, "s");
    uf_meta_set(&t.meta, "claim.x", "[held] (measured 1, bound >= 1) y: w");
    cr_assert_eq(cs_add_table(&set, "s", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "claim.x"), "%s", err);
    uf_table_free(&t);
    cs_set_free(&set);
}

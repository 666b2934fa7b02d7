/* Unit tests of expect.c: the `where` grammar, point and metric lookup, claims held / FAILED /
 * n/a with and without a legitimate reason, the run's verdict (UNDERFED_REQUIRE_GPU included),
 * and the dry check that catches misspelled variants, metrics, axes and points. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "options.h"

/* ---- the `where` grammar --------------------------------------------------------------- */

static const double elems_run[] = {4096, 65536, 16777216};
static const double ops_run[] = {100, 1000};

static const uf_where_axis where_axes[] = {
    {.name = "elems", .default_value = 4096, .values = elems_run, .n_values = 3},
    {.name = "ops", .default_value = 1000, .values = ops_run, .n_values = 2},
};

static int parse(const char *where, double *point, uf_where_how *how, char *err)
{
    return uf_where_parse(where_axes, 2, where, point, how, err, 256);
}

/* The parse must fail with a message naming `needle`. */
static void expect_bad(const char *where, const char *needle)
{
    double point[2];
    char err[256] = "";
    cr_assert_eq(parse(where, point, NULL, err), -1, "\"%s\" should be refused", where);
    cr_assert(strstr(err, needle) != NULL, "message '%s' should name '%s'", err, needle);
}

Test(where, unnamed_axes_take_their_defaults)
{
    double point[2];
    uf_where_how how[2];
    char err[256];
    cr_assert_eq(parse(NULL, point, how, err), 0);
    cr_assert_eq(point[0], 4096);
    cr_assert_eq(point[1], 1000);
    cr_assert_eq(how[0], UF_WHERE_DEFAULT);
    cr_assert_eq(parse("", point, how, err), 0);
    cr_assert_eq(point[1], 1000);
    cr_assert_eq(parse("ops=100", point, how, err), 0);
    cr_assert_eq(point[0], 4096, "elems is not named: its default");
    cr_assert_eq(point[1], 100);
    cr_assert_eq(how[0], UF_WHERE_DEFAULT);
    cr_assert_eq(how[1], UF_WHERE_NUMBER);
}

Test(where, numbers_take_the_command_line_suffixes)
{
    double point[2];
    char err[256];
    cr_assert_eq(parse("elems=4K", point, NULL, err), 0);
    cr_assert_eq(point[0], 4096);
    cr_assert_eq(parse("elems=64M,ops=0.5", point, NULL, err), 0);
    cr_assert_eq(point[0], 64.0 * 1048576);
    cr_assert_eq(point[1], 0.5);
    cr_assert_eq(parse("elems=1G", point, NULL, err), 0);
    cr_assert_eq(point[0], 1073741824.0);
    cr_assert_eq(parse("ops=1e3,elems=16k", point, NULL, err), 0);
    cr_assert_eq(point[0], 16384);
    cr_assert_eq(point[1], 1000);
}

Test(where, max_and_min_choose_among_the_values_run)
{
    double point[2];
    uf_where_how how[2];
    char err[256];
    cr_assert_eq(parse("elems=max,ops=min", point, how, err), 0);
    cr_assert_eq(point[0], 16777216);
    cr_assert_eq(point[1], 100);
    cr_assert_eq(how[0], UF_WHERE_EXTREME);
    cr_assert_eq(parse("elems=min", point, how, err), 0);
    cr_assert_eq(point[0], 4096);
}

Test(where, bad_input_is_refused_with_the_reason)
{
    expect_bad("elems", "not AXIS=VALUE");
    expect_bad("=4K", "not AXIS=VALUE");
    expect_bad("elms=4K", "unknown axis \"elms\"");
    expect_bad("elms=4K", "axes: elems, ops");
    expect_bad("elems=4K,elems=8K", "named twice");
    expect_bad("elems=4Q", "not a value");
    expect_bad("elems=", "not a value");
    expect_bad("elems=maximum", "not a value");
    expect_bad("elems=4K,", "empty item");
    expect_bad(",elems=4K", "empty item");
    expect_bad("elems=4K, ops=100", "unknown axis \" ops\"");
    uf_where_axis none = {.name = "n", .default_value = 1, .values = NULL, .n_values = 0};
    double point[1];
    char err[256] = "";
    cr_assert_eq(uf_where_parse(&none, 1, "n=max", point, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "no values") != NULL, "%s", err);
}

Test(where, one_tolerance_rule_names_one_point)
{
    cr_assert(uf_axis_value_same(4096, 4096));
    cr_assert(uf_axis_value_same(4096, 4096 * (1 + 1e-12)));
    cr_assert(uf_axis_value_same(0, 1e-12));
    cr_assert(!uf_axis_value_same(4096, 4097));
    cr_assert(!uf_axis_value_same(4096, 4096 * (1 + 1e-6)));
    cr_assert(!uf_axis_value_same(0, 1e-6));
    cr_assert(!uf_axis_value_same(1e12, 1e12 + 1e4), "relative, not absolute, above 1");
}

/* ---- a measured table ------------------------------------------------------------------- */

static const char *const variants[] = {"eager", "graph"};
static const char *const extras[] = {"tokens_per_s"};
static const double elems_full[] = {4096, 65536, 16777216};
static const double elems_quick[] = {4096, 16777216};
static const double ops_full[] = {100, 1000};
static const double ops_quick[] = {1000};

/* values: those of the report (run, or declared for the mode when checking). */
static uf_claims_decl make_decl(uf_claims_axis *axes, int quick)
{
    axes[0] = (uf_claims_axis){.name = "elems", .default_value = 4096,
                               .values = quick ? elems_quick : elems_full,
                               .n_values = quick ? 2 : 3, .full_values = elems_full,
                               .n_full_values = 3};
    axes[1] = (uf_claims_axis){.name = "ops", .default_value = 1000,
                               .values = quick ? ops_quick : ops_full,
                               .n_values = quick ? 1 : 2, .full_values = ops_full,
                               .n_full_values = 2};
    return (uf_claims_decl){.variants = variants, .n_variants = 2, .axes = axes, .n_axes = 2,
                            .extras = extras, .n_extras = 1};
}

static uf_row *add_row(uf_table *t, const char *variant, double elems, double ops,
                       double step_ms, double busy_pct)
{
    uf_row *r = uf_table_append(t);
    cr_assert_not_null(r);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    r->axis[0] = elems;
    r->axis[1] = ops;
    r->step_ms = step_ms;
    r->busy_pct = busy_pct;
    return r;
}

/* eager and graph at elems 4K and 16M (ops=1000): eager 10 ms, graph 2 ms at 4K. */
static void make_table(uf_table *t)
{
    uf_table_init(t, "test");
    uf_table_add_axis(t, "elems");
    uf_table_add_axis(t, "ops");
    uf_table_add_extra(t, "tokens_per_s", "tok/s");
    add_row(t, "eager", 4096, 1000, 10.0, 20.0)->extra[0] = 1000;
    add_row(t, "graph", 4096, 1000, 2.0, 80.0)->extra[0] = 5000;
    add_row(t, "eager", 16777216, 1000, 50.0, 95.0);
    add_row(t, "graph", 16777216, 1000, 48.0, 96.0);
}

typedef struct fixture {
    uf_table table;
    uf_claims_axis axes[2];
    uf_run_facts facts;
    uf_expectations *ex;
    const uf_report *rep;
} fixture;

static void start(fixture *f, const uf_run_facts *facts)
{
    memset(f, 0, sizeof *f);
    make_table(&f->table);
    if (facts)
        f->facts = *facts;
    uf_claims_decl d = make_decl(f->axes, f->facts.quick);
    f->ex = uf_claims_new(&d, &f->table, &f->facts);
    cr_assert_not_null(f->ex);
    f->rep = uf_claims_report(f->ex);
}

static void finish(fixture *f)
{
    uf_claims_free(f->ex);
    uf_table_free(&f->table);
}

static const uf_claim *last_claim(const fixture *f)
{
    return uf_claims_at(f->ex, uf_claims_count(f->ex) - 1);
}

static uf_run_facts facts_with(uf_source src, uf_pass_state state, const char *reason)
{
    uf_run_facts facts;
    memset(&facts, 0, sizeof facts);
    facts.state[src] = state;
    snprintf(facts.reason[src], sizeof facts.reason[src], "%s", reason);
    return facts;
}

Test(claims, lookup_matches_points_within_the_tolerance)
{
    fixture f;
    start(&f, NULL);
    const uf_row *r = uf_find(f.rep, "graph", "elems=4K");
    cr_assert_not_null(r);
    cr_assert_eq(uf_value(f.rep, r, "step_ms"), 2.0);
    cr_assert_eq(uf_value(f.rep, r, "tokens_per_s"), 5000, "a scenario column");
    cr_assert_eq(uf_value(f.rep, r, "elems"), 4096, "an axis");
    cr_assert_eq(uf_find(f.rep, "graph", NULL), r, "defaults: elems=4096, ops=1000");
    cr_assert_eq(uf_find(f.rep, "graph", "elems=4096.0000000001"), r);
    cr_assert_eq(uf_find(f.rep, "eager", "elems=max")->step_ms, 50.0);
    cr_assert_null(uf_find(f.rep, "graph", "elems=4097"));
    cr_assert_null(uf_find(f.rep, "graph", "elems=64K"), "declared, not run");
    cr_assert_eq(uf_claims_n_errors(f.ex), 0, "a row not run is no programming error");
    finish(&f);
}

Test(claims, a_row_not_run_is_named_even_after_many_misses)
{
    fixture f;
    start(&f, NULL);
    for (int k = 0; k < 50; k++) {      /* more than the misses kept, fewer than the claims */
        char where[32];
        snprintf(where, sizeof where, "elems=%d", 5000 + k);
        cr_assert_null(uf_find(f.rep, "eager", where));
        uf_expect(f.ex, "probe", 1.0, UF_LE, 2.0);
    }
    uf_expect_metric(f.ex, f.rep, "graph", "elems=64K", "step_ms", UF_LE, 1.0, "why");
    const char *reason = last_claim(&f)->reason;
    cr_assert(strstr(reason, "not run: graph @ elems=64K") != NULL, "%s", reason);
    cr_assert(strstr(reason, "elems=5") == NULL, "only this claim's rows: %s", reason);
    finish(&f);
}

Test(claims, held_and_failed_by_every_comparison)
{
    fixture f;
    start(&f, NULL);
    uf_expect(f.ex, "le", 1.0, UF_LE, 1.0);
    cr_assert_eq(last_claim(&f)->verdict, UF_HELD);
    uf_expect(f.ex, "lt", 1.0, UF_LT, 1.0);
    cr_assert_eq(last_claim(&f)->verdict, UF_FAILED);
    uf_expect(f.ex, "ge", 1.0, UF_GE, 1.0);
    cr_assert_eq(last_claim(&f)->verdict, UF_HELD);
    uf_expect(f.ex, "gt", 1.0, UF_GT, 1.0);
    cr_assert_eq(last_claim(&f)->verdict, UF_FAILED);
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0, "launch gaps");
    cr_assert_eq(last_claim(&f)->verdict, UF_HELD);
    cr_assert_eq(last_claim(&f)->value, 20.0);
    cr_assert(strstr(last_claim(&f)->text, "eager busy_pct @ elems=4K <= 30: launch gaps"));
    uf_expect_metric(f.ex, f.rep, "graph", "elems=4K", "busy_pct", UF_LE, 30.0, "no");
    cr_assert_eq(last_claim(&f)->verdict, UF_FAILED);
    uf_claims_tally t = uf_claims_tally_of(f.ex);
    cr_assert_eq(t.held, 3);
    cr_assert_eq(t.failed, 3);
    cr_assert_eq(t.na, 0);
    finish(&f);
}

Test(claims, ratio_of_two_variants)
{
    fixture f;
    start(&f, NULL);
    uf_expect_ratio(f.ex, f.rep, "graph", "eager", "elems=4K", "step_ms", UF_LE, 0.25, "why");
    cr_assert_eq(last_claim(&f)->verdict, UF_HELD);
    cr_assert_float_eq(last_claim(&f)->value, 0.2, 1e-12);
    uf_expect_ratio(f.ex, f.rep, "graph", "eager", "elems=4K", "step_ms", UF_LE, 0.1, "why");
    cr_assert_eq(last_claim(&f)->verdict, UF_FAILED);
    finish(&f);
}

Test(claims, ratio_with_an_empty_side_is_na_never_held)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    /* NaN / x and x / NaN are NaN whatever the comparison: never held */
    f.table.rows[1].busy_pct = NAN;
    uf_expect_ratio(f.ex, f.rep, "graph", "eager", "elems=4K", "busy_pct", UF_GE, 0.0, "a");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(last_claim(&f)->legit);
    uf_expect_ratio(f.ex, f.rep, "eager", "graph", "elems=4K", "busy_pct", UF_LE, 1e9, "b");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert_str_eq(last_claim(&f)->reason, "trace pass off (--no-trace)");
    /* a side not run: n/a, not legitimate, naming the row */
    uf_expect_ratio(f.ex, f.rep, "eager", "graph", "elems=64K", "step_ms", UF_GE, 0.0, "c");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "not run: eager @ elems=64K") != NULL, "%s",
              last_claim(&f)->reason);
    finish(&f);
}

Test(claims, na_is_legitimate_when_the_user_switched_the_pass_off)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    f.table.rows[0].busy_pct = NAN;
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0, "why");
    const uf_claim *c = last_claim(&f);
    cr_assert_eq(c->verdict, UF_NA);
    cr_assert(c->legit);
    cr_assert_str_eq(c->reason, "trace pass off (--no-trace)");
    uf_claims_tally t = uf_claims_tally_of(f.ex);
    cr_assert_eq(t.na, 1);
    cr_assert_eq(t.na_legit, 1);
    cr_assert_eq(uf_claims_exit_code(t, 0), 0);
    cr_assert_eq(uf_claims_exit_code(t, 1), 3, "UNDERFED_REQUIRE_GPU=1: any n/a fails");
    finish(&f);
}

Test(claims, na_is_legitimate_when_the_gpu_does_not_permit_counters)
{
    uf_run_facts facts = facts_with(UF_SRC_COUNTERS, UF_PASS_DENIED,
                                    "CUPTI PM sampling unavailable: insufficient privileges");
    fixture f;
    start(&f, &facts);
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "dram_pct", UF_GE, 60.0, "why");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "insufficient privileges"));
    cr_assert_eq(uf_claims_exit_code(uf_claims_tally_of(f.ex), 0), 0);
    finish(&f);
}

Test(claims, na_without_a_legitimate_reason)
{
    uf_run_facts facts = facts_with(UF_SRC_CEILINGS, UF_PASS_FAILED, "no ceilings.csv");
    fixture f;
    start(&f, &facts);
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "pct_of_copy", UF_GE, 90.0, "ceilings");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "pct_of_copy: no ceilings.csv"));
    cr_assert_eq(uf_claims_exit_code(uf_claims_tally_of(f.ex), 0), 3);
    finish(&f);
}

Test(claims, a_metric_empty_in_a_pass_that_ran_is_not_legitimate)
{
    fixture f;
    start(&f, NULL);
    f.table.rows[0].dram_pct = NAN;
    snprintf(f.table.rows[0].skip_reason, sizeof f.table.rows[0].skip_reason,
             "CUPTI PM sampling: the hardware buffer overflowed");
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "dram_pct", UF_GE, 60.0, "why");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "overflowed"), "%s", last_claim(&f)->reason);
    finish(&f);
}

Test(claims, a_skipped_row_is_not_legitimate_even_with_its_pass_off)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    uf_row *r = &f.table.rows[0];
    r->step_ms = NAN;
    r->busy_pct = NAN;
    snprintf(r->skip_reason, sizeof r->skip_reason, "the variant ignores elems");
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0, "why");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "was not measured: the variant ignores elems"));
    finish(&f);
}

Test(claims, a_nan_with_no_empty_input_is_not_legitimate)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    f.table.rows[0].busy_pct = NAN;
    double busy = uf_value(f.rep, uf_find(f.rep, "eager", NULL), "busy_pct");
    uf_expect(f.ex, "first claim, on busy", busy, UF_LE, 30.0);
    cr_assert(last_claim(&f)->legit);
    /* the empty busy_pct was this claim's: it does not excuse the next one */
    uf_expect(f.ex, "a condition of the scenario's", NAN, UF_LE, 1.0);
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    finish(&f);
}

Test(claims, one_illegitimate_cause_among_legitimate_ones_makes_it_illegitimate)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    f.table.rows[0].busy_pct = NAN;
    double a = uf_value(f.rep, uf_find(f.rep, "eager", NULL), "busy_pct");
    double b = uf_value(f.rep, uf_find(f.rep, "graph", "elems=64K"), "step_ms");
    uf_expect(f.ex, "mixed", a / b, UF_LE, 1.0);
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "trace pass off"));
    cr_assert(strstr(last_claim(&f)->reason, "graph @ elems=64K"));
    finish(&f);
}

Test(claims, a_full_run_claim_is_legitimately_na_in_quick_only)
{
    uf_run_facts quick;
    memset(&quick, 0, sizeof quick);
    quick.quick = 1;
    fixture f;
    start(&f, &quick);
    uf_expect_full_run(f.ex, "the power limit averages over ~1 s");
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "step_ms", UF_LE, 1.0, "would fail");
    const uf_claim *c = last_claim(&f);
    cr_assert_eq(c->verdict, UF_NA, "measured, but not judged on a quick run");
    cr_assert(c->legit);
    cr_assert(strstr(c->reason, "needs a full run"));
    cr_assert(strstr(c->reason, "power limit"));
    /* the declaration covers one claim only */
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "step_ms", UF_LE, 1.0, "fails");
    cr_assert_eq(last_claim(&f)->verdict, UF_FAILED);
    finish(&f);

    start(&f, NULL);
    uf_expect_full_run(f.ex, "the power limit averages over ~1 s");
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "step_ms", UF_LE, 1.0, "fails");
    cr_assert_eq(last_claim(&f)->verdict, UF_FAILED, "a full run judges it");
    finish(&f);
}

Test(claims, unknown_names_in_a_real_evaluation_are_errors_and_not_legitimate)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    uf_expect_metric(f.ex, f.rep, "egaer", "elems=4K", "busy_pct", UF_LE, 30.0, "why");
    cr_assert_eq(last_claim(&f)->verdict, UF_NA);
    cr_assert(!last_claim(&f)->legit);
    cr_assert(strstr(last_claim(&f)->reason, "unknown variant \"egaer\""));
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "bussy_pct", UF_LE, 30.0, "why");
    cr_assert(!last_claim(&f)->legit);
    cr_assert_eq(uf_claims_n_errors(f.ex), 2);
    cr_assert(strstr(uf_claims_error(f.ex, 0), "claim 1: unknown variant \"egaer\""));
    cr_assert(strstr(uf_claims_error(f.ex, 1), "claim 2: unknown metric \"bussy_pct\""));
    finish(&f);
}

/* ---- the verdict ------------------------------------------------------------------------- */

Test(verdict, exit_code_rules)
{
    uf_claims_tally all_held = {.held = 5};
    uf_claims_tally one_failed = {.held = 4, .failed = 1};
    uf_claims_tally legit_na = {.held = 4, .na = 1, .na_legit = 1};
    uf_claims_tally other_na = {.held = 4, .na = 2, .na_legit = 1};
    uf_claims_tally none = {0};
    cr_assert_eq(uf_claims_exit_code(all_held, 0), 0);
    cr_assert_eq(uf_claims_exit_code(all_held, 1), 0);
    cr_assert_eq(uf_claims_exit_code(one_failed, 0), 3);
    cr_assert_eq(uf_claims_exit_code(legit_na, 0), 0);
    cr_assert_eq(uf_claims_exit_code(legit_na, 1), 3);
    cr_assert_eq(uf_claims_exit_code(other_na, 0), 3);
    cr_assert_eq(uf_claims_exit_code(none, 1), 0);
}

Test(verdict, summary_and_metadata_lines_say_each_verdict)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    f.table.rows[0].busy_pct = NAN;
    uf_expect(f.ex, "holds", 1.0, UF_LE, 2.0);
    uf_expect(f.ex, "fails", 3.0, UF_LE, 2.0);
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0, "off");
    uf_expect_metric(f.ex, f.rep, "eager", "elems=64K", "step_ms", UF_LE, 30.0, "not run");
    char line[UF_META_VALUE_LEN];
    uf_claim_line(uf_claims_at(f.ex, 0), line, sizeof line);
    cr_assert_str_eq(line, "[held] (measured 1, bound <= 2) holds");
    uf_claim_line(uf_claims_at(f.ex, 1), line, sizeof line);
    cr_assert_str_eq(line, "[FAILED] (measured 3, bound <= 2) fails");
    uf_claim_line(uf_claims_at(f.ex, 2), line, sizeof line);
    cr_assert(strncmp(line, "[n/a] (trace pass off (--no-trace); legitimate) eager busy_pct",
                      62) == 0, "%s", line);
    uf_claim_line(uf_claims_at(f.ex, 3), line, sizeof line);
    cr_assert(strstr(line, "; not legitimate) ") != NULL, "%s", line);

    char buf[8192] = "";
    FILE *out = fmemopen(buf, sizeof buf, "w");
    cr_assert_not_null(out);
    uf_claims_print(out, f.ex, 0);
    fclose(out);
    cr_assert(strstr(buf, "1 held, 1 FAILED, 2 n/a (1 with a legitimate reason)"), "%s", buf);
    cr_assert(strstr(buf, "not judged: trace pass off (--no-trace) (a legitimate reason)"));
    cr_assert(strstr(buf, "exit 3"));
    finish(&f);
}

/* ---- claim lines read back ---------------------------------------------------------------- */

/* What uf_claim_line writes, uf_claim_parse reads: verdict, value, bound and text. */
Test(claim_parse, reads_back_every_verdict)
{
    uf_run_facts facts = facts_with(UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    fixture f;
    start(&f, &facts);
    f.table.rows[0].busy_pct = NAN;
    uf_expect(f.ex, "a ratio (of two) >= 1.6: why", 1.661234567, UF_GE, 1.6);
    uf_expect(f.ex, "fails: why", -0.25, UF_GT, 1e-3);
    uf_expect_metric(f.ex, f.rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0, "off");
    char line[UF_META_VALUE_LEN], err[200];
    uf_claim_read r;
    uf_claim_line(uf_claims_at(f.ex, 0), line, sizeof line);
    cr_assert_str_eq(line, "[held] (measured 1.66123, bound >= 1.6) a ratio (of two) >= 1.6: why");
    cr_assert_eq(uf_claim_parse(line, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.verdict, UF_HELD);
    cr_assert_float_eq(r.value, 1.66123, 1e-12);
    cr_assert_eq(r.cmp, UF_GE);
    cr_assert_float_eq(r.bound, 1.6, 1e-12);
    cr_assert_str_eq(r.text, "a ratio (of two) >= 1.6: why");
    uf_claim_line(uf_claims_at(f.ex, 1), line, sizeof line);
    cr_assert_eq(uf_claim_parse(line, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.verdict, UF_FAILED);
    cr_assert_float_eq(r.value, -0.25, 1e-12);
    cr_assert_eq(r.cmp, UF_GT);
    cr_assert_float_eq(r.bound, 1e-3, 1e-15);
    uf_claim_line(uf_claims_at(f.ex, 2), line, sizeof line);
    cr_assert_eq(uf_claim_parse(line, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.verdict, UF_NA);
    cr_assert(r.legit);
    cr_assert(isnan(r.value) && isnan(r.bound));
    cr_assert(strncmp(r.text, "eager busy_pct @ elems=4K <= 30: off", 36) == 0, "%s", r.text);
    finish(&f);
}

/* Lines written before the bound was recorded: the bound of uf_expect_metric's and
 * uf_expect_ratio's wording, none from free wording. */
Test(claim_parse, older_lines_give_the_bound_only_where_the_wording_says_it)
{
    uf_claim_read r;
    char err[200];
    cr_assert_eq(uf_claim_parse("[held] (measured 1.661) item/deferred step_ms @ host_pct=100 "
                                ">= 1.6: with host work", &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.value, 1.661, 1e-12);
    cr_assert_eq(r.cmp, UF_GE);
    cr_assert_float_eq(r.bound, 1.6, 1e-12);
    cr_assert_eq(uf_claim_parse("[FAILED] (measured 0.5124) the step is faster by >= 40 % of "
                                "the communication: why", &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.verdict, UF_FAILED);
    cr_assert(isnan(r.bound), "free wording: 40 is not the bound (0.4 is)");
    cr_assert_eq(uf_claim_parse("[held] (measured -0.5209) deferred busy_pct @ host_pct=30 - "
                                "busy_pct @ host_pct=0 >= -2 points: the host", &r, err,
                                sizeof err), 0, "%s", err);
    cr_assert(isnan(r.bound));
    cr_assert_eq(uf_claim_parse("[n/a] (needs a full run (the sweep); not legitimate) x <= 1: y",
                                &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.verdict, UF_NA);
    cr_assert(!r.legit);
    cr_assert_str_eq(r.text, "x <= 1: y");
}

Test(claim_parse, refuses_what_is_not_a_claim_line)
{
    uf_claim_read r;
    char err[200] = "";
    cr_assert_eq(uf_claim_parse("held (measured 1) x", &r, err, sizeof err), -1);
    cr_assert(strstr(err, "not a claim line"), "%s", err);
    cr_assert_eq(uf_claim_parse("[held] (measured x) y", &r, err, sizeof err), -1);
    cr_assert_eq(uf_claim_parse("[held] (measured 1, bound ~ 2) y", &r, err, sizeof err), -1);
    cr_assert_eq(uf_claim_parse("[held] (measured 1", &r, err, sizeof err), -1);
    cr_assert_eq(uf_claim_parse("[n/a] (no legitimacy) y", &r, err, sizeof err), -1);
}

/* ---- the dry check: misspelled names ---------------------------------------------------- */

typedef void (*claim_list)(const uf_report *rep, uf_expectations *ex);

/* Errors a claim list makes on the dry report of one mode. */
static int dry_errors(claim_list claims, int quick, char *first, size_t len)
{
    uf_claims_axis axes[2];
    uf_claims_decl d = make_decl(axes, quick);
    uf_run_facts facts;
    memset(&facts, 0, sizeof facts);
    facts.quick = quick;
    uf_expectations *ex = uf_claims_new(&d, NULL, &facts);
    cr_assert_not_null(ex);
    claims(uf_claims_report(ex), ex);
    uf_claims_end(ex);
    int n = uf_claims_n_errors(ex);
    if (first)
        snprintf(first, len, "%s", n ? uf_claims_error(ex, 0) : "");
    uf_claims_free(ex);
    return n;
}

static void good_claims(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0, "a");
    uf_expect_ratio(ex, rep, "eager", "graph", "elems=max", "step_ms", UF_GE, 0.8, "b");
    uf_expect_metric(ex, rep, "graph", NULL, "tokens_per_s", UF_GE, 1.0, "c");
    const double *values;
    int n = uf_axis_values(rep, "elems", &values);
    for (int k = 0; k < n; k++) {
        char where[32];
        snprintf(where, sizeof where, "elems=%.17g", values[k]);
        uf_expect_metric(ex, rep, "graph", where, "busy_pct", UF_GE, 60.0, "d");
    }
    uf_expect_full_run(ex, "ops=100 runs in a full run only");
    uf_expect_metric(ex, rep, "eager", "ops=100", "step_ms", UF_GE, 0.0, "e");
}
static void misspelled_variant(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "egaer", "elems=4K", "busy_pct", UF_LE, 30.0, "a");
}
static void misspelled_metric(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "eager", "elems=4K", "bussy_pct", UF_LE, 30.0, "a");
}
static void misspelled_axis(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "eager", "elms=4K", "busy_pct", UF_LE, 30.0, "a");
}
static void undeclared_point(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "eager", "elems=8K", "busy_pct", UF_LE, 30.0, "a");
}
static void full_point_in_quick(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "eager", "ops=100", "busy_pct", UF_LE, 30.0, "a");
}
static void unknown_axis_values(const uf_report *rep, uf_expectations *ex)
{
    const double *values;
    uf_axis_values(rep, "elms", &values);
    uf_expect(ex, "a", 1.0, UF_LE, 2.0);
}
static void full_run_with_no_claim(const uf_report *rep, uf_expectations *ex)
{
    (void)rep;
    uf_expect_full_run(ex, "forgotten");
}

Test(check, a_correct_claim_list_passes_in_both_modes)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(good_claims, 0, first, sizeof first), 0, "%s", first);
    cr_assert_eq(dry_errors(good_claims, 1, first, sizeof first), 0, "%s", first);
}

Test(check, the_dry_report_runs_every_declared_point)
{
    /* claims made at every value run see the declared values of the mode */
    uf_claims_axis axes[2];
    uf_claims_decl d = make_decl(axes, 0);
    uf_run_facts facts;
    memset(&facts, 0, sizeof facts);
    uf_expectations *ex = uf_claims_new(&d, NULL, &facts);
    good_claims(uf_claims_report(ex), ex);
    cr_assert_eq(uf_claims_count(ex), 3 + 3 + 1);
    cr_assert_not_null(uf_find(uf_claims_report(ex), "graph", "elems=64K,ops=100"));
    uf_claims_free(ex);
}

Test(check, misspelled_variant)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(misspelled_variant, 0, first, sizeof first), 1);
    cr_assert(strstr(first, "unknown variant \"egaer\""), "%s", first);
}

Test(check, misspelled_metric)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(misspelled_metric, 1, first, sizeof first), 1);
    cr_assert(strstr(first, "unknown metric \"bussy_pct\""), "%s", first);
}

Test(check, misspelled_axis)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(misspelled_axis, 0, first, sizeof first), 1);
    cr_assert(strstr(first, "unknown axis \"elms\""), "%s", first);
    cr_assert_eq(dry_errors(unknown_axis_values, 0, first, sizeof first), 1);
    cr_assert(strstr(first, "unknown axis \"elms\""), "%s", first);
}

Test(check, a_point_the_scenario_does_not_declare)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(undeclared_point, 0, first, sizeof first), 1);
    cr_assert(strstr(first, "elems=8192 is not a value a full run has"), "%s", first);
}

Test(check, a_full_run_point_in_a_quick_claim_needs_the_declaration)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(full_point_in_quick, 0, first, sizeof first), 0);
    cr_assert_eq(dry_errors(full_point_in_quick, 1, first, sizeof first), 1);
    cr_assert(strstr(first, "ops=100 is not a value a --quick run has"), "%s", first);
}

Test(check, a_default_the_quick_run_lacks)
{
    static const double ops_quick_only[] = {100};
    uf_claims_axis axes[2];
    uf_claims_decl d = make_decl(axes, 1);
    axes[1].values = ops_quick_only;     /* default 1000 is not run in --quick */
    uf_run_facts facts;
    memset(&facts, 0, sizeof facts);
    facts.quick = 1;
    uf_expectations *ex = uf_claims_new(&d, NULL, &facts);
    uf_expect_metric(ex, uf_claims_report(ex), "eager", NULL, "step_ms", UF_LE, 1.0, "a");
    cr_assert_eq(uf_claims_n_errors(ex), 1);
    cr_assert(strstr(uf_claims_error(ex, 0), "the default ops=1000"), "%s",
              uf_claims_error(ex, 0));
    uf_claims_free(ex);
}

Test(check, a_full_run_declaration_needs_a_claim)
{
    char first[UF_REASON_LEN];
    cr_assert_eq(dry_errors(full_run_with_no_claim, 0, first, sizeof first), 1);
    cr_assert(strstr(first, "forgotten"), "%s", first);
}

/* ---- where the metrics come from ---------------------------------------------------------- */

Test(sources, every_column_has_a_source)
{
    for (int i = 0; i < uf_n_metrics; i++)
        cr_assert_geq(uf_metric_source(uf_metrics[i].name), 0,
                      "column %s has no source in expect.c", uf_metrics[i].name);
    cr_assert_eq(uf_metric_source("busy_pct"), UF_SRC_TRACE);
    cr_assert_eq(uf_metric_source("dram_pct"), UF_SRC_COUNTERS);
    cr_assert_eq(uf_metric_source("gpm_dram_pct"), UF_SRC_COUNTERS);
    cr_assert_eq(uf_metric_source("sm_clock_mhz"), UF_SRC_NVML);
    cr_assert_eq(uf_metric_source("pct_of_copy"), UF_SRC_CEILINGS);
    cr_assert_eq(uf_metric_source("step_ms"), UF_SRC_TIMING);
    cr_assert_eq(uf_metric_source("no_such_metric"), -1);
}

Test(options, check_claims_flag)
{
    const char *argv[] = {"prog", "--check-claims"};
    uf_options opt;
    char err[256];
    cr_assert_eq(uf_parse_options(2, (char **)argv, &opt, err, sizeof err), 0);
    cr_assert_eq(opt.check_claims, 1);
    const char *plain[] = {"prog"};
    cr_assert_eq(uf_parse_options(1, (char **)plain, &opt, err, sizeof err), 0);
    cr_assert_eq(opt.check_claims, 0);
}

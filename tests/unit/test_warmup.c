/* Unit tests of warmup.c: the run's warm-up plan (scenario, --warmup, process mode) and the
 * "keep warming up?" decision of the timing pass. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "warmup.h"

#define DEFAULT_STEPS 3

static uf_warmup plan(int steps, double min_ms, int opt_steps, int fixed)
{
    uf_warmup w;
    memset(&w, 0x5a, sizeof w);    /* every field must be set by the plan */
    uf_warmup_plan(steps, min_ms, DEFAULT_STEPS, opt_steps, fixed, &w);
    return w;
}

Test(warmup, plan_without_least_time)
{
    uf_warmup w = plan(5, 0, -1, 0);
    cr_assert_eq(w.steps, 5);
    cr_assert_eq(w.min_ms, 0.0);
    cr_assert_null(w.off);
    w = plan(0, 0, -1, 0);          /* the scenario leaves the steps out: the default */
    cr_assert_eq(w.steps, DEFAULT_STEPS);
    w = plan(5, 0, 2, 0);           /* --warmup 2 */
    cr_assert_eq(w.steps, 2);
}

Test(warmup, plan_with_least_time)
{
    uf_warmup w = plan(3, 1000, -1, 0);
    cr_assert_eq(w.steps, 3);
    cr_assert_float_eq(w.min_ms, 1000.0, 1e-12);
    cr_assert_null(w.off);
}

/* --warmup N >= 1 sets the steps; the scenario's least time still applies. */
Test(warmup, plan_explicit_steps_keep_least_time)
{
    uf_warmup w = plan(3, 1000, 1, 0);
    cr_assert_eq(w.steps, 1);
    cr_assert_float_eq(w.min_ms, 1000.0, 1e-12);
    cr_assert_null(w.off);
}

/* --warmup 0 asks for no warm-up at all: no steps, no least time, and the header says so. */
Test(warmup, plan_warmup_zero_is_none)
{
    uf_warmup w = plan(3, 1000, 0, 0);
    cr_assert_eq(w.steps, 0);
    cr_assert_eq(w.min_ms, 0.0);
    cr_assert_float_eq(w.asked_ms, 1000.0, 1e-12);
    cr_assert_not_null(w.off);
    cr_assert(strstr(w.off, "--warmup 0") != NULL, "%s", w.off);
    cr_assert_eq(uf_warmup_next(&w, 0, 0.0), 0);
    cr_assert_eq(uf_warmup_next(&w, 0, 1.0), 0);
}

/* Process mode: ranks must run the same steps, so no lengthening by time; the steps stay. */
Test(warmup, plan_fixed_steps_drop_least_time)
{
    uf_warmup w = plan(3, 1000, -1, 1);
    cr_assert_eq(w.steps, 3);
    cr_assert_eq(w.min_ms, 0.0);
    cr_assert_not_null(w.off);
    cr_assert_eq(uf_warmup_next(&w, 3, 10.0), 0, "a rank whose steps were quick warmed longer");
    w = plan(3, 1000, 5, 1);
    cr_assert_eq(w.steps, 5);
    cr_assert_eq(w.min_ms, 0.0);
    w = plan(3, 0, -1, 1);          /* nothing asked, nothing off */
    cr_assert_null(w.off);
}

Test(warmup, plan_bad_least_time_is_none)
{
    uf_warmup w = plan(3, -5, -1, 0);
    cr_assert_eq(w.min_ms, 0.0);
    cr_assert_null(w.off);
    w = plan(3, NAN, -1, 0);
    cr_assert_eq(w.min_ms, 0.0);
    cr_assert_eq(w.asked_ms, 0.0);
}

/* Without a least time the warm-up is exactly the planned steps, however fast they were. */
Test(warmup, next_steps_only)
{
    uf_warmup w = plan(3, 0, -1, 0);
    cr_assert_eq(uf_warmup_next(&w, 0, 0.0), 3);
    cr_assert_eq(uf_warmup_next(&w, 1, 0.1), 2);
    cr_assert_eq(uf_warmup_next(&w, 3, 0.1), 0);
    w = plan(3, 0, 0, 0);
    cr_assert_eq(uf_warmup_next(&w, 0, 0.0), 0);
}

/* The planned steps come first even when the least time has already passed. */
Test(warmup, next_planned_steps_first)
{
    uf_warmup w = plan(4, 10, -1, 0);
    cr_assert_eq(uf_warmup_next(&w, 0, 0.0), 4);
    cr_assert_eq(uf_warmup_next(&w, 2, 500.0), 2);
    cr_assert_eq(uf_warmup_next(&w, 4, 500.0), 0);
}

/* 10 ms steps, 1000 ms least: rounds at most double the warm-up, then fill the time left. */
Test(warmup, next_fills_the_least_time)
{
    uf_warmup w = plan(3, 1000, -1, 0);
    cr_assert_eq(uf_warmup_next(&w, 3, 30.0), 3);       /* 97 wanted, at most doubling */
    cr_assert_eq(uf_warmup_next(&w, 48, 480.0), 48);    /* 52 wanted */
    cr_assert_eq(uf_warmup_next(&w, 96, 960.0), 4);     /* 4 fill the time left */
    cr_assert_eq(uf_warmup_next(&w, 97, 965.0), 4);     /* 3.5 rounds up: whole steps */
    cr_assert_eq(uf_warmup_next(&w, 100, 999.9), 1);    /* a little short: one more */
    cr_assert_eq(uf_warmup_next(&w, 100, 1000.0), 0);
    cr_assert_eq(uf_warmup_next(&w, 100, 1500.0), 0);
}

/* Steps that take no measurable time: the rounds double, bounded, never zero or negative. */
Test(warmup, next_zero_time_steps)
{
    uf_warmup w = plan(3, 1000, -1, 0);
    cr_assert_eq(uf_warmup_next(&w, 3, 0.0), 3);
    cr_assert_eq(uf_warmup_next(&w, 1 << 24, 0.0), UF_WARMUP_MAX_BATCH);
    cr_assert_eq(uf_warmup_next(&w, 1 << 24, 1e-9), UF_WARMUP_MAX_BATCH);
}

/* A least time with no step done (nothing to estimate from): one step. */
Test(warmup, next_no_step_yet)
{
    uf_warmup w = {.steps = 0, .min_ms = 100, .asked_ms = 100, .off = NULL};
    cr_assert_eq(uf_warmup_next(&w, 0, 0.0), 1);
}

/* A clock that reads NaN or backwards ends the warm-up rather than loop for ever. */
Test(warmup, next_bad_clock_ends)
{
    uf_warmup w = plan(3, 1000, -1, 0);
    cr_assert_eq(uf_warmup_next(&w, 3, NAN), 0);
    cr_assert_eq(uf_warmup_next(&w, 3, -1.0), 0);
}

/* The harness's loop against simulated step times: it ends with at least the least time
 * spent, ends as soon as that is so, and never more than doubles in a round. */
static void simulate(double min_ms, int steps, double (*step_ms)(int i), int *done_out,
                     double *elapsed_out)
{
    uf_warmup w = plan(steps, min_ms, -1, 0);
    int done = 0;
    double elapsed = 0;
    for (int n = uf_warmup_next(&w, 0, 0.0), rounds = 0; n > 0;
         n = uf_warmup_next(&w, done, elapsed), rounds++) {
        cr_assert_lt(rounds, 100, "the warm-up does not end");
        cr_assert(done < steps || n <= done, "round of %d after %d steps", n, done);
        cr_assert(done < steps || elapsed < min_ms, "a round after the least time");
        for (int i = 0; i < n; i++)
            elapsed += step_ms(done + i);
        done += n;
    }
    *done_out = done;
    *elapsed_out = elapsed;
}

static double steady_7ms(int i) { (void)i; return 7.0; }
static double slow_first(int i) { return i == 0 ? 400.0 : 2.0; }
static double slowing(int i) { return 1.0 + i * 0.5; }  /* the clock drops as it runs */

Test(warmup, simulated_loops)
{
    int done;
    double elapsed;
    simulate(1000, 3, steady_7ms, &done, &elapsed);
    cr_assert_geq(elapsed, 1000.0);
    cr_assert_lt(elapsed, 1000.0 + 7.0, "%g ms: more than one step past the least time", elapsed);
    simulate(1000, 3, slow_first, &done, &elapsed);
    cr_assert_geq(elapsed, 1000.0);
    cr_assert_lt(elapsed, 2 * 1000.0, "%g ms", elapsed);
    simulate(1000, 3, slowing, &done, &elapsed);
    cr_assert_geq(elapsed, 1000.0);
    cr_assert_lt(elapsed, 4 * 1000.0, "%g ms", elapsed);
    simulate(0, 3, steady_7ms, &done, &elapsed);
    cr_assert_eq(done, 3);
}

Test(warmup, describe)
{
    char text[160];
    uf_warmup w = plan(3, 0, -1, 0);
    uf_warmup_describe(&w, text, sizeof text);
    cr_assert_str_eq(text, "3");    /* unchanged for a scenario without a least time */
    w = plan(3, 1000, -1, 0);
    uf_warmup_describe(&w, text, sizeof text);
    cr_assert_str_eq(text, "3 steps and >= 1000 ms");
    w = plan(3, 1000, 1, 0);
    uf_warmup_describe(&w, text, sizeof text);
    cr_assert_str_eq(text, "1 step and >= 1000 ms");
    w = plan(3, 1000, 0, 0);
    uf_warmup_describe(&w, text, sizeof text);
    cr_assert_str_eq(text, "0 (the scenario's >= 1000 ms off: --warmup 0)");
    w = plan(3, 1000, -1, 1);
    uf_warmup_describe(&w, text, sizeof text);
    cr_assert(strstr(text, "off: every rank runs the same steps") != NULL, "%s", text);
}

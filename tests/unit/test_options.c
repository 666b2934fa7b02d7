/* Unit tests of options.c: every flag in both syntaxes, number suffixes, every error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int parse(int argc, const char **argv, uf_options *opt, char *err, size_t errlen)
{
    return uf_parse_options(argc, (char **)argv, opt, err, errlen);
}

/* The parse must fail with 2 and a message naming `needle`. */
static void expect_error(int argc, const char **argv, const char *needle)
{
    uf_options opt;
    char err[256] = "";
    int rc = parse(argc, argv, &opt, err, sizeof err);
    cr_assert_eq(rc, 2, "'%s' should be refused", argv[argc - 1]);
    cr_assert(strstr(err, needle) != NULL, "message '%s' should name '%s'", err, needle);
}

Test(options, defaults)
{
    const char *argv[] = {"prog"};
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0);
    cr_assert_eq(opt.n_variants, 0);
    cr_assert_eq(opt.quick, 0);
    cr_assert_eq(opt.repeat, 0);
    cr_assert_eq(opt.warmup, -1);
    cr_assert_eq(opt.n_sweeps, 0);
    cr_assert_str_eq(opt.out_dir, "");
    cr_assert_str_eq(opt.trace_path, "");
    cr_assert_eq(opt.counters, 1);
    cr_assert_eq(opt.trace_pass, 1);
    cr_assert_eq(opt.expect, 1);
    cr_assert_eq(opt.seed, 1);
    cr_assert_eq(opt.device, 0);
    cr_assert_eq(opt.gpus, 0);
    cr_assert_eq(opt.list + opt.explain + opt.help, 0);
}

static void check_all_flags(const uf_options *opt)
{
    cr_assert_eq(opt->n_variants, 2);
    cr_assert_str_eq(opt->variants[0], "eager");
    cr_assert_str_eq(opt->variants[1], "graph");
    cr_assert_eq(opt->quick, 1);
    cr_assert_eq(opt->repeat, 5);
    cr_assert_eq(opt->warmup, 0);
    cr_assert_eq(opt->n_sweeps, 2);
    cr_assert_str_eq(opt->sweeps[0].axis, "elems");
    cr_assert_eq(opt->sweeps[0].n, 3);
    cr_assert_float_eq(opt->sweeps[0].values[0], 4096.0, 0.0);
    cr_assert_float_eq(opt->sweeps[0].values[1], 64.0 * 1024 * 1024, 0.0);
    cr_assert_float_eq(opt->sweeps[0].values[2], 1024.0 * 1024 * 1024, 0.0);
    cr_assert_str_eq(opt->sweeps[1].axis, "ops");
    cr_assert_eq(opt->sweeps[1].n, 1);
    cr_assert_float_eq(opt->sweeps[1].values[0], 64.0, 0.0);
    cr_assert_str_eq(opt->out_dir, "/tmp/out dir");
    cr_assert_str_eq(opt->trace_path, "trace.json");
    cr_assert_eq(opt->counters, 0);
    cr_assert_eq(opt->trace_pass, 0);
    cr_assert_eq(opt->expect, 0);
    cr_assert_eq(opt->seed, 18446744073709551615ULL);
    cr_assert_eq(opt->device, 3);
    cr_assert_eq(opt->gpus, 2);
    cr_assert_eq(opt->list, 1);
    cr_assert_eq(opt->explain, 1);
    cr_assert_eq(opt->help, 1);
}

Test(options, every_flag_separate_values)
{
    const char *argv[] = {"prog", "--variant", "eager", "--variant", "graph", "--quick",
                          "--repeat", "5", "--warmup", "0", "--sweep", "elems=4K,64M,1G",
                          "--sweep", "ops=64", "--out", "/tmp/out dir", "--trace", "trace.json",
                          "--no-counters", "--no-trace", "--no-expect",
                          "--seed", "18446744073709551615", "--device", "3", "--gpus", "2",
                          "--list", "--explain", "--help"};
    uf_options opt;
    char err[256] = "";
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0, "%s", err);
    check_all_flags(&opt);
}

Test(options, every_flag_equals_values)
{
    const char *argv[] = {"prog", "--variant=eager", "--variant=graph", "--quick",
                          "--repeat=5", "--warmup=0", "--sweep=elems=4K,64M,1G",
                          "--sweep=ops=64", "--out=/tmp/out dir", "--trace=trace.json",
                          "--no-counters", "--no-trace", "--no-expect",
                          "--seed=18446744073709551615", "--device=3", "--gpus=2",
                          "--list", "--explain", "-h"};
    uf_options opt;
    char err[256] = "";
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0, "%s", err);
    check_all_flags(&opt);
}

Test(options, variant_named_twice_runs_once)
{
    const char *argv[] = {"prog", "--variant", "eager", "--variant=eager"};
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0);
    cr_assert_eq(opt.n_variants, 1);
}

Test(options, counts_accept_suffixes)
{
    const char *argv[] = {"prog", "--repeat", "1K", "--warmup", "2k"};
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0);
    cr_assert_eq(opt.repeat, 1024);
    cr_assert_eq(opt.warmup, 2048);
}

Test(options, parse_number)
{
    double v;
    cr_assert_eq(uf_parse_number("4096", &v), 0);
    cr_assert_float_eq(v, 4096.0, 0.0);
    cr_assert_eq(uf_parse_number("4K", &v), 0);
    cr_assert_float_eq(v, 4096.0, 0.0);
    cr_assert_eq(uf_parse_number("4k", &v), 0);
    cr_assert_float_eq(v, 4096.0, 0.0);
    cr_assert_eq(uf_parse_number("64M", &v), 0);
    cr_assert_float_eq(v, 67108864.0, 0.0);
    cr_assert_eq(uf_parse_number("1G", &v), 0);
    cr_assert_float_eq(v, 1073741824.0, 0.0);
    cr_assert_eq(uf_parse_number("0.5", &v), 0);
    cr_assert_float_eq(v, 0.5, 0.0);
    cr_assert_eq(uf_parse_number("1e6", &v), 0);
    cr_assert_float_eq(v, 1e6, 0.0);
    cr_assert_eq(uf_parse_number("1.5K", &v), 0);
    cr_assert_float_eq(v, 1536.0, 0.0);
    cr_assert_eq(uf_parse_number("-3", &v), 0, "the sign is the caller's business");
    cr_assert_float_eq(v, -3.0, 0.0);

    const char *bad[] = {"", "12x", "K", "4KB", "4KK", " 4", "4 ", "nan", "inf", "1e999",
                         "abc", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(uf_parse_number(bad[i], &v), -1, "'%s' should be refused", bad[i]);
    cr_assert_eq(uf_parse_number(NULL, &v), -1);
}

Test(options, unknown_flag)
{
    const char *a[] = {"prog", "--bogus"};
    expect_error(ARGC(a), a, "--bogus");
    const char *b[] = {"prog", "--bogus=3"};
    expect_error(ARGC(b), b, "--bogus");
    const char *c[] = {"prog", "-x"};
    expect_error(ARGC(c), c, "-x");
    const char *d[] = {"prog", "stray"};
    expect_error(ARGC(d), d, "stray");
    const char *e[] = {"prog", "--quic"};
    expect_error(ARGC(e), e, "--quic");
}

Test(options, missing_value)
{
    const char *a[] = {"prog", "--repeat"};
    expect_error(ARGC(a), a, "--repeat");
    const char *b[] = {"prog", "--repeat", "--quick"};
    expect_error(ARGC(b), b, "--repeat");
    const char *c[] = {"prog", "--out"};
    expect_error(ARGC(c), c, "--out");
    const char *d[] = {"prog", "--variant="};
    expect_error(ARGC(d), d, "--variant");
    const char *e[] = {"prog", "--trace="};
    expect_error(ARGC(e), e, "--trace");
    const char *f[] = {"prog", "--sweep"};
    expect_error(ARGC(f), f, "--sweep");
    const char *g[] = {"prog", "--seed"};
    expect_error(ARGC(g), g, "--seed");
}

Test(options, flag_without_value_refuses_one)
{
    const char *a[] = {"prog", "--quick=1"};
    expect_error(ARGC(a), a, "--quick");
    const char *b[] = {"prog", "--no-trace=yes"};
    expect_error(ARGC(b), b, "--no-trace");
}

Test(options, bad_numbers)
{
    const char *a[] = {"prog", "--repeat", "12x"};
    expect_error(ARGC(a), a, "--repeat");
    const char *b[] = {"prog", "--repeat=99999999999"};
    expect_error(ARGC(b), b, "--repeat");
    const char *c[] = {"prog", "--warmup", "1.5"};
    expect_error(ARGC(c), c, "--warmup");
    const char *d[] = {"prog", "--device", "one"};
    expect_error(ARGC(d), d, "--device");
    const char *e[] = {"prog", "--seed", "99999999999999999999999"};
    expect_error(ARGC(e), e, "--seed");
    const char *f[] = {"prog", "--seed", "12x"};
    expect_error(ARGC(f), f, "--seed");
    const char *g[] = {"prog", "--gpus", "1e99"};
    expect_error(ARGC(g), g, "--gpus");
}

Test(options, zero_or_negative_counts)
{
    const char *a[] = {"prog", "--repeat", "0"};
    expect_error(ARGC(a), a, "--repeat");
    const char *b[] = {"prog", "--repeat=-3"};
    expect_error(ARGC(b), b, "--repeat");
    const char *c[] = {"prog", "--warmup", "-1"};
    expect_error(ARGC(c), c, "--warmup");
    const char *d[] = {"prog", "--gpus", "0"};
    expect_error(ARGC(d), d, "--gpus");
    const char *e[] = {"prog", "--device", "-1"};
    expect_error(ARGC(e), e, "--device");
    const char *f[] = {"prog", "--seed", "-1"};
    expect_error(ARGC(f), f, "--seed");
    const char *h[] = {"prog", "--sweep", "elems=4-"};
    expect_error(ARGC(h), h, "neither a number nor a name");
}

/* 0 is a setting of some axes (causal=0; comm_ctas=0, the library's default): it parses, and
 * an axis that counts something refuses it by its rule (axis_rules_* below). */
Test(options, sweep_zero_parses)
{
    const char *argv[] = {"prog", "--sweep", "causal=0,1"};
    uf_options opt;
    char err[256] = "";
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0, "%s", err);
    cr_assert_eq(opt.n_sweeps, 1);
    cr_assert_eq(opt.sweeps[0].n, 2);
    cr_assert_eq(opt.sweeps[0].values[0], 0.0);
    cr_assert_eq(opt.sweeps[0].values[1], 1.0);
}

Test(options, sweep_errors)
{
    const char *a[] = {"prog", "--sweep", "elems=4K", "--sweep", "elems=8K"};
    expect_error(ARGC(a), a, "twice");
    const char *b[] = {"prog", "--sweep", "elems"};
    expect_error(ARGC(b), b, "--sweep");
    const char *c[] = {"prog", "--sweep", "=4,5"};
    expect_error(ARGC(c), c, "--sweep");
    const char *d[] = {"prog", "--sweep", "elems=4,,5"};
    expect_error(ARGC(d), d, "elems");
    const char *e[] = {"prog", "--sweep", "elems="};
    expect_error(ARGC(e), e, "elems");
    const char *f[] = {"prog", "--sweep", "elems=4,5x"};
    expect_error(ARGC(f), f, "5x");
    /* one axis more than UF_MAX_AXES */
    static char names[UF_MAX_AXES + 1][16];
    const char *g[UF_MAX_AXES + 2] = {"prog"};
    for (int i = 0; i <= UF_MAX_AXES; i++) {
        snprintf(names[i], sizeof names[i], "--sweep=%c=1", 'a' + i);
        g[i + 1] = names[i];
    }
    expect_error(ARGC(g), g, "axes");
}

Test(options, sweep_too_many_values)
{
    char list[512] = "elems=";
    for (int i = 1; i <= UF_MAX_SWEEP + 1; i++) {
        char item[16];
        snprintf(item, sizeof item, "%s%d", i > 1 ? "," : "", i);
        strcat(list, item);
    }
    const char *a[] = {"prog", "--sweep", list};
    expect_error(ARGC(a), a, "values");

    /* exactly UF_MAX_SWEEP values are fine */
    char *cut = strrchr(list, ',');
    *cut = '\0';
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(a), a, &opt, err, sizeof err), 0, "%s", err);
    cr_assert_eq(opt.sweeps[0].n, UF_MAX_SWEEP);
}

Test(options, too_many_variants)
{
    const char *argv[2 + 2 * (UF_MAX_VARIANTS + 1)];
    char names[UF_MAX_VARIANTS + 1][8];
    int argc = 0;
    argv[argc++] = "prog";
    for (int i = 0; i <= UF_MAX_VARIANTS; i++) {
        snprintf(names[i], sizeof names[i], "v%d", i);
        argv[argc++] = "--variant";
        argv[argc++] = names[i];
    }
    expect_error(argc, argv, "--variant");
}

Test(options, values_too_long)
{
    char name[UF_NAME_LEN + 8];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    const char *a[] = {"prog", "--variant", name};
    expect_error(ARGC(a), a, "--variant");
    static char path[UF_PATH_LEN + 8];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    const char *b[] = {"prog", "--out", path};
    expect_error(ARGC(b), b, "--out");
}

static const char *const variants[] = {"eager", "graph", "fused"};
static const char *const axes[] = {"elems", "ops"};

Test(options, validate_accepts_known_names)
{
    const char *argv[] = {"prog", "--variant", "graph", "--sweep", "ops=8,64"};
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0);
    cr_assert_eq(uf_options_validate(&opt, variants, 3, axes, 2, err, sizeof err), 0);
}

Test(options, validate_unknown_variant_lists_them)
{
    const char *argv[] = {"prog", "--variant", "fast"};
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0);
    cr_assert_eq(uf_options_validate(&opt, variants, 3, axes, 2, err, sizeof err), 2);
    cr_assert(strstr(err, "fast") != NULL, "%s", err);
    cr_assert(strstr(err, "eager, graph, fused") != NULL, "%s", err);
}

Test(options, validate_unknown_axis_lists_them)
{
    const char *argv[] = {"prog", "--sweep", "size=8"};
    uf_options opt;
    char err[256];
    cr_assert_eq(parse(ARGC(argv), argv, &opt, err, sizeof err), 0);
    cr_assert_eq(uf_options_validate(&opt, variants, 3, axes, 2, err, sizeof err), 2);
    cr_assert(strstr(err, "size") != NULL, "%s", err);
    cr_assert(strstr(err, "elems, ops") != NULL, "%s", err);
    cr_assert_eq(uf_options_validate(&opt, variants, 3, NULL, 0, err, sizeof err), 2);
    cr_assert(strstr(err, "none") != NULL, "%s", err);
}

Test(options, usage_names_every_flag)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    uf_print_usage(f, "launch_storm");
    fclose(f);
    const char *flags[] = {"--variant NAME", "--quick", "--repeat N", "--warmup N",
                           "--sweep AXIS=", "--out DIR", "--trace FILE.json", "--no-counters",
                           "--no-trace", "--no-expect", "--seed N", "--device N", "--gpus N",
                           "--list", "--explain", "--help", "-h", "launch_storm"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_assert(strstr(text, flags[i]) != NULL, "usage lacks '%s'", flags[i]);
    free(text);
}

/* The program prints "NAME: MESSAGE (see --help)": the parser's message must not carry the
 * hint itself, or it shows twice. */
Test(options, errors_carry_no_help_hint)
{
    const char *cases[][3] = {
        {"prog", "--bogus", NULL}, {"prog", "stray", NULL}, {"prog", "--repeat", "0"},
        {"prog", "--repeat", NULL}, {"prog", "--quick=1", NULL}, {"prog", "--sweep", "x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int argc = cases[i][2] != NULL ? 3 : 2;
        uf_options opt;
        char err[256] = "";
        cr_assert_eq(parse(argc, cases[i], &opt, err, sizeof err), 2, "'%s' accepted", cases[i][1]);
        cr_assert(err[0] != '\0', "no message for '%s'", cases[i][1]);
        cr_assert(strstr(err, "--help") == NULL, "'%s' carries the hint: %s", cases[i][1], err);
    }
}

static char *usage_text(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    uf_print_usage(f, "launch_storm");
    fclose(f);
    return text;
}

/* --out X writes into X/GPU/, not X: the help says so. */
Test(options, usage_says_where_out_writes)
{
    char *text = usage_text();
    const char *out = strstr(text, "--out DIR");
    cr_assert_not_null(out);
    cr_assert(strstr(out, "DIR/GPU/") != NULL, "--out's help does not say DIR/GPU/:\n%s", text);
    cr_assert(strstr(out, "slug of the device name") != NULL, "%s", text);
    free(text);
}

/* Every line of the usage fits a 100-column terminal (long help is wrapped). */
Test(options, usage_lines_fit)
{
    char *text = usage_text();
    for (char *line = text, *end; *line != '\0'; line = *end ? end + 1 : end) {
        end = strchr(line, '\n');
        if (end == NULL)
            end = line + strlen(line);
        cr_assert_leq(end - line, 100, "line too long: %.*s", (int)(end - line), line);
    }
    free(text);
}

/* ---- axis rules (nvbench's axis metadata): the harness checks every --sweep value --------- */

static const uf_axis_choice dist_choices[] = {{"lognormal", 1}, {"wide", 2}, {"fixed", 3}};
static const uf_axis_rule rules[] = {
    {.name = "ops", .kind = UF_AXIS_INT, .min = 1, .max = 16, .choices = NULL, .n_choices = 0},
    {.name = "bucket_mib", .kind = UF_AXIS_FLOAT, .min = 0.5, .max = 64, .choices = NULL,
     .n_choices = 0},
    {.name = "dist", .kind = UF_AXIS_CHOICE, .min = 0, .max = 0, .choices = dist_choices,
     .n_choices = 3},
};

/* Parse argv, then check its sweeps against `rules`; returns what uf_options_check_sweeps
 * returned, the options in *opt. */
static int parse_and_check(int argc, const char **argv, uf_options *opt, char *err, size_t len)
{
    cr_assert_eq(parse(argc, argv, opt, err, len), 0, "%s", err);
    return uf_options_check_sweeps(opt, rules, 3, err, len);
}

Test(options, axis_rules_resolve_choice_names_to_their_values)
{
    const char *argv[] = {"prog", "--sweep", "dist=wide,fixed,1", "--sweep", "ops=2,16",
                          "--sweep", "bucket_mib=0.5,25"};
    uf_options opt;
    char err[256] = "";
    cr_assert_eq(parse_and_check(ARGC(argv), argv, &opt, err, sizeof err), 0, "%s", err);
    cr_assert_eq(opt.sweeps[0].values[0], 2.0);
    cr_assert_eq(opt.sweeps[0].values[1], 3.0);
    cr_assert_eq(opt.sweeps[0].values[2], 1.0, "a choice's value is accepted as well");
    cr_assert_eq(opt.sweeps[1].values[1], 16.0);
    cr_assert_eq(opt.sweeps[2].values[0], 0.5);
}

Test(options, axis_rules_refuse_what_the_axis_does_not_take)
{
    static const struct {
        const char *arg, *message;
    } cases[] = {
        {"ops=0", "ops=0: a whole number from 1 to 16"},
        {"ops=17", "ops=17: a whole number from 1 to 16"},
        {"ops=2.5", "ops=2.5: a whole number from 1 to 16"},
        {"ops=-8", "ops=-8: a whole number"},
        {"ops=many", "ops=many: not a number (the axis takes whole numbers)"},
        {"bucket_mib=0.25", "bucket_mib=0.25: a number from 0.5 to 64"},
        {"bucket_mib=big", "not a number (the axis takes numbers)"},
        {"dist=gaussian", "dist=gaussian: one of lognormal (1), wide (2), fixed (3)"},
        {"dist=4", "dist=4: one of lognormal (1)"},
        {"dist=Wide", "one of"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {"prog", "--sweep", cases[i].arg};
        uf_options opt;
        char err[256] = "";
        cr_assert_eq(parse_and_check(ARGC(argv), argv, &opt, err, sizeof err), 2, "%s",
                     cases[i].arg);
        cr_assert(strstr(err, cases[i].message) != NULL, "%s: %s", cases[i].arg, err);
        cr_assert(strncmp(err, "--sweep", 7) == 0, "%s", err);
    }
}

Test(options, axis_rules_check_one_value_and_describe_the_axis)
{
    char err[256] = "", text[256] = "";
    cr_assert_eq(uf_axis_check(&rules[0], 16, err, sizeof err), 0);
    cr_assert_eq(uf_axis_check(&rules[0], NAN, err, sizeof err), 2);
    cr_assert_eq(uf_axis_check(&rules[1], 64, err, sizeof err), 0);
    cr_assert_eq(uf_axis_check(&rules[1], 64.5, err, sizeof err), 2);
    cr_assert_eq(uf_axis_check(&rules[2], 3, err, sizeof err), 0);
    const uf_axis_rule undeclared = {.name = "x", .kind = UF_AXIS_UNDECLARED, .min = 0, .max = 0,
                                     .choices = NULL, .n_choices = 0};
    cr_assert_eq(uf_axis_check(&undeclared, 1, err, sizeof err), 2);
    cr_assert(strstr(err, "declares no kind") != NULL, "%s", err);
    cr_assert_str_eq(uf_axis_choice_name(&rules[2], 2), "wide");
    cr_assert_null(uf_axis_choice_name(&rules[2], 5));
    cr_assert_null(uf_axis_choice_name(&rules[0], 2));
    uf_axis_describe(&rules[0], text, sizeof text);
    cr_assert_str_eq(text, "whole numbers 1..16");
    uf_axis_describe(&rules[2], text, sizeof text);
    cr_assert_str_eq(text, "lognormal (1), wide (2), fixed (3)");
}

/* Unit tests of crosscheck_judge.c, the cross-check's host logic: the `ncu --csv --page raw` parser on
 * fixture pages (tests/data/crosscheck: lines before the header skipped, the units row read,
 * thousands separators, a missing metric named), one step's figures from the profiled kernels
 * (helpers dropped, duration-weighted percentages), the tolerance rule (points and relative,
 * each side of the limit), and crosscheck.csv written and read back. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crosscheck_judge.h"

#define DATA(name) UF_TEST_DATA_DIR "/crosscheck/" name

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = malloc(1 << 16);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* The page at path parsed: 0 or -1, kernels into *k (free them), the message into err. */
static int parse_file(const char *path, uf_ncu_kernel **k, int *n, char *err, size_t errlen)
{
    size_t len;
    char *text = read_all(path, &len);
    int rc = uf_ncu_parse(path, text, len, k, n, err, errlen);
    free(text);
    return rc;
}

static const char *const helpers[] = {"fill_", "checksum", NULL};

/* ---- the ncu raw page ------------------------------------------------------------------- */

Test(ncu_parse, reads_every_kernel_after_the_header)
{
    uf_ncu_kernel *k;
    int n;
    char err[256] = "";
    cr_assert_eq(parse_file(DATA("ncu_raw.csv"), &k, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(k[0].name, "ew_chain_f32");
    cr_expect_float_eq(k[0].sm_active_pct, 97.21, 1e-9);
    cr_expect_float_eq(k[0].dram_pct, 81.42, 1e-9);
    cr_expect_float_eq(k[0].tensor_active_pct, 0.19, 1e-9);
    /* "130,208" nsecond: the thousands separator dropped, nanoseconds into microseconds */
    cr_expect_float_eq(k[0].duration_us, 130.208, 1e-9);
    cr_expect_float_eq(k[2].duration_us, 130.016, 1e-9);
    free(k);
}

Test(ncu_parse, converts_each_time_unit)
{
    static const struct {
        const char *unit;
        double us;
    } cases[] = {{"nsecond", 0.002}, {"usecond", 2.0}, {"msecond", 2000.0}, {"second", 2e6}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[1024];
        uf_ncu_kernel *k;
        int n;
        char err[256] = "";
        snprintf(text, sizeof text,
                 "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
                 "\"sm__cycles_active.avg.pct_of_peak_sustained_elapsed\","
                 "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
                 "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed\"\n"
                 "\"\",\"\",\"%s\",\"%%\",\"%%\",\"%%\"\n\"0\",\"k\",\"2\",\"1\",\"2\",\"3\"\n",
                 cases[c].unit);
        cr_assert_eq(uf_ncu_parse("t", text, strlen(text), &k, &n, err, sizeof err), 0, "%s",
                     err);
        cr_expect_float_eq(k[0].duration_us, cases[c].us, 1e-12, "%s", cases[c].unit);
        free(k);
    }
}

Test(ncu_parse, reads_a_page_of_many_columns)
{
    /* an imported report's raw page lists every metric it holds (device attributes, launch
     * statistics): hundreds of columns before and between the four compared */
    size_t cap = 64 * 1024, len = 0;
    char *text = malloc(cap);
    uf_ncu_kernel *k;
    int n;
    char err[256] = "";
    cr_assert_not_null(text);
    for (int line = 0; line < 3; line++) {
        len += (size_t)snprintf(text + len, cap - len, "%s", line == 0 ? "\"ID\"" : "\"0\"");
        for (int c = 0; c < 500; c++)
            len += (size_t)snprintf(text + len, cap - len, line == 0 ? ",\"device__attr_%d\""
                                                                    : ",\"%d\"", c);
        len += (size_t)snprintf(text + len, cap - len, "%s",
                                line == 0 ? ",\"Kernel Name\",\"gpu__time_duration.sum\","
                                            "\"sm__cycles_active.avg.pct_of_peak_sustained_elapsed\","
                                            "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
                                            "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_"
                                            "sustained_elapsed\"\n"
                                : line == 1 ? ",\"\",\"usecond\",\"%\",\"%\",\"%\"\n"
                                            : ",\"k\",\"7\",\"60\",\"70\",\"80\"\n");
    }
    cr_assert_eq(uf_ncu_parse("wide", text, len, &k, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 1);
    cr_expect_float_eq(k[0].duration_us, 7.0, 1e-12);
    cr_expect_float_eq(k[0].tensor_active_pct, 80.0, 1e-12);
    free(k);
    free(text);
}

Test(ncu_parse, names_a_missing_metric)
{
    uf_ncu_kernel *k = (uf_ncu_kernel *)1;
    int n = 7;
    char err[256] = "";
    cr_assert_eq(parse_file(DATA("ncu_missing_metric.csv"), &k, &n, err, sizeof err), -1);
    cr_expect(strstr(err, "ncu_missing_metric.csv:1") &&
              strstr(err, "dram__throughput.avg.pct_of_peak_sustained_elapsed"), "%s", err);
    cr_expect_null(k);
    cr_expect_eq(n, 0);
}

Test(ncu_parse, refuses_bad_pages)
{
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"==PROF== No kernels were profiled.\n", "no ncu raw page"},
        {"\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
         "\"sm__cycles_active.avg.pct_of_peak_sustained_elapsed\","
         "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
         "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed\"\n"
         "\"\",\"\",\"cycle\",\"%\",\"%\",\"%\"\n",
         "not a time unit"},
        {"\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
         "\"sm__cycles_active.avg.pct_of_peak_sustained_elapsed\","
         "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
         "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed\"\n"
         "\"\",\"\",\"nsecond\",\"%\",\"%\",\"%\"\n\"0\",\"k\",\"12\",\"n/a\",\"1\",\"1\"\n",
         "t:3: sm__cycles_active.avg.pct_of_peak_sustained_elapsed is \"n/a\""},
        {"\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
         "\"sm__cycles_active.avg.pct_of_peak_sustained_elapsed\","
         "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
         "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed\"\n"
         "\"\",\"\",\"nsecond\",\"%\",\"%\",\"%\"\n",
         "lists no kernel"},
        {"\"ID\",\"Kernel Name,\"gpu__time_duration.sum\"\n", "unterminated quote"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uf_ncu_kernel *k;
        int n;
        char err[256] = "";
        cr_expect_eq(uf_ncu_parse("t", cases[c].text, strlen(cases[c].text), &k, &n, err,
                                  sizeof err), -1, "case %zu", c);
        cr_expect(strstr(err, cases[c].says), "case %zu: %s", c, err);
    }
}

/* ---- one step's figures ----------------------------------------------------------------- */

Test(ncu_step, weights_the_first_repeated_step_by_duration)
{
    uf_ncu_kernel *k;
    uf_ncu_step s;
    int n;
    char err[256] = "";
    cr_assert_eq(parse_file(DATA("ncu_step.csv"), &k, &n, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(k[1].grid, "(4096, 1, 1)");
    cr_expect_str_eq(k[1].block, "(128, 1, 1)");
    cr_assert_eq(uf_ncu_step_of(k, n, 3, helpers, &s, err, sizeof err), 0, "%s", err);
    /* the second step (embed 100 us, GEMM 300 us, GELU 100 us): it repeats the first launch
     * for launch (the third does too, later); the verification's step on tiny grids does
     * not, and fill_ and checksum are left out */
    cr_expect_eq(s.kernels, 3);
    cr_expect_str_eq(s.first_name, "embed_kernel");
    cr_expect_float_eq(s.sm_active_pct, (90 * 100 + 100 * 300 + 95 * 100) / 500.0, 1e-9);
    cr_expect_float_eq(s.dram_pct, (60 * 100 + 20 * 300 + 80 * 100) / 500.0, 1e-9);
    cr_expect_float_eq(s.tensor_active_pct, 80 * 300 / 500.0, 1e-9);
    cr_expect_float_eq(s.duration_us_mean, 500.0 / 3, 1e-9);
    free(k);
}

Test(ncu_step, one_kernel_per_step_is_the_first_repeated_launch)
{
    uf_ncu_kernel *k;
    uf_ncu_step s;
    int n;
    char err[256] = "";
    cr_assert_eq(parse_file(DATA("ncu_raw.csv"), &k, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_ncu_step_of(k, n, 1, helpers, &s, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(s.first_name, "ew_chain_f32");
    cr_expect_float_eq(s.duration_us_mean, 129.824, 1e-9);
    cr_expect_float_eq(s.dram_pct, 82.18, 1e-9);
    free(k);
}

Test(ncu_step, refuses_a_step_the_profile_does_not_repeat)
{
    uf_ncu_kernel *k;
    uf_ncu_step s;
    int n;
    char err[256] = "";
    cr_assert_eq(parse_file(DATA("ncu_step.csv"), &k, &n, err, sizeof err), 0, "%s", err);
    /* a step of 1 or 4 kernels: no two consecutive windows of that length match */
    cr_expect_eq(uf_ncu_step_of(k, n, 1, helpers, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "no two consecutive steps of 1 kernels"), "%s", err);
    cr_expect_eq(uf_ncu_step_of(k, n, 4, helpers, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "steps of 4 kernels") && strstr(err, "the 12 kernels"), "%s", err);
    cr_expect_eq(uf_ncu_step_of(k, n, 0, helpers, &s, err, sizeof err), -1);
    free(k);
}

/* ---- the tolerance rule ----------------------------------------------------------------- */

static uf_xc_verdict judged(uf_xc_rule rule, double ours, double reference, double tolerance,
                            double *difference)
{
    uf_xc_row r = {.ours = ours, .reference = reference, .tolerance = tolerance, .rule = rule};
    uf_xc_judge(&r);
    if (difference)
        *difference = r.difference;
    return r.verdict;
}

Test(xc_judge, points_agree_up_to_the_tolerance)
{
    double d;
    /* the elementwise_chain figures: PM 99.0 % vs ncu 97.5 %, GPM 54.3 % */
    cr_expect_eq(judged(UF_XC_POINTS, 99.0, 97.5, 5, &d), UF_XC_AGREE);
    cr_expect_float_eq(d, 1.5, 1e-12);
    cr_expect_eq(judged(UF_XC_POINTS, 54.3, 97.5, 5, &d), UF_XC_DISAGREE);
    cr_expect_float_eq(d, -43.2, 1e-9);
    cr_expect_eq(judged(UF_XC_POINTS, 85.0, 80.0, 5, NULL), UF_XC_AGREE);        /* on the limit */
    cr_expect_eq(judged(UF_XC_POINTS, 85.01, 80.0, 5, NULL), UF_XC_DISAGREE);
    cr_expect_eq(judged(UF_XC_POINTS, 74.99, 80.0, 5, NULL), UF_XC_DISAGREE);    /* both signs */
}

Test(xc_judge, relative_agrees_up_to_the_tolerance)
{
    double d;
    cr_expect_eq(judged(UF_XC_RELATIVE, 136.49, 130.0, 5, &d), UF_XC_AGREE);    /* +4.99 % */
    cr_expect_float_eq(d, 100.0 * (136.49 / 130.0 - 1.0), 1e-9);
    cr_expect_eq(judged(UF_XC_RELATIVE, 136.6, 130.0, 5, NULL), UF_XC_DISAGREE);
    cr_expect_eq(judged(UF_XC_RELATIVE, 123.4, 130.0, 5, NULL), UF_XC_DISAGREE); /* -5.08 % */
    /* relative, not points: 5 GB/s off 330 agrees, 5 GB/s off 65 does not */
    cr_expect_eq(judged(UF_XC_RELATIVE, 325.0, 330.0, 5, NULL), UF_XC_AGREE);
    cr_expect_eq(judged(UF_XC_RELATIVE, 60.0, 65.0, 5, NULL), UF_XC_DISAGREE);
}

Test(xc_judge, a_missing_figure_is_na_with_its_reason)
{
    uf_xc_row r = {.ours = NAN, .reference = 97.5, .tolerance = 5, .rule = UF_XC_POINTS};
    uf_xc_judge(&r);
    cr_expect_eq(r.verdict, UF_XC_NA);
    cr_expect(isnan(r.difference));
    cr_expect(strstr(r.note, "our figure"), "%s", r.note);
    uf_xc_row z = {.ours = 1, .reference = 0, .tolerance = 5, .rule = UF_XC_RELATIVE};
    snprintf(z.note, sizeof z.note, "kept");
    uf_xc_judge(&z);
    cr_expect_eq(z.verdict, UF_XC_NA);
    cr_expect_str_eq(z.note, "kept");
}

/* ---- crosscheck.csv --------------------------------------------------------------------- */

Test(xc_csv, round_trips)
{
    char dir[] = "/tmp/uf_xc_XXXXXX", path[64], err[256] = "";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/crosscheck.csv", dir);
    uf_xc_row rows[2] = {
        {.scenario = "elementwise_chain", .variant = "unfused", .point = "ops=1,bits=32",
         .kernel = "ew_chain_f32", .metric = "sm_active_pct", .reference_of = "ncu",
         .ours = 99.0, .reference = 97.5, .tolerance = 5, .rule = UF_XC_POINTS},
        {.scenario = "allreduce_overlap", .variant = "sequential", .point = "bucket_mib=64",
         .kernel = "all-reduce", .metric = "busbw_gbs", .reference_of = "ceilings",
         .ours = 328.3, .reference = NAN, .tolerance = 5, .rule = UF_XC_RELATIVE,
         .note = "no \"1 GiB\" row, see ceilings.csv"},
    };
    uf_meta meta = {0};
    uf_meta_set(&meta, "git", "v1-2-gabc");
    uf_meta_set(&meta, "gpu", "NVIDIA H200");
    for (int i = 0; i < 2; i++)
        uf_xc_judge(&rows[i]);
    cr_assert_eq(uf_xc_write_csv(path, &meta, rows, 2, err, sizeof err), 0, "%s", err);

    size_t len;
    char *text = read_all(path, &len);
    uf_xc_row *back;
    uf_meta meta_back = {0};
    int n;
    cr_assert_eq(uf_xc_parse_csv(path, text, len, &meta_back, &back, &n, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(uf_meta_get(&meta_back, "gpu"), "NVIDIA H200");
    cr_expect_str_eq(back[0].point, "ops=1,bits=32");
    cr_expect_float_eq(back[0].difference, 1.5, 1e-9);
    cr_expect_eq(back[0].verdict, UF_XC_AGREE);
    cr_expect_eq(back[1].verdict, UF_XC_NA);
    cr_expect_eq(back[1].rule, UF_XC_RELATIVE);
    cr_expect(isnan(back[1].reference));
    cr_expect_str_eq(back[1].note, rows[1].note);
    free(back);
    free(text);
    unlink(path);
    rmdir(dir);
}

Test(xc_csv, refuses_a_foreign_or_broken_file)
{
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"# underfed-results v3\n", "not a crosscheck file"},
        {"# underfed-crosscheck v1\n# git: x\nscenario,variant\n", ":3: not the crosscheck header"},
        {"# underfed-crosscheck v1\nscenario,variant,point,kernel,metric,reference_of,ours,"
         "reference,difference,tolerance,unit,verdict,note\n"
         "\"a\",\"b\",\"c\",\"d\",\"e\",\"ncu\",1,2,-1,5,points,maybe,\"\"\n",
         ":3: verdict \"maybe\" unknown"},
        {"# underfed-crosscheck v1\nscenario,variant,point,kernel,metric,reference_of,ours,"
         "reference,difference,tolerance,unit,verdict,note\n"
         "\"a\",\"b\",\"c\",\"d\",\"e\",\"ncu\",x,2,-1,5,points,agree,\"\"\n",
         ":3: ours \"x\" is not a number"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uf_xc_row *rows;
        int n;
        char err[256] = "";
        cr_expect_eq(uf_xc_parse_csv("x.csv", cases[c].text, strlen(cases[c].text), NULL, &rows,
                                     &n, err, sizeof err), -1, "case %zu", c);
        cr_expect(strstr(err, cases[c].says), "case %zu: %s", c, err);
    }
}

/* The GPM tally: each GPU's figure once (rank lines of a multi-GPU row, else the row), the
 * median and largest difference, and how many are beyond the 5 points. */
Test(gpm_tally, counts_each_gpu_once)
{
    uf_table t;
    uf_table_init(&t, "x");
    for (int i = 0; i < 3; i++)
        cr_assert_not_null(uf_table_append(&t));
    t.rows[0].gpm_agree_pts = 0.5;
    t.rows[1].gpm_agree_pts = 7.0;              /* a one-GPU row beyond the limit */
    /* row 2: ranks 0 and 1; the row's own value (rank 0's) is not counted again */
    t.rows[2].gpm_agree_pts = 1.0;
    t.rows[2].ranks = calloc(2, sizeof *t.rows[2].ranks);
    cr_assert_not_null(t.rows[2].ranks);
    t.rows[2].n_ranks = 2;
    t.rows[2].ranks[0].gpm_agree_pts = 1.0;
    t.rows[2].ranks[1].gpm_agree_pts = NAN;     /* not compared on that GPU */
    uf_gpm_tally g;
    cr_assert_eq(uf_gpm_tally_of(&t, &g), 0);
    cr_assert_eq(g.compared, 3);
    cr_assert_eq(g.beyond, 1);
    cr_assert_float_eq(g.median_pts, 1.0, 1e-12);
    cr_assert_float_eq(g.max_pts, 7.0, 1e-12);
    t.rows[1].gpm_agree_pts = 5.0;              /* exactly 5 points is within */
    cr_assert_eq(uf_gpm_tally_of(&t, &g), 0);
    cr_assert_eq(g.beyond, 0);
    uf_table_free(&t);
}

/* `underfed crosscheck`: the cases the GPU driver (ci/crosscheck.sh) runs, the judging of what
 * those runs left in a folder, and REPORT.md's section on it. The rule and the formats are in
 * common/core/crosscheck_judge.c (unit-tested); this file knows the scenarios' cells and folder.
 *
 * The folder (RESULTS/crosscheck/, committed beside a GPU's results):
 *   ID/SCENARIO.csv   the scenario run normally on the case's one cell (timing, trace,
 *                     counters), ID/ceilings.csv the ceilings it was run against;
 *   ID.ncu.csv        `ncu --csv --page raw` of the same cell, the scenario's CUPTI off;
 *   crosscheck.csv    one row per comparison (this tool writes it). */
#include "crosscheck_cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expect.h"
#include "fileutil.h"
#include "options.h"
#include "results.h"
#include "timeline.h"
#include "crosscheck_judge.h"

enum { EXIT_OK = 0, EXIT_DISAGREE = 1, MAX_ROWS = 64 };     /* and cli.h's EXIT_BAD (2) */

/* The tolerances, and why (also written into crosscheck.csv's metadata). */
#define XC_PCT_POINTS 5.0       /* issue 15: PM sampling within 5 points of ncu */
#define XC_DURATION_PCT 5.0     /* issue 15: ncu's kernel duration within 5 % of the trace's */
/* The window (first kernel start to last kernel end) and the event span of the same steps
 * differ by the lead-in from the first event to the first kernel, about one launch: < 0.1
 * point at 10 steps of >= 100 us. 3 points still catch a window one step off (10 points). */
#define XC_BUSY_POINTS 3.0
/* The same collective, size and GPUs, both a median: the committed H200 figures agree within
 * 0.5 %; 5 % is what the scenario's own busbw claim (>= 95 % of the bench) allows. */
#define XC_BUSBW_PCT 5.0
/* Below this busy share the counter window is not made of the kernels alone: its averages
 * include idle time that ncu's per-kernel figures do not. */
#define XC_MIN_BUSY_PCT 90.0

/* One cell whose steps are (nearly) one kernel back to back, and what is compared there. */
typedef struct xc_case {
    const char *id;             /* the run's folder under the cross-check folder */
    const char *scenario, *variant;
    const char *point;          /* AXIS=VALUE,... each passed as --sweep AXIS=VALUE */
    /* ncu -k regex:...; NULL: no ncu run for this case. Every launch it matches is profiled
     * (setup, warm-up, timed steps, verification): uf_ncu_step_of finds the first timed step */
    const char *kernel_regex;
    int serial;                 /* one stream, kernels only: busy = kernel time / step time */
    int busbw;                  /* the all-reduce's bus bandwidth against the ceilings bench */
} xc_case;

static const xc_case xc_cases[] = {
    /* one 1.2 ms kernel per step: the fix of the launch storm */
    {"launch_storm-fused", "launch_storm", "fused", "elems=16777216,ops=100", "fused_kernel",
     1, 0},
    /* 1000 tiny kernels and host gaps: busy ~16 %, the serial check where it is hard */
    {"launch_storm-eager", "launch_storm", "eager", "elems=4096,ops=1000", NULL, 1, 0},
    /* the issue's own example: one streaming kernel per step */
    {"elementwise_chain-unfused", "elementwise_chain", "unfused", "ops=1,bits=32",
     "ew_chain_f32", 1, 0},
    /* one attention kernel per step */
    {"varlen_attention-varlen", "varlen_attention", "varlen",
     "dist=1,batch=32,heads=16,causal=0", "va_attention_kernel", 1, 0},
    /* GEMMs and their elementwise kernels: the step's every kernel, weighted */
    {"checkpoint_recompute-store_all", "checkpoint_recompute", "store_all",
     "k=4,layers=2,tokens=2048,d_model=4096", ".", 0, 0},
    /* embed, GEMM, GELU, GEMM under an overlapped input copy */
    {"starved_input-pretokenized", "starved_input", "pretokenized", "workers=8,tok_cost=1", ".",
     0, 0},
    /* every step holds the all-reduce, whose kernel ncu cannot replay without its peer: the
     * bus bandwidth only */
    {"allreduce_overlap-sequential", "allreduce_overlap", "sequential",
     "bucket_mib=64,comm_ctas=0,sm_margin=0", NULL, 0, 1},
};
enum { N_CASES = sizeof xc_cases / sizeof xc_cases[0] };

/* Kernels of setup and verification, never of a step: left out of the step's figures. */
static const char *const helper_kernels[] = {"fill_", "compare_", "checksum", "ew_fill",
                                             "ew_check", "ew_rcp", "va_fill", "ar_fill",
                                             "ar_checksum", NULL};

/* `plan`: one line per case, fields separated by '|': id, scenario, variant, point, kernel
 * regex (empty: no ncu). */
static int cmd_plan(void)
{
    for (int c = 0; c < N_CASES; c++) {
        const xc_case *x = &xc_cases[c];
        printf("%s|%s|%s|%s|%s\n", x->id, x->scenario, x->variant, x->point,
               x->kernel_regex ? x->kernel_regex : "");
    }
    return EXIT_OK;
}

/* The whole regular file into *text (malloc'd, NUL-terminated: fileutil.h's reader); -1 when
 * it cannot be read, the caller saying what is missing. */
static int read_text(const char *path, char **text, size_t *len)
{
    char err[UF_REASON_LEN];
    return uf_read_file(path, text, len, err, sizeof err);
}

/* A new row of the case, n/a until judged. */
static uf_xc_row *new_row(uf_xc_row *rows, int *n, const xc_case *x, const char *metric,
                          const char *reference_of, uf_xc_rule rule, double tolerance)
{
    if (*n >= MAX_ROWS)
        return NULL;
    uf_xc_row *r = &rows[(*n)++];
    memset(r, 0, sizeof *r);
    snprintf(r->scenario, sizeof r->scenario, "%s", x->scenario);
    snprintf(r->variant, sizeof r->variant, "%s", x->variant);
    snprintf(r->point, sizeof r->point, "%s", x->point);
    snprintf(r->metric, sizeof r->metric, "%s", metric);
    snprintf(r->reference_of, sizeof r->reference_of, "%s", reference_of);
    r->ours = r->reference = NAN;
    r->rule = rule;
    r->tolerance = tolerance;
    return r;
}

/* What a case's run left: its table and row (NULL when missing, with the reason in why). */
typedef struct case_run {
    uf_table table;
    const uf_row *row;
    char why[UF_REASON_LEN];
} case_run;

/* Does the row sit at POINT ("AXIS=VALUE,...", every axis named by the case)? */
static int row_at_point(const uf_table *t, const uf_row *r, const char *point)
{
    for (const char *p = point; *p;) {
        size_t len = strcspn(p, ","), name_len = strcspn(p, "=");
        char value[32];
        double want;
        int found = 0;
        if (name_len >= len || len - name_len - 1 >= sizeof value)
            return 0;
        snprintf(value, sizeof value, "%.*s", (int)(len - name_len - 1), p + name_len + 1);
        if (uf_parse_number(value, &want) != 0)
            return 0;
        for (int a = 0; a < t->n_axes && !found; a++)
            found = strlen(t->axis_names[a]) == name_len &&
                    strncmp(t->axis_names[a], p, name_len) == 0 &&
                    uf_axis_value_same(r->axis[a], want);
        if (!found)
            return 0;
        p += len + (p[len] == ',');
    }
    return 1;
}

static void load_case(const char *dir, const xc_case *x, case_run *cr)
{
    char sub[UF_PATH_LEN], err[UF_REASON_LEN] = "";
    uf_table_init(&cr->table, "");
    cr->row = NULL;
    cr->why[0] = '\0';
    snprintf(sub, sizeof sub, "%s/%s", dir, x->id);
    if (uf_table_read_scenario(&cr->table, sub, x->scenario, err, sizeof err) != 0) {
        char skip_path[UF_PATH_LEN], *text = NULL;
        size_t len = 0;
        snprintf(skip_path, sizeof skip_path, "%s/%s.skip", dir, x->id);
        if (read_text(skip_path, &text, &len) == 0) {   /* the driver's note: why it skipped */
            text[strcspn(text, "\n")] = '\0';
            snprintf(cr->why, sizeof cr->why, "skipped: %.200s", text);
            free(text);
        } else {
            snprintf(cr->why, sizeof cr->why, "no run: %.200s", err);
        }
        return;
    }
    for (int i = 0; i < cr->table.n_rows && !cr->row; i++)
        if (strcmp(cr->table.rows[i].variant, x->variant) == 0 &&
            row_at_point(&cr->table, &cr->table.rows[i], x->point))
            cr->row = &cr->table.rows[i];
    if (!cr->row)
        snprintf(cr->why, sizeof cr->why, "the run has no row of %s @ %s", x->variant,
                 x->point);
    else if (isnan(cr->row->step_ms) && cr->row->skip_reason[0])
        snprintf(cr->why, sizeof cr->why, "not measured: %.200s", cr->row->skip_reason);
}

/* The ncu rows of a case: the three percentages and the mean kernel duration. */
static void judge_ncu(const char *dir, const xc_case *x, const case_run *cr, uf_xc_row *rows,
                      int *n)
{
    static const char *const pct_names[] = {"sm_active_pct", "dram_pct", "tensor_active_pct"};
    uf_xc_row *r[4];
    char path[UF_PATH_LEN], why[UF_REASON_LEN] = "", *text = NULL;
    size_t len = 0;
    uf_ncu_kernel *k = NULL;
    uf_ncu_step step = {0};
    int n_k = 0;
    for (int m = 0; m < 3; m++)
        r[m] = new_row(rows, n, x, pct_names[m], "ncu", UF_XC_POINTS, XC_PCT_POINTS);
    r[3] = new_row(rows, n, x, "kernel_us_mean", "ncu", UF_XC_RELATIVE, XC_DURATION_PCT);
    if (!r[0] || !r[1] || !r[2] || !r[3])
        return;
    snprintf(path, sizeof path, "%s/%s.ncu.csv", dir, x->id);
    if (cr->why[0])
        snprintf(why, sizeof why, "%s", cr->why);
    else if (!(cr->row->kernels_per_step >= 1))
        snprintf(why, sizeof why, "the trace counted no kernel per step: %.200s",
                 cr->row->skip_reason);
    else if (read_text(path, &text, &len) != 0)
        snprintf(why, sizeof why, "no ncu page %.200s (ncu did not run)", path);
    else if (uf_ncu_parse(path, text, len, &k, &n_k, why, sizeof why) == 0 &&
             uf_ncu_step_of(k, n_k, (int)lround(cr->row->kernels_per_step), helper_kernels,
                            &step, why, sizeof why) == 0)
        why[0] = '\0';
    double ours[4] = {NAN, NAN, NAN, NAN}, ref[4] = {step.sm_active_pct, step.dram_pct,
                                                     step.tensor_active_pct,
                                                     step.duration_us_mean};
    if (cr->row) {
        ours[0] = cr->row->sm_active_pct;
        ours[1] = cr->row->dram_pct;
        ours[2] = cr->row->tensor_active_pct;
        ours[3] = cr->row->kernel_us_mean;
    }
    for (int m = 0; m < 4; m++) {
        if (step.kernels == 1)
            snprintf(r[m]->kernel, sizeof r[m]->kernel, "%s", step.first_name);
        else if (step.kernels > 1)
            snprintf(r[m]->kernel, sizeof r[m]->kernel, "%d kernels of a step", step.kernels);
        r[m]->ours = why[0] ? NAN : ours[m];
        r[m]->reference = why[0] ? NAN : ref[m];
        snprintf(r[m]->note, sizeof r[m]->note, "%s", why);
        if (!why[0] && isnan(ours[m]))      /* not measured by us: the run says why */
            snprintf(r[m]->note, sizeof r[m]->note, "%.200s", cr->row->skip_reason);
        else if (!why[0] && m < 3 && !(cr->row->busy_pct >= XC_MIN_BUSY_PCT)) {
            snprintf(r[m]->note, sizeof r[m]->note, "busy %.1f %% < %.0f: the counter window "
                     "is not made of the kernels alone", cr->row->busy_pct, XC_MIN_BUSY_PCT);
            r[m]->ours = NAN;
        } else if (!why[0] && step.kernels > 1) {
            snprintf(r[m]->note, sizeof r[m]->note, "%s", m < 3 ? "ncu figures weighted by "
                     "kernel duration" : "mean over the step's kernels");
        }
        uf_xc_judge(r[m]);
    }
    free(k);
    free(text);
}

/* busy_pct against kernels_per_step x kernel_us_mean / the event-timed step of the same
 * (traced) steps: on one stream with kernels only, the union of the intervals is their sum. */
static void judge_busy(const xc_case *x, const case_run *cr, uf_xc_row *rows, int *n)
{
    uf_xc_row *r = new_row(rows, n, x, "busy_pct", "events", UF_XC_POINTS, XC_BUSY_POINTS);
    if (!r)
        return;
    snprintf(r->kernel, sizeof r->kernel, "all of the step");
    if (cr->why[0]) {
        snprintf(r->note, sizeof r->note, "%s", cr->why);
    } else {
        const uf_row *row = cr->row;
        r->ours = row->busy_pct;
        r->reference = 100.0 * row->kernels_per_step * row->kernel_us_mean /
                       (1000.0 * row->trace_step_ms);
        snprintf(r->note, sizeof r->note, "reference: kernels_per_step x kernel_us_mean / "
                 "trace_step_ms (CUDA events around the traced steps)");
    }
    uf_xc_judge(r);
}

/* The bus bandwidth of the ceilings' all-reduce of `bytes` (the row nccl_busbw_gbs@BYTES of
 * dir/ceilings.csv), NaN with why when there is none. */
static double ceiling_busbw(const char *dir, double bytes, char *why, size_t whylen)
{
    char path[UF_PATH_LEN], name[UF_NAME_LEN], err[UF_REASON_LEN];
    uf_ceiling_row *rows = NULL;
    int n = 0;
    double value = NAN;
    snprintf(name, sizeof name, "nccl_busbw_gbs@%.0f", bytes);
    if (snprintf(path, sizeof path, "%s/ceilings.csv", dir) >= (int)sizeof path) {
        snprintf(why, whylen, "no %.200s/ceilings.csv", dir);
        return NAN;
    }
    /* the strict reader: a malformed or absurd ceilings file gives no figure, it says why */
    if (uf_ceilings_read_rows(path, &rows, &n, err, sizeof err) != 0) {
        snprintf(why, whylen, "%.200s", err);
        return NAN;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0)
            value = rows[i].value;
    if (isnan(value))
        snprintf(why, whylen, "%.100s has no all-reduce of %.0f bytes (a --quick ceilings run "
                 "stops at 64 MiB: give ci/crosscheck.sh a full one)", path, bytes);
    free(rows);
    return value;
}

static void judge_busbw(const char *dir, const xc_case *x, const case_run *cr, uf_xc_row *rows,
                        int *n)
{
    char sub[UF_PATH_LEN];
    uf_xc_row *r = new_row(rows, n, x, "busbw_gbs", "ceilings", UF_XC_RELATIVE, XC_BUSBW_PCT);
    if (!r)
        return;
    snprintf(r->kernel, sizeof r->kernel, "all-reduce");
    if (cr->why[0]) {
        snprintf(r->note, sizeof r->note, "%s", cr->why);
    } else {
        double bytes = uf_table_value(&cr->table, cr->row, "grad_bytes");
        snprintf(sub, sizeof sub, "%s/%s", dir, x->id);
        r->ours = uf_table_value(&cr->table, cr->row, "busbw_gbs");
        r->reference = ceiling_busbw(sub, bytes, r->note, sizeof r->note);
        if (!r->note[0])
            snprintf(r->note, sizeof r->note, "the same all-reduce (%.0f MiB, bf16 sum, same "
                     "GPUs), busbw = bytes / time x 2(n-1)/n in both", bytes / 1048576.0);
    }
    uf_xc_judge(r);
}

/* The run's provenance from the first table read, then the driver's --meta pairs. */
static void fill_meta(uf_meta *m, const uf_table *first, int argc, char **argv)
{
    static const char *const keys[] = {"git", "gpu", "driver", "cuda_runtime", "cupti_api"};
    char utc[32];
    time_t now = time(NULL);
    struct tm tm;
    m->n = 0;
    for (size_t i = 0; first && i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = uf_meta_get(&first->meta, keys[i]);
        if (v)
            uf_meta_set(m, keys[i], "%s", v);
    }
    if (gmtime_r(&now, &tm) && strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm))
        uf_meta_set(m, "utc", "%s", utc);
    uf_meta_set(m, "tolerances", "percentages %.0f points; kernel duration %.0f %%; busy %.0f "
                "points; bus bandwidth %.0f %%", XC_PCT_POINTS, XC_DURATION_PCT, XC_BUSY_POINTS,
                XC_BUSBW_PCT);
    for (int i = 0; i + 1 < argc; i += 2) {   /* --meta KEY=VALUE, checked by the caller */
        const char *pair = argv[i + 1], *eq = strchr(pair, '=');
        char key[UF_NAME_LEN];
        snprintf(key, sizeof key, "%.*s", (int)(eq - pair), pair);
        uf_meta_set(m, key, "%s", eq + 1);
    }
}

static void print_rows(const uf_xc_row *rows, int n)
{
    printf("%-22s %-13s %-18s %9s %9s %8s %6s  %s\n", "scenario", "variant", "metric", "ours",
           "reference", "diff", "tol", "verdict");
    for (int i = 0; i < n; i++) {
        const uf_xc_row *r = &rows[i];
        printf("%-22s %-13s %-18s %9.4g %9.4g %8.3g %6.3g  %s%s%s\n", r->scenario, r->variant,
               r->metric, r->ours, r->reference, r->difference, r->tolerance,
               uf_xc_verdict_name(r->verdict), r->verdict == UF_XC_AGREE ? "" : ": ",
               r->verdict == UF_XC_AGREE ? "" : r->note);
    }
}

/* `judge DIR [--meta KEY=VALUE]...` */
static int cmd_judge(int argc, char **argv)
{
    uf_xc_row rows[MAX_ROWS];
    uf_meta meta;
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    const char *dir = argv[0];
    int n = 0, disagree = 0, have_meta = 0;
    for (int i = 1; i < argc; i += 2)
        if (strcmp(argv[i], "--meta") != 0 || i + 1 >= argc || !strchr(argv[i + 1], '=')) {
            fprintf(stderr, "underfed crosscheck judge: \"%s\": expected --meta KEY=VALUE\n",
                    argv[i]);
            return EXIT_BAD;
        }
    for (int c = 0; c < N_CASES; c++) {
        const xc_case *x = &xc_cases[c];
        case_run cr;
        load_case(dir, x, &cr);
        if (!have_meta && cr.row) {
            fill_meta(&meta, &cr.table, argc - 1, argv + 1);
            have_meta = 1;
        }
        if (x->kernel_regex)
            judge_ncu(dir, x, &cr, rows, &n);
        if (x->serial)
            judge_busy(x, &cr, rows, &n);
        if (x->busbw)
            judge_busbw(dir, x, &cr, rows, &n);
        uf_table_free(&cr.table);
    }
    if (!have_meta)
        fill_meta(&meta, NULL, argc - 1, argv + 1);
    for (int i = 0; i < n; i++)
        disagree += rows[i].verdict == UF_XC_DISAGREE;
    print_rows(rows, n);
    snprintf(path, sizeof path, "%s/crosscheck.csv", dir);
    if (uf_xc_write_csv(path, &meta, rows, n, err, sizeof err) != 0) {
        fprintf(stderr, "underfed crosscheck: %s\n", err);
        return EXIT_BAD;
    }
    fprintf(stderr, "underfed crosscheck: wrote %s (%d comparisons, %d disagree)\n", path, n,
            disagree);
    return disagree ? EXIT_DISAGREE : EXIT_OK;
}

int uf_cmd_crosscheck(int argc, char **argv)
{
    if (argc == 1 && strcmp(argv[0], "plan") == 0)
        return cmd_plan();
    if (argc >= 2 && strcmp(argv[0], "judge") == 0)
        return cmd_judge(argc - 1, argv + 1);
    fprintf(stderr, "usage: underfed crosscheck plan | underfed crosscheck judge DIR "
                    "[--meta KEY=VALUE]...\n");
    return EXIT_BAD;
}

/* ---- REPORT.md -------------------------------------------------------------------------- */

static void md_value(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, " %.4g |", v);
    else
        fprintf(f, " — |");
}

/* A table cell: '|' would end it. */
static void md_text(FILE *f, const char *s)
{
    fputc(' ', f);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputs(" |", f);
}

static void report_rows(FILE *f, const uf_meta *meta, const uf_xc_row *rows, int n)
{
    int agree = 0, na = 0;
    for (int i = 0; i < n; i++) {
        agree += rows[i].verdict == UF_XC_AGREE;
        na += rows[i].verdict == UF_XC_NA;
    }
    const char *git = uf_meta_get(meta, "git"), *utc = uf_meta_get(meta, "utc");
    const char *ncu = uf_meta_get(meta, "ncu"), *tol = uf_meta_get(meta, "tolerances");
    fprintf(f, "## How far each instrument agrees with another\n\n");
    fprintf(f, "*Measured with git %s, %s; Nsight Compute %s ([crosscheck/crosscheck.csv]"
               "(crosscheck/crosscheck.csv), written by `ci/crosscheck.sh`).*\n\n",
            git ? git : "?", utc ? utc : "?", ncu ? ncu : "?");
    fprintf(f, "For one cell of each scenario whose steps are one kernel (or one step's kernels) "
               "back to back: the PM-sampled counters against Nsight Compute's figures of the "
               "same kernels (duration-weighted), the trace's mean kernel duration against "
               "ncu's, the traced busy share against the event-timed kernel sum of a serial "
               "variant, and the all-reduce's bus bandwidth against the ceilings bench's. "
               "Tolerances: %s. %d of %d comparisons agree, %d could not be made (the note "
               "says why).\n\n", tol ? tol : "?", agree, n, na);
    fputs("| scenario | variant @ point | kernel | metric | ours | reference | against | "
          "difference | tolerance | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n", f);
    for (int i = 0; i < n; i++) {
        const uf_xc_row *r = &rows[i];
        char cell[UF_NAME_LEN * 2 + 4];
        snprintf(cell, sizeof cell, "%s @ %s", r->variant, r->point);
        fprintf(f, "|");
        md_text(f, r->scenario);
        md_text(f, cell);
        md_text(f, r->kernel);
        md_text(f, r->metric);
        md_value(f, r->ours);
        md_value(f, r->reference);
        md_text(f, r->reference_of);
        if (isfinite(r->difference))
            fprintf(f, " %+.2f %s |", r->difference, uf_xc_rule_unit(r->rule));
        else
            fprintf(f, " — |");
        fprintf(f, " %.3g %s |", r->tolerance, uf_xc_rule_unit(r->rule));
        if (r->verdict == UF_XC_AGREE) {
            fprintf(f, " agree |\n");
        } else {
            fprintf(f, " **%s**: ", uf_xc_verdict_name(r->verdict));
            md_text(f, r->note);
            fprintf(f, "\n");
        }
    }
    fprintf(f, "\n");
}

int uf_report_crosscheck(FILE *f, const char *results_dir)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN], *text = NULL;
    size_t len = 0;
    uf_xc_row *rows = NULL;
    uf_meta meta = {0};
    int n = 0;
    snprintf(path, sizeof path, "%s/crosscheck/crosscheck.csv", results_dir);
    if (read_text(path, &text, &len) != 0)
        return 0;                               /* no cross-check run: no section */
    int rc = uf_xc_parse_csv(path, text, len, &meta, &rows, &n, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "underfed: %s\n", err);
    else
        report_rows(f, &meta, rows, n);
    free(rows);
    free(text);
    return rc;
}

void uf_report_gpm(FILE *f, const char (*names)[UF_NAME_LEN], const uf_gpm_tally *tally, int n)
{
    fprintf(f, "## NVML GPM against CUPTI PM sampling, every row\n\n");
    fprintf(f, "Each row's counters window is read twice: by CUPTI PM sampling and by NVML GPM "
               "over the refresh intervals that lie inside it (`gpm_agree_pts`, the largest "
               "difference of SM active, occupancy, tensor active and DRAM over the same "
               "interval). Beyond %.0f points the row says by how much and its GPM values stay "
               "empty. Each GPU of a multi-GPU row counts once.\n\n", UF_GPM_AGREE_PTS);
    fputs("| scenario | compared | median difference | largest | beyond 5 points |\n"
          "|---|---|---|---|---|\n", f);
    for (int i = 0; i < n; i++) {
        const uf_gpm_tally *g = &tally[i];
        if (g->compared == 0) {
            fprintf(f, "| %s | 0 | — | — | — |\n", names[i]);
            continue;
        }
        fprintf(f, "| %s | %d | %.2f pts | %.2f pts | %s%d%s |\n", names[i], g->compared,
                g->median_pts, g->max_pts, g->beyond ? "**" : "", g->beyond,
                g->beyond ? "**" : "");
    }
    fprintf(f, "\n");
}

/* Its line in `underfed --help`; it reads its own argv. */
const uf_command uf_crosscheck_command = {
    "crosscheck", "plan | judge DIR", 0, 0, "",
    "counters vs ncu, busy vs events, busbw vs ceilings", uf_cmd_crosscheck, 0};

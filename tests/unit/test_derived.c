/* Derived figures agree with their inputs: every result file of a folder is read back and each
 * column derived from a step time or a ceiling is recomputed from the file's own columns and
 * metadata.
 *
 *   step         the statistic the file names (`# step_stat: median|mean`: step_ms or
 *                step_ms_mean); a file that names none (written before step_stat existed) used
 *                the median, step_ms, as the harness then did
 *   ceilings     the values the file records (`# ceiling.NAME: VALUE`); a file that records
 *                none (written before) is held to its folder's ceilings.csv
 *   harness      tflops_useful = useful_flops / step, pct_of_gemm = tflops_useful /
 *                gemm_bf16_tflops, gbs = min_bytes / step, pct_of_copy = gbs / copy_d2d_gbs
 *   scenarios    the extras whose formula is known (scenario_checks below)
 *
 * Tolerance: 1e-6 relative (REL_TOL). Every number is written with 10 significant digits, so a
 * recompute from the written inputs agrees to a few parts in 1e9; a figure over the wrong
 * statistic or against another run's ceilings is off by 1e-3 or more (the nearest case seen:
 * gemm ceilings of 795.7 and 794.8 TFLOP/s, 1.1e-3 apart).
 *
 * Three folders: tests/data/derived-good (hand-made, consistent: no mismatch), derived-bad (the
 * same with known faults: exactly those mismatches), and every committed results/GPU folder
 * (Test committed_results, only with UF_DERIVED_COMMITTED=1: ctest entry
 * unit.derived_committed). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "results.h"

#define DATA(name) UF_TEST_DATA_DIR "/" name
#define REL_TOL 1e-6
#define MAX_MISMATCHES 256

/* One value that disagrees with its recompute. */
typedef struct mismatch {
    char file[128];
    char variant[UF_NAME_LEN];
    char column[UF_NAME_LEN];
    char where[160];                /* the row's sweep point, "workers=4 tok_cost=2" */
    double got, want;
} mismatch;

/* What a folder's check found. */
typedef struct outcome {
    int files, values;              /* files read, values recomputed and compared */
    int n;                          /* mismatches (the first MAX_MISMATCHES kept) */
    mismatch found[MAX_MISMATCHES];
    char error[UF_REASON_LEN];      /* a file that could not be checked at all */
} outcome;

/* The file under check: its table, the step of each row and the ceilings of its shares. */
typedef struct file_check {
    const char *name;
    const uf_table *t;
    const char *step_column;        /* "step_ms" or "step_ms_mean" */
    uf_ceilings ceil;
    outcome *out;
} file_check;

/* ---- comparing ---------------------------------------------------------------------------- */

static int agrees(double got, double want)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    if (got == want)
        return 1;
    return fabs(got - want) <= REL_TOL * fmax(fabs(got), fabs(want));
}

static void record(file_check *fc, const uf_row *r, const char *column, double got, double want)
{
    outcome *o = fc->out;
    o->values++;
    if (agrees(got, want))
        return;
    if (o->n < MAX_MISMATCHES) {
        mismatch *m = &o->found[o->n];
        snprintf(m->file, sizeof m->file, "%s", fc->name);
        snprintf(m->variant, sizeof m->variant, "%s", r->variant);
        snprintf(m->column, sizeof m->column, "%s", column);
        for (int a = 0; a < fc->t->n_axes; a++) {
            size_t used = strlen(m->where);
            snprintf(m->where + used, sizeof m->where - used, "%s%.20s=%g", a ? " " : "",
                     fc->t->axis_names[a], r->axis[a]);
        }
        m->got = got;
        m->want = want;
    }
    o->n++;
}

/* Compare a column of the row with its recompute; a column the file lacks is not checked. */
static void expect_column(file_check *fc, const uf_row *r, const char *column, double want)
{
    double *slot = uf_row_metric(fc->t, (uf_row *)r, column);
    if (slot)
        record(fc, r, column, *slot, want);
}

static double value(const file_check *fc, const uf_row *r, const char *column)
{
    return uf_table_value(fc->t, r, column);
}

static double ceiling(const file_check *fc, const char *name)
{
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, name) == 0)
            return *(const double *)((const char *)&fc->ceil + uf_ceiling_descs[i].offset);
    return NAN;
}

static double step_s(const file_check *fc, const uf_row *r)
{
    return value(fc, r, fc->step_column) * 1e-3;
}

/* ---- the formulas ------------------------------------------------------------------------- */

/* The harness's (derive() in common/harness/harness_sweep.c). */
static void check_harness_columns(file_check *fc, const uf_row *r)
{
    double tflops = value(fc, r, "useful_flops") / step_s(fc, r) / 1e12;
    double gbs = value(fc, r, "min_bytes") / step_s(fc, r) / 1e9;
    expect_column(fc, r, "tflops_useful", tflops);
    expect_column(fc, r, "pct_of_gemm", 100.0 * tflops / ceiling(fc, "gemm_bf16_tflops"));
    expect_column(fc, r, "gbs", gbs);
    expect_column(fc, r, "pct_of_copy", 100.0 * gbs / ceiling(fc, "copy_d2d_gbs"));
}

/* checkpoint_recompute (cr_describe): model FLOPs and hardware FLOPs over the step, against the
 * bf16 GEMM ceiling; the recomputed share of the FLOPs. */
static void check_checkpoint_recompute(file_check *fc, const uf_row *r)
{
    double useful = value(fc, r, "useful_flops"), executed = value(fc, r, "executed_flops");
    double gemm_flops_s = ceiling(fc, "gemm_bf16_tflops") * 1e12;
    expect_column(fc, r, "mfu_pct", 100.0 * useful / step_s(fc, r) / gemm_flops_s);
    expect_column(fc, r, "hfu_pct", 100.0 * executed / step_s(fc, r) / gemm_flops_s);
    expect_column(fc, r, "recompute_pct", 100.0 * (executed - useful) / useful);
}

/* varlen_attention (va_describe): executed FLOPs over the step, and padding from the counts. */
static void check_varlen_attention(file_check *fc, const uf_row *r)
{
    double useful = value(fc, r, "useful_flops"), executed = value(fc, r, "executed_flops");
    expect_column(fc, r, "tflops_executed", executed / step_s(fc, r) / 1e12);
    expect_column(fc, r, "exec_useful_ratio", executed / useful);
    expect_column(fc, r, "padding_pct", 100.0 * (1.0 - useful / executed));
}

/* allreduce_overlap (ar_describe): nccl-tests' bus bandwidth of the all-reduce alone, and its
 * share of the ceilings bench's. */
static void check_allreduce_overlap(file_check *fc, const uf_row *r)
{
    double n = value(fc, r, "ranks");
    double busbw = value(fc, r, "grad_bytes") / (value(fc, r, "comm_ms") * 1e-3) * 2.0 *
                   (n - 1.0) / n / 1e9;
    expect_column(fc, r, "busbw_gbs", busbw);
    expect_column(fc, r, "busbw_pct", 100.0 * busbw / ceiling(fc, "nccl_busbw_gbs"));
}

/* elementwise_chain (ew_describe): flops per byte the variant moves. */
static void check_elementwise_chain(file_check *fc, const uf_row *r)
{
    expect_column(fc, r, "intensity_flop_per_byte",
                  value(fc, r, "useful_flops") / value(fc, r, "bytes_moved"));
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* starved_input (si_describe): tokens_per_s = tokens / step, and useful_flops = tokens x the
 * model's FLOPs per token (4 x hidden x ffn), one model per run. The file holds no token count,
 * so the check is that tokens_per_s x step / useful_flops (1 / the FLOPs per token) is the same
 * on every measured row: a row whose tokens_per_s used another step than its tflops_useful
 * stands out from the median of the file. */
static void check_starved_input_file(file_check *fc)
{
    const uf_table *t = fc->t;
    double *ratio = calloc((size_t)t->n_rows + 1, sizeof *ratio);
    cr_assert_not_null(ratio);
    int n = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *r = &t->rows[i];
        double k = value(fc, r, "tokens_per_s") * step_s(fc, r) / value(fc, r, "useful_flops");
        if (!isnan(k))
            ratio[n++] = k;
    }
    if (n > 0) {
        qsort(ratio, (size_t)n, sizeof *ratio, compare_doubles);
        double tokens_per_flop = ratio[n / 2];
        for (int i = 0; i < t->n_rows; i++) {
            const uf_row *r = &t->rows[i];
            double tokens = value(fc, r, "useful_flops") * tokens_per_flop;
            expect_column(fc, r, "tokens_per_s", tokens / step_s(fc, r));
        }
    }
    free(ratio);
}

typedef struct scenario_check {
    const char *scenario;
    void (*row)(file_check *fc, const uf_row *r);   /* per row, or NULL */
    void (*file)(file_check *fc);                   /* over the whole file, or NULL */
} scenario_check;

static const scenario_check scenario_checks[] = {
    {"checkpoint_recompute", check_checkpoint_recompute, NULL},
    {"varlen_attention", check_varlen_attention, NULL},
    {"allreduce_overlap", check_allreduce_overlap, NULL},
    {"elementwise_chain", check_elementwise_chain, NULL},
    {"starved_input", NULL, check_starved_input_file},
};

/* ---- one file, one folder ----------------------------------------------------------------- */

/* The ceilings the file's shares are against: those it records, or (a file that records none)
 * the folder's ceilings.csv; all NaN when neither exists. */
static void file_ceilings(const uf_table *t, const char *dir, uf_ceilings *c)
{
    if (uf_ceilings_from_meta(&t->meta, c) > 0)
        return;
    char path[512], err[UF_REASON_LEN];
    snprintf(path, sizeof path, "%s/ceilings.csv", dir);
    struct stat st;
    if (stat(path, &st) == 0)
        cr_assert_eq(uf_ceilings_read(path, c, err, sizeof err), 0, "%s", err);
}

static int check_file(const char *dir, const char *name, outcome *out)
{
    char path[512], err[UF_REASON_LEN];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uf_table t;
    uf_table_init(&t, "");
    if (uf_table_read_csv(&t, path, err, sizeof err) != 0) {
        snprintf(out->error, sizeof out->error, "%s", err);
        uf_table_free(&t);
        return -1;
    }
    const char *stat_name = uf_meta_get(&t.meta, "step_stat");
    file_check fc = {.name = name, .t = &t, .out = out};
    if (!stat_name || strcmp(stat_name, "median") == 0) {
        fc.step_column = "step_ms";
    } else if (strcmp(stat_name, "mean") == 0) {
        fc.step_column = "step_ms_mean";
    } else {
        snprintf(out->error, sizeof out->error, "%.160s: unknown step_stat '%.32s'", path,
                 stat_name);
        uf_table_free(&t);
        return -1;
    }
    file_ceilings(&t, dir, &fc.ceil);
    const scenario_check *sc = NULL;
    for (size_t i = 0; i < sizeof scenario_checks / sizeof scenario_checks[0]; i++)
        if (strcmp(scenario_checks[i].scenario, t.scenario) == 0)
            sc = &scenario_checks[i];
    for (int i = 0; i < t.n_rows; i++) {
        check_harness_columns(&fc, &t.rows[i]);
        if (sc && sc->row)
            sc->row(&fc, &t.rows[i]);
    }
    if (sc && sc->file)
        sc->file(&fc);
    out->files++;
    uf_table_free(&t);
    return 0;
}

static int is_result_file(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".csv") == 0 && !strstr(name, ".series.csv") &&
           strcmp(name, "ceilings.csv") != 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Every result file of dir (not ceilings, not series), in name order. */
static void check_folder(const char *dir, outcome *out)
{
    char names[64][256];
    int n = 0;
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 64;)
        if (is_result_file(e->d_name) && strlen(e->d_name) < sizeof names[0])
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    for (int i = 0; i < n && check_file(dir, names[i], out) == 0; i++)
        ;
}

/* Every mismatch on stderr, one line each, for the log. */
static void print_outcome(const char *dir, const outcome *o)
{
    if (o->error[0])
        fprintf(stderr, "%s: %s\n", dir, o->error);
    for (int i = 0; i < o->n && i < MAX_MISMATCHES; i++) {
        const mismatch *m = &o->found[i];
        fprintf(stderr, "%s/%s: %s @ %s: %s = %.10g, recomputed %.10g (%+.3g %%)\n", dir,
                m->file, m->variant, m->where, m->column, m->got, m->want,
                100.0 * (m->got / m->want - 1.0));
    }
    if (o->n > MAX_MISMATCHES)
        fprintf(stderr, "%s: %d more\n", dir, o->n - MAX_MISMATCHES);
}

static int has_mismatch(const outcome *o, const char *file, const char *variant,
                        const char *column)
{
    int n = 0;
    for (int i = 0; i < o->n && i < MAX_MISMATCHES; i++)
        n += strcmp(o->found[i].file, file) == 0 && strcmp(o->found[i].variant, variant) == 0 &&
             strcmp(o->found[i].column, column) == 0;
    return n;
}

/* ---- the tests ---------------------------------------------------------------------------- */

/* Hand-made files whose figures follow the rules: a v3 file over the mean with recorded
 * ceilings that differ from the folder's, a v3 file over the median, and a v2 file that names
 * neither (the median, the folder's ceilings.csv). */
Test(derived, consistent_fixtures_pass)
{
    static outcome o;
    memset(&o, 0, sizeof o);
    check_folder(DATA("derived-good"), &o);
    print_outcome(DATA("derived-good"), &o);
    cr_assert_str_empty(o.error);
    cr_assert_eq(o.files, 5, "checked %d files", o.files);
    cr_assert_gt(o.values, 50, "compared only %d values", o.values);
    cr_assert_eq(o.n, 0, "%d derived value(s) disagree with their inputs (listed above)", o.n);
}

/* The same files with the faults seen in the committed results; each must be caught, and
 * nothing else. */
Test(derived, inconsistent_fixtures_fail)
{
    static outcome o;
    memset(&o, 0, sizeof o);
    check_folder(DATA("derived-bad"), &o);
    print_outcome(DATA("derived-bad"), &o);
    cr_assert_str_empty(o.error);
    cr_assert_eq(o.files, 2);
    /* starved_input: the bimodal row's tflops_useful and pct_of_gemm over the median while
     * the file declares the mean (the committed file's bug) */
    cr_assert_eq(has_mismatch(&o, "starved_input.csv", "workers", "tflops_useful"), 1);
    cr_assert_eq(has_mismatch(&o, "starved_input.csv", "workers", "pct_of_gemm"), 1);
    /* the same file: a tokens_per_s over the median on the sync row */
    cr_assert_eq(has_mismatch(&o, "starved_input.csv", "sync", "tokens_per_s"), 1);
    /* a legacy file whose shares came from another ceilings file than its folder's: each of
     * its two rows' pct_of_gemm */
    cr_assert_eq(has_mismatch(&o, "varlen_attention.csv", "pad_global", "pct_of_gemm"), 1);
    cr_assert_eq(has_mismatch(&o, "varlen_attention.csv", "varlen", "pct_of_gemm"), 1);
    cr_assert_eq(o.n, 5, "%d mismatches, 5 planted", o.n);
}

/* A file naming a statistic the harness does not know cannot be checked: an error, not a pass. */
Test(derived, unknown_step_stat_is_an_error)
{
    static outcome o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(check_file(DATA("derived-bad/odd"), "unknown_stat.csv", &o), -1);
    cr_assert(strstr(o.error, "unknown step_stat 'trimmed'") != NULL, "%s", o.error);
}

/* Every committed results folder (results/GPU/): run by the ctest entry
 * unit.derived_committed, which sets UF_DERIVED_COMMITTED=1. UF_DERIVED_RESULTS_DIR names
 * another folder of result folders (a fresh run, before it is committed). */
Test(derived, committed_results)
{
    const char *on = getenv("UF_DERIVED_COMMITTED");
    const char *root = getenv("UF_DERIVED_RESULTS_DIR");
    if (!on || strcmp(on, "1") != 0)
        cr_skip_test("the committed results are checked by unit.derived_committed");
    if (!root || !*root)
        root = UF_RESULTS_DIR;
    DIR *d = opendir(root);
    cr_assert_not_null(d, "cannot open %s", root);
    int folders = 0, bad = 0;
    static outcome o;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char dir[512];
        struct stat st;
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        if (e->d_name[0] == '.' || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        memset(&o, 0, sizeof o);
        check_folder(dir, &o);
        print_outcome(dir, &o);
        fprintf(stderr, "%s: %d files, %d values recomputed, %d disagree\n", dir, o.files,
                o.values, o.n);
        folders++;
        bad += o.n + (o.error[0] != '\0');
    }
    closedir(d);
    cr_assert_gt(folders, 0, "no results folder under %s", root);
    cr_assert_eq(bad, 0, "%d derived value(s) or file(s) disagree (listed above)", bad);
}

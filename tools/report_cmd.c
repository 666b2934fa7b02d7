/* `underfed report` (report_cmd.h): the page's header (the run or runs the files come from),
 * the machine's ceilings, a section per scenario (its story, its table at the default point,
 * power, which ceilings its shares are against, its expectation, its plots), then the
 * cross-checks and the GPM tally. */
#define _XOPEN_SOURCE 700     /* realpath */
#include "report_cmd.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crosscheck_cmd.h"
#include "fileutil.h"
#include "options.h"
#include "strbuf.h"
#include "tablequery.h"

static void md_num(FILE *f, double v, int decimals)
{
    if (isnan(v))
        fprintf(f, " – |");
    else
        fprintf(f, " %.*f |", decimals, v);
}

/* A number in running text; "–" when not measured. */
static void md_plain(FILE *f, double v, int decimals)
{
    if (isnan(v))
        fprintf(f, "–");
    else
        fprintf(f, "%.*f", decimals, v);
}

/* The ceilings section. A folder without ceilings.csv says so in the report; a ceilings.csv
 * that is there but malformed (empty, truncated, ...) is an error like any other file: -1. */
static int report_ceilings(FILE *f, const char *dir)
{
    char err[UF_REASON_LEN];
    uf_ceilings c;
    uf_meta meta;
    int got = folder_ceilings(dir, &c, &meta, err, sizeof err);
    if (got <= 0) {
        if (got == 0)
            fprintf(f, "Ceilings: not available (%s).\n\n", err);
        return got;
    }
    const char *git = uf_meta_get(&meta, "git"), *utc = uf_meta_get(&meta, "utc");
    fprintf(f, "## The machine's ceilings (benches/ceilings)\n\n*Measured with git %s, %s.*\n\n"
               "| ceiling | value | unit |\n|---|---|---|\n",
            git ? git : "?", utc ? utc : "?");
    for (int i = 0; i < uf_n_ceiling_descs; i++) {
        double v = *(const double *)((const char *)&c + uf_ceiling_descs[i].offset);
        fprintf(f, "| %s |", uf_ceiling_descs[i].name);
        md_num(f, v, 2);
        fprintf(f, " %s |\n", uf_ceiling_descs[i].unit);
    }
    fprintf(f, "\n");
    return 0;
}

/* The images of scenario `name` in the plots folder (NAME_*.png), sorted, as links under
 * a->plots_link (default: the folder's own path). */
static void report_plots(FILE *f, const args *a, const char *name)
{
    DIR *d = a->plots_dir ? opendir(a->plots_dir) : NULL;
    if (!d)
        return;
    char (*found)[UF_NAME_LEN * 2] = NULL;
    int n = 0, cap = 0;
    size_t len = strlen(name);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t el = strlen(e->d_name);
        if (strncmp(e->d_name, name, len) != 0 || e->d_name[len] != '_' || el <= 4 ||
            strcmp(e->d_name + el - 4, ".png") != 0 || el >= sizeof found[0])
            continue;
        char (*grown)[UF_NAME_LEN * 2] = uf_grow(found, &cap, n + 1, sizeof *found, 16);
        if (grown == NULL)
            break;      /* out of memory: the images found so far */
        found = grown;
        memcpy(found[n++], e->d_name, el + 1);
    }
    closedir(d);
    if (n > 0)
        qsort(found, (size_t)n, sizeof found[0], compare_names);
    for (int i = 0; i < n; i++)
        fprintf(f, "![%s](%s/%s)\n", found[i], a->plots_link ? a->plots_link : a->plots_dir,
                found[i]);
    if (n)
        fprintf(f, "\n");
    free(found);
}

/* Where the report's images are when --plots is not given: the folder plots/render.sh draws
 * results folder DIR into, DIR/../../plots/NAME (NAME: the last part of DIR's real path;
 * results/GPU is drawn into plots/GPU), linked from DIR as ../../plots/NAME. dir and link
 * filled (dir "" when DIR has no name); 1 when that folder exists, else 0. */
static int default_plots(const char *results_dir, char *dir, size_t dir_len, char *link,
                         size_t link_len)
{
    char real[PATH_MAX];
    struct stat st;
    dir[0] = link[0] = '\0';
    if (realpath(results_dir, real) == NULL)
        return 0;
    const char *name = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    if (name[0] == '\0' || (size_t)snprintf(link, link_len, "../../plots/%s", name) >= link_len ||
        (size_t)snprintf(dir, dir_len, "%s%s%s", results_dir,
                         results_dir[strlen(results_dir) - 1] == '/' ? "" : "/", link) >= dir_len) {
        dir[0] = link[0] = '\0';
        return 0;
    }
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first line of path that links an image ("![...](...)"); 0 when none does or the file
 * is not there. */
static int first_image_line(const char *path)
{
    char *text = NULL, err[UF_REASON_LEN];
    size_t len = 0;
    int line = 0;
    if (uf_read_file(path, &text, &len, err, sizeof err) != 0)
        return 0;
    int at = 1;
    for (const char *p = text; *p && line == 0; at++) {
        if (strncmp(p, "![", 2) == 0 && strstr(p, "](") != NULL &&
            strstr(p, "](") < strchr(p, '\n'))
            line = at;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(text);
    return line;
}

static const char *meta_or(const uf_table *t, const char *key)
{
    const char *v = uf_meta_get(&t->meta, key);
    return v ? v : "?";
}

/* The board power of each variant at the point, where the results say it was read as NVML's
 * instant field: the older average (a trailing second) lags a timing pass of about that
 * length, so it is left out of the report. */
static void report_power(FILE *f, const uf_table *t, const char *const *names, int n,
                         const double *point)
{
    const char *source = uf_meta_get(&t->meta, "power_source");
    if (!source || !strstr(source, "instant"))
        return;
    int shown = 0;
    for (int v = 0; v < n; v++) {
        const uf_row *r = tq_row_at(t, names[v], point);
        if (!r || isnan(r->power_w))
            continue;
        fprintf(f, "%s%s %.0f %s", shown ? ", " : "\nBoard power, mean over each timing pass: ",
                r->variant, r->power_w, uf_metric_find("power_w")->unit);
        shown++;
    }
    if (shown)
        fprintf(f, " (%s; power limit %s W).\n", source, meta_or(t, "power_limit_w"));
}

/* The ceilings the report's shares of this file are against: those the file records
 * (`# ceiling.NAME`, the values its own figures were computed with): 1; for a file from before
 * they were recorded, the folder's ceilings.csv: 0; neither: -1 (all NaN). */
static int share_ceilings(const args *a, const uf_table *t, uf_ceilings *c)
{
    char err[UF_REASON_LEN];
    if (uf_ceilings_from_meta(&t->meta, c) > 0)
        return 1;
    return folder_ceilings(a->pos[0], c, NULL, err, sizeof err) > 0 ? 0 : -1;
}

/* Which step the rates are over and which ceilings the shares are against, in a sentence. */
static void report_derived_note(FILE *f, const uf_table *t, const uf_ceilings *c, int source)
{
    const char *stat = uf_meta_get(&t->meta, "step_stat");
    if (stat)
        fprintf(f, "Useful TFLOP/s and GB/s are over the %s step of each timing pass "
                   "(`step_stat: %s`; step ms is the median). ", stat, stat);
    else
        fprintf(f, "Useful TFLOP/s and GB/s are over the median step (the file names no "
                   "`step_stat`: written before it existed). ");
    if (source < 0) {
        fprintf(f, "No ceilings: the shares are not computed.\n");
        return;
    }
    if (source == 0) {
        fprintf(f, "This file records no ceilings: its shares here are against the folder's "
                   "ceilings.csv (above), not necessarily the ceilings its own run used.\n");
        return;
    }
    fprintf(f, "Shares are against the ceilings recorded with this run: GEMM bf16 ");
    md_plain(f, c->gemm_bf16_tflops, 1);
    fprintf(f, " TFLOP/s, copy ");
    md_plain(f, c->copy_d2d_gbs, 0);
    fprintf(f, " GB/s (ceilings measured with git %s, %s).\n", meta_or(t, "ceilings.git"),
            meta_or(t, "ceilings.utc"));
}

/* The columns of a scenario's table in REPORT.md and their decimals; headings are the metric
 * table's. The shares of the GEMM and copy ceilings are recomputed against the ceilings the
 * report names (share_ceilings), not read from the file. */
static const struct report_column {
    const char *metric;
    int decimals;
} report_columns[] = {
    {"step_ms", 4},       {"spread_pct", 1},    {"busy_pct", 1},      {"nvml_util_pct", 1},
    {"sm_active_pct", 1}, {"tensor_active_pct", 1}, {"dram_pct", 1},  {"tflops_useful", 1},
    {"pct_of_gemm", 1},   {"gbs", 0},           {"pct_of_copy", 1},   {"sm_clock_mhz", 0},
    {"verified", -1},     /* yes or **no** */
};
enum { N_REPORT_COLUMNS = sizeof report_columns / sizeof report_columns[0] };

/* The header and separator lines of a scenario's table. */
static void report_table_head(FILE *f)
{
    fputs("| variant | role |", f);
    for (int c = 0; c < N_REPORT_COLUMNS; c++) {
        char heading[2 * UF_NAME_LEN];
        uf_metric_heading(uf_metric_find(report_columns[c].metric), heading, sizeof heading);
        fprintf(f, " %s |", heading);
    }
    fputs("\n|---|---|", f);
    for (int c = 0; c < N_REPORT_COLUMNS; c++)
        fputs("---|", f);
    fputs("\n", f);
}

/* One variant's line of the table. */
static void report_table_row(FILE *f, const uf_table *t, const uf_row *r, const uf_ceilings *ceil)
{
    fprintf(f, "| %s | %s |", r->variant, r->role);
    for (int c = 0; c < N_REPORT_COLUMNS; c++) {
        const char *m = report_columns[c].metric;
        double v = strcmp(m, "pct_of_gemm") == 0
                       ? 100.0 * r->tflops_useful / ceil->gemm_bf16_tflops
                   : strcmp(m, "pct_of_copy") == 0 ? 100.0 * r->gbs / ceil->copy_d2d_gbs
                                                   : uf_table_value(t, r, m);
        if (report_columns[c].decimals >= 0)
            md_num(f, v, report_columns[c].decimals);
        else
            fprintf(f, " %s |", v == 1 ? "yes" : "**no**");
    }
    fputs("\n", f);
}

static void report_scenario(FILE *f, const args *a, const char *name, const uf_table *t)
{
    const char *title = uf_meta_get(&t->meta, "title");
    const char *failure = uf_meta_get(&t->meta, "failure");
    const char *fix = uf_meta_get(&t->meta, "fix");
    double point[UF_MAX_AXES];
    const char *names[UF_MAX_VARIANTS];
    resolve_point(t, NULL, point);
    fprintf(f, "## %s — %s\n\n", name, title ? title : "");
    fprintf(f, "*Measured with git %s, %s, %s.*\n\n", meta_or(t, "git"), meta_or(t, "utc"),
            meta_or(t, "mode"));
    if (failure)
        fprintf(f, "**The failure.** %s\n\n", failure);
    if (fix)
        fprintf(f, "**The fix.** %s\n\n", fix);
    fprintf(f, "At the default point (");
    for (int ax = 0; ax < t->n_axes; ax++)
        fprintf(f, "%s%s=%g", ax ? ", " : "", t->axis_names[ax], point[ax]);
    fprintf(f, "; all points in [%s.csv](%s.csv)):\n\n", name, name);
    uf_ceilings ceil;
    int ceil_source = share_ceilings(a, t, &ceil);
    report_table_head(f);
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        const uf_row *r = tq_row_at(t, names[v], point);
        if (r)
            report_table_row(f, t, r, &ceil);
    }
    report_power(f, t, names, n, point);
    fprintf(f, "\n");
    report_derived_note(f, t, &ceil, ceil_source);
    fprintf(f, "\n**Expectation** (checked by the harness when this was measured):\n\n");
    int claims = 0;
    for (int i = 0; i < t->meta.n; i++)
        if (strncmp(t->meta.key[i], "claim.", 6) == 0) {
            fprintf(f, "- %s\n", t->meta.value[i]);
            claims++;
        }
    if (!claims)
        fprintf(f, "- not evaluated in this run\n");
    fprintf(f, "\n");
    report_plots(f, a, name);
}

/* The header of a report: the first file's run (its GPU, note, git, driver, runtime, time),
 * and whether every file comes from that run. */
typedef struct report_head {
    char gpu[UF_META_VALUE_LEN], note[UF_META_VALUE_LEN], git[UF_META_VALUE_LEN];
    char driver[UF_META_VALUE_LEN], runtime[UF_META_VALUE_LEN], utc[UF_META_VALUE_LEN];
    char first[UF_NAME_LEN];
    int have, one_run;
} report_head;

static void head_note(report_head *h, const char *name, const uf_table *t)
{
    if (!h->have) {
        const char *gpu = uf_meta_get(&t->meta, "gpu"), *note = uf_meta_get(&t->meta, "note");
        snprintf(h->gpu, sizeof h->gpu, "%s", gpu ? gpu : "");
        snprintf(h->note, sizeof h->note, "%s", note ? note : "");
        snprintf(h->git, sizeof h->git, "%s", meta_or(t, "git"));
        snprintf(h->driver, sizeof h->driver, "%s", meta_or(t, "driver"));
        snprintf(h->runtime, sizeof h->runtime, "%s", meta_or(t, "cuda_runtime"));
        snprintf(h->utc, sizeof h->utc, "%s", meta_or(t, "utc"));
        snprintf(h->first, sizeof h->first, "%.*s", (int)sizeof h->first - 1, name);
        h->have = h->one_run = 1;
    } else if (strcmp(h->git, meta_or(t, "git")) != 0) {
        h->one_run = 0;
    }
}

static void write_head(FILE *f, const report_head *h, const char *dir)
{
    fprintf(f, "# underfed report — %s\n\n", h->gpu[0] ? h->gpu : dir);
    if (h->note[0])
        fprintf(f, "> **Note:** %s\n\n", h->note);
    if (h->one_run)
        fprintf(f, "Measured with git %s, driver %s, CUDA runtime %s, %s. ", h->git, h->driver,
                h->runtime, h->utc);
    else
        fprintf(f, "Measured in several runs: each scenario's section names its own. "
                   "Driver %s, CUDA runtime %s (of %s). ",
                h->driver, h->runtime, h->first);
    fprintf(f, "Generated by `underfed report` from the CSV files beside this page.\n\n");
}

/* DIR/REPORT.md from every result file of DIR and its ceilings.csv, linking the images of
 * --plots DIR (default: DIR/../../plots/NAME, where plots/render.sh draws them, when it
 * exists). A folder without result files, or with a malformed one (ceilings.csv included), is
 * an error: nothing is written; so is, without --plots, a report that would link no image
 * where the REPORT.md it replaces links some (it says which line). */
static int report(const args *given)
{
    char (*names)[UF_NAME_LEN] = NULL, path[UF_PATH_LEN], err[UF_REASON_LEN];
    char plots_dir[UF_PATH_LEN], plots_link[UF_PATH_LEN];
    struct stat st;
    args with_plots = *given;
    const args *a = &with_plots;
    if (given->plots_dir && (stat(given->plots_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "underfed report: --plots %s: no such folder\n", given->plots_dir);
        return EXIT_BAD;
    }
    int found_default = !given->plots_dir && default_plots(given->pos[0], plots_dir,
                                                           sizeof plots_dir, plots_link,
                                                           sizeof plots_link);
    if (found_default) {
        with_plots.plots_dir = plots_dir;
        with_plots.plots_link = given->plots_link ? given->plots_link : plots_link;
    }
    int n = list_results(a->pos[0], &names);
    if (n <= 0) {
        if (n == 0)
            fprintf(stderr, "underfed report: no result files (SCENARIO.csv) in %s\n",
                    a->pos[0]);
        return EXIT_BAD;
    }
    /* Each file is read once: the sections go to `body`; the header, which says whether they
     * come from one run, is written in front of them at the end. */
    report_head head = {0};
    uf_gpm_tally *gpm = calloc((size_t)n, sizeof *gpm);
    size_t body_len = 0, used = 0;
    char *body = NULL, *text = NULL;
    FILE *f = gpm ? open_memstream(&body, &body_len) : NULL;
    int rc = f ? 0 : EXIT_BAD;
    for (int i = 0; i < n && rc == 0; i++) {
        /* a folder names each file after its scenario: `# scenario:` must say the same */
        uf_table t;
        char err[UF_REASON_LEN] = "";
        uf_table_init(&t, "");
        if (uf_table_read_scenario(&t, a->pos[0], names[i], err, sizeof err) != 0) {
            fprintf(stderr, "underfed: %s\n", err);
            uf_table_free(&t);
            rc = EXIT_BAD;
            break;
        }
        head_note(&head, names[i], &t);
        report_scenario(f, a, names[i], &t);
        if (uf_gpm_tally_of(&t, &gpm[i]) != 0)
            rc = EXIT_BAD;
        uf_table_free(&t);
    }
    if (f)
        fclose(f);
    if (rc == 0 && (f = open_memstream(&text, &used)) == NULL)
        rc = EXIT_BAD;
    if (rc == 0) {
        write_head(f, &head, a->pos[0]);
        if (report_ceilings(f, a->pos[0]) != 0)
            rc = EXIT_BAD;
        fwrite(body, 1, body_len, f);
        if (uf_report_crosscheck(f, a->pos[0]) != 0)
            rc = EXIT_BAD;
        uf_report_gpm(f, (const char (*)[UF_NAME_LEN])names, gpm, n);
        fclose(f);
    }
    int linked_line = 0;
    if (rc == 0 && join_path(path, sizeof path, a->pos[0], "REPORT", ".md") != 0)
        rc = EXIT_BAD;
    /* Without --plots, a report that would link no image does not replace one that links
     * some (a committed REPORT.md run from another folder than the one render.sh used). */
    if (rc == 0 && !given->plots_dir && !strstr(text, "\n![") &&
        (linked_line = first_image_line(path)) > 0) {
        fprintf(stderr, "underfed report: %s:%d links an image, and this report would link none "
                "(%s %s, where plots/render.sh draws them): not rewritten; give --plots, the "
                "folder of its images, or remove REPORT.md to write it without images\n", path,
                linked_line, found_default ? "no image of these scenarios in" : "no folder",
                plots_dir[0] ? plots_dir : "DIR/../../plots/NAME");
        rc = EXIT_BAD;
    }
    if (rc == 0) {
        if (uf_write_file_atomic(path, text, used, err, sizeof err) != 0) {
            fprintf(stderr, "underfed: %s\n", err);
            rc = EXIT_BAD;
        } else {
            fprintf(stderr, "underfed: wrote %s\n", path);
        }
    }
    free(names);
    free(gpm);
    free(body);
    free(text);
    return rc;
}

int uf_cmd_report(int argc, char **argv)
{
    return uf_run_parsed(&uf_report_command, argc, argv, report);
}

const uf_command uf_report_command = {
    "report", "DIR", 1, 1, "--plots --plots-link",
    "writes DIR/REPORT.md from the folder's results and images", uf_cmd_report, 0};

/* underfed: reads result folders (strictly: a malformed, truncated or foreign file is an error
 * naming the file and line) and turns them into plot data, a report, a comparison of two runs
 * or of several GPUs. No CUDA: it runs where the results are, GPU or not.
 *
 *   underfed COMMAND ARGS [options]; `underfed --help` lists the commands (the table at the
 *   end of this file), `underfed COMMAND --help` gives one command's arguments and options.
 *
 * W names axis values ("elems=4K,ops=1000", "max"/"min" allowed); unnamed axes take the
 * run's default (metadata default.AXIS). An option value that matches nothing (a column, a
 * variant, a point the file does not have) is an error, never a NaN or empty output. Exit: 0
 * ok, 1 compare found a regression (or rows of DIR_A missing from DIR_B, listed MISSING, unless
 * --allow-missing), 2 usage or unreadable input. */
#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "crosscheck.h"
#include "doctor_cmd.h"
#include "options.h"
#include "plotdata.h"
#include "readme.h"
#include "fileutil.h"
#include "results.h"
#include "tablequery.h"

enum { EXIT_REGRESSED = 1, EXIT_BAD = 2, MAX_DIRS = 16 };

typedef struct args {
    const char *cmd;            /* the command's name, for messages */
    const char *where;
    const char *x;
    const char *metrics;
    const char *metric;
    const char *share;
    const char *plots_dir;
    const char *plots_link;
    const char *variant;
    double threshold_pct;
    int allow_missing;          /* compare: rows missing from the second run do not fail */
    const char *pos[MAX_DIRS + 2];
    int n_pos;
} args;

static int load(uf_table *t, const char *path)
{
    char err[UF_REASON_LEN];
    uf_table_init(t, "");
    if (uf_table_read_csv(t, path, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        uf_table_free(t);
        return -1;
    }
    return 0;
}

/* DIR/NAME SUFFIX into out; -1 (with a message) when it does not fit. */
static int join_path(char *out, size_t len, const char *dir, const char *name, const char *suffix)
{
    int n = snprintf(out, len, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "underfed: path too long: %s/%s%s\n", dir, name, suffix);
        return -1;
    }
    return 0;
}

/* The point W names (NULL: the run's defaults; see tq_point); -1 (with the reason on stderr)
 * when W is malformed or names an unknown axis. */
static int resolve_point(const uf_table *t, const char *where, double *point)
{
    char err[UF_REASON_LEN];
    if (tq_point(t, where, point, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "underfed: --where: %s\n", err);
    return -1;
}

static int bad_where(const char *where)
{
    fprintf(stderr, "underfed: bad --where \"%s\" (AXIS=VALUE,...)\n", where);
    return EXIT_BAD;
}

/* The point --where names (defaults elsewhere) into point; with --where given, it must hold
 * a row of the file (free_axis aside): else an error naming the point and each axis's values. */
static int where_point(const args *a, const uf_table *t, const char *path, int free_axis,
                       double *point)
{
    if (resolve_point(t, a->where, point) != 0)
        return bad_where(a->where);
    if (!a->where || tq_point_has_rows(t, point, free_axis))
        return 0;
    fprintf(stderr, "underfed %s: %s has no row at --where \"%s\" (", a->cmd, path, a->where);
    for (int ax = 0; ax < t->n_axes; ax++) {
        double seen[UF_MAX_SWEEP];
        int n = tq_distinct_values(t, ax, seen, UF_MAX_SWEEP);
        fprintf(stderr, "%s%s:", ax ? "; " : "", t->axis_names[ax]);
        for (int k = 0; k < n; k++)
            fprintf(stderr, "%s%.10g", k ? ", " : " ", seen[k]);
    }
    fprintf(stderr, ")\n");
    return EXIT_BAD;
}

enum { MAX_COLUMNS = 32 };

/* Column names from a comma list of an option, checked against a file's table. */
typedef struct column_list {
    int n;
    char name[MAX_COLUMNS][UF_NAME_LEN];
} column_list;

static int column_error(const args *a, const char *flag, const char *path, const uf_table *t,
                        const char *name)
{
    fprintf(stderr, "underfed %s: %s \"%s\": %s has no such column (its columns:", a->cmd, flag,
            name, path);
    for (int i = 0; i < uf_n_metrics; i++)
        fprintf(stderr, "%s %s", i ? "," : "", uf_metrics[i].name);
    for (int e = 0; e < t->n_extra; e++)
        fprintf(stderr, ", %s", t->extra_names[e]);
    for (int ax = 0; ax < t->n_axes; ax++)
        fprintf(stderr, ", %s", t->axis_names[ax]);
    fprintf(stderr, "; a name ending in ? may be absent: NaN then)\n");
    return EXIT_BAD;
}

/* LIST ("m1,m2,...") into out: each name a column of t, or ending in '?' (it may be absent,
 * and reads NaN then; the '?' is dropped). 0, or 2 with a message naming the value. */
static int parse_columns(const args *a, const char *flag, const char *list, const uf_table *t,
                         const char *path, column_list *out)
{
    out->n = 0;
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        int optional = len > 0 && p[len - 1] == '?';
        size_t name_len = len - (size_t)optional;
        if (name_len == 0 || name_len >= UF_NAME_LEN || out->n >= MAX_COLUMNS) {
            fprintf(stderr, "underfed %s: %s \"%s\": %s\n", a->cmd, flag, list,
                    name_len == 0 ? "an empty name" : name_len >= UF_NAME_LEN
                                                          ? "a name too long"
                                                          : "too many names");
            return EXIT_BAD;
        }
        memcpy(out->name[out->n], p, name_len);
        out->name[out->n][name_len] = '\0';
        if (!optional && !uf_table_has_column(t, out->name[out->n]))
            return column_error(a, flag, path, t, out->name[out->n]);
        out->n++;
        p += len;
        if (*p == '\0')
            return 0;
    }
}

/* The names of a column list as the array the plot data writers take. */
static void column_names(const column_list *cols, const char **names)
{
    for (int c = 0; c < cols->n; c++)
        names[c] = cols->name[c];
}

/* Prints b (text the plot data writers made, as these commands print it) and frees it: 0,
 * or 2 when it could not all be made. */
static int print_buffer(const args *a, uf_strbuf *b)
{
    int rc = 0;
    if (b->failed) {
        fprintf(stderr, "underfed %s: out of memory\n", a->cmd);
        rc = EXIT_BAD;
    } else if (b->data) {
        fputs(b->data, stdout);
    }
    free(b->data);
    return rc;
}

/* --variant: a variant of the file, else an error listing them. */
static int check_variant(const args *a, const uf_table *t, const char *path)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++)
        if (strcmp(names[v], a->variant) == 0)
            return 0;
    fprintf(stderr, "underfed %s: --variant \"%s\": %s has no such variant (variants:", a->cmd,
            a->variant, path);
    for (int v = 0; v < n; v++)
        fprintf(stderr, "%s %s", v ? "," : "", names[v]);
    fprintf(stderr, ")\n");
    return EXIT_BAD;
}

/* One line per variant at the point W names: "variant" then each metric of the comma list,
 * after two `#` lines: the column names, and their headings (quoted words, for a plot's key). */
static int print_values(const args *a, const char *metric_list)
{
    uf_table t;
    double point[UF_MAX_AXES];
    column_list cols;
    const char *names[MAX_COLUMNS];
    int count[MAX_COLUMNS];
    uf_strbuf body = {0};
    const char *path = a->pos[0];
    if (load(&t, path) != 0)
        return EXIT_BAD;
    int rc = parse_columns(a, "--metrics", metric_list, &t, path, &cols);
    if (rc == 0)
        rc = where_point(a, &t, path, -1, point);
    if (rc != 0) {
        uf_table_free(&t);
        return rc;
    }
    printf("# variant");
    for (int c = 0; c < cols.n; c++)
        printf(" %s", cols.name[c]);
    printf("\n# heading");     /* the metric table's label and unit; a name where it has none */
    for (int c = 0; c < cols.n; c++) {
        char heading[2 * UF_NAME_LEN];
        const uf_metric_desc *m = uf_metric_find(cols.name[c]);
        if (m)
            uf_metric_heading(m, heading, sizeof heading);
        printf(" \"%s\"", m ? heading : cols.name[c]);
    }
    printf("\n");
    column_names(&cols, names);
    pd_value_rows(&body, &t, point, names, cols.n, count);
    rc = print_buffer(a, &body);
    uf_table_free(&t);
    return rc;
}

static int cmd_ladder(const args *a)
{
    return print_values(a, "nvml_util_pct,busy_pct,sm_active_pct,tensor_active_pct,dram_pct,"
                           "step_ms");
}

static int cmd_values(const args *a)
{
    return print_values(a, a->metrics);
}

/* "unknown ceiling": the table's names, and where the file was read, that it has no such row. */
static int unknown_ceiling(const char *name, const char *path)
{
    fprintf(stderr, "underfed ceiling: unknown ceiling \"%s\" (", name);
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", uf_ceiling_descs[i].name);
    fprintf(stderr, "%s%s)\n", path ? ", or a row of " : "", path ? path : "");
    return EXIT_BAD;
}

/* The value of one ceiling of DIR/ceilings.csv: a name of the ceilings table, or any other row
 * the file has (copy_dram_pct, nccl_busbw_gbs@1048576, ...). NaN (and a note) when the file is
 * absent; NaN when the row is empty; an error when the file is malformed or the name unknown. */
static int cmd_ceiling(const args *a)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    uf_ceiling_row *rows = NULL;
    const uf_ceiling_row *row = NULL;
    int known = 0, n = 0;
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        known |= strcmp(uf_ceiling_descs[i].name, a->pos[0]) == 0;
    if (join_path(path, sizeof path, a->pos[1], "ceilings", ".csv") != 0)
        return EXIT_BAD;
    FILE *probe = fopen(path, "r");
    if (!probe) {
        if (!known)
            return unknown_ceiling(a->pos[0], NULL);
        fprintf(stderr, "underfed ceiling: no %s: %s not measured\n", path, a->pos[0]);
        printf("NaN\n");
        return 0;
    }
    fclose(probe);
    if (uf_ceilings_read_rows(path, &rows, &n, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        return EXIT_BAD;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, a->pos[0]) == 0)
            row = &rows[i];
    if (row == NULL && !known) {
        free(rows);
        return unknown_ceiling(a->pos[0], path);
    }
    if (row == NULL || isnan(row->value))
        printf("NaN\n");
    else
        printf("%.10g\n", row->value);
    free(rows);
    return 0;
}

/* A sweep along --x, a block per variant (pd_points: the plot data's sweeps are these). */
static int cmd_points(const args *a)
{
    uf_table t;
    double point[UF_MAX_AXES];
    column_list cols;
    const char *names[MAX_COLUMNS];
    int count[MAX_COLUMNS];
    uf_strbuf body = {0};
    const char *path = a->pos[0];
    if (load(&t, path) != 0)
        return EXIT_BAD;
    int rc = 0;
    int ax = tq_axis_index(&t, a->x);
    if (ax < 0) {
        fprintf(stderr, "underfed points: --x \"%s\": %s has no such axis (axes:", a->x, path);
        for (int k = 0; k < t.n_axes; k++)
            fprintf(stderr, "%s %s", k ? "," : "", t.axis_names[k]);
        fprintf(stderr, "%s)\n", t.n_axes ? "" : " none");
        rc = EXIT_BAD;
        goto out;
    }
    rc = parse_columns(a, "--metrics", a->metrics ? a->metrics : "step_ms,busy_pct", &t, path,
                       &cols);
    if (rc == 0 && a->variant)
        rc = check_variant(a, &t, path);
    if (rc == 0)
        rc = where_point(a, &t, path, ax, point);
    if (rc != 0)
        goto out;
    column_names(&cols, names);
    pd_points(&body, &t, ax, point, a->variant, names, cols.n, count);
    rc = print_buffer(a, &body);
out:
    uf_table_free(&t);
    return rc;
}

/* The PM-sampled counters of FILE.series.csv at --where (pd_series: the plot data's are these). */
static int cmd_series(const args *a)
{
    uf_table t;
    double point[UF_MAX_AXES];
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    uf_strbuf body = {0};
    if (load(&t, a->pos[0]) != 0)
        return EXIT_BAD;
    int rc = 0;
    size_t len = strlen(a->pos[0]);
    if (len < 4 || strcmp(a->pos[0] + len - 4, ".csv") != 0) {
        fprintf(stderr, "underfed series: %s is not a .csv file\n", a->pos[0]);
        rc = EXIT_BAD;
        goto out;
    }
    if ((size_t)snprintf(path, sizeof path, "%.*s.series.csv", (int)(len - 4), a->pos[0]) >=
        sizeof path) {
        fprintf(stderr, "underfed series: path too long: %s\n", a->pos[0]);
        rc = EXIT_BAD;
        goto out;
    }
    if (uf_table_read_series_csv(&t, path, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        rc = EXIT_BAD;
        goto out;
    }
    rc = where_point(a, &t, a->pos[0], -1, point);
    if (rc != 0)
        goto out;
    pd_series(&body, &t, point);
    rc = print_buffer(a, &body);
out:
    uf_table_free(&t);
    return rc;
}

/* Each axis: its name, how many values the run had, and 1 when a log scale suits them. */
static int cmd_axes(const args *a)
{
    uf_table t;
    if (load(&t, a->pos[0]) != 0)
        return EXIT_BAD;
    for (int ax = 0; ax < t.n_axes; ax++) {
        double seen[UF_MAX_SWEEP];
        int n = tq_distinct_values(&t, ax, seen, UF_MAX_SWEEP);
        double lo = n ? seen[0] : NAN, hi = lo;
        for (int k = 1; k < n; k++) {
            lo = fmin(lo, seen[k]);
            hi = fmax(hi, seen[k]);
        }
        printf("%s %d %d\n", t.axis_names[ax], n, n > 1 && lo > 0 && hi / lo >= 16);
    }
    uf_table_free(&t);
    return 0;
}

static int cmd_variants(const args *a)
{
    uf_table t;
    const char *names[UF_MAX_VARIANTS];
    if (load(&t, a->pos[0]) != 0)
        return EXIT_BAD;
    int n = tq_variants(&t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++)
        printf("%s\n", names[v]);
    uf_table_free(&t);
    return 0;
}

/* One scenario's metric and share of a ceiling in each folder, at its defaults (pd_across). */
static int cmd_across(const args *a)
{
    uf_table t[MAX_DIRS];
    double point[MAX_DIRS][UF_MAX_AXES];
    const double *at[MAX_DIRS];
    uf_strbuf body = {0};
    int n_dirs = a->n_pos - 1, rc = 0, loaded = 0, measured[2];
    const char *share = a->share && strcmp(a->share, "auto") != 0 ? a->share : NULL;
    column_list metric, share_col;
    if (n_dirs < 1 || n_dirs > MAX_DIRS) {
        fprintf(stderr, "underfed across: give 1 to %d result folders\n", MAX_DIRS);
        return EXIT_BAD;
    }
    /* Every folder's file must have the columns named. */
    for (; loaded < n_dirs; loaded++) {
        char path[UF_PATH_LEN];
        if (join_path(path, sizeof path, a->pos[loaded + 1], a->pos[0], ".csv") != 0 ||
            load(&t[loaded], path) != 0) {
            rc = EXIT_BAD;
            goto out;
        }
        rc = parse_columns(a, "--metric", a->metric ? a->metric : "step_ms", &t[loaded], path,
                           &metric);
        if (rc == 0 && share)
            rc = parse_columns(a, "--share", share, &t[loaded], path, &share_col);
        if (rc == 0 && (metric.n != 1 || (share && share_col.n != 1))) {
            fprintf(stderr, "underfed across: --metric and --share take one column each\n");
            rc = EXIT_BAD;
        }
        if (rc != 0) {
            loaded++;
            goto out;
        }
    }
    const char *m[2] = {metric.name[0], share ? share_col.name[0] : tq_auto_share(&t[0])};
    for (int d = 0; d < n_dirs; d++)
        at[d] = resolve_point(&t[d], NULL, point[d]) == 0 ? point[d] : NULL;
    pd_across(&body, t, at, a->pos + 1, n_dirs, m, measured);
    rc = print_buffer(a, &body);
out:
    for (int d = 0; d < loaded; d++)
        uf_table_free(&t[d]);
    return rc;
}

static int compare_names(const void *x, const void *y)
{
    return strcmp((const char *)x, (const char *)y);
}

/* The scenario result files of a folder (not ceilings, not series), sorted, in *names (an
 * array that grows with the folder: no file is left out; free it). Returns how many, or -1
 * with a message (the folder unreadable, a name too long for a scenario). */
static int list_results(const char *dir, char (**names)[UF_NAME_LEN])
{
    DIR *d = opendir(dir);
    int n = 0, cap = 0, rc = 0;
    *names = NULL;
    if (!d) {
        fprintf(stderr, "underfed: cannot read folder %s\n", dir);
        return -1;
    }
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0 ||
            strstr(e->d_name, ".series.csv") || strcmp(e->d_name, "ceilings.csv") == 0)
            continue;
        if (len - 4 >= UF_NAME_LEN) {
            fprintf(stderr, "underfed: %s/%s: a scenario name has at most %d characters\n", dir,
                    e->d_name, UF_NAME_LEN - 1);
            rc = -1;
        } else if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char (*bigger)[UF_NAME_LEN] = realloc(*names, (size_t)cap * sizeof *bigger);
            if (!bigger) {
                fprintf(stderr, "underfed: %s: out of memory\n", dir);
                rc = -1;
            } else {
                *names = bigger;
            }
        }
        if (rc == 0)
            snprintf((*names)[n++], UF_NAME_LEN, "%.*s", (int)(len - 4), e->d_name);
    }
    closedir(d);
    if (rc != 0) {
        free(*names);
        *names = NULL;
        return -1;
    }
    if (n > 0)
        qsort(*names, (size_t)n, UF_NAME_LEN, compare_names);
    return n;
}

/* Both folders listed and holding results; -1 (a message said why) otherwise. */
static int list_both(const args *a, char (**names)[UF_NAME_LEN], int *n,
                     char (**other)[UF_NAME_LEN], int *n_other)
{
    *n = list_results(a->pos[0], names);
    *n_other = *n < 0 ? -1 : list_results(a->pos[1], other);
    if (*n < 0 || *n_other < 0)
        return -1;
    for (int k = 0; k < 2; k++)
        if ((k ? *n_other : *n) == 0) {
            fprintf(stderr, "underfed compare: no result files in %s\n", a->pos[k]);
            return -1;
        }
    return 0;
}

static int listed(char (*names)[UF_NAME_LEN], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static void print_value(double v)
{
    if (isnan(v))
        printf(" %12s", "-");
    else
        printf(" %12.6g", v);
}

/* A diff's verdict, with why the noise model judged it so where the row is host-bound:
 * "NOISY (host-bound: idle_host 83 %, strict SLOWER, tolerance 59 %)". */
static void print_verdict(const uf_diff *d)
{
    printf(" %s", uf_verdict_name(d->verdict));
    if (isnan(d->idle_host_pct) || (d->verdict != UF_SLOWER && d->verdict != UF_FASTER &&
                                    d->verdict == d->strict))
        printf("\n");
    else if (d->verdict != d->strict)
        printf(" (host-bound: idle_host %.0f %%, strict %s, tolerance %.0f %%)\n",
               d->idle_host_pct, uf_verdict_name(d->strict), d->tolerance_pct);
    else
        printf(" (host-bound: idle_host %.0f %%, beyond its tolerance %.0f %%)\n",
               d->idle_host_pct, d->tolerance_pct);
}

/* DIR/ceilings.csv into *c, and its `# key: value` lines into *meta (NULL: not kept): 1 when
 * read; 0 when the folder has none (c all NaN, why in err); -1 (a message said why) when it
 * is there but malformed. */
static int folder_ceilings(const char *dir, uf_ceilings *c, uf_meta *meta, char *err,
                           size_t errlen)
{
    char path[UF_PATH_LEN];
    uf_ceilings_clear(c);
    if (join_path(path, sizeof path, dir, "ceilings", ".csv") != 0)
        return -1;
    if (uf_ceilings_read_meta(path, c, meta, err, errlen) == 0)
        return 1;
    FILE *probe = fopen(path, "r");
    if (!probe)
        return 0;
    fclose(probe);
    fprintf(stderr, "underfed: %s\n", err);
    return -1;
}

/* The launch floor of DIR/ceilings.csv into *launch_us: NaN without that file. 0, or -1 (a
 * message said why) when the file is there but malformed. */
static int folder_launch_us(const char *dir, double *launch_us)
{
    char err[UF_REASON_LEN];
    uf_ceilings c;
    int got = folder_ceilings(dir, &c, NULL, err, sizeof err);
    *launch_us = c.launch_us;
    return got < 0 ? -1 : 0;
}

/* What one scenario's comparison counted. */
typedef struct compare_counts {
    int regressed, lost, excused;
} compare_counts;

/* One scenario in both folders: its diffs printed and counted. A file that does not record
 * its host's launch floor takes its folder's ceilings.csv's. 0, or EXIT_BAD when a file is
 * unreadable. */
static int compare_scenario(const args *a, const char *name, compare_counts *counts)
{
    char err[UF_REASON_LEN];
    uf_table ta, tb;
    uf_table_init(&ta, "");
    uf_table_init(&tb, "");
    int rc = EXIT_BAD;
    uf_diff *diffs = NULL;
    if (uf_table_read_scenario(&ta, a->pos[0], name, err, sizeof err) != 0 ||
        uf_table_read_scenario(&tb, a->pos[1], name, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        goto out;
    }
    uf_compare_noise noise = {a->threshold_pct, uf_table_launch_us(&ta), uf_table_launch_us(&tb)};
    if ((isnan(noise.launch_us_a) && folder_launch_us(a->pos[0], &noise.launch_us_a) != 0) ||
        (isnan(noise.launch_us_b) && folder_launch_us(a->pos[1], &noise.launch_us_b) != 0))
        goto out;
    int nd = uf_compare_tables_noise(&ta, &tb, &noise, NULL, 0);
    diffs = malloc((size_t)(nd > 0 ? nd : 1) * sizeof *diffs);
    if (!diffs) {
        fprintf(stderr, "underfed compare: out of memory\n");
        goto out;
    }
    uf_compare_tables_noise(&ta, &tb, &noise, diffs, nd);
    for (int i = 0; i < nd; i++) {
        const uf_diff *d = &diffs[i];
        printf("%-22s %-14s %-28s %-14s", name, d->variant, d->where, d->metric);
        print_value(d->a);
        print_value(d->b);
        if (isnan(d->change_pct))
            printf(" %9s", "");
        else
            printf(" %+8.1f%%", d->change_pct);
        print_verdict(d);
        counts->regressed += d->verdict == UF_SLOWER;
        counts->lost += d->verdict == UF_MISSING;
        counts->excused += d->verdict != d->strict;
    }
    rc = 0;
out:
    free(diffs);
    uf_table_free(&ta);
    uf_table_free(&tb);
    return rc;
}

/* Every scenario of A against B, judged by compare.h's noise model (host-bound rows against a
 * run-to-run tolerance from the hosts' launch floors; every excuse printed). A scenario, row
 * or value of A absent from B is MISSING, one of B absent from A NEW. Exit 1 on a regression,
 * or on anything MISSING unless --allow-missing; 2 when a folder is empty or unreadable or a
 * file malformed. */
static int cmd_compare(const args *a)
{
    char (*names)[UF_NAME_LEN] = NULL, (*other)[UF_NAME_LEN] = NULL;
    int n, n_other, rc = 0;
    compare_counts counts = {0, 0, 0};
    if (list_both(a, &names, &n, &other, &n_other) != 0) {
        rc = EXIT_BAD;
        goto out;
    }
    printf("# %s → %s, threshold %.1f %%; FASTER/SLOWER: the second run is better/worse; "
           "MISSING: only in the first, NEW: only in the second\n",
           a->pos[0], a->pos[1], a->threshold_pct);
    printf("# host-bound rows (idle_host_pct >= %.0f %% on either side) are judged against "
           "threshold + launch-floor drift + %.0f %% + spread; an excused change says so\n",
           UF_HOST_BOUND_IDLE_PCT, UF_HOST_ALLOWANCE_PCT);
    for (int f = 0; f < n && rc == 0; f++) {
        if (!listed(other, n_other, names[f])) {
            printf("%-22s MISSING (only in %s)\n", names[f], a->pos[0]);
            counts.lost++;
            continue;
        }
        rc = compare_scenario(a, names[f], &counts);
    }
    for (int g = 0; g < n_other && rc == 0; g++)
        if (!listed(names, n, other[g]))
            printf("%-22s NEW (only in %s)\n", other[g], a->pos[1]);
    if (rc == 0) {
        printf("%d regression(s) beyond %.1f %% and the measured spread; %d host-bound "
               "change(s) excused as NOISY; %d MISSING from %s%s\n",
               counts.regressed, a->threshold_pct, counts.excused, counts.lost, a->pos[1],
               counts.lost && a->allow_missing ? " (allowed: --allow-missing)" : "");
        if (counts.lost && !a->allow_missing)
            fprintf(stderr, "underfed compare: %d scenario(s), row(s) or value(s) of %s are "
                    "missing from %s (--allow-missing accepts that)\n", counts.lost, a->pos[0],
                    a->pos[1]);
        rc = counts.regressed || (counts.lost && !a->allow_missing) ? EXIT_REGRESSED : 0;
    }
out:
    free(names);
    free(other);
    return rc;
}

/* ---- report ----------------------------------------------------------------------------- */

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

static void report_plots(FILE *f, const args *a, const char *name)
{
    DIR *d = a->plots_dir ? opendir(a->plots_dir) : NULL;
    if (!d)
        return;
    char found[32][UF_NAME_LEN * 2];
    int n = 0;
    size_t len = strlen(name);
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 32;) {
        size_t el = strlen(e->d_name);
        if (strncmp(e->d_name, name, len) == 0 && e->d_name[len] == '_' && el > 4 &&
            strcmp(e->d_name + el - 4, ".png") == 0 && el < sizeof found[0])
            memcpy(found[n++], e->d_name, el + 1);
    }
    closedir(d);
    qsort(found, (size_t)n, sizeof found[0], compare_names);
    for (int i = 0; i < n; i++)
        fprintf(f, "![%s](%s/%s)\n", found[i], a->plots_link ? a->plots_link : a->plots_dir,
                found[i]);
    if (n)
        fprintf(f, "\n");
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

/* DIR/REPORT.md from every result file of DIR and its ceilings.csv. A folder without result
 * files, or with a malformed one (ceilings.csv included), is an error: nothing is written. */
static int cmd_report(const args *a)
{
    char (*names)[UF_NAME_LEN] = NULL, path[UF_PATH_LEN], err[UF_REASON_LEN];
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
    if (rc == 0) {
        if (join_path(path, sizeof path, a->pos[0], "REPORT", ".md") != 0) {
            rc = EXIT_BAD;
        } else if (uf_write_file_atomic(path, text, used, err, sizeof err) != 0) {
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

/* ---- command line ----------------------------------------------------------------------- */

/* The options, and where each value goes. kind: a text, a percentage >= 0, or a flag that
 * takes no value (an int set to 1). */
typedef enum { VALUE_TEXT, VALUE_PERCENT, VALUE_FLAG } value_kind;

static const struct tool_option {
    const char *flag;
    const char *value;          /* the value's name in the help */
    value_kind kind;
    size_t offset;              /* of the field in args */
    const char *help;
} tool_options[] = {
    {"--where", "W", VALUE_TEXT, offsetof(args, where),
     "the point: AXIS=VALUE,... (4K, max, min); other axes at their default"},
    {"--x", "AXIS", VALUE_TEXT, offsetof(args, x), "the axis swept along"},
    {"--metrics", "m1,m2,...", VALUE_TEXT, offsetof(args, metrics),
     "columns to print; a name ending in ? may be absent (NaN then)"},
    {"--metric", "M", VALUE_TEXT, offsetof(args, metric), "the column compared (default step_ms)"},
    {"--share", "S|auto", VALUE_TEXT, offsetof(args, share),
     "share column (auto: pct_of_gemm, pct_of_copy or busy_pct)"},
    {"--variant", "V", VALUE_TEXT, offsetof(args, variant), "this variant only"},
    {"--threshold", "PCT", VALUE_PERCENT, offsetof(args, threshold_pct),
     "a change beyond PCT % and the spread counts (default 5)"},
    {"--allow-missing", "", VALUE_FLAG, offsetof(args, allow_missing),
     "rows of DIR_A absent from DIR_B are listed, not a failure"},
    {"--plots", "DIR", VALUE_TEXT, offsetof(args, plots_dir), "the folder of the images to link"},
    {"--plots-link", "PREFIX", VALUE_TEXT, offsetof(args, plots_link),
     "that folder as REPORT.md links it (default: DIR)"},
};
enum { N_TOOL_OPTIONS = sizeof tool_options / sizeof tool_options[0] };

/* The commands. options: the flags the command takes, space-separated; a '!' after one marks
 * it required. */
typedef struct command {
    const char *name;
    const char *operands;
    int min_pos, max_pos;
    const char *options;
    const char *summary;
    int (*run)(const args *a);
    int (*run_own)(int argc, char **argv);  /* instead: a command that parses its own argv */
} command;

static const command commands[] = {
    {"ladder", "FILE.csv", 1, 1, "--where",
     "the utilization ladder of each variant at one point", cmd_ladder, NULL},
    {"values", "FILE.csv", 1, 1, "--metrics! --where",
     "the named columns of each variant at one point", cmd_values, NULL},
    {"points", "FILE.csv", 1, 1, "--x! --where --metrics --variant",
     "a sweep along one axis, a block per variant", cmd_points, NULL},
    {"series", "FILE.csv", 1, 1, "--where",
     "PM-sampled counters over time (FILE.series.csv)", cmd_series, NULL},
    {"axes", "FILE.csv", 1, 1, "",
     "each axis, its number of values, 1 when a log scale suits it", cmd_axes, NULL},
    {"variants", "FILE.csv", 1, 1, "", "the variants, one per line", cmd_variants, NULL},
    {"ceiling", "NAME DIR", 2, 2, "", "a row of DIR/ceilings.csv (NaN where not measured)",
     cmd_ceiling, NULL},
    {"across", "NAME DIR...", 2, MAX_DIRS + 1, "--metric --share",
     "one scenario across result folders (GPUs), raw and as shares",
     cmd_across, NULL},
    {"compare", "DIR_A DIR_B", 2, 2, "--threshold --allow-missing",
     "two runs: SAME/FASTER/SLOWER/NOISY, host-aware; exit 1: worse", cmd_compare, NULL},
    {"report", "DIR", 1, 1, "--plots --plots-link",
     "writes DIR/REPORT.md from the folder's results", cmd_report, NULL},
    {"plotdata", "[--across] DIR... OUT", 0, 0, "",
     "each plot's data and gnuplot variables, in OUT/data", NULL, uf_cmd_plotdata},
    {"readme", "[--check] DIR FILE.md...", 0, 0, "",
     "rewrites the pages' figures from DIR (--check: only checks)", NULL, uf_cmd_readme},
    {"crosscheck", "plan | judge DIR", 0, 0, "",
     "counters vs ncu, busy vs events, busbw vs ceilings", NULL, uf_cmd_crosscheck},
    {"doctor", "--from DIR | -- CMD...", 0, 0, "",
     "diagnoses a CUDA program: idle causes, share at stake, fix", NULL, uf_cmd_doctor},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static const command *find_command(const char *name)
{
    for (int c = 0; c < N_COMMANDS; c++)
        if (strcmp(commands[c].name, name) == 0)
            return &commands[c];
    return NULL;
}

static int find_option(const char *flag, size_t len)
{
    for (int k = 0; k < N_TOOL_OPTIONS; k++)
        if (strlen(tool_options[k].flag) == len && strncmp(tool_options[k].flag, flag, len) == 0)
            return k;
    return -1;
}

/* Does the command take option k? 0 no, 1 yes, 2 yes and it is required. */
static int takes_option(const command *c, int k)
{
    const char *flag = tool_options[k].flag;
    size_t len = strlen(flag);
    for (const char *p = c->options; (p = strstr(p, flag)) != NULL; p += len)
        if ((p == c->options || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' ' || p[len] == '!'))
            return p[len] == '!' ? 2 : 1;
    return 0;
}

/* "underfed points FILE.csv --x AXIS [--where W] ...": required options first. */
static void print_synopsis(FILE *f, const command *c)
{
    fprintf(f, "underfed %s %s", c->name, c->operands);
    for (int required = 2; required >= 1; required--)
        for (int k = 0; k < N_TOOL_OPTIONS; k++)
            if (takes_option(c, k) == required)
                fprintf(f, required == 2 ? " %s%s%s" : " [%s%s%s]", tool_options[k].flag,
                        tool_options[k].value[0] ? " " : "", tool_options[k].value);
    fprintf(f, "\n");
}

static void print_help(FILE *f)
{
    fprintf(f, "usage: underfed COMMAND ARGS [options]   (underfed COMMAND --help: its arguments "
               "and options)\n\ncommands:\n");
    int width = 0;
    for (int c = 0; c < N_COMMANDS; c++)
        if ((int)strlen(commands[c].operands) > width)
            width = (int)strlen(commands[c].operands);
    for (int c = 0; c < N_COMMANDS; c++)
        fprintf(f, "  %-10s %-*s  %s\n", commands[c].name, width, commands[c].operands,
                commands[c].summary);
    fprintf(f, "\nW names axis values (\"elems=4K,ops=1000\", max and min allowed); unnamed axes "
               "take the run's\ndefault. Result files are read strictly: a malformed file is an "
               "error naming file and line.\nExit: 0 ok, 1 compare found a regression, 2 usage "
               "or unreadable input.\n");
}

static void print_command_help(FILE *f, const command *c)
{
    fprintf(f, "usage: ");
    print_synopsis(f, c);
    fprintf(f, "%s\n", c->summary);
    int any = 0;
    for (int k = 0; k < N_TOOL_OPTIONS; k++) {
        if (!takes_option(c, k))
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", tool_options[k].flag,
                 tool_options[k].value[0] ? " " : "", tool_options[k].value);
        fprintf(f, "%s  %-20s %s\n", any++ ? "" : "\noptions:\n", left, tool_options[k].help);
    }
}

/* A usage error of command c: the message, the command's synopsis, exit 2. */
static int usage_error(const command *c, const char *fmt, const char *what)
{
    fprintf(stderr, "underfed %s: ", c->name);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nusage: ");
    print_synopsis(stderr, c);
    fprintf(stderr, "(underfed %s --help for more)\n", c->name);
    return EXIT_BAD;
}

/* One option (argv[*i], its value after '=' or next) into a. */
static int parse_option(const command *c, int argc, char **argv, int *i, args *a,
                        unsigned *given)
{
    const char *arg = argv[*i];
    size_t len = strcspn(arg, "=");
    int k = find_option(arg, len);
    char flag[64];
    snprintf(flag, sizeof flag, "%.*s", (int)(len < 63 ? len : 63), arg);
    if (k < 0 || !takes_option(c, k))
        return usage_error(c, k < 0 ? "unknown option %s" : "%s does not apply here", flag);
    if (*given & (1u << k))
        return usage_error(c, "%s given twice", flag);
    *given |= 1u << k;
    const char *value = arg[len] == '=' ? arg + len + 1 : NULL;
    if (tool_options[k].kind == VALUE_FLAG) {
        if (value)
            return usage_error(c, "%s takes no value", flag);
        *(int *)((char *)a + tool_options[k].offset) = 1;
        return 0;
    }
    if (!value) {
        if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
            return usage_error(c, "%s needs a value", flag);
        value = argv[++*i];
    }
    if (value[0] == '\0')
        return usage_error(c, "%s: empty value", flag);
    void *slot = (char *)a + tool_options[k].offset;
    if (tool_options[k].kind == VALUE_TEXT) {
        *(const char **)slot = value;
    } else if (uf_parse_number(value, (double *)slot) != 0 || *(double *)slot < 0) {
        return usage_error(c, "%s takes a percentage >= 0", flag);
    }
    return 0;
}

/* argv[2..] of command c into a: its options and operands, each checked. */
static int parse_args(const command *c, int argc, char **argv, args *a)
{
    unsigned given = 0;
    memset(a, 0, sizeof *a);
    a->cmd = c->name;
    a->threshold_pct = 5.0;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] == '-' && arg[1] != '\0') {
            int rc = parse_option(c, argc, argv, &i, a, &given);
            if (rc != 0)
                return rc;
        } else if (a->n_pos < c->max_pos) {
            a->pos[a->n_pos++] = arg;
        } else {
            return usage_error(c, "unexpected argument \"%s\"", arg);
        }
    }
    if (a->n_pos < c->min_pos)
        return usage_error(c, "missing %s", c->operands);
    for (int k = 0; k < N_TOOL_OPTIONS; k++)
        if (takes_option(c, k) == 2 && !(given & (1u << k)))
            return usage_error(c, "%s is required", tool_options[k].flag);
    return 0;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int main(int argc, char **argv)
{
    args a;
    if (argc < 2) {
        print_help(stderr);
        return EXIT_BAD;
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        const command *c = argc > 2 ? find_command(argv[2]) : NULL;
        if (c)
            print_command_help(stdout, c);
        else
            print_help(stdout);
        return 0;
    }
    const command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "underfed: unknown command %s (commands:", argv[1]);
        for (int k = 0; k < N_COMMANDS; k++)
            fprintf(stderr, "%s %s", k ? "," : "", commands[k].name);
        fprintf(stderr, "; underfed --help)\n");
        return EXIT_BAD;
    }
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)   /* not COMMAND's own */
        if (is_help(argv[i])) {
            print_command_help(stdout, c);
            return 0;
        }
    if (c->run_own)
        return c->run_own(argc - 2, argv + 2);
    int rc = parse_args(c, argc, argv, &a);
    return rc != 0 ? rc : c->run(&a);
}

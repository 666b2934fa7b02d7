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
 * --allow-missing) or standard output could not be written (main checks it after every
 * command), 2 usage or unreadable input. `underfed --version` (-V) prints uf_tool_version().
 *
 * This file: the command table, the command line, and the table queries (ladder, values,
 * ceiling, points, series, axes, variants, across). `underfed report` is report_cmd.c,
 * `underfed compare` compare_cmd.c; what they share with this file is cli.h. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare_cmd.h"
#include "crosscheck_cmd.h"
#include "doctor_cmd.h"
#include "options.h"
#include "plotdata.h"
#include "plotdata_cmd.h"
#include "readme_cmd.h"
#include "report_cmd.h"
#include "results.h"
#include "stdout_check.h"
#include "tablequery.h"

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
    {"--plots", "PLOTS", VALUE_TEXT, offsetof(args, plots_dir),
     "the images' folder (default DIR/../../plots/NAME, render.sh's)"},
    {"--plots-link", "PREFIX", VALUE_TEXT, offsetof(args, plots_link),
     "PLOTS as REPORT.md links it (default: as given)"},
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
    void (*help)(FILE *f);      /* a command's own full help (`underfed COMMAND --help`), when
                                 * it has one; NULL: the synopsis and options below */
} command;

static const command commands[] = {
    {"ladder", "FILE.csv", 1, 1, "--where",
     "the utilization ladder of each variant at one point", cmd_ladder, NULL, NULL},
    {"values", "FILE.csv", 1, 1, "--metrics! --where",
     "the named columns of each variant at one point", cmd_values, NULL, NULL},
    {"points", "FILE.csv", 1, 1, "--x! --where --metrics --variant",
     "a sweep along one axis, a block per variant", cmd_points, NULL, NULL},
    {"series", "FILE.csv", 1, 1, "--where",
     "PM-sampled counters over time (FILE.series.csv)", cmd_series, NULL, NULL},
    {"axes", "FILE.csv", 1, 1, "",
     "each axis, its number of values, 1 when a log scale suits it", cmd_axes, NULL, NULL},
    {"variants", "FILE.csv", 1, 1, "", "the variants, one per line", cmd_variants, NULL, NULL},
    {"ceiling", "NAME DIR", 2, 2, "", "a row of DIR/ceilings.csv (NaN where not measured)",
     cmd_ceiling, NULL, NULL},
    {"across", "NAME DIR...", 2, MAX_DIRS + 1, "--metric --share",
     "one scenario across result folders (GPUs), raw and as shares",
     cmd_across, NULL, NULL},
    {"compare", "DIR_A DIR_B", 2, 2, "--threshold --allow-missing",
     "two runs: SAME/FASTER/SLOWER/NOISY, host-aware; exit 1: worse", uf_cmd_compare, NULL, NULL},
    {"report", "DIR", 1, 1, "--plots --plots-link",
     "writes DIR/REPORT.md from the folder's results and images", uf_cmd_report, NULL, NULL},
    {"plotdata", "[--across] DIR... OUT", 0, 0, "",
     "each plot's data and gnuplot variables, in OUT/data", NULL, uf_cmd_plotdata, NULL},
    {"readme", "[--check] DIR FILE.md...", 0, 0, "",
     "rewrites the pages' figures from DIR (--check: only checks)", NULL, uf_cmd_readme, NULL},
    {"crosscheck", "plan | judge DIR", 0, 0, "",
     "counters vs ncu, busy vs events, busbw vs ceilings", NULL, uf_cmd_crosscheck, NULL},
    {"doctor", "--from DIR | -- CMD...", 0, 0, "",
     "diagnoses a CUDA program: idle causes, share at stake, fix", NULL, uf_cmd_doctor, NULL},
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
               "error naming file and line.\nExit: 0 ok, 1 compare found a regression or standard "
               "output could not be written,\n2 usage or unreadable input. underfed --version "
               "(-V): this build's git describe.\n");
}

static void print_command_help(FILE *f, const command *c)
{
    if (c->help) {
        c->help(f);
        return;
    }
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

/* The doctor prints its own --help (its usage is its own text, not the common options'). */
static int own_help(const command *c)
{
    return c->run_own == uf_cmd_doctor;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static int is_version(const char *arg)
{
    return strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0;
}

/* The command argv names, run; its exit status. */
static int run_command(int argc, char **argv)
{
    args a;
    if (argc < 2) {
        print_help(stderr);
        return EXIT_BAD;
    }
    if (is_version(argv[1])) {
        uf_print_version(stdout);
        return 0;
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        const command *c = argc > 2 ? find_command(argv[2]) : NULL;
        char *own[] = {"--help", NULL};
        if (c && own_help(c))
            return c->run_own(1, own);
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
    for (int i = 2; !own_help(c) && i < argc && strcmp(argv[i], "--") != 0; i++)
        if (is_help(argv[i])) {     /* not COMMAND's own (after --) */
            print_command_help(stdout, c);
            return 0;
        }
    if (c->run_own)
        return c->run_own(argc - 2, argv + 2);
    int rc = parse_args(c, argc, argv, &a);
    return rc != 0 ? rc : c->run(&a);
}

/* Every command returns here, so that one check covers them all: what a command printed must
 * have reached standard output (a full disk or a closed pipe loses it silently otherwise).
 * It did not: a message, and exit 1 where the command would have exited 0. */
int main(int argc, char **argv)
{
    int rc = run_command(argc, argv);
    if (uf_stdout_flushed("underfed") != 0 && rc == 0)
        rc = EXIT_OUTPUT;
    return rc;
}

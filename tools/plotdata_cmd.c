/* underfed plotdata RESULTS_DIR OUT_DIR
 * underfed plotdata --across RESULTS_DIR RESULTS_DIR... OUT_DIR
 *
 * Writes the data of every plot of a results folder into OUT_DIR/data (the figures every
 * scenario gets: the utilization ladder, the PM-sampled series, a sweep per axis with more than
 * one value; and the scenario's own, plotfigs.c), or of each scenario that two or more folders
 * hold (the comparison across GPUs). Prints one line per figure, "SCRIPT data/FIGURE.gp": draw
 * it in OUT_DIR with `GNUPLOT_LIB=plots gnuplot data/FIGURE.gp plots/SCRIPT.gp` (plots/ as seen
 * from OUT_DIR). See plotdata.h for the files' format.
 *
 * The data set is written whole or not at all: every file goes into a fresh folder beside
 * OUT_DIR/data (OUT_DIR/.plotdata.XXXXXX/data); when all are written, one rename exchanges it
 * with OUT_DIR/data and the old set is removed, and only then are the figures listed. A
 * malformed result file or a full disk leaves OUT_DIR/data as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plotdata.h"
#include "plotdata_cmd.h"
#include "plotfigs.h"

enum { PD_BAD = 2, PD_MAX_DIRS = 16 };

/* ---- the figures every scenario gets ------------------------------------------------------ */


/* The ladder: NVML util, busy, SM active, tensor active, DRAM and step time per variant. */
static int fig_ladder(const pd_source *s, const double *point)
{
    static const char *const cols[] = {"nvml_util_pct", "busy_pct", "sm_active_pct",
                                       "tensor_active_pct", "dram_pct", "step_ms"};
    enum { N = sizeof cols / sizeof cols[0] };
    char base[UF_PATH_LEN], ttl[UF_PATH_LEN];
    int count[N];
    pd_fig f;
    snprintf(base, sizeof base, "%s_ladder", s->name);
    snprintf(ttl, sizeof ttl, "%s on %s: utilization ladder at the default point", s->name,
             s->gpu);
    pd_fig_begin(&f, s->out, base, s->csv);
    pd_str(&f, "ttl", ttl);
    pd_names(&f, s->t, "names");
    pd_values(pd_dat(&f, "data", ""), s->t, point, cols, N, count);
    pd_counts(&f, "counts", count, N);
    return pd_fig_commit(&f, "ladder");
}

/* The PM-sampled counters of each variant at the default point (FILE.series.csv). */
static int fig_series(const pd_source *s, const double *point)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN], base[UF_PATH_LEN], ttl[UF_PATH_LEN];
    uf_table t;             /* the file read again, with its samples */
    uf_table_init(&t, "");
    pd_fig f;
    if (pd_path(path, sizeof path, s->dir, s->name, ".series.csv") != 0)
        return -1;
    FILE *probe = fopen(path, "r");
    if (!probe)
        return 0;
    fclose(probe);
    if (uf_table_read_csv(&t, s->csv, err, sizeof err) != 0 ||
        uf_table_read_series_csv(&t, path, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        uf_table_free(&t);
        return -1;
    }
    snprintf(base, sizeof base, "%s_series", s->name);
    snprintf(ttl, sizeof ttl, "%s on %s: PM-sampled counters (default point)", s->name, s->gpu);
    pd_fig_begin(&f, s->out, base, path);
    pd_str(&f, "ttl", ttl);
    uf_strbuf *b = pd_dat(&f, "data", "");      /* declared first in the include */
    pd_names(&f, &t, "names");
    pd_series(b, &t, point);
    uf_table_free(&t);
    return pd_fig_commit(&f, "series");
}

/* Step time and busy % of every variant along axis ax, the others at the default point; a
 * log x axis where the values are positive and span 16x or more. */
static int fig_sweep(const pd_source *s, const double *point, int ax)
{
    static const char *const cols[] = {"step_ms", "busy_pct"};
    double seen[UF_MAX_SWEEP];
    char base[UF_PATH_LEN], ttl[UF_PATH_LEN];
    int count[2];
    int n = tq_distinct_values(s->t, ax, seen, UF_MAX_SWEEP);
    double lo = seen[0], hi = seen[0];
    pd_fig f;
    if (n < 2)
        return 0;
    for (int k = 1; k < n; k++) {
        lo = fmin(lo, seen[k]);
        hi = fmax(hi, seen[k]);
    }
    const char *axis = s->t->axis_names[ax];
    snprintf(base, sizeof base, "%s_sweep_%s", s->name, axis);
    snprintf(ttl, sizeof ttl, "%s on %s: sweep of %s (other axes at their defaults)", s->name,
             s->gpu, axis);
    pd_fig_begin(&f, s->out, base, s->csv);
    pd_str(&f, "ttl", ttl);
    pd_str(&f, "xname", axis);
    pd_int(&f, "logx", lo > 0 && hi / lo >= 16);
    pd_names(&f, s->t, "names");
    uf_strbuf *b = pd_dat(&f, "data", "");
    pd_points(b, s->t, ax, point, NULL, cols, 2, count);
    pd_counts(&f, "counts", count, 2);
    return pd_fig_commit(&f, "sweep");
}

/* Every figure of one scenario file. */
static int scenario_figures(const char *dir, const char *name, const char *out)
{
    char csv[UF_PATH_LEN], err[UF_REASON_LEN];
    double point[UF_MAX_AXES];
    uf_table t;
    int rc = 0;
    if (pd_path(csv, sizeof csv, dir, name, ".csv") != 0)
        return -1;
    uf_table_init(&t, "");
    if (uf_table_read_scenario(&t, dir, name, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        uf_table_free(&t);
        return -1;
    }
    const char *gpu = uf_meta_get(&t.meta, "gpu");
    pd_source s = {.name = name, .csv = csv, .dir = dir, .out = out, .t = &t,
                   .gpu = gpu ? gpu : ""};
    if (t.n_rows == 0) {
        fprintf(stderr, "underfed plotdata: %s has no rows: nothing to draw\n", csv);
    } else if (pd_point(&t, NULL, point) != 0) {
        rc = -1;
    } else {
        rc = fig_ladder(&s, point);
        rc = rc ? rc : fig_series(&s, point);
        for (int ax = 0; ax < t.n_axes && rc == 0; ax++)
            rc = fig_sweep(&s, point, ax);
        rc = rc ? rc : pd_scenario_figures(&s) < 0 ? -1 : 0;
    }
    uf_table_free(&t);
    return rc;
}

/* ---- across folders ------------------------------------------------------------------------ */

/* Step time of each variant (the first folder's) per folder, then its share of a ceiling:
 * two blocks "METRIC" "GPU1" "GPU2" ..., each at every folder's default point (pd_across). */
static int fig_across(const char *out, const char *name, const char **dirs, int n_dirs)
{
    uf_table t[PD_MAX_DIRS];
    char base[UF_PATH_LEN], ttl[UF_PATH_LEN], path[UF_PATH_LEN], err[UF_REASON_LEN];
    double point[PD_MAX_DIRS][UF_MAX_AXES];
    const double *at[PD_MAX_DIRS];
    int loaded = 0, rc = 0, measured[2];
    pd_fig f;
    for (; loaded < n_dirs; loaded++) {
        uf_table_init(&t[loaded], "");
        if (uf_table_read_scenario(&t[loaded], dirs[loaded], name, err, sizeof err) != 0) {
            fprintf(stderr, "underfed: %s\n", err);
            uf_table_free(&t[loaded]);
            goto out_free;
        }
    }
    snprintf(base, sizeof base, "%s_across", name);
    snprintf(ttl, sizeof ttl, "%s across GPUs (each at its default point)", name);
    pd_path(path, sizeof path, dirs[0], name, ".csv");
    pd_fig_begin(&f, out, base, path);
    pd_str(&f, "ttl", ttl);
    pd_int(&f, "ngpu", n_dirs);
    pd_str(&f, "raw", "step time (ms)");
    pd_names(&f, &t[0], "names");
    const char *metric[2] = {"step_ms", tq_auto_share(&t[0])};
    pd_str(&f, "share_metric", metric[1]);
    for (int d = 0; d < n_dirs; d++)
        at[d] = pd_point(&t[d], NULL, point[d]) == 0 ? point[d] : NULL;
    pd_across(pd_dat(&f, "data", ""), t, at, dirs, n_dirs, metric, measured);
    pd_counts(&f, "counts", measured, 2);
    rc = pd_fig_commit(&f, "across");
out_free:
    for (int d = 0; d < loaded; d++)
        uf_table_free(&t[d]);
    return loaded < n_dirs ? -1 : rc;
}

/* ---- the command --------------------------------------------------------------------------- */

static int folder(const char *dir, const char *out)
{
    char (*names)[UF_NAME_LEN] = NULL;
    pd_set set;
    int n = list_results(dir, &names), rc = 0;
    if (n <= 0) {
        if (n == 0)
            fprintf(stderr, "underfed plotdata: no result files in %s\n", dir);
        return PD_BAD;
    }
    if (pd_set_begin(&set, out) != 0)
        rc = PD_BAD;
    for (int i = 0; i < n && rc == 0; i++)
        if (scenario_figures(dir, names[i], set.stage) != 0)
            rc = PD_BAD;
    free(names);
    return pd_set_end(&set, rc);
}

/* Each scenario of the first folder that two or more of the folders hold. */
static int across(const char *out, const char **dirs, int n_dirs)
{
    char (*names)[UF_NAME_LEN] = NULL, path[UF_PATH_LEN];
    pd_set set;
    int n = list_results(dirs[0], &names), rc = 0;
    if (n < 0)
        return PD_BAD;
    if (pd_set_begin(&set, out) != 0)
        rc = PD_BAD;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *with[PD_MAX_DIRS];
        int k = 0;
        for (int d = 0; d < n_dirs; d++) {
            FILE *probe = pd_path(path, sizeof path, dirs[d], names[i], ".csv") == 0
                              ? fopen(path, "r") : NULL;
            if (probe) {
                fclose(probe);
                with[k++] = dirs[d];
            }
        }
        if (k >= 2 && fig_across(set.stage, names[i], with, k) != 0)
            rc = PD_BAD;
    }
    free(names);
    return pd_set_end(&set, rc);
}

int uf_cmd_plotdata(int argc, char **argv)
{
    static const char usage[] =
        "usage: underfed plotdata RESULTS_DIR OUT_DIR\n"
        "       underfed plotdata --across RESULTS_DIR RESULTS_DIR... OUT_DIR\n";
    if (argc >= 1 && strcmp(argv[0], "--across") == 0) {
        if (argc < 4 || argc - 2 > PD_MAX_DIRS) {
            fprintf(stderr, "underfed plotdata --across: give 2 to %d result folders\n%s",
                    PD_MAX_DIRS, usage);
            return PD_BAD;
        }
        return across(argv[argc - 1], (const char **)argv + 1, argc - 2);
    }
    if (argc != 2 || argv[0][0] == '-' || argv[1][0] == '-') {
        fprintf(stderr, "underfed plotdata: %s\n%s",
                argc != 2 ? "give a results folder and an output folder"
                          : "unknown option", usage);
        return PD_BAD;
    }
    return folder(argv[0], argv[1]);
}

/* Its line in `underfed --help`; it reads its own argv. */
const uf_command uf_plotdata_command = {
    "plotdata", "[--across] DIR... OUT", 0, 0, "",
    "each plot's data and gnuplot variables, in OUT/data", uf_cmd_plotdata, 0};

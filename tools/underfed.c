/* underfed: reads result folders (strictly: a malformed, truncated or foreign file is an error
 * naming the file and line) and turns them into plot data, a report, a comparison of two runs
 * or of several GPUs. No CUDA: it runs where the results are, GPU or not.
 *
 *   underfed ladder FILE.csv [--where W]           variants at one point: NVML, busy, SM, tensor, DRAM, step
 *   underfed values FILE.csv --metrics m1,m2 [--where W]   variants at one point: the metrics named
 *   underfed points FILE.csv --x AXIS [--where W] [--metrics m1,m2] [--variant V]
 *                                                  a sweep, one block per variant (or only V)
 *   underfed series FILE.csv [--where W]           PM time series (FILE.series.csv), one block per variant
 *   underfed axes FILE.csv                         each axis and how many values the run had
 *   underfed variants FILE.csv                     the variants, one per line
 *   underfed ceiling NAME DIR                      one ceiling of DIR/ceilings.csv (NaN if absent)
 *   underfed across NAME [--metric M] [--share S|auto] DIR...   one scenario across result folders
 *   underfed compare DIR_A DIR_B [--threshold PCT] [--allow-missing]
 *                                                  SAME/FASTER/SLOWER/NOISY per metric, MISSING/NEW
 *   underfed report DIR [--plots DIR --plots-link PREFIX]     writes DIR/REPORT.md
 *
 * W names axis values ("elems=4K,ops=1000", "max"/"min" allowed); unnamed axes take the
 * run's default (metadata default.AXIS). Exit: 0 ok, 1 compare found a regression (or rows of
 * DIR_A missing from DIR_B, unless --allow-missing), 2 usage or unreadable input. */
#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "options.h"
#include "results.h"

enum { EXIT_REGRESSED = 1, EXIT_BAD = 2, MAX_DIRS = 16 };

typedef struct args {
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

static void print_num(FILE *f, double v)
{
    if (isnan(v))
        fprintf(f, " NaN");
    else
        fprintf(f, " %.6g", v);
}

/* The point W names, defaults from the metadata. -1 when W is malformed. */
static int resolve_point(const uf_table *t, const char *where, double *point)
{
    for (int a = 0; a < t->n_axes; a++) {
        char key[UF_NAME_LEN + 16];
        snprintf(key, sizeof key, "default.%s", t->axis_names[a]);
        const char *def = uf_meta_get(&t->meta, key);
        point[a] = NAN;
        if (def)
            uf_parse_number(def, &point[a]);
        else if (t->n_rows)
            point[a] = t->rows[0].axis[a];
    }
    if (!where || !*where)
        return 0;
    char buf[UF_REASON_LEN];
    snprintf(buf, sizeof buf, "%s", where);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int a = 0;
        if (!eq)
            return -1;
        *eq = '\0';
        while (a < t->n_axes && strcmp(t->axis_names[a], tok) != 0)
            a++;
        if (a == t->n_axes)
            return -1;
        if (strcmp(eq + 1, "max") == 0 || strcmp(eq + 1, "min") == 0) {
            int want_max = eq[2] == 'a';
            point[a] = NAN;
            for (int i = 0; i < t->n_rows; i++) {
                double v = t->rows[i].axis[a];
                if (isnan(point[a]) || (want_max ? v > point[a] : v < point[a]))
                    point[a] = v;
            }
        } else if (uf_parse_number(eq + 1, &point[a]) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Does the row sit at the point on every axis except `free_axis` (-1: none)? */
static int at_point(const uf_table *t, const uf_row *r, const double *point, int free_axis)
{
    for (int a = 0; a < t->n_axes; a++)
        if (a != free_axis && r->axis[a] != point[a])
            return 0;
    return 1;
}

/* The variants in order of first appearance; returns how many. */
static int variants_of(const uf_table *t, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < t->n_rows; i++) {
        int seen = 0;
        for (int k = 0; k < n; k++)
            seen |= strcmp(names[k], t->rows[i].variant) == 0;
        if (!seen && n < max)
            names[n++] = t->rows[i].variant;
    }
    return n;
}

static const uf_row *row_at(const uf_table *t, const char *variant, const double *point)
{
    for (int i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].variant, variant) == 0 && at_point(t, &t->rows[i], point, -1))
            return &t->rows[i];
    return NULL;
}

static int bad_where(const char *where)
{
    fprintf(stderr, "underfed: bad --where \"%s\" (AXIS=VALUE,...)\n", where);
    return EXIT_BAD;
}

/* One line per variant at the point W names: "variant" then each metric of the comma list. */
static int print_values(const args *a, const char *metric_list)
{
    uf_table t;
    double point[UF_MAX_AXES];
    const char *names[UF_MAX_VARIANTS];
    char list[UF_REASON_LEN];
    if (load(&t, a->pos[0]) != 0)
        return EXIT_BAD;
    if (resolve_point(&t, a->where, point) != 0) {
        uf_table_free(&t);
        return bad_where(a->where);
    }
    snprintf(list, sizeof list, "%s", metric_list);
    printf("# variant");
    for (char *save = NULL, *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save))
        printf(" %s", m);
    printf("\n");
    int n = variants_of(&t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        const uf_row *r = row_at(&t, names[v], point);
        printf("\"%s\"", names[v]);
        snprintf(list, sizeof list, "%s", metric_list);
        for (char *save = NULL, *m = strtok_r(list, ",", &save); m;
             m = strtok_r(NULL, ",", &save))
            print_num(stdout, r ? uf_table_value(&t, r, m) : NAN);
        printf("\n");
    }
    uf_table_free(&t);
    return 0;
}

static int cmd_ladder(const args *a)
{
    return print_values(a, "nvml_util_pct,busy_pct,sm_active_pct,tensor_active_pct,dram_pct,"
                           "step_ms");
}

static int cmd_values(const args *a)
{
    if (!a->metrics) {
        fprintf(stderr, "underfed values: --metrics m1,m2,... is required\n");
        return EXIT_BAD;
    }
    return print_values(a, a->metrics);
}

/* The value of one ceiling of DIR/ceilings.csv: NaN (and a note) when the file is absent,
 * an error when it is malformed or the name unknown. */
static int cmd_ceiling(const args *a)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    uf_ceilings c;
    int known = -1;
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, a->pos[0]) == 0)
            known = i;
    if (known < 0) {
        fprintf(stderr, "underfed ceiling: unknown ceiling \"%s\" (", a->pos[0]);
        for (int i = 0; i < uf_n_ceiling_descs; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", uf_ceiling_descs[i].name);
        fprintf(stderr, ")\n");
        return EXIT_BAD;
    }
    if (join_path(path, sizeof path, a->pos[1], "ceilings", ".csv") != 0)
        return EXIT_BAD;
    FILE *probe = fopen(path, "r");
    if (!probe) {
        fprintf(stderr, "underfed ceiling: no %s: %s not measured\n", path, a->pos[0]);
        printf("NaN\n");
        return 0;
    }
    fclose(probe);
    if (uf_ceilings_read(path, &c, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        return EXIT_BAD;
    }
    double v = *(const double *)((const char *)&c + uf_ceiling_descs[known].offset);
    if (isnan(v))
        printf("NaN\n");
    else
        printf("%.10g\n", v);
    return 0;
}

static int axis_index(const uf_table *t, const char *name)
{
    for (int a = 0; a < t->n_axes; a++)
        if (strcmp(t->axis_names[a], name) == 0)
            return a;
    return -1;
}

static int by_axis;
static int compare_rows(const void *x, const void *y)
{
    double a = (*(const uf_row *const *)x)->axis[by_axis];
    double b = (*(const uf_row *const *)y)->axis[by_axis];
    return (a > b) - (a < b);
}

static int cmd_points(const args *a)
{
    uf_table t;
    double point[UF_MAX_AXES];
    const char *names[UF_MAX_VARIANTS];
    char metrics[UF_REASON_LEN];
    snprintf(metrics, sizeof metrics, "%s", a->metrics ? a->metrics : "step_ms,busy_pct");
    if (!a->x) {
        fprintf(stderr, "underfed points: --x AXIS is required\n");
        return EXIT_BAD;
    }
    if (load(&t, a->pos[0]) != 0)
        return EXIT_BAD;
    int rc = 0;
    int ax = axis_index(&t, a->x);
    const uf_row **rows = malloc((size_t)(t.n_rows + 1) * sizeof *rows);
    if (ax < 0 || !rows) {
        fprintf(stderr, "underfed points: %s has no axis \"%s\"\n", a->pos[0], a->x);
        rc = EXIT_BAD;
        goto out;
    }
    if (resolve_point(&t, a->where, point) != 0) {
        rc = bad_where(a->where);
        goto out;
    }
    int n = variants_of(&t, names, UF_MAX_VARIANTS);
    int block = 0;
    for (int v = 0; v < n; v++) {
        int k = 0;
        if (a->variant && strcmp(a->variant, names[v]) != 0)
            continue;
        for (int i = 0; i < t.n_rows; i++)
            if (strcmp(t.rows[i].variant, names[v]) == 0 && at_point(&t, &t.rows[i], point, ax))
                rows[k++] = &t.rows[i];
        by_axis = ax;
        qsort(rows, (size_t)k, sizeof *rows, compare_rows);
        printf("%s%s \"%s\"", block++ ? "\n\n" : "", a->x, names[v]);
        char list[UF_REASON_LEN];
        snprintf(list, sizeof list, "%s", metrics);
        for (char *save = NULL, *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save))
            printf(" %s", m);
        printf("\n");
        for (int i = 0; i < k; i++) {
            printf("%.10g", rows[i]->axis[ax]);
            snprintf(list, sizeof list, "%s", metrics);
            for (char *save = NULL, *m = strtok_r(list, ",", &save); m;
                 m = strtok_r(NULL, ",", &save))
                print_num(stdout, uf_table_value(&t, rows[i], m));
            printf("\n");
        }
    }
out:
    free(rows);
    uf_table_free(&t);
    return rc;
}

static int cmd_series(const args *a)
{
    uf_table t;
    double point[UF_MAX_AXES];
    const char *names[UF_MAX_VARIANTS];
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
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
    if (resolve_point(&t, a->where, point) != 0) {
        rc = bad_where(a->where);
        goto out;
    }
    int n = variants_of(&t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        const uf_row *r = row_at(&t, names[v], point);
        printf("%s\"%s\" sm_active_pct occupancy_pct tensor_active_pct dram_pct\n",
               v ? "\n\n" : "", names[v]);
        if (!r || r->n_samples == 0) {
            printf("0 NaN NaN NaN NaN\n");
            continue;
        }
        for (size_t i = 0; i < r->n_samples; i++) {
            const uf_pm_sample *s = &r->samples[i];
            printf("%.3f", (double)(s->start_ns - r->samples[0].start_ns) / 1e6);
            print_num(stdout, s->sm_active_pct);
            print_num(stdout, s->occupancy_pct);
            print_num(stdout, s->tensor_active_pct);
            print_num(stdout, s->dram_pct);
            printf("\n");
        }
    }
out:
    uf_table_free(&t);
    return rc;
}

static int cmd_axes(const args *a, int variants_only)
{
    uf_table t;
    const char *names[UF_MAX_VARIANTS];
    if (load(&t, a->pos[0]) != 0)
        return EXIT_BAD;
    if (variants_only) {
        int n = variants_of(&t, names, UF_MAX_VARIANTS);
        for (int v = 0; v < n; v++)
            printf("%s\n", names[v]);
    } else {
        for (int ax = 0; ax < t.n_axes; ax++) {
            double seen[UF_MAX_SWEEP];
            int n = 0;
            for (int i = 0; i < t.n_rows; i++) {
                int dup = 0;
                for (int k = 0; k < n; k++)
                    dup |= seen[k] == t.rows[i].axis[ax];
                if (!dup && n < UF_MAX_SWEEP)
                    seen[n++] = t.rows[i].axis[ax];
            }
            double lo = n ? seen[0] : NAN, hi = lo;
            for (int k = 1; k < n; k++) {
                lo = fmin(lo, seen[k]);
                hi = fmax(hi, seen[k]);
            }
            printf("%s %d %d\n", t.axis_names[ax], n, n > 1 && lo > 0 && hi / lo >= 16);
        }
    }
    uf_table_free(&t);
    return 0;
}

/* The share-of-ceiling column that says most about this scenario. */
static const char *auto_share(const uf_table *t)
{
    static const char *const candidates[] = {"pct_of_gemm", "pct_of_copy", "busy_pct"};
    for (size_t c = 0; c < sizeof candidates / sizeof candidates[0]; c++)
        for (int i = 0; i < t->n_rows; i++)
            if (!isnan(uf_table_value(t, &t->rows[i], candidates[c])))
                return candidates[c];
    return "busy_pct";
}

static int cmd_across(const args *a)
{
    uf_table t[MAX_DIRS];
    int n_dirs = a->n_pos - 1, rc = 0, loaded = 0;
    const char *metric = a->metric ? a->metric : "step_ms";
    const char *share = a->share && strcmp(a->share, "auto") != 0 ? a->share : NULL;
    if (n_dirs < 1 || n_dirs > MAX_DIRS) {
        fprintf(stderr, "underfed across: give 1 to %d result folders\n", MAX_DIRS);
        return EXIT_BAD;
    }
    for (; loaded < n_dirs; loaded++) {
        char path[UF_PATH_LEN];
        if (join_path(path, sizeof path, a->pos[loaded + 1], a->pos[0], ".csv") != 0 ||
            load(&t[loaded], path) != 0) {
            rc = EXIT_BAD;
            goto out;
        }
    }
    if (!share)
        share = auto_share(&t[0]);
    const char *names[UF_MAX_VARIANTS];
    int n = variants_of(&t[0], names, UF_MAX_VARIANTS);
    for (int block = 0; block < 2; block++) {
        const char *m = block == 0 ? metric : share;
        printf("%s\"%s\"", block ? "\n\n" : "", m);
        for (int d = 0; d < n_dirs; d++) {
            const char *gpu = uf_meta_get(&t[d].meta, "gpu");
            printf(" \"%s\"", gpu ? gpu : a->pos[d + 1]);
        }
        printf("\n");
        for (int v = 0; v < n; v++) {
            printf("\"%s\"", names[v]);
            for (int d = 0; d < n_dirs; d++) {
                double point[UF_MAX_AXES];
                resolve_point(&t[d], NULL, point);
                const uf_row *r = row_at(&t[d], names[v], point);
                print_num(stdout, r ? uf_table_value(&t[d], r, m) : NAN);
            }
            printf("\n");
        }
    }
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

/* One scenario in both folders: its diffs printed; regressions and lost rows or values
 * (MISSING) counted. 0, or EXIT_BAD when a file is unreadable. */
static int compare_scenario(const args *a, const char *name, int *regressed, int *lost)
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
    int nd = uf_compare_tables(&ta, &tb, a->threshold_pct, NULL, 0);
    diffs = malloc((size_t)(nd > 0 ? nd : 1) * sizeof *diffs);
    if (!diffs) {
        fprintf(stderr, "underfed compare: out of memory\n");
        goto out;
    }
    uf_compare_tables(&ta, &tb, a->threshold_pct, diffs, nd);
    for (int i = 0; i < nd; i++) {
        const uf_diff *d = &diffs[i];
        printf("%-22s %-14s %-28s %-14s", name, d->variant, d->where, d->metric);
        print_value(d->a);
        print_value(d->b);
        if (isnan(d->change_pct))
            printf(" %9s", "");
        else
            printf(" %+8.1f%%", d->change_pct);
        printf(" %s\n", uf_verdict_name(d->verdict));
        *regressed += d->verdict == UF_SLOWER;
        *lost += d->verdict == UF_MISSING;
    }
    rc = 0;
out:
    free(diffs);
    uf_table_free(&ta);
    uf_table_free(&tb);
    return rc;
}

/* Every scenario of A against B. A scenario, row or value of A absent from B is MISSING, one
 * of B absent from A NEW. Exit 1 on a regression, or on anything MISSING unless
 * --allow-missing; 2 when a folder is empty or unreadable or a file malformed. */
static int cmd_compare(const args *a)
{
    char (*names)[UF_NAME_LEN] = NULL, (*other)[UF_NAME_LEN] = NULL;
    int n, n_other, regressed = 0, lost = 0, rc = 0;
    if (list_both(a, &names, &n, &other, &n_other) != 0) {
        rc = EXIT_BAD;
        goto out;
    }
    printf("# %s → %s, threshold %.1f %%; FASTER/SLOWER: the second run is better/worse; "
           "MISSING: only in the first, NEW: only in the second\n",
           a->pos[0], a->pos[1], a->threshold_pct);
    for (int f = 0; f < n && rc == 0; f++) {
        if (!listed(other, n_other, names[f])) {
            printf("%-22s MISSING (only in %s)\n", names[f], a->pos[0]);
            lost++;
            continue;
        }
        rc = compare_scenario(a, names[f], &regressed, &lost);
    }
    for (int g = 0; g < n_other && rc == 0; g++)
        if (!listed(names, n, other[g]))
            printf("%-22s NEW (only in %s)\n", other[g], a->pos[1]);
    if (rc == 0) {
        printf("%d regression(s) beyond %.1f %% and the measured spread; %d MISSING from %s%s\n",
               regressed, a->threshold_pct, lost, a->pos[1],
               lost && a->allow_missing ? " (allowed: --allow-missing)" : "");
        if (lost && !a->allow_missing)
            fprintf(stderr, "underfed compare: %d scenario(s), row(s) or value(s) of %s are "
                    "missing from %s (--allow-missing accepts that)\n", lost, a->pos[0],
                    a->pos[1]);
        rc = regressed || (lost && !a->allow_missing) ? EXIT_REGRESSED : 0;
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

/* The ceilings section. A folder without ceilings.csv says so in the report; a ceilings.csv
 * that is there but malformed (empty, truncated, ...) is an error like any other file: -1. */
static int report_ceilings(FILE *f, const char *dir)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    uf_ceilings c;
    uf_meta meta;
    if (join_path(path, sizeof path, dir, "ceilings", ".csv") != 0)
        return -1;
    if (uf_ceilings_read_meta(path, &c, &meta, err, sizeof err) != 0) {
        FILE *probe = fopen(path, "r");
        if (probe) {
            fclose(probe);
            fprintf(stderr, "underfed: %s\n", err);
            return -1;
        }
        fprintf(f, "Ceilings: not available (%s).\n\n", err);
        return 0;
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
        const uf_row *r = row_at(t, names[v], point);
        if (!r || isnan(r->power_w))
            continue;
        fprintf(f, "%s%s %.0f W", shown ? ", " : "\nBoard power, mean over each timing pass: ",
                r->variant, r->power_w);
        shown++;
    }
    if (shown)
        fprintf(f, " (%s; power limit %s W).\n", source, meta_or(t, "power_limit_w"));
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
    fputs("| variant | role | step ms | spread % | busy % | NVML util % | SM active % | "
          "tensor % | DRAM % | useful TFLOP/s | GB/s | SM clock MHz | verified |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", f);
    int n = variants_of(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        const uf_row *r = row_at(t, names[v], point);
        if (!r)
            continue;
        fprintf(f, "| %s | %s |", r->variant, r->role);
        md_num(f, r->step_ms, 4);
        md_num(f, r->spread_pct, 1);
        md_num(f, r->busy_pct, 1);
        md_num(f, r->nvml_util_pct, 1);
        md_num(f, r->sm_active_pct, 1);
        md_num(f, r->tensor_active_pct, 1);
        md_num(f, r->dram_pct, 1);
        md_num(f, r->tflops_useful, 1);
        md_num(f, r->gbs, 0);
        md_num(f, r->sm_clock_mhz, 0);
        fprintf(f, " %s |\n", r->verified == 1 ? "yes" : "**no**");
    }
    report_power(f, t, names, n, point);
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
    size_t body_len = 0, used = 0;
    char *body = NULL, *text = NULL;
    FILE *f = open_memstream(&body, &body_len);
    int rc = f ? 0 : EXIT_BAD;
    for (int i = 0; i < n && rc == 0; i++) {
        uf_table t;
        if (join_path(path, sizeof path, a->pos[0], names[i], ".csv") != 0 || load(&t, path) != 0) {
            rc = EXIT_BAD;
            break;
        }
        head_note(&head, names[i], &t);
        report_scenario(f, a, names[i], &t);
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
    free(body);
    free(text);
    return rc;
}

/* ---- command line ----------------------------------------------------------------------- */

static int usage(void)
{
    fprintf(stderr,
            "usage: underfed ladder|series|axes|variants FILE.csv [--where W]\n"
            "       underfed values FILE.csv --metrics m1,m2 [--where W]\n"
            "       underfed points FILE.csv --x AXIS [--where W] [--metrics m1,m2] [--variant V]\n"
            "       underfed ceiling NAME DIR\n"
            "       underfed across NAME [--metric M] [--share S|auto] DIR...\n"
            "       underfed compare DIR_A DIR_B [--threshold PCT] [--allow-missing]\n"
            "       underfed report DIR [--plots DIR --plots-link PREFIX]\n");
    return EXIT_BAD;
}

/* The options that take a string, and where it goes. */
static const struct {
    const char *flag;
    size_t offset;
} string_options[] = {
    {"--where", offsetof(args, where)},       {"--x", offsetof(args, x)},
    {"--metrics", offsetof(args, metrics)},   {"--metric", offsetof(args, metric)},
    {"--share", offsetof(args, share)},       {"--plots", offsetof(args, plots_dir)},
    {"--plots-link", offsetof(args, plots_link)}, {"--variant", offsetof(args, variant)},
};

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->threshold_pct = 5.0;
    for (int i = 2; i < argc; i++) {
        const char *flag = argv[i];
        const char **slot = NULL;
        for (size_t k = 0; k < sizeof string_options / sizeof string_options[0] && !slot; k++)
            if (strcmp(flag, string_options[k].flag) == 0)
                slot = (const char **)((char *)a + string_options[k].offset);
        if (slot || strcmp(flag, "--threshold") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "underfed: %s needs a value\n", flag);
                return -1;
            }
            if (slot) {
                *slot = argv[++i];
            } else if (uf_parse_number(argv[++i], &a->threshold_pct) != 0 ||
                       a->threshold_pct < 0) {
                fprintf(stderr, "underfed: --threshold takes a percentage >= 0\n");
                return -1;
            }
        } else if (strcmp(flag, "--allow-missing") == 0) {
            a->allow_missing = 1;
        } else if (flag[0] == '-' && flag[1] == '-') {
            fprintf(stderr, "underfed: unknown option %s\n", flag);
            return -1;
        } else if (a->n_pos < MAX_DIRS + 2) {
            a->pos[a->n_pos++] = flag;
        } else {
            fprintf(stderr, "underfed: too many arguments\n");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    if (argc < 2 || parse_args(argc, argv, &a) != 0)
        return usage();
    const char *cmd = argv[1];
    int need = strcmp(cmd, "compare") == 0 || strcmp(cmd, "across") == 0 ||
                       strcmp(cmd, "ceiling") == 0
                   ? 2
                   : 1;
    if (a.n_pos < need)
        return usage();
    if (strcmp(cmd, "ladder") == 0)
        return cmd_ladder(&a);
    if (strcmp(cmd, "values") == 0)
        return cmd_values(&a);
    if (strcmp(cmd, "ceiling") == 0)
        return cmd_ceiling(&a);
    if (strcmp(cmd, "points") == 0)
        return cmd_points(&a);
    if (strcmp(cmd, "series") == 0)
        return cmd_series(&a);
    if (strcmp(cmd, "axes") == 0)
        return cmd_axes(&a, 0);
    if (strcmp(cmd, "variants") == 0)
        return cmd_axes(&a, 1);
    if (strcmp(cmd, "across") == 0)
        return cmd_across(&a);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(&a);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(&a);
    return usage();
}

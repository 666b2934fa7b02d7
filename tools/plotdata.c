/* The plot data writer: a figure's files (its data files and its gnuplot include, plotdata.h),
 * the rows of a table as the text commands print them, and the data set of a run written
 * whole or not at all: every file goes into a fresh folder beside OUT/data
 * (OUT/.plotdata.XXXXXX/data); when all are written, one rename exchanges it with OUT/data and
 * the old set is removed, and only then are the figures listed. A malformed result file or a
 * full disk leaves OUT/data as it was. It knows no figure: the figures (plotdata_cmd.c's of
 * every scenario, plotfigs.c's of one) use it. */
#define _GNU_SOURCE     /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileutil.h"
#include "plotdata.h"

enum { PD_BAD = 2 };

/* ---- the figure writer --------------------------------------------------------------------- */

int pd_path(char *out, size_t len, const char *dir, const char *name, const char *suffix)
{
    int n = snprintf(out, len, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "underfed plotdata: path too long: %s/%s%s\n", dir, name, suffix);
        out[0] = '\0';
        return -1;
    }
    return 0;
}

/* A gnuplot string literal: single quotes, a quote doubled. */
static void gp_string(uf_strbuf *b, const char *s)
{
    uf_sb_putn(b, "'", 1);
    for (const char *c = s; *c; c++)
        uf_sb_puts(b, *c == '\'' ? "''" : (char[2]){*c, '\0'});
    uf_sb_putn(b, "'", 1);
}

void pd_fig_begin(pd_fig *f, const char *out_dir, const char *base, const char *source)
{
    char out[UF_PATH_LEN];
    memset(f, 0, sizeof *f);
    if (pd_path(f->dir, sizeof f->dir, out_dir, "data", "") != 0 ||
        pd_path(out, sizeof out, out_dir, base, "") != 0 || strlen(base) >= sizeof f->base)
        f->vars.failed = 1;     /* commit fails */
    snprintf(f->base, sizeof f->base, "%.*s", (int)sizeof f->base - 1, base);
    const char *slash = strrchr(source, '/');
    pd_str(f, "source", slash ? slash + 1 : source);
    uf_sb_puts(&f->vars, "out = ");     /* paths relative to OUT, gnuplot's folder */
    gp_string(&f->vars, f->base);
    uf_sb_puts(&f->vars, "\n");
}

void pd_str(pd_fig *f, const char *key, const char *value)
{
    uf_sb_printf(&f->vars, "%s = ", key);
    gp_string(&f->vars, value);
    uf_sb_puts(&f->vars, "\n");
    uf_sb_printf(&f->head, "# %s: %s\n", key, value);
}

void pd_num(pd_fig *f, const char *key, double v)
{
    char text[32];
    snprintf(text, sizeof text, isnan(v) ? "NaN" : "%.10g", v);
    uf_sb_printf(&f->vars, "%s = %s\n", key, text);
    uf_sb_printf(&f->head, "# %s: %s\n", key, text);
}

void pd_int(pd_fig *f, const char *key, int v)
{
    uf_sb_printf(&f->vars, "%s = %d\n", key, v);
    uf_sb_printf(&f->head, "# %s: %d\n", key, v);
}

uf_strbuf *pd_dat(pd_fig *f, const char *key, const char *suffix)
{
    if (f->n_dats == PD_MAX_DATS) {     /* a figure writer's bug: caught by the tests */
        fprintf(stderr, "underfed plotdata: %s: more than %d data files\n", f->base,
                PD_MAX_DATS);
        f->vars.failed = 1;
        return &f->dat[PD_MAX_DATS - 1];
    }
    char *path = f->dat_path[f->n_dats];
    char name[UF_PATH_LEN], full[UF_PATH_LEN];
    if ((size_t)snprintf(name, sizeof name, "%s%s.dat", f->base, suffix) >= sizeof name ||
        pd_path(full, sizeof full, f->dir, name, "") != 0)
        f->vars.failed = 1;
    memcpy(path, full, sizeof full);
    if ((size_t)snprintf(full, sizeof full, "data/%s", name) >= sizeof full)
        f->vars.failed = 1;                         /* relative to OUT, as `out` is */
    uf_sb_printf(&f->vars, "%s = ", key);
    gp_string(&f->vars, full);
    uf_sb_puts(&f->vars, "\n");
    return &f->dat[f->n_dats++];
}

void pd_fig_free(pd_fig *f)
{
    free(f->vars.data);
    free(f->head.data);
    for (int i = 0; i < PD_MAX_DATS; i++)
        free(f->dat[i].data);
    memset(f, 0, sizeof *f);
}

int pd_fig_commit(pd_fig *f, const char *script)
{
    char err[UF_REASON_LEN], path[UF_PATH_LEN];
    int rc = f->vars.failed || f->head.failed ? -1 : 0;
    if (rc != 0)
        fprintf(stderr, "underfed plotdata: %s: not written\n", f->base);
    for (int i = 0; i < f->n_dats && rc == 0; i++) {
        uf_strbuf file = {0};
        uf_sb_printf(&file, "# underfed plot data, drawn by plots/%s.gp\n", script);
        uf_sb_puts(&file, f->head.data ? f->head.data : "");
        uf_sb_puts(&file, f->dat[i].data ? f->dat[i].data : "");
        file.failed |= f->dat[i].failed;   /* commit says so, and frees */
        rc = uf_sb_commit(&file, f->dat_path[i], err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "underfed plotdata: %s\n", err);
    }
    if (rc == 0 && pd_path(path, sizeof path, f->dir, f->base, ".gp") != 0)
        rc = -1;
    if (rc == 0) {
        uf_strbuf file = {0};
        uf_sb_printf(&file, "# underfed plot data: load before plots/%s.gp\n", script);
        uf_sb_puts(&file, f->vars.data);
        if ((rc = uf_sb_commit(&file, path, err, sizeof err)) != 0)
            fprintf(stderr, "underfed plotdata: %s\n", err);
    }
    pd_fig_free(f);     /* the command lists the figures once the whole set is in place */
    return rc;
}

/* ---- reading the table --------------------------------------------------------------------- */

double pd_metric(const uf_table *t, const uf_row *r, const char *name)
{
    char text[32];
    double v = uf_table_value(t, r, name);
    if (isnan(v))
        return NAN;
    snprintf(text, sizeof text, "%.6g", v);
    return strtod(text, NULL);
}

void pd_put_num(uf_strbuf *b, double v)
{
    if (isnan(v))
        uf_sb_puts(b, " NaN");
    else
        uf_sb_printf(b, " %.6g", v);
}

int pd_point(const uf_table *t, const char *where, double *point)
{
    char err[UF_REASON_LEN];
    if (tq_point(t, where, point, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "underfed plotdata: %s: %s\n", where ? where : "default point", err);
    return -1;
}

int pd_ceiling(const char *dir, const char *name, double *v)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    uf_ceilings c;
    *v = NAN;
    if (pd_path(path, sizeof path, dir, "ceilings", ".csv") != 0)
        return -1;
    FILE *probe = fopen(path, "r");
    if (!probe)
        return 0;
    fclose(probe);
    if (uf_ceilings_read(path, &c, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        return -1;
    }
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, name) == 0)
            *v = *(const double *)((const char *)&c + uf_ceiling_descs[i].offset);
    return 0;
}

void pd_points(uf_strbuf *b, const uf_table *t, int ax, const double *point, const char *variant,
               const char *const *metrics, int n_metrics, int *count)
{
    const char *names[UF_MAX_VARIANTS];
    const uf_row **rows = malloc((size_t)(t->n_rows + 1) * sizeof *rows);
    int n = tq_variants(t, names, UF_MAX_VARIANTS), block = 0;
    for (int c = 0; c < n_metrics; c++)
        count[c] = 0;
    if (!rows) {
        b->failed = 1;
        return;
    }
    for (int v = 0; v < n; v++) {
        if (variant && strcmp(variant, names[v]) != 0)
            continue;
        int k = tq_sweep_rows(t, names[v], ax, point, rows);
        uf_sb_printf(b, "%s%s \"%s\"", block++ ? "\n\n" : "", t->axis_names[ax], names[v]);
        for (int c = 0; c < n_metrics; c++)
            uf_sb_printf(b, " %s", metrics[c]);
        uf_sb_puts(b, "\n");
        for (int i = 0; i < k; i++) {
            uf_sb_printf(b, "%.10g", rows[i]->axis[ax]);
            for (int c = 0; c < n_metrics; c++) {
                double m = pd_metric(t, rows[i], metrics[c]);
                pd_put_num(b, m);
                count[c] += !isnan(m);
            }
            uf_sb_puts(b, "\n");
        }
    }
    free(rows);
}

void pd_values(uf_strbuf *b, const uf_table *t, const double *point,
               const char *const *metrics, int n_metrics, int *count)
{
    uf_sb_puts(b, "# variant");
    for (int c = 0; c < n_metrics; c++)
        uf_sb_printf(b, " %s", metrics[c]);
    uf_sb_puts(b, "\n");
    pd_value_rows(b, t, point, metrics, n_metrics, count);
}

void pd_value_rows(uf_strbuf *b, const uf_table *t, const double *point,
                   const char *const *metrics, int n_metrics, int *count)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int c = 0; c < n_metrics; c++)
        count[c] = 0;
    for (int v = 0; v < n; v++) {
        const uf_row *r = tq_row_at(t, names[v], point);
        uf_sb_printf(b, "\"%s\"", names[v]);
        for (int c = 0; c < n_metrics; c++) {
            double m = r ? pd_metric(t, r, metrics[c]) : NAN;
            pd_put_num(b, m);
            count[c] += !isnan(m);
        }
        uf_sb_puts(b, "\n");
    }
}

/* ---- a figure's variables --------------------------------------------------------------- */

/* The variants, space-separated, as variable `key`, and their number as `n`. */
void pd_series(uf_strbuf *b, const uf_table *t, const double *point)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        const uf_row *r = tq_row_at(t, names[v], point);
        uf_sb_printf(b, "%s\"%s\" sm_active_pct occupancy_pct tensor_active_pct dram_pct\n",
                     v ? "\n\n" : "", names[v]);
        if (!r || r->n_samples == 0) {
            uf_sb_puts(b, "0 NaN NaN NaN NaN\n");
            continue;
        }
        for (size_t i = 0; i < r->n_samples; i++) {
            const uf_pm_sample *p = &r->samples[i];
            uf_sb_printf(b, "%.3f", (double)(p->start_ns - r->samples[0].start_ns) / 1e6);
            pd_put_num(b, p->sm_active_pct);
            pd_put_num(b, p->occupancy_pct);
            pd_put_num(b, p->tensor_active_pct);
            pd_put_num(b, p->dram_pct);
            uf_sb_puts(b, "\n");
        }
    }
}

void pd_words(pd_fig *f, const char *key, const char *const *words, int n)
{
    uf_strbuf list = {0};
    for (int i = 0; i < n; i++)
        uf_sb_printf(&list, "%s%s", i ? " " : "", words[i]);
    f->vars.failed |= list.failed;
    pd_str(f, key, list.data ? list.data : "");
    free(list.data);
}

int pd_names(pd_fig *f, const uf_table *t, const char *key)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    pd_words(f, key, names, n);
    pd_int(f, "n", n);
    return n;
}

/* Counts of measured values per column, "k1 k2 ...", as variable `key`. */
void pd_counts(pd_fig *f, const char *key, const int *count, int n)
{
    char text[PD_MAX_COLS * 12] = "";
    size_t used = 0;
    for (int c = 0; c < n; c++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", c ? " " : "", count[c]);
    pd_str(f, key, text);
}

/* ---- across folders ------------------------------------------------------------------------ */

void pd_across(uf_strbuf *b, const uf_table *t, const double *const *points,
               const char *const *dirs, int n_dirs, const char *const *metrics, int *measured)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(&t[0], names, UF_MAX_VARIANTS);
    for (int block = 0; block < 2; block++) {
        measured[block] = 0;
        uf_sb_printf(b, "%s\"%s\"", block ? "\n\n" : "", metrics[block]);
        for (int d = 0; d < n_dirs; d++) {
            const char *gpu = uf_meta_get(&t[d].meta, "gpu");
            uf_sb_printf(b, " \"%s\"", gpu ? gpu : dirs[d]);
        }
        uf_sb_puts(b, "\n");
        for (int v = 0; v < n; v++) {
            uf_sb_printf(b, "\"%s\"", names[v]);
            for (int d = 0; d < n_dirs; d++) {
                const uf_row *r = points[d] ? tq_row_at(&t[d], names[v], points[d]) : NULL;
                double m = r ? pd_metric(&t[d], r, metrics[block]) : NAN;
                pd_put_num(b, m);
                measured[block] += !isnan(m);
            }
            uf_sb_puts(b, "\n");
        }
    }
}


/* ---- the data set, whole or not at all ---------------------------------------------------- */

/* A folder and what it holds, symbolic links removed and not followed. 0, or -1 with a
 * message. */
static int remove_folder(const char *path)
{
    DIR *d = opendir(path);
    int rc = 0;
    if (d == NULL) {
        fprintf(stderr, "underfed plotdata: cannot remove %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char child[UF_PATH_LEN];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (pd_path(child, sizeof child, path, e->d_name, "") != 0 || lstat(child, &st) != 0)
            rc = -1;
        else if (S_ISDIR(st.st_mode))
            rc |= remove_folder(child);
        else if (unlink(child) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(path) != 0) {
        fprintf(stderr, "underfed plotdata: cannot remove %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* OUT made where missing, and an empty OUT/.plotdata.XXXXXX/data. 0, or -1 with a message. */
int pd_set_begin(pd_set *set, const char *out)
{
    char err[UF_REASON_LEN], data[UF_PATH_LEN];
    snprintf(set->out, sizeof set->out, "%s", out);
    set->stage[0] = '\0';
    if (uf_mkdirs(out, err, sizeof err) != 0) {
        fprintf(stderr, "underfed plotdata: %s\n", err);
        return -1;
    }
    if (pd_path(set->stage, sizeof set->stage, out, ".plotdata.XXXXXX", "") != 0)
        return -1;
    if (mkdtemp(set->stage) == NULL) {
        fprintf(stderr, "underfed plotdata: %s: cannot create: %s\n", set->stage,
                strerror(errno));
        set->stage[0] = '\0';
        return -1;
    }
    if (pd_path(data, sizeof data, set->stage, "data", "") != 0 || mkdir(data, 0777) != 0) {
        fprintf(stderr, "underfed plotdata: %s/data: cannot create: %s\n", set->stage,
                strerror(errno));
        return -1;
    }
    return 0;
}

static int compare_lines(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The listing of the staged set, "SCRIPT data/BASE.gp" a line (sorted by BASE), into *listing:
 * each BASE.gp names its script on its first line ("# underfed plot data: load before
 * plots/SCRIPT.gp"). 0, or -1 with a message. */
static int set_listing(const pd_set *set, uf_strbuf *listing)
{
    char data[UF_PATH_LEN], err[UF_REASON_LEN];
    static const char lead[] = "# underfed plot data: load before plots/";
    char **lines = NULL;
    int n = 0, cap = 0, rc = 0;
    if (pd_path(data, sizeof data, set->stage, "data", "") != 0)
        return -1;
    DIR *d = opendir(data);
    if (d == NULL) {
        fprintf(stderr, "underfed plotdata: cannot read %s: %s\n", data, strerror(errno));
        return -1;
    }
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        char path[UF_PATH_LEN], *text = NULL, *line = NULL;
        size_t text_len = 0;
        if (len < 4 || strcmp(e->d_name + len - 3, ".gp") != 0)
            continue;
        if (pd_path(path, sizeof path, data, e->d_name, "") != 0 ||
            uf_read_file(path, &text, &text_len, err, sizeof err) != 0) {
            fprintf(stderr, "underfed plotdata: %s\n", err);
            rc = -1;
            break;
        }
        size_t script_len = strncmp(text, lead, sizeof lead - 1) == 0
                                ? strcspn(text + sizeof lead - 1, "\n") : 0;
        char **grown = uf_grow(lines, &cap, n + 1, sizeof *lines, 64);
        if (script_len < 4 || strncmp(text + sizeof lead - 1 + script_len - 3, ".gp", 3) != 0 ||
            grown == NULL || (line = malloc(script_len + len + 8)) == NULL) {
            fprintf(stderr, "underfed plotdata: %s: %s\n", path,
                    grown == NULL || script_len >= 4 ? "out of memory" : "no script named");
            rc = -1;
        } else {
            lines = grown;
            snprintf(line, script_len + len + 8, "%.*s data/%s", (int)(script_len - 3),
                     text + sizeof lead - 1, e->d_name);
            lines[n++] = line;
        }
        free(text);
    }
    closedir(d);
    qsort(lines, (size_t)n, sizeof *lines, compare_lines);
    for (int i = 0; i < n; i++) {
        if (rc == 0)
            uf_sb_printf(listing, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    return rc;
}

/* The staged set takes the place of OUT/data: exchanged with it in one rename (where the
 * file system cannot exchange, the old one is moved aside first: OUT/data is then missing for
 * the moment between two renames, never half written); then the stage, holding the old set,
 * is removed. 0, or -1 with a message (OUT/data as it was). */
static int set_commit(pd_set *set)
{
    char data[UF_PATH_LEN], staged[UF_PATH_LEN], aside[UF_PATH_LEN];
    struct stat st;
    if (pd_path(data, sizeof data, set->out, "data", "") != 0 ||
        pd_path(staged, sizeof staged, set->stage, "data", "") != 0 ||
        pd_path(aside, sizeof aside, set->stage, "old", "") != 0)
        return -1;
    int rc;
    if (lstat(data, &st) != 0 && errno == ENOENT) {
        rc = rename(staged, data);
    } else if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "underfed plotdata: %s: not a folder: not replaced\n", data);
        return -1;
    } else {
        rc = renameat2(AT_FDCWD, staged, AT_FDCWD, data, RENAME_EXCHANGE);
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
            rc = rename(data, aside);
            if (rc == 0 && (rc = rename(staged, data)) != 0) {
                int saved = errno;
                rename(aside, data);    /* the old set back in its place */
                errno = saved;
            }
        }
    }
    if (rc != 0) {
        fprintf(stderr, "underfed plotdata: cannot put %s in place of %s: %s\n", staged, data,
                strerror(errno));
        return -1;
    }
    remove_folder(set->stage);      /* the old set; a leftover is only a folder too many */
    set->stage[0] = '\0';
    return 0;
}

/* The stage removed where it is still there (a failed run): OUT/data is left as it was. */
static void set_abandon(pd_set *set)
{
    if (set->stage[0] != '\0')
        remove_folder(set->stage);
    set->stage[0] = '\0';
}

/* A run's end: on success (rc 0) the staged set listed and put in place, then the listing
 * printed; otherwise the stage removed. The exit status. */
int pd_set_end(pd_set *set, int rc)
{
    uf_strbuf listing = {0};
    if (rc == 0 && (set_listing(set, &listing) != 0 || listing.failed))
        rc = PD_BAD;
    if (rc == 0 && set_commit(set) != 0)
        rc = PD_BAD;
    if (rc != 0) {
        set_abandon(set);
        fprintf(stderr, "underfed plotdata: %s/data left as it was (the data set is written "
                "whole or not at all)\n", set->out);
    } else if (listing.data) {
        fputs(listing.data, stdout);
    }
    free(listing.data);
    return rc;
}

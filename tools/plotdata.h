/* The plot data writer (`underfed plotdata`, plotdata_cmd.c): the data of every plot,
 * self-describing, so that the gnuplot scripts only draw.
 *
 * A figure is one gnuplot script (plots/SCRIPT.gp) drawn from files of OUT/data/: one or more
 * BASE*.dat (the data, a header of `# key: value` lines first) and BASE.gp, the include that
 * defines the same keys as gnuplot variables, and the data files' paths and the image's (`out`),
 * relative to OUT: the title, names, counts of measured values, ceilings. For each line
 * "SCRIPT data/BASE.gp" that the command prints, plots/render.sh runs, in OUT,
 * `GNUPLOT_LIB=plots gnuplot data/BASE.gp plots/SCRIPT.gp` (the script loads lib.gp).
 * Numbers are written as the other commands print them (metrics %.6g, axis values and
 * ceilings %.10g), so a plot drawn from them is the plot of `underfed values`. */
#ifndef UF_TOOLS_PLOTDATA_H
#define UF_TOOLS_PLOTDATA_H

#include "options.h"
#include "results.h"
#include "strbuf.h"
#include "tablequery.h"

/* ---- for the figures (plotdata_cmd.c's of every scenario, plotfigs.c's of one) --------- */

enum { PD_MAX_DATS = 4, PD_MAX_COLS = 8 };

/* One figure being written: its variables and its data files, in memory until committed. */
typedef struct pd_fig {
    char dir[UF_PATH_LEN];                  /* OUT/data */
    char base[UF_PATH_LEN];                 /* the files' name before .gp / SUFFIX.dat */
    uf_strbuf vars;                         /* the include: key = value */
    uf_strbuf head;                         /* the data files' header: # key: value */
    int n_dats;
    char dat_path[PD_MAX_DATS][UF_PATH_LEN];
    uf_strbuf dat[PD_MAX_DATS];
} pd_fig;

/* A figure of OUT/data/BASE: out_dir the images' folder; the include sets out = OUT/BASE. */
/* DIR/NAME SUFFIX into out; -1 with a message when it does not fit. */
int pd_path(char *out, size_t len, const char *dir, const char *name, const char *suffix);
void pd_fig_begin(pd_fig *f, const char *out_dir, const char *base, const char *source);
void pd_str(pd_fig *f, const char *key, const char *value);
void pd_num(pd_fig *f, const char *key, double v);      /* NaN written as NaN */
void pd_int(pd_fig *f, const char *key, int v);
/* A data file OUT/data/BASE SUFFIX.dat, its path in variable `key`: its body to fill. */
uf_strbuf *pd_dat(pd_fig *f, const char *key, const char *suffix);
/* Write the files (atomically) and print "SCRIPT INCLUDE"; frees the buffers. 0 or -1. */
int pd_fig_commit(pd_fig *f, const char *script);
void pd_fig_free(pd_fig *f);

/* A metric as the text tools print it: %.6g, so that values plotted here match them. */
double pd_metric(const uf_table *t, const uf_row *r, const char *name);
void pd_put_num(uf_strbuf *b, double v);                /* " %.6g" or " NaN" */
/* The point `where` names (tq_point); -1 with a message "underfed plotdata: W: reason". */
int pd_point(const uf_table *t, const char *where, double *point);
/* A ceiling of DIR/ceilings.csv by name: NaN when the file is absent; -1 when malformed. */
int pd_ceiling(const char *dir, const char *name, double *v);

/* A sweep along axis ax at point (ax free), one block per variant (or only `variant`), as
 * `underfed points` prints it: "AXIS "variant" m1 m2 ..." then "x v1 v2 ..." lines, blocks
 * apart by two blank lines. count[c]: lines with a number in metric c, every block. */
void pd_points(uf_strbuf *b, const uf_table *t, int ax, const double *point, const char *variant,
               const char *const *metrics, int n_metrics, int *count);

/* Each variant at point, as `underfed values` prints it: "# variant m1 m2 ..." then
 * ""variant" v1 v2 ..." lines. count[c]: variants with a number in metric c. */
void pd_values(uf_strbuf *b, const uf_table *t, const double *point,
               const char *const *metrics, int n_metrics, int *count);
/* pd_values without its "# variant" line (`underfed values` adds a line of headings). */
void pd_value_rows(uf_strbuf *b, const uf_table *t, const double *point,
                   const char *const *metrics, int n_metrics, int *count);
/* Two blocks, metrics[0] then metrics[1], as `underfed across` prints them: ""METRIC" "GPU1"
 * "GPU2" ..." (metadata gpu, else dirs[d]) then ""variant" v1 v2 ..." for each variant of
 * t[0], v_d its row of t[d] at points[d] (NULL: none, NaN). measured[block]: numbers in it. */
void pd_across(uf_strbuf *b, const uf_table *t, const double *const *points,
               const char *const *dirs, int n_dirs, const char *const *metrics, int *measured);
/* The PM-sampled counters of each variant at point, as `underfed series` prints them: a block
 * per variant, ""variant" sm_active_pct occupancy_pct tensor_active_pct dram_pct" then "ms v1
 * v2 v3 v4" lines from its first sample ("0 NaN NaN NaN NaN" when it has none). */
void pd_series(uf_strbuf *b, const uf_table *t, const double *point);

/* words[0..n), space-separated, as variable `key`. */
void pd_words(pd_fig *f, const char *key, const char *const *words, int n);
/* The variants, space-separated, as variable `key`, and their number as `n`; returns it. */
int pd_names(pd_fig *f, const uf_table *t, const char *key);
/* Counts of measured values per column, "k1 k2 ...", as variable `key`. */
void pd_counts(pd_fig *f, const char *key, const int *count, int n);

/* The data set of a run: OUT/data written whole or not at all. */
typedef struct pd_set {
    char out[UF_PATH_LEN];      /* OUT */
    char stage[UF_PATH_LEN];    /* OUT/.plotdata.XXXXXX: the figures' OUT while they are written */
} pd_set;

/* OUT made where missing, and an empty OUT/.plotdata.XXXXXX/data: the figures of the run are
 * written with set->stage as their OUT. 0, or -1 with a message. */
int pd_set_begin(pd_set *set, const char *out);
/* A run's end: on success (rc 0) the staged set listed ("SCRIPT data/BASE.gp" a line, sorted)
 * and put in place of OUT/data in one rename, then the listing printed; otherwise the stage
 * removed and OUT/data left as it was. The exit status: 0, or 2 (with a message). */
int pd_set_end(pd_set *set, int rc);

#endif

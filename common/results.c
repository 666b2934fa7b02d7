/* Results: the metric table, rows, metadata, the writers, the strict reader and the ceilings
 * file. Every file is UTF-8 text with '\n' line ends, written through uf_write_file_atomic
 * (PATH.tmp.PID, fsync, rename), so a reader never sees half a file.
 *
 * Results CSV (uf_table_write_csv), version 4 (v3 without gpm_agree_pts; read as empty):
 *     # underfed-results v4                 magic line (v3: no gpm_agree_pts; v2: no `rank` column, no step_ms_mean,
 *                                           no rank lines; v1: neither comm_sm_pct,
 *                                           copy_overlap_pct, sm_clock_mhz, sm_clock_min_mhz,
 *                                           power_w); anything else is refused
 *     # scenario: NAME
 *     # KEY: VALUE                          the run's metadata (uf_meta), in order
 *     # unit.EXTRA: UNIT                    the unit of each scenario-specific column
 *     variant,role,AXIS...,METRIC...,EXTRA...,skip_reason        (v1, v2)
 *     variant,role,rank,AXIS...,METRIC...,EXTRA...,skip_reason   (v3)
 *     one line per row; in v3 the row's `rank` is empty and its ranks' lines follow it, rank
 *     0, 1, ... in order, with the row's variant, role and axes, the rank's per-device metrics
 *     (uf_metric_desc.per_device), every other metric and extra empty, and its own skip_reason
 *   AXIS columns are the sweep axes (the columns between `role` and `step_ms`); METRIC columns
 *   are every uf_metrics entry in table order (step_ms ... max_rel_err); EXTRA columns are those
 *   between the last fixed metric and `skip_reason`. Numbers are written with "%.10g"; NaN (not
 *   measured) is an empty field. Strings containing a comma, a quote or a line break are quoted
 *   RFC-4180 style ("" inside quotes is one quote).
 *
 * Results JSON (uf_table_write_json), the same content:
 *     {"format":"underfed-results","version":3,"scenario":..,"meta":{KEY:VALUE,..},
 *      "axes":[NAME,..],"extras":[{"name":..,"unit":..}],"metrics":[{"name":..,"unit":..}],
 *      "rows":[{"variant":..,"role":..,"axes":{..},"metrics":{..},"extras":{..},
 *               "skip_reason":..}]}
 *   A row with per-rank figures (version 3) adds "ranks":[{"rank":K,"metrics":{per-device
 *   metrics},"skip_reason":..},..]. NaN and infinities are null.
 *
 * Series CSV (uf_table_write_series_csv): `# underfed-series v1`, the metadata, then
 *     variant,AXIS...,t_ms,sm_active_pct,occupancy_pct,tensor_active_pct,dram_pct
 *   one line per PM sample of every row, t_ms from that row's first sample start.
 *
 * Ceilings CSV (uf_ceilings_write): `# underfed-ceilings v1`, the metadata, then
 *     ceiling,value,unit,spread_pct,note
 *   one line per ceiling; names outside uf_ceiling_descs (e.g. "nccl_busbw_gbs@1048576") are
 *   allowed and ignored by uf_ceilings_read.
 *
 * The readers are strict: a missing magic line, an unknown or missing column, a wrong field
 * count, an unparsable number, an unterminated quote or a last line without its newline
 * (a truncated file) is an error naming the file and line. So are: a NUL byte anywhere; a
 * number that is not plain decimal ("nan", "inf", hex floats, overflow); a metric outside its
 * valid range (metrics.c), named with line and column; a duplicate row (same variant and
 * sweep point), ceiling or metadata key; an empty variant; a role other than broken/fixed;
 * more variants, metadata or unit lines than the fixed limits hold (the limit is named:
 * nothing is dropped silently). Empty is the only way to say "not measured". */
#include "results.h"
#include "options.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define RESULTS_VERSION 4     /* v4 added gpm_agree_pts; v3 added step_ms_mean (the step of figures derived from
                               * the mean), the `rank` column and per-rank lines; v2 added
                               * comm_sm_pct, copy_overlap_pct, sm_clock_mhz, sm_clock_min_mhz,
                               * power_w; v1 and v2 are still read */
#define RESULTS_VERSION_RANKS 3 /* the first version with the `rank` column */
#define RESULTS_MAGIC "# underfed-results v4"
#define RESULTS_MAGIC_V3 "# underfed-results v3"
#define RESULTS_MAGIC_V2 "# underfed-results v2"
#define RESULTS_MAGIC_V1 "# underfed-results v1"
#define SERIES_MAGIC "# underfed-series v1"
#define CEILINGS_MAGIC "# underfed-ceilings v1"

/* ---- the tables ------------------------------------------------------------------------- */

/* The metric table, uf_metrics, is metrics.c's. */


#define C(field, unit) {#field, unit, offsetof(uf_ceilings, field)}
const uf_ceiling_desc uf_ceiling_descs[] = {
    C(copy_d2d_gbs, "GB/s"),
    C(gemm_bf16_tflops, "TFLOP/s"), C(gemm_tf32_tflops, "TFLOP/s"),
    C(gemm_fp32_tflops, "TFLOP/s"),
    C(launch_us, "us"), C(graph_node_us, "us"),
    C(h2d_pinned_gbs, "GB/s"), C(h2d_pageable_gbs, "GB/s"),
    C(d2h_pinned_gbs, "GB/s"), C(d2h_pageable_gbs, "GB/s"),
    C(nccl_busbw_gbs, "GB/s"),
};
#undef C
const int uf_n_ceiling_descs = (int)(sizeof uf_ceiling_descs / sizeof uf_ceiling_descs[0]);


/* Copy with truncation; always terminated. */
static void copy_str(char *dst, size_t dstlen, const char *src)
{
    if (dstlen == 0)
        return;
    snprintf(dst, dstlen, "%s", src != NULL ? src : "");
}

static int metric_index(const char *name)
{
    for (int i = 0; i < uf_n_metrics; i++)
        if (strcmp(uf_metrics[i].name, name) == 0)
            return i;
    return -1;
}

static double *metric_ptr(uf_row *r, int i)
{
    return (double *)((char *)r + uf_metrics[i].offset);
}

static double metric_get(const uf_row *r, int i)
{
    return *(const double *)((const char *)r + uf_metrics[i].offset);
}

/* ---- metadata ----------------------------------------------------------------------------- */

/* Set (or replace) key; dropped when the table is full. Line breaks in the value become spaces
 * so that one entry stays one `#` line. */
void uf_meta_set(uf_meta *m, const char *key, const char *fmt, ...)
{
    if (m == NULL || key == NULL || fmt == NULL)
        return;
    int i = 0;
    while (i < m->n && strncmp(m->key[i], key, UF_NAME_LEN - 1) != 0)
        i++;
    if (i == m->n) {
        if (m->n >= UF_MAX_META)
            return;
        copy_str(m->key[i], UF_NAME_LEN, key);
        m->n++;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->value[i], UF_META_VALUE_LEN, fmt, ap);
    va_end(ap);
    for (char *c = m->value[i]; *c != '\0'; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

const char *uf_meta_get(const uf_meta *m, const char *key)
{
    if (m == NULL || key == NULL)
        return NULL;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->key[i], key) == 0)
            return m->value[i];
    return NULL;
}

/* ---- table and rows --------------------------------------------------------------------- */

void uf_table_init(uf_table *t, const char *scenario)
{
    memset(t, 0, sizeof *t);
    copy_str(t->scenario, sizeof t->scenario, scenario);
}

/* A name already used by a column of the table (fixed, axis or extra). */
static int column_taken(const uf_table *t, const char *name)
{
    if (strcmp(name, "variant") == 0 || strcmp(name, "role") == 0 ||
        strcmp(name, "rank") == 0 || strcmp(name, "skip_reason") == 0 ||
        metric_index(name) >= 0)
        return 1;
    for (int i = 0; i < t->n_axes; i++)
        if (strcmp(t->axis_names[i], name) == 0)
            return 1;
    for (int i = 0; i < t->n_extra; i++)
        if (strcmp(t->extra_names[i], name) == 0)
            return 1;
    return 0;
}

/* 0, or -1 when full, the name is empty or too long, or the column exists already. */
int uf_table_add_axis(uf_table *t, const char *name)
{
    if (t->n_axes >= UF_MAX_AXES || name == NULL || name[0] == '\0' ||
        strlen(name) >= UF_NAME_LEN || column_taken(t, name))
        return -1;
    copy_str(t->axis_names[t->n_axes++], UF_NAME_LEN, name);
    return 0;
}

int uf_table_add_extra(uf_table *t, const char *name, const char *unit)
{
    if (t->n_extra >= UF_MAX_EXTRA || name == NULL || name[0] == '\0' ||
        strlen(name) >= UF_NAME_LEN || column_taken(t, name))
        return -1;
    copy_str(t->extra_names[t->n_extra], UF_NAME_LEN, name);
    copy_str(t->extra_units[t->n_extra], UF_NAME_LEN, unit);
    t->n_extra++;
    return 0;
}

/* Every metric, axis and extra NaN, strings empty, no samples, no ranks. The pointers are
 * reset, not freed (the row may be uninitialized memory): uf_table_free frees them. */
void uf_row_clear(uf_row *r)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < UF_MAX_AXES; i++)
        r->axis[i] = NAN;
    for (int i = 0; i < uf_n_metrics; i++)
        *metric_ptr(r, i) = NAN;
    for (int i = 0; i < UF_MAX_EXTRA; i++)
        r->extra[i] = NAN;
    r->samples = NULL;
    r->n_samples = 0;
    r->ranks = NULL;
    r->n_ranks = 0;
}

uf_row *uf_row_add_rank(uf_row *r)
{
    if (r == NULL || r->n_ranks >= UF_MAX_RANKS)
        return NULL;
    uf_row *ranks = realloc(r->ranks, (size_t)(r->n_ranks + 1) * sizeof *ranks);
    if (ranks == NULL)
        return NULL;
    r->ranks = ranks;
    uf_row *k = &ranks[r->n_ranks++];
    uf_row_clear(k);
    copy_str(k->variant, sizeof k->variant, r->variant);
    copy_str(k->role, sizeof k->role, r->role);
    memcpy(k->axis, r->axis, sizeof k->axis);
    return k;
}

double uf_row_rank_value(const uf_row *r, int rank, const char *name)
{
    if (r == NULL || name == NULL || rank < 0 || rank >= r->n_ranks)
        return NAN;
    int i = metric_index(name);
    return i >= 0 && uf_metrics[i].per_device ? metric_get(&r->ranks[rank], i) : NAN;
}

uf_row *uf_table_append(uf_table *t)
{
    if (t->n_rows == t->cap_rows) {
        int cap = t->cap_rows > 0 ? 2 * t->cap_rows : 16;
        uf_row *rows = realloc(t->rows, (size_t)cap * sizeof *rows);
        if (rows == NULL)
            return NULL;
        t->rows = rows;
        t->cap_rows = cap;
    }
    uf_row *r = &t->rows[t->n_rows++];
    uf_row_clear(r);
    return r;
}

void uf_table_free(uf_table *t)
{
    for (int i = 0; i < t->n_rows; i++) {
        free(t->rows[i].samples);
        free(t->rows[i].ranks);     /* rank rows hold no samples and no ranks */
    }
    free(t->rows);
    t->rows = NULL;
    t->n_rows = 0;
    t->cap_rows = 0;
}

double *uf_row_metric(const uf_table *t, uf_row *r, const char *name)
{
    if (t == NULL || r == NULL || name == NULL)
        return NULL;
    int i = metric_index(name);
    if (i >= 0)
        return metric_ptr(r, i);
    for (int e = 0; e < t->n_extra; e++)
        if (strcmp(t->extra_names[e], name) == 0)
            return &r->extra[e];
    return NULL;
}

double uf_table_value(const uf_table *t, const uf_row *r, const char *name)
{
    if (t == NULL || r == NULL || name == NULL)
        return NAN;
    int i = metric_index(name);
    if (i >= 0)
        return metric_get(r, i);
    for (int e = 0; e < t->n_extra; e++)
        if (strcmp(t->extra_names[e], name) == 0)
            return r->extra[e];
    for (int a = 0; a < t->n_axes; a++)
        if (strcmp(t->axis_names[a], name) == 0)
            return r->axis[a];
    return NAN;
}

/* ---- CSV and JSON formatting ------------------------------------------------------------ */

static void csv_string(uf_strbuf *b, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        uf_sb_puts(b, s);
        return;
    }
    uf_sb_putn(b, "\"", 1);
    for (const char *c = s; *c != '\0'; c++) {
        if (*c == '"')
            uf_sb_putn(b, "\"", 1);
        uf_sb_putn(b, c, 1);
    }
    uf_sb_putn(b, "\"", 1);
}

static void csv_number(uf_strbuf *b, double v)
{
    if (!isnan(v))
        uf_sb_printf(b, "%.10g", v);
}

static void json_number(uf_strbuf *b, double v)
{
    if (isfinite(v))
        uf_sb_printf(b, "%.10g", v);
    else
        uf_sb_puts(b, "null");
}

/* `# KEY: VALUE` with any line break in the value flattened. */
static void meta_line(uf_strbuf *b, const char *key, const char *value)
{
    uf_sb_printf(b, "# %s: ", key);
    for (const char *c = value; *c != '\0'; c++)
        uf_sb_putn(b, (*c == '\n' || *c == '\r') ? " " : c, 1);
    uf_sb_putn(b, "\n", 1);
}

/* The lines every CSV flavour starts with: magic, scenario (when given), metadata. */
static void csv_preamble(uf_strbuf *b, const char *magic, const char *scenario, const uf_meta *m)
{
    uf_sb_puts(b, magic);
    uf_sb_putn(b, "\n", 1);
    if (scenario != NULL)
        meta_line(b, "scenario", scenario);
    for (int i = 0; m != NULL && i < m->n; i++)
        if (scenario == NULL || strcmp(m->key[i], "scenario") != 0)
            meta_line(b, m->key[i], m->value[i]);
}

/* One CSV line: a row (rank < 0: the `rank` field empty, or absent when !with_rank) or the
 * figures of one of its ranks. */
static void csv_row_line(uf_strbuf *b, const uf_table *t, const uf_row *row, int with_rank,
                         int rank)
{
    csv_string(b, row->variant);
    uf_sb_putn(b, ",", 1);
    csv_string(b, row->role);
    if (with_rank)
        uf_sb_putn(b, ",", 1);
    if (with_rank && rank >= 0)
        uf_sb_printf(b, "%d", rank);
    for (int a = 0; a < t->n_axes; a++) {
        uf_sb_putn(b, ",", 1);
        csv_number(b, row->axis[a]);
    }
    for (int i = 0; i < uf_n_metrics; i++) {    /* a rank line: per-device metrics only */
        uf_sb_putn(b, ",", 1);
        csv_number(b, rank >= 0 && !uf_metrics[i].per_device ? NAN : metric_get(row, i));
    }
    for (int e = 0; e < t->n_extra; e++) {
        uf_sb_putn(b, ",", 1);
        csv_number(b, rank >= 0 ? NAN : row->extra[e]);
    }
    uf_sb_putn(b, ",", 1);
    csv_string(b, row->skip_reason);
    uf_sb_putn(b, "\n", 1);
}

int uf_table_write_csv(const uf_table *t, const char *path, char *err, size_t errlen)
{
    uf_strbuf b = {0};
    const int with_rank = 1;    /* v3: the `rank` column is always there, empty on a row */
    csv_preamble(&b, RESULTS_MAGIC, t->scenario, &t->meta);
    for (int e = 0; e < t->n_extra; e++) {
        char key[UF_NAME_LEN + 8];
        snprintf(key, sizeof key, "unit.%s", t->extra_names[e]);
        meta_line(&b, key, t->extra_units[e]);
    }
    uf_sb_puts(&b, with_rank ? "variant,role,rank" : "variant,role");
    for (int a = 0; a < t->n_axes; a++) {
        uf_sb_putn(&b, ",", 1);
        csv_string(&b, t->axis_names[a]);
    }
    for (int i = 0; i < uf_n_metrics; i++)
        uf_sb_printf(&b, ",%s", uf_metrics[i].name);
    for (int e = 0; e < t->n_extra; e++) {
        uf_sb_putn(&b, ",", 1);
        csv_string(&b, t->extra_names[e]);
    }
    uf_sb_puts(&b, ",skip_reason\n");
    for (int r = 0; r < t->n_rows; r++) {
        const uf_row *row = &t->rows[r];
        csv_row_line(&b, t, row, with_rank, -1);
        for (int k = 0; k < row->n_ranks; k++)
            csv_row_line(&b, t, &row->ranks[k], with_rank, k);
    }
    return uf_sb_commit(&b, path, err, errlen);
}

static void json_name_unit(uf_strbuf *b, const char *name, const char *unit)
{
    uf_sb_puts(b, "{\"name\":");
    uf_sb_json_string(b, name);
    uf_sb_puts(b, ",\"unit\":");
    uf_sb_json_string(b, unit);
    uf_sb_putn(b, "}", 1);
}

static void json_row(uf_strbuf *b, const uf_table *t, const uf_row *row)
{
    uf_sb_puts(b, "{\"variant\":");
    uf_sb_json_string(b, row->variant);
    uf_sb_puts(b, ",\"role\":");
    uf_sb_json_string(b, row->role);
    uf_sb_puts(b, ",\"axes\":{");
    for (int a = 0; a < t->n_axes; a++) {
        uf_sb_puts(b, a > 0 ? "," : "");
        uf_sb_json_string(b, t->axis_names[a]);
        uf_sb_putn(b, ":", 1);
        json_number(b, row->axis[a]);
    }
    uf_sb_puts(b, "},\"metrics\":{");
    for (int i = 0; i < uf_n_metrics; i++) {
        uf_sb_printf(b, "%s\"%s\":", i > 0 ? "," : "", uf_metrics[i].name);
        json_number(b, metric_get(row, i));
    }
    uf_sb_puts(b, "},\"extras\":{");
    for (int e = 0; e < t->n_extra; e++) {
        uf_sb_puts(b, e > 0 ? "," : "");
        uf_sb_json_string(b, t->extra_names[e]);
        uf_sb_putn(b, ":", 1);
        json_number(b, row->extra[e]);
    }
    uf_sb_puts(b, "},\"skip_reason\":");
    uf_sb_json_string(b, row->skip_reason);
    for (int k = 0; k < row->n_ranks; k++) {
        const uf_row *rank = &row->ranks[k];
        uf_sb_printf(b, "%s{\"rank\":%d,\"metrics\":{", k > 0 ? "," : ",\"ranks\":[", k);
        for (int i = 0, n = 0; i < uf_n_metrics; i++) {
            if (!uf_metrics[i].per_device)
                continue;
            uf_sb_printf(b, "%s\"%s\":", n++ > 0 ? "," : "", uf_metrics[i].name);
            json_number(b, metric_get(rank, i));
        }
        uf_sb_puts(b, "},\"skip_reason\":");
        uf_sb_json_string(b, rank->skip_reason);
        uf_sb_puts(b, k + 1 == row->n_ranks ? "}]" : "}");
    }
    uf_sb_putn(b, "}", 1);
}

int uf_table_write_json(const uf_table *t, const char *path, char *err, size_t errlen)
{
    uf_strbuf b = {0};
    uf_sb_printf(&b, "{\"format\":\"underfed-results\",\"version\":%d,\"scenario\":",
                 RESULTS_VERSION);
    uf_sb_json_string(&b, t->scenario);
    uf_sb_puts(&b, ",\n\"meta\":{");
    for (int i = 0; i < t->meta.n; i++) {
        uf_sb_puts(&b, i > 0 ? "," : "");
        uf_sb_json_string(&b, t->meta.key[i]);
        uf_sb_putn(&b, ":", 1);
        uf_sb_json_string(&b, t->meta.value[i]);
    }
    uf_sb_puts(&b, "},\n\"axes\":[");
    for (int a = 0; a < t->n_axes; a++) {
        uf_sb_puts(&b, a > 0 ? "," : "");
        uf_sb_json_string(&b, t->axis_names[a]);
    }
    uf_sb_puts(&b, "],\n\"extras\":[");
    for (int e = 0; e < t->n_extra; e++) {
        uf_sb_puts(&b, e > 0 ? "," : "");
        json_name_unit(&b, t->extra_names[e], t->extra_units[e]);
    }
    uf_sb_puts(&b, "],\n\"metrics\":[");
    for (int i = 0; i < uf_n_metrics; i++) {
        uf_sb_puts(&b, i > 0 ? "," : "");
        json_name_unit(&b, uf_metrics[i].name, uf_metrics[i].unit);
    }
    uf_sb_puts(&b, "],\n\"rows\":[");
    for (int r = 0; r < t->n_rows; r++) {
        uf_sb_puts(&b, r > 0 ? ",\n" : "\n");
        json_row(&b, t, &t->rows[r]);
    }
    uf_sb_puts(&b, "\n]}\n");
    return uf_sb_commit(&b, path, err, errlen);
}

int uf_table_write_series_csv(const uf_table *t, const char *path, char *err, size_t errlen)
{
    uf_strbuf b = {0};
    csv_preamble(&b, SERIES_MAGIC, t->scenario, &t->meta);
    uf_sb_puts(&b, "variant");
    for (int a = 0; a < t->n_axes; a++) {
        uf_sb_putn(&b, ",", 1);
        csv_string(&b, t->axis_names[a]);
    }
    uf_sb_puts(&b, ",t_ms,sm_active_pct,occupancy_pct,tensor_active_pct,dram_pct\n");
    for (int r = 0; r < t->n_rows; r++) {
        const uf_row *row = &t->rows[r];
        for (size_t s = 0; row->samples != NULL && s < row->n_samples; s++) {
            const uf_pm_sample *p = &row->samples[s];
            csv_string(&b, row->variant);
            for (int a = 0; a < t->n_axes; a++) {
                uf_sb_putn(&b, ",", 1);
                csv_number(&b, row->axis[a]);
            }
            int64_t dt_ns = (int64_t)(p->start_ns - row->samples[0].start_ns);
            uf_sb_printf(&b, ",%.10g", (double)dt_ns / 1e6);
            const double v[4] = {p->sm_active_pct, p->occupancy_pct, p->tensor_active_pct,
                                 p->dram_pct};
            for (int k = 0; k < 4; k++) {
                uf_sb_putn(&b, ",", 1);
                csv_number(&b, v[k]);
            }
            uf_sb_putn(&b, "\n", 1);
        }
    }
    return uf_sb_commit(&b, path, err, errlen);
}

/* ---- files ------------------------------------------------------------------------------ */

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Flush the folder holding path so that the rename itself is durable (best effort). */
static void sync_parent(const char *path)
{
    char *dir = strdup(path);
    if (dir == NULL)
        return;
    char *slash = strrchr(dir, '/');
    const char *name = ".";
    if (slash == dir)
        name = "/";
    else if (slash != NULL) {
        *slash = '\0';
        name = dir;
    }
    int fd = open(name, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

int uf_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    size_t tmplen = strlen(path) + 32;
    char *tmp = malloc(tmplen);
    if (tmp == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    snprintf(tmp, tmplen, "%s.tmp.%ld", path, (long)getpid());
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        uf_set_err(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        goto out_free_tmp;
    }
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        uf_set_err(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
        close(fd);
        goto out_unlink_tmp;
    }
    if (close(fd) != 0) {
        uf_set_err(err, errlen, "%s: cannot close: %s", tmp, strerror(errno));
        goto out_unlink_tmp;
    }
    if (rename(tmp, path) != 0) {
        uf_set_err(err, errlen, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        goto out_unlink_tmp;
    }
    sync_parent(path);
    rc = 0;
    goto out_free_tmp;

out_unlink_tmp:
    unlink(tmp);
out_free_tmp:
    free(tmp);
    return rc;
}

/* One folder: created, or already there as a folder. */
static int mkdir_one(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0755) == 0)
        return 0;
    int saved = errno;
    struct stat st;
    if (saved == EEXIST && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        return uf_set_err(err, errlen, "%s: exists and is not a folder", path);
    }
    return uf_set_err(err, errlen, "%s: cannot create folder: %s", path, strerror(saved));
}

int uf_mkdirs(const char *path, char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0')
        return uf_set_err(err, errlen, "mkdir: empty path");
    char *p = strdup(path);
    if (p == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    int rc = 0;
    for (char *c = p + 1; *c != '\0' && rc == 0; c++) {
        if (*c != '/' || c[-1] == '/')
            continue;
        *c = '\0';
        rc = mkdir_one(p, err, errlen);
        *c = '/';
    }
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    if (rc == 0)
        rc = mkdir_one(p, err, errlen);
    free(p);
    return rc;
}

void uf_slug(const char *name, char *out, size_t outlen)
{
    if (out == NULL || outlen == 0)
        return;
    size_t n = 0;
    int pending_dash = 0;
    for (const char *c = name != NULL ? name : ""; *c != '\0' && n + 1 < outlen; c++) {
        char ch = *c;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (pending_dash && n > 0 && n + 2 < outlen)
                out[n++] = '-';
            else if (pending_dash && n > 0)
                break;      /* no room for the dash and a character after it */
            pending_dash = 0;
            out[n++] = ch;
        } else {
            pending_dash = 1;
        }
    }
    out[n] = '\0';
}

/* ---- the strict reader ------------------------------------------------------------------ */

typedef struct csv_reader {
    const char *path;   /* the file's name in messages */
    char *buf;          /* the whole file, '\r\n' folded to '\n', NUL-terminated */
    size_t len, pos;
    int line;           /* line number of buf[pos] */
    char *rec_start;    /* the current record's first character: fields' columns count from it */
    char **fields;      /* the current record's fields, unescaped in place */
    int n_fields, cap_fields;
} csv_reader;

static int rd_verror(const csv_reader *r, int line, int col, char *err, size_t errlen,
                     const char *fmt, va_list ap)
{
    if (err == NULL || errlen == 0)
        return -1;
    int n = col > 0 ? snprintf(err, errlen, "%s:%d:%d: ", r->path, line, col)
                    : snprintf(err, errlen, "%s:%d: ", r->path, line);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return -1;
}

/* "PATH:LINE: message"; -1. */
static int rd_error(const csv_reader *r, int line, char *err, size_t errlen, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static int rd_error(const csv_reader *r, int line, char *err, size_t errlen, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    rd_verror(r, line, 0, err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* "PATH:LINE:COLUMN: message" (COLUMN counts characters from 1); -1. */
static int rd_error_at(const csv_reader *r, int line, int col, char *err, size_t errlen,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int rd_error_at(const csv_reader *r, int line, int col, char *err, size_t errlen,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rd_verror(r, line, col, err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The column (from 1) where field i of the current record starts. */
static int field_col(const csv_reader *r, int i)
{
    return (int)(r->fields[i] - r->rec_start) + 1;
}

static int read_whole_file(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return uf_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    if (buf == NULL)
        rc = uf_set_err(err, errlen, "%s: out of memory", path);
    else if (ferror(f)) {
        rc = uf_set_err(err, errlen, "%s: cannot read", path);
        free(buf);
    } else {
        buf[n] = '\0';
        *data = buf;
        *len = n;
    }
    fclose(f);
    return rc;
}

/* The reader on a copy of data (len bytes, any content); path names it in messages. CR LF is
 * folded into LF; a NUL byte is an error (the files are text, and C strings would cut there). */
static int reader_init(csv_reader *r, const char *path, const char *data, size_t len,
                       char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->line = 1;
    r->buf = malloc(len + 1);
    if (r->buf == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    if (len > 0)
        memcpy(r->buf, data, len);
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        if (!(r->buf[i] == '\r' && i + 1 < len && r->buf[i + 1] == '\n'))
            r->buf[w++] = r->buf[i];
    r->len = w;
    r->buf[w] = '\0';
    const char *nul = memchr(r->buf, '\0', r->len);
    if (nul != NULL) {
        int line = 1;
        const char *line_start = r->buf;
        for (const char *c = r->buf; c < nul; c++)
            if (*c == '\n') {
                line++;
                line_start = c + 1;
            }
        return rd_error_at(r, line, (int)(nul - line_start) + 1, err, errlen,
                           "NUL byte: not a text file");
    }
    return 0;
}

/* Does the loaded text start with the line `magic`? */
static int reader_has_magic(const csv_reader *r, const char *magic)
{
    size_t mlen = strlen(magic);
    return r->len > mlen && memcmp(r->buf, magic, mlen) == 0 && r->buf[mlen] == '\n';
}

/* Check that the text starts with magic (the file's kind is `what`) and ends with a line
 * break; position after the magic line. */
static int reader_start(csv_reader *r, const char *magic, const char *what, char *err,
                        size_t errlen)
{
    if (!reader_has_magic(r, magic))
        return rd_error(r, 1, err, errlen, "not an %s file (the first line is not '%s')", what,
                        magic);
    if (r->buf[r->len - 1] != '\n') {
        int lines = 1;
        for (size_t i = 0; i < r->len; i++)
            lines += r->buf[i] == '\n';
        return rd_error(r, lines, err, errlen, "truncated: the last line has no line break");
    }
    r->pos = strlen(magic) + 1;
    r->line = 2;
    return 0;
}

static void reader_close(csv_reader *r)
{
    free(r->buf);
    free(r->fields);
    r->buf = NULL;
    r->fields = NULL;
}

/* The next `#` line as key and value ("# KEY: VALUE"); *key NULL for a comment without ": ".
 * Returns 1 when a `#` line was consumed, 0 when the next line is not one. */
static int reader_meta(csv_reader *r, char **key, char **value)
{
    if (r->pos >= r->len || r->buf[r->pos] != '#')
        return 0;
    char *line = r->buf + r->pos;
    char *nl = memchr(line, '\n', r->len - r->pos);
    if (nl == NULL)                 /* reader_start checked the final line break */
        nl = r->buf + r->len;
    *nl = '\0';
    r->pos = (size_t)(nl - r->buf) + (nl < r->buf + r->len);
    r->line++;
    *key = *value = NULL;
    char *text = line + 1;
    while (*text == ' ')
        text++;
    char *sep = strstr(text, ": ");
    if (sep == NULL)
        return 1;
    *sep = '\0';
    *key = text;
    *value = sep + 2;
    return 1;
}

/* A metadata entry fits the table: key 1..UF_NAME_LEN-1 characters, value shorter than
 * UF_META_VALUE_LEN, key not seen before in `seen` (NULL: not checked). Line is the entry's. */
static int check_meta_entry(const csv_reader *r, int line, const char *key, const char *value,
                            const uf_meta *seen, char *err, size_t errlen)
{
    if (key[0] == '\0')
        return rd_error(r, line, err, errlen, "metadata line with an empty key");
    if (strlen(key) >= UF_NAME_LEN)
        return rd_error(r, line, err, errlen, "metadata key longer than %d characters",
                        UF_NAME_LEN - 1);
    if (strlen(value) >= UF_META_VALUE_LEN)
        return rd_error(r, line, err, errlen, "metadata '%s': value longer than %d characters",
                        key, UF_META_VALUE_LEN - 1);
    if (seen != NULL && uf_meta_get(seen, key) != NULL)
        return rd_error(r, line, err, errlen, "metadata key '%s' appears twice", key);
    if (seen != NULL && seen->n >= UF_MAX_META)
        return rd_error(r, line, err, errlen, "more than %d metadata lines", UF_MAX_META);
    return 0;
}

static int add_field(csv_reader *r, char *field)
{
    if (r->n_fields == r->cap_fields) {
        int cap = r->cap_fields > 0 ? 2 * r->cap_fields : 64;
        char **fields = realloc(r->fields, (size_t)cap * sizeof *fields);
        if (fields == NULL)
            return -1;
        r->fields = fields;
        r->cap_fields = cap;
    }
    r->fields[r->n_fields++] = field;
    return 0;
}

/* One field starting at *pp; unescaped in place into w. Leaves *pp on its delimiter. */
static int parse_field(csv_reader *r, char **pp, int start_line, char *err, size_t errlen)
{
    char *p = *pp, *end = r->buf + r->len, *w = p;
    if (*p == '"') {
        for (p++;; p++) {
            if (p >= end)
                return rd_error(r, start_line, err, errlen, "unterminated quote");
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') {
                    *w++ = '"';
                    p++;
                    continue;
                }
                p++;
                break;
            }
            if (*p == '\n')
                r->line++;
            *w++ = *p;
        }
        if (*p != ',' && *p != '\n')
            return rd_error(r, r->line, err, errlen, "text after a closing quote");
    } else {
        for (; *p != ',' && *p != '\n'; p++) {
            if (*p == '"')
                return rd_error(r, r->line, err, errlen, "quote inside an unquoted field");
            *w++ = *p;
        }
    }
    *pp = p;
    char delim = *p;    /* w <= p: read the delimiter before terminating the field */
    *w = '\0';
    return delim == '\n' ? 1 : 0;
}

/* The next record into r->fields. Returns 1 with the record's first line in *line, 0 at the
 * end of the file, -1 on a format error. */
static int reader_record(csv_reader *r, int *line, char *err, size_t errlen)
{
    r->n_fields = 0;
    if (r->pos >= r->len)
        return 0;
    *line = r->line;
    char *p = r->buf + r->pos;
    r->rec_start = p;
    for (;;) {
        char *field = p;
        int last = parse_field(r, &p, *line, err, errlen);
        if (last < 0)
            return -1;
        if (add_field(r, field) != 0)
            return rd_error(r, *line, err, errlen, "out of memory");
        p++;    /* past the delimiter */
        if (last) {
            r->line++;
            break;
        }
    }
    r->pos = (size_t)(p - r->buf);
    return 1;
}

/* Plain decimal: [+-] digits [. digits] [e|E [+-] digits], at least one digit in the mantissa.
 * No "nan", "inf", hex floats, spaces or suffixes. */
static int is_decimal(const char *s)
{
    const char *c = s;
    int digits = 0;
    if (*c == '+' || *c == '-')
        c++;
    for (; *c >= '0' && *c <= '9'; c++)
        digits++;
    if (*c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++)
            digits++;
    if (digits == 0)
        return 0;
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return 0;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    return *c == '\0';
}

/* A number field: empty is NaN (not measured); otherwise plain decimal text of a finite
 * value (an overflow to infinity is refused, an underflow reads as the nearest double). */
static int parse_value(const char *s, double *out)
{
    if (s[0] == '\0') {
        *out = NAN;
        return 0;
    }
    if (!is_decimal(s))
        return -1;
    double v = strtod(s, NULL);
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Field i as a number into *out; an error naming line, column and the column's name. */
static int read_number(const csv_reader *r, int line, int i, const char *col, double *out,
                       char *err, size_t errlen)
{
    if (parse_value(r->fields[i], out) != 0)
        return rd_error_at(r, line, field_col(r, i), err, errlen,
                           "column '%s': '%s' is not a number (plain decimal, finite; empty "
                           "if not measured)", col, r->fields[i]);
    return 0;
}

/* Field i as the metric m: a number within m's valid range. */
static int read_metric(const csv_reader *r, int line, int i, const uf_metric_desc *m,
                       double *out, char *err, size_t errlen)
{
    if (read_number(r, line, i, m->name, out, err, errlen) != 0)
        return -1;
    if (!uf_metric_valid(m, *out)) {
        char range[64];
        uf_metric_range_text(m, range, sizeof range);
        return rd_error_at(r, line, field_col(r, i), err, errlen,
                           "column '%s': %s is outside its valid range %s (%s)", m->name,
                           r->fields[i], range, m->hint);
    }
    return 0;
}

/* ---- the results reader ----------------------------------------------------------------- */

typedef enum {
    COL_VARIANT, COL_ROLE, COL_RANK, COL_AXIS, COL_METRIC, COL_EXTRA, COL_SKIP
} col_kind;

typedef struct col_map {
    col_kind kind;
    int index;      /* axis, metric or extra index */
} col_map;

/* Units from `# unit.NAME: UNIT` lines, matched to extras once the header is known. */
typedef struct unit_list {
    int n;
    char name[UF_MAX_META][UF_NAME_LEN];
    char unit[UF_MAX_META][UF_NAME_LEN];
    int line[UF_MAX_META];
} unit_list;

/* What the reader keeps while it reads one results file. */
typedef struct results_state {
    int version;            /* format version of the magic line */
    int scenario_line;      /* line of `# scenario:`; 0 when there is none */
    unit_list units;
    char **header;          /* the header's fields (in the reader's buffer) */
    col_map *cols;
    int n_cols;
    int *row_lines;         /* the line of each row read so far */
    int cap_row_lines;
    int n_variants;         /* distinct variants so far */
    char variants[UF_MAX_VARIANTS][UF_NAME_LEN];
} results_state;

static int read_unit_line(const csv_reader *r, int line, const char *key, const char *value,
                          unit_list *units, char *err, size_t errlen)
{
    const char *name = key + 5;
    if (name[0] == '\0' || strlen(key) >= UF_NAME_LEN)
        return rd_error(r, line, err, errlen, "bad unit line '%s'", key);
    if (strlen(value) >= UF_NAME_LEN)
        return rd_error(r, line, err, errlen, "%s: unit longer than %d characters", key,
                        UF_NAME_LEN - 1);
    for (int u = 0; u < units->n; u++)
        if (strcmp(units->name[u], name) == 0)
            return rd_error(r, line, err, errlen, "metadata key '%s' appears twice (line %d)",
                            key, units->line[u]);
    if (units->n >= UF_MAX_META)
        return rd_error(r, line, err, errlen, "more than %d unit lines", UF_MAX_META);
    copy_str(units->name[units->n], UF_NAME_LEN, name);
    copy_str(units->unit[units->n], UF_NAME_LEN, value);
    units->line[units->n++] = line;
    return 0;
}

static int read_results_meta(csv_reader *r, uf_table *t, results_state *st, char *err,
                             size_t errlen)
{
    char *key, *value;
    while (reader_meta(r, &key, &value)) {
        int line = r->line - 1;
        if (key == NULL)
            continue;
        if (strcmp(key, "scenario") == 0) {
            if (st->scenario_line != 0)
                return rd_error(r, line, err, errlen, "metadata key 'scenario' appears twice "
                                "(line %d)", st->scenario_line);
            if (value[0] == '\0' || strlen(value) >= sizeof t->scenario)
                return rd_error(r, line, err, errlen, "scenario name empty or longer than %zu "
                                "characters", sizeof t->scenario - 1);
            copy_str(t->scenario, sizeof t->scenario, value);
            st->scenario_line = line;
        } else if (strncmp(key, "unit.", 5) == 0) {
            if (read_unit_line(r, line, key, value, &st->units, err, errlen) != 0)
                return -1;
        } else {
            if (check_meta_entry(r, line, key, value, &t->meta, err, errlen) != 0)
                return -1;
            uf_meta_set(&t->meta, key, "%s", value);
        }
    }
    return 0;
}

/* Map the header's columns: variant, role, rank (v3), axes, every fixed metric, extras,
 * skip_reason. */
static int map_header(csv_reader *r, int line, int version, uf_table *t, col_map *cols,
                      char *err, size_t errlen)
{
    char **f = r->fields;
    int n = r->n_fields;
    int axis0 = version >= RESULTS_VERSION_RANKS ? 3 : 2;  /* the first axis column */
    if (strcmp(f[0], "variant") != 0)
        return rd_error(r, line, err, errlen, "missing required column 'variant' (first)");
    if (n < 2 || strcmp(f[1], "role") != 0)
        return rd_error(r, line, err, errlen, "missing required column 'role' (second)");
    if (axis0 == 3 && (n < 3 || strcmp(f[2], "rank") != 0))
        return rd_error(r, line, err, errlen, "missing required column 'rank' (third, v3)");
    if (strcmp(f[n - 1], "skip_reason") != 0)
        return rd_error(r, line, err, errlen, "missing required column 'skip_reason' (last)");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(f[i], f[j]) == 0)
                return rd_error(r, line, err, errlen, "column '%s' appears twice", f[i]);
    /* Axes run from `role` to the first fixed metric (step_ms); extras from the last fixed
     * metric to skip_reason. */
    int first = -1, last = -1;
    for (int i = axis0; i < n - 1; i++) {
        if (first < 0 && strcmp(f[i], uf_metrics[0].name) == 0)
            first = i;
        if (metric_index(f[i]) >= 0)
            last = i;
    }
    if (first < 0)
        return rd_error(r, line, err, errlen, "missing required column '%s'",
                        uf_metrics[0].name);
    cols[0].kind = COL_VARIANT;
    cols[1].kind = COL_ROLE;
    if (axis0 == 3)
        cols[2].kind = COL_RANK;
    cols[n - 1].kind = COL_SKIP;
    if (first - axis0 > UF_MAX_AXES)
        return rd_error(r, line, err, errlen, "too many axes (%d, at most %d)", first - axis0,
                        UF_MAX_AXES);
    for (int i = axis0; i < first; i++) {
        if (f[i][0] == '\0' || uf_table_add_axis(t, f[i]) != 0)
            return rd_error(r, line, err, errlen, "bad axis column '%s'", f[i]);
        cols[i].kind = COL_AXIS;
        cols[i].index = i - axis0;
    }
    int seen = 0;
    for (int i = first; i <= last; i++) {
        int m = metric_index(f[i]);
        if (m < 0)
            return rd_error(r, line, err, errlen, "unknown column '%s'", f[i]);
        if (uf_metrics[m].since > version)
            return rd_error(r, line, err, errlen, "column '%s' is not in format v%d", f[i],
                            version);
        cols[i].kind = COL_METRIC;
        cols[i].index = m;
        seen++;
    }
    int required = 0;
    for (int m = 0; m < uf_n_metrics; m++)
        required += uf_metrics[m].since <= version;
    if (seen != required) {
        for (int m = 0; m < uf_n_metrics; m++) {
            int found = uf_metrics[m].since > version;
            for (int i = first; i <= last && !found; i++)
                found = strcmp(f[i], uf_metrics[m].name) == 0;
            if (!found)
                return rd_error(r, line, err, errlen, "missing required column '%s'",
                                uf_metrics[m].name);
        }
    }
    if (n - 2 - last > UF_MAX_EXTRA)
        return rd_error(r, line, err, errlen, "too many extra columns (%d, at most %d)",
                        n - 2 - last, UF_MAX_EXTRA);
    for (int i = last + 1; i < n - 1; i++) {
        if (f[i][0] == '\0' || uf_table_add_extra(t, f[i], "") != 0)
            return rd_error(r, line, err, errlen, "bad extra column '%s'", f[i]);
        cols[i].kind = COL_EXTRA;
        cols[i].index = i - last - 1;
    }
    return 0;
}

/* Extra units from the unit list; unit lines naming no extra stay metadata. */
static int attach_units(const csv_reader *r, uf_table *t, const unit_list *units, char *err,
                        size_t errlen)
{
    for (int u = 0; u < units->n; u++) {
        int matched = 0;
        for (int e = 0; e < t->n_extra; e++) {
            if (strcmp(t->extra_names[e], units->name[u]) == 0) {
                copy_str(t->extra_units[e], UF_NAME_LEN, units->unit[u]);
                matched = 1;
            }
        }
        if (!matched) {
            char key[UF_NAME_LEN + 8];
            snprintf(key, sizeof key, "unit.%s", units->name[u]);
            if (check_meta_entry(r, units->line[u], key, units->unit[u], &t->meta, err,
                                 errlen) != 0)
                return -1;
            uf_meta_set(&t->meta, key, "%s", units->unit[u]);
        }
    }
    return 0;
}

static int read_string_field(const csv_reader *r, int line, int i, const char *col,
                             char *dst, size_t dstlen, char *err, size_t errlen)
{
    const char *s = r->fields[i];
    if (strlen(s) >= dstlen)
        return rd_error_at(r, line, field_col(r, i), err, errlen,
                           "column '%s': longer than %zu characters", col, dstlen - 1);
    copy_str(dst, dstlen, s);
    return 0;
}

/* A rank line (its `rank` field in rank) belongs to the last row: same variant, role and
 * axes, the next rank in order, and only per-device metrics. Attach it there. */
static int attach_rank_line(const csv_reader *r, int line, uf_table *t, const uf_row *got,
                            double rank, char *err, size_t errlen)
{
    uf_row *owner = t->n_rows > 0 ? &t->rows[t->n_rows - 1] : NULL;
    int same = owner != NULL && strcmp(owner->variant, got->variant) == 0 &&
               strcmp(owner->role, got->role) == 0;
    for (int a = 0; same && a < t->n_axes; a++)
        same = owner->axis[a] == got->axis[a] || (isnan(owner->axis[a]) && isnan(got->axis[a]));
    if (!same)
        return rd_error(r, line, err, errlen, "rank %g: not after the line of its row (same "
                        "variant, role and axes, an empty rank)", rank);
    if (rank != owner->n_ranks || owner->n_ranks >= UF_MAX_RANKS)
        return rd_error(r, line, err, errlen, "rank %g: expected rank %d (ranks in order from "
                        "0, at most %d)", rank, owner->n_ranks, UF_MAX_RANKS);
    for (int i = 0; i < uf_n_metrics; i++)
        if (!uf_metrics[i].per_device && !isnan(metric_get(got, i)))
            return rd_error(r, line, err, errlen, "rank %g: column '%s' is not measured per "
                            "GPU, it must be empty", rank, uf_metrics[i].name);
    for (int e = 0; e < t->n_extra; e++)
        if (!isnan(got->extra[e]))
            return rd_error(r, line, err, errlen, "rank %g: extra column '%s' must be empty",
                            rank, t->extra_names[e]);
    uf_row *k = uf_row_add_rank(owner);
    if (k == NULL)
        return rd_error(r, line, err, errlen, "out of memory");
    for (int i = 0; i < uf_n_metrics; i++)
        *metric_ptr(k, i) = metric_get(got, i);
    copy_str(k->skip_reason, sizeof k->skip_reason, got->skip_reason);
    return 0;
}

/* The name and role of a row: a variant is named, a role is broken or fixed. */
static int check_row_names(const csv_reader *r, int line, const uf_row *row, char *err,
                           size_t errlen)
{
    if (row->variant[0] == '\0')
        return rd_error_at(r, line, 1, err, errlen, "empty variant name");
    if (strcmp(row->role, "broken") != 0 && strcmp(row->role, "fixed") != 0)
        return rd_error_at(r, line, field_col(r, 1), err, errlen,
                           "column 'role': '%s' is not 'broken' or 'fixed'", row->role);
    return 0;
}

/* A row with its line, for the duplicate check. */
typedef struct row_ref {
    const uf_row *row;
    int line, n_axes;
} row_ref;

/* Order by variant, then sweep point (an empty axis value first); 0: same variant and point. */
static int cmp_row_ref(const void *x, const void *y)
{
    const row_ref *a = x, *b = y;
    int c = strcmp(a->row->variant, b->row->variant);
    for (int k = 0; c == 0 && k < a->n_axes; k++) {
        double u = a->row->axis[k], v = b->row->axis[k];
        c = isnan(u) || isnan(v) ? isnan(v) - isnan(u) : (u > v) - (u < v);
    }
    return c;
}

/* No second row of a variant at one sweep point: sorted, then neighbours compared
 * (O(n log n): a file of many rows stays fast). The error names both lines. */
static int check_duplicate_rows(const csv_reader *r, const uf_table *t, const int *lines,
                                char *err, size_t errlen)
{
    if (t->n_rows < 2)
        return 0;
    row_ref *refs = malloc((size_t)t->n_rows * sizeof *refs);
    if (refs == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", r->path);
    for (int i = 0; i < t->n_rows; i++)
        refs[i] = (row_ref){&t->rows[i], lines[i], t->n_axes};
    qsort(refs, (size_t)t->n_rows, sizeof *refs, cmp_row_ref);
    int rc = 0;
    for (int i = 1; i < t->n_rows && rc == 0; i++) {
        if (cmp_row_ref(&refs[i - 1], &refs[i]) != 0)
            continue;
        int first = refs[i - 1].line < refs[i].line ? refs[i - 1].line : refs[i].line;
        int second = refs[i - 1].line ^ refs[i].line ^ first;
        rc = rd_error(r, second, err, errlen, "duplicate row: variant '%s' at this sweep point "
                      "is already on line %d", refs[i].row->variant, first);
    }
    free(refs);
    return rc;
}

/* The last row's line kept, and its variant counted: no more variants than the tools hold
 * (UF_MAX_VARIANTS). */
static int note_row(const csv_reader *r, int line, const uf_table *t, results_state *st,
                    char *err, size_t errlen)
{
    const uf_row *row = &t->rows[t->n_rows - 1];
    int variant_seen = 0;
    for (int v = 0; v < st->n_variants && !variant_seen; v++)
        variant_seen = strcmp(st->variants[v], row->variant) == 0;
    if (!variant_seen) {
        if (st->n_variants == UF_MAX_VARIANTS)
            return rd_error(r, line, err, errlen, "more than %d variants (the limit of the "
                            "tools)", UF_MAX_VARIANTS);
        copy_str(st->variants[st->n_variants++], UF_NAME_LEN, row->variant);
    }
    if (t->n_rows > st->cap_row_lines) {
        int cap = st->cap_row_lines > 0 ? 2 * st->cap_row_lines : 64;
        int *lines = realloc(st->row_lines, (size_t)cap * sizeof *lines);
        if (lines == NULL)
            return rd_error(r, line, err, errlen, "out of memory");
        st->row_lines = lines;
        st->cap_row_lines = cap;
    }
    st->row_lines[t->n_rows - 1] = line;
    return 0;
}

static int read_row(csv_reader *r, int line, uf_table *t, results_state *st, char *err,
                    size_t errlen)
{
    if (r->n_fields != st->n_cols)
        return rd_error(r, line, err, errlen, "%d fields, the header has %d", r->n_fields,
                        st->n_cols);
    uf_row got;
    double rank = NAN;          /* v3: a rank line's rank; empty on a row's own line */
    uf_row_clear(&got);
    uf_row *row = &got;
    for (int i = 0; i < st->n_cols; i++) {
        const col_map *c = &st->cols[i];
        const char *name = st->header[i];
        int rc = 0;
        switch (c->kind) {
        case COL_VARIANT:
            rc = read_string_field(r, line, i, name, row->variant, sizeof row->variant, err,
                                   errlen);
            break;
        case COL_ROLE:
            rc = read_string_field(r, line, i, name, row->role, sizeof row->role, err, errlen);
            break;
        case COL_SKIP:
            rc = read_string_field(r, line, i, name, row->skip_reason, sizeof row->skip_reason,
                                   err, errlen);
            break;
        case COL_RANK:
            rc = read_number(r, line, i, name, &rank, err, errlen);
            if (rc == 0 && !isnan(rank) && (rank < 0 || rank != floor(rank)))
                rc = rd_error_at(r, line, field_col(r, i), err, errlen,
                                 "column 'rank': '%s' is not a rank", r->fields[i]);
            break;
        case COL_AXIS:
            rc = read_number(r, line, i, name, &row->axis[c->index], err, errlen);
            break;
        case COL_METRIC:
            rc = read_metric(r, line, i, &uf_metrics[c->index], metric_ptr(row, c->index), err,
                             errlen);
            break;
        case COL_EXTRA:
            rc = read_number(r, line, i, name, &row->extra[c->index], err, errlen);
            break;
        }
        if (rc != 0)
            return -1;
    }
    if (check_row_names(r, line, row, err, errlen) != 0)
        return -1;
    if (!isnan(rank))
        return attach_rank_line(r, line, t, &got, rank, err, errlen);
    uf_row *appended = uf_table_append(t);
    if (appended == NULL)
        return rd_error(r, line, err, errlen, "out of memory");
    *appended = got;
    return note_row(r, line, t, st, err, errlen);
}

/* The header line: columns mapped, units attached. */
static int read_results_header(csv_reader *r, uf_table *t, results_state *st, char *err,
                               size_t errlen)
{
    int line = r->line;
    int got = reader_record(r, &line, err, errlen);
    if (got < 0)
        return -1;
    if (got == 0)
        return rd_error(r, r->line, err, errlen, "missing header line");
    st->n_cols = r->n_fields;
    st->header = malloc((size_t)st->n_cols * sizeof *st->header);
    st->cols = calloc((size_t)st->n_cols, sizeof *st->cols);
    if (st->header == NULL || st->cols == NULL)
        return rd_error(r, line, err, errlen, "out of memory");
    /* the fields point into r->buf: they stay valid while the reader is open */
    memcpy(st->header, r->fields, (size_t)st->n_cols * sizeof *st->header);
    if (map_header(r, line, st->version, t, st->cols, err, errlen) != 0)
        return -1;
    return attach_units(r, t, &st->units, err, errlen);
}

/* A result folder names each file after its scenario: `# scenario:` must say the same. */
static int check_scenario(const csv_reader *r, const uf_table *t, const results_state *st,
                          const char *scenario, char *err, size_t errlen)
{
    if (scenario == NULL)
        return 0;
    if (st->scenario_line == 0)
        return rd_error(r, 2, err, errlen, "no '# scenario:' line (the file name says '%s')",
                        scenario);
    if (strcmp(t->scenario, scenario) != 0)
        return rd_error(r, st->scenario_line, err, errlen, "scenario '%s' does not match the "
                        "file name ('%s.csv')", t->scenario, scenario);
    return 0;
}

static const char *const results_magic[RESULTS_VERSION + 1] = {
    NULL, RESULTS_MAGIC_V1, RESULTS_MAGIC_V2, RESULTS_MAGIC_V3, RESULTS_MAGIC};

/* The results reader on an initialized reader (reader_init). */
static int parse_results(csv_reader *r, uf_table *t, const char *scenario, char *err,
                         size_t errlen)
{
    int rc = -1;
    results_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", r->path);
    st->version = RESULTS_VERSION;     /* reader_start reports any other magic line */
    for (int v = 1; v < RESULTS_VERSION; v++)
        if (reader_has_magic(r, results_magic[v]))
            st->version = v;
    if (reader_start(r, results_magic[st->version], "underfed results", err, errlen) != 0)
        goto out_free;
    if (read_results_meta(r, t, st, err, errlen) != 0 ||
        check_scenario(r, t, st, scenario, err, errlen) != 0 ||
        read_results_header(r, t, st, err, errlen) != 0)
        goto out_free;
    int got, line = r->line;
    while ((got = reader_record(r, &line, err, errlen)) > 0)
        if (read_row(r, line, t, st, err, errlen) != 0)
            goto out_free;
    if (got == 0)
        rc = check_duplicate_rows(r, t, st->row_lines, err, errlen);

out_free:
    free(st->row_lines);
    free(st->cols);
    free(st->header);
    free(st);
    return rc;
}

int uf_table_parse_csv(uf_table *t, const char *path, const char *data, size_t len,
                       const char *scenario, char *err, size_t errlen)
{
    if (t->n_axes != 0 || t->n_extra != 0 || t->n_rows != 0)
        return uf_set_err(err, errlen, "%s: the reader fills an empty table", path);
    csv_reader r;
    int rc = reader_init(&r, path, data, len, err, errlen);
    if (rc == 0)
        rc = parse_results(&r, t, scenario, err, errlen);
    reader_close(&r);
    return rc;
}

/* Read path, then parse it as the results of `scenario` (NULL: any). */
static int read_results_file(uf_table *t, const char *path, const char *scenario, char *err,
                             size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    if (t->n_axes != 0 || t->n_extra != 0 || t->n_rows != 0)
        return uf_set_err(err, errlen, "%s: the reader fills an empty table", path);
    if (read_whole_file(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = uf_table_parse_csv(t, path, data, len, scenario, err, errlen);
    free(data);
    return rc;
}

int uf_table_read_csv(uf_table *t, const char *path, char *err, size_t errlen)
{
    return read_results_file(t, path, NULL, err, errlen);
}

int uf_table_read_scenario(uf_table *t, const char *dir, const char *name, char *err,
                           size_t errlen)
{
    size_t len = strlen(dir) + strlen(name) + 6;
    char *path = malloc(len);
    if (path == NULL)
        return uf_set_err(err, errlen, "%s/%s.csv: out of memory", dir, name);
    snprintf(path, len, "%s/%s.csv", dir, name);
    int rc = read_results_file(t, path, name, err, errlen);
    free(path);
    return rc;
}

/* ---- ceilings --------------------------------------------------------------------------- */

static const char *const ceiling_columns[] = {"ceiling", "value", "unit", "spread_pct", "note"};
enum { N_CEILING_COLUMNS = 5 };

void uf_ceilings_clear(uf_ceilings *c)
{
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        *(double *)((char *)c + uf_ceiling_descs[i].offset) = NAN;
}

int uf_ceilings_from_meta(const uf_meta *m, uf_ceilings *c)
{
    int recorded = 0;
    uf_ceilings_clear(c);
    for (int i = 0; i < uf_n_ceiling_descs; i++) {
        char key[UF_NAME_LEN + 16];
        snprintf(key, sizeof key, "ceiling.%s", uf_ceiling_descs[i].name);
        const char *v = uf_meta_get(m, key);
        double x;
        if (v && parse_value(v, &x) == 0 && !isnan(x)) {
            *(double *)((char *)c + uf_ceiling_descs[i].offset) = x;
            recorded++;
        }
    }
    return recorded;
}

int uf_ceilings_write(const char *path, const uf_meta *meta, const uf_ceiling_row *rows, int n,
                      char *err, size_t errlen)
{
    uf_strbuf b = {0};
    csv_preamble(&b, CEILINGS_MAGIC, NULL, meta);
    for (int i = 0; i < N_CEILING_COLUMNS; i++)
        uf_sb_printf(&b, "%s%s", i > 0 ? "," : "", ceiling_columns[i]);
    uf_sb_putn(&b, "\n", 1);
    for (int i = 0; i < n; i++) {
        csv_string(&b, rows[i].name);
        uf_sb_putn(&b, ",", 1);
        csv_number(&b, rows[i].value);
        uf_sb_putn(&b, ",", 1);
        csv_string(&b, rows[i].unit);
        uf_sb_putn(&b, ",", 1);
        csv_number(&b, rows[i].spread_pct);
        uf_sb_putn(&b, ",", 1);
        csv_string(&b, rows[i].note);
        uf_sb_putn(&b, "\n", 1);
    }
    return uf_sb_commit(&b, path, err, errlen);
}

static int check_ceiling_header(const csv_reader *r, int line, char *err, size_t errlen)
{
    for (int i = 0; i < r->n_fields && i < N_CEILING_COLUMNS; i++)
        if (strcmp(r->fields[i], ceiling_columns[i]) != 0)
            return rd_error(r, line, err, errlen, "unknown column '%s' (expected '%s')",
                            r->fields[i], ceiling_columns[i]);
    if (r->n_fields < N_CEILING_COLUMNS)
        return rd_error(r, line, err, errlen, "missing required column '%s'",
                        ceiling_columns[r->n_fields]);
    if (r->n_fields > N_CEILING_COLUMNS)
        return rd_error(r, line, err, errlen, "unknown column '%s'",
                        r->fields[N_CEILING_COLUMNS]);
    return 0;
}

/* The names read so far, for duplicates: each name and its line. */
typedef struct ceiling_name {
    char name[UF_NAME_LEN];
    int line;
} ceiling_name;

typedef struct ceiling_names {
    ceiling_name *names;
    int n, cap;
} ceiling_names;

static int note_ceiling_name(const csv_reader *r, int line, ceiling_names *seen, char *err,
                             size_t errlen)
{
    const char *name = r->fields[0];
    if (strlen(name) >= UF_NAME_LEN)
        return rd_error_at(r, line, 1, err, errlen, "ceiling name longer than %d characters",
                           UF_NAME_LEN - 1);
    if (seen->n == seen->cap) {
        int cap = seen->cap > 0 ? 2 * seen->cap : 32;
        ceiling_name *names = realloc(seen->names, (size_t)cap * sizeof *names);
        if (names == NULL)
            return rd_error(r, line, err, errlen, "out of memory");
        seen->names = names;
        seen->cap = cap;
    }
    copy_str(seen->names[seen->n].name, UF_NAME_LEN, name);
    seen->names[seen->n++].line = line;
    return 0;
}

static int cmp_ceiling_name(const void *x, const void *y)
{
    const ceiling_name *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c != 0 ? c : (a->line > b->line) - (a->line < b->line);
}

/* No ceiling twice: sorted by name (then line), neighbours compared. */
static int check_duplicate_ceilings(const csv_reader *r, ceiling_names *seen, char *err,
                                    size_t errlen)
{
    if (seen->n < 2)
        return 0;
    qsort(seen->names, (size_t)seen->n, sizeof *seen->names, cmp_ceiling_name);
    for (int i = 1; i < seen->n; i++)
        if (strcmp(seen->names[i - 1].name, seen->names[i].name) == 0)
            return rd_error_at(r, seen->names[i].line, 1, err, errlen, "duplicate ceiling '%s' "
                               "(already on line %d)", seen->names[i].name,
                               seen->names[i - 1].line);
    return 0;
}

/* One data line: the value goes into the struct when the name is a known ceiling. A ceiling
 * is a rate or a cost per operation: > 0 (empty when not measured); its spread >= 0. */
static int read_ceiling_row(const csv_reader *r, int line, uf_ceilings *c, ceiling_names *seen,
                            char *err, size_t errlen)
{
    if (r->n_fields != N_CEILING_COLUMNS)
        return rd_error(r, line, err, errlen, "%d fields, the header has %d", r->n_fields,
                        N_CEILING_COLUMNS);
    const char *name = r->fields[0];
    if (name[0] == '\0')
        return rd_error_at(r, line, 1, err, errlen, "empty ceiling name");
    if (note_ceiling_name(r, line, seen, err, errlen) != 0)
        return -1;
    double value, spread;
    if (read_number(r, line, 1, "value", &value, err, errlen) != 0 ||
        read_number(r, line, 3, "spread_pct", &spread, err, errlen) != 0)
        return -1;
    if (value <= 0)
        return rd_error_at(r, line, field_col(r, 1), err, errlen, "column 'value': %s is "
                           "outside its valid range > 0 (a rate or a cost)", r->fields[1]);
    if (spread < 0)
        return rd_error_at(r, line, field_col(r, 3), err, errlen, "column 'spread_pct': %s is "
                           "outside its valid range >= 0", r->fields[3]);
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, name) == 0)
            *(double *)((char *)c + uf_ceiling_descs[i].offset) = value;
    return 0;
}

/* The ceilings reader on an initialized reader (reader_init). */
static int parse_ceilings(csv_reader *r, uf_ceilings *c, uf_meta *meta, char *err,
                          size_t errlen)
{
    ceiling_names seen = {0};
    uf_meta *keys = calloc(1, sizeof *keys);   /* the metadata keys seen, for duplicates */
    int rc = -1, line = 0;
    if (keys == NULL) {
        uf_set_err(err, errlen, "%s: out of memory", r->path);
        goto out_free;
    }
    if (reader_start(r, CEILINGS_MAGIC, "underfed ceilings", err, errlen) != 0)
        goto out_free;
    char *key, *value;
    while (reader_meta(r, &key, &value)) {
        if (key == NULL)
            continue;
        if (check_meta_entry(r, r->line - 1, key, value, keys, err, errlen) != 0)
            goto out_free;
        uf_meta_set(keys, key, "%s", "");
        if (meta != NULL)
            uf_meta_set(meta, key, "%s", value);
    }
    int got = reader_record(r, &line, err, errlen);
    if (got < 0)
        goto out_free;
    if (got == 0) {
        rd_error(r, r->line, err, errlen, "missing header line");
        goto out_free;
    }
    if (check_ceiling_header(r, line, err, errlen) != 0)
        goto out_free;
    while ((got = reader_record(r, &line, err, errlen)) > 0)
        if (read_ceiling_row(r, line, c, &seen, err, errlen) != 0)
            goto out_free;
    if (got == 0)
        rc = check_duplicate_ceilings(r, &seen, err, errlen);

out_free:
    free(keys);
    free(seen.names);
    return rc;
}

int uf_ceilings_parse(const char *path, const char *data, size_t len, uf_ceilings *c,
                      uf_meta *meta, char *err, size_t errlen)
{
    uf_ceilings_clear(c);
    if (meta)
        memset(meta, 0, sizeof *meta);
    csv_reader r;
    int rc = reader_init(&r, path, data, len, err, errlen);
    if (rc == 0)
        rc = parse_ceilings(&r, c, meta, err, errlen);
    reader_close(&r);
    if (rc != 0)
        uf_ceilings_clear(c);
    return rc;
}

int uf_ceilings_read(const char *path, uf_ceilings *c, char *err, size_t errlen)
{
    return uf_ceilings_read_meta(path, c, NULL, err, errlen);
}

int uf_ceilings_read_meta(const char *path, uf_ceilings *c, uf_meta *meta, char *err,
                          size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    uf_ceilings_clear(c);
    if (meta)
        memset(meta, 0, sizeof *meta);
    if (read_whole_file(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = uf_ceilings_parse(path, data, len, c, meta, err, errlen);
    free(data);
    return rc;
}

/* ---- the series reader ------------------------------------------------------------------ */

static const char *const series_metrics[] = {"t_ms", "sm_active_pct", "occupancy_pct",
                                             "tensor_active_pct", "dram_pct"};
enum { N_SERIES_METRICS = 5 };

/* The header must be: variant, the table's axes in its order, then the series metrics. */
static int check_series_header(const csv_reader *r, int line, const uf_table *t, char *err,
                               size_t errlen)
{
    int want = 1 + t->n_axes + N_SERIES_METRICS;
    for (int i = 0; i < r->n_fields && i < want; i++) {
        const char *expected = i == 0 ? "variant"
                               : i <= t->n_axes ? t->axis_names[i - 1]
                                                : series_metrics[i - 1 - t->n_axes];
        if (strcmp(r->fields[i], expected) != 0)
            return rd_error(r, line, err, errlen, "column %d is '%s', expected '%s'", i + 1,
                            r->fields[i], expected);
    }
    if (r->n_fields != want)
        return rd_error(r, line, err, errlen, "%d columns, expected %d (variant, %d axes, %d "
                        "series columns)", r->n_fields, want, t->n_axes, N_SERIES_METRICS);
    return 0;
}

/* The row of t with this variant and these axis values; NULL when there is none. A series
 * file lists each row's samples together, so the row of the previous line (*last) is tried
 * first. */
static uf_row *series_row(uf_table *t, const char *variant, const double *axis, int *last)
{
    for (int k = 0; k < t->n_rows; k++) {
        int i = (k + *last) % t->n_rows;
        uf_row *row = &t->rows[i];
        int same = strcmp(row->variant, variant) == 0;
        for (int a = 0; a < t->n_axes && same; a++)
            same = row->axis[a] == axis[a];
        if (same) {
            *last = i;
            return row;
        }
    }
    return NULL;
}

/* One more sample on the row. The row's array may have been sized exactly by someone else
 * (the harness), so it grows by one each time: realloc keeps that cheap. */
static int append_sample(uf_row *row, const uf_pm_sample *s)
{
    size_t n = row->n_samples;
    uf_pm_sample *bigger = realloc(row->samples, (n + 1) * sizeof *bigger);
    if (bigger == NULL)
        return -1;
    row->samples = bigger;
    row->samples[n] = *s;
    row->n_samples = n + 1;
    return 0;
}

/* t_ms is a time from the row's first sample: >= 0, and in nanoseconds within 64 bits. */
#define SERIES_MAX_T_MS 9.0e12

static int read_series_line(csv_reader *r, int line, uf_table *t, int *last, char *err,
                            size_t errlen)
{
    int want = 1 + t->n_axes + N_SERIES_METRICS;
    if (r->n_fields != want)
        return rd_error(r, line, err, errlen, "%d fields, the header has %d", r->n_fields, want);
    double axis[UF_MAX_AXES], v[N_SERIES_METRICS];
    for (int i = 1; i < want; i++) {
        int a = i - 1, m = i - 1 - t->n_axes;
        int rc = i <= t->n_axes
                     ? read_number(r, line, i, t->axis_names[a], &axis[a], err, errlen)
                 : m == 0 ? read_number(r, line, i, "t_ms", &v[0], err, errlen)
                          : read_metric(r, line, i, uf_metric_find(series_metrics[m]), &v[m],
                                        err, errlen);
        if (rc != 0)
            return -1;
    }
    if (isnan(v[0]) || v[0] < 0 || v[0] > SERIES_MAX_T_MS)
        return rd_error_at(r, line, field_col(r, 1 + t->n_axes), err, errlen,
                           "column 't_ms': '%s' is not a time in [0, %g] ms",
                           r->fields[1 + t->n_axes], SERIES_MAX_T_MS);
    uf_row *row = series_row(t, r->fields[0], axis, last);
    if (row == NULL)
        return rd_error(r, line, err, errlen, "no row of the results for variant '%s' at this "
                        "sweep point", r->fields[0]);
    uint64_t start_ns = (uint64_t)llround(v[0] * 1e6);
    uf_pm_sample s = {.start_ns = start_ns, .end_ns = start_ns, .sm_active_pct = v[1],
                      .occupancy_pct = v[2], .tensor_active_pct = v[3], .dram_pct = v[4]};
    if (append_sample(row, &s) != 0)
        return rd_error(r, line, err, errlen, "out of memory");
    return 0;
}

/* The series reader on an initialized reader (reader_init). */
static int parse_series(csv_reader *r, uf_table *t, char *err, size_t errlen)
{
    int line = 0, last = 0, scenario_line = 0;
    if (reader_start(r, SERIES_MAGIC, "underfed series", err, errlen) != 0)
        return -1;
    char *key, *value;
    while (reader_meta(r, &key, &value)) {
        if (key == NULL || strcmp(key, "scenario") != 0)
            continue;
        if (scenario_line != 0)
            return rd_error(r, r->line - 1, err, errlen, "metadata key 'scenario' appears "
                            "twice (line %d)", scenario_line);
        scenario_line = r->line - 1;
        if (t->scenario[0] != '\0' && strcmp(value, t->scenario) != 0)
            return rd_error(r, r->line - 1, err, errlen, "series of scenario '%s', the "
                            "results are of '%s'", value, t->scenario);
    }
    int got = reader_record(r, &line, err, errlen);
    if (got < 0)
        return -1;
    if (got == 0)
        return rd_error(r, r->line, err, errlen, "missing header line");
    if (check_series_header(r, line, t, err, errlen) != 0)
        return -1;
    while ((got = reader_record(r, &line, err, errlen)) > 0)
        if (read_series_line(r, line, t, &last, err, errlen) != 0)
            return -1;
    return got;
}

int uf_table_parse_series_csv(uf_table *t, const char *path, const char *data, size_t len,
                              char *err, size_t errlen)
{
    csv_reader r;
    int rc = reader_init(&r, path, data, len, err, errlen);
    if (rc == 0)
        rc = parse_series(&r, t, err, errlen);
    reader_close(&r);
    return rc;
}

int uf_table_read_series_csv(uf_table *t, const char *path, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    if (read_whole_file(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = uf_table_parse_series_csv(t, path, data, len, err, errlen);
    free(data);
    return rc;
}

/* Results: the writers (see results.h): the results CSV and JSON and the series CSV, each
 * formatted in memory, then written atomically (csv.h describes the formats). */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "csv.h"
#include "errors.h"
#include "strbuf.h"

/* The JSON's numbers carry the CSV's 10 digits (csv.h). */
static void json_number(uf_strbuf *b, double v)
{
    uf_sb_json_number(b, v, 10);
}

/* One CSV line: a row (rank < 0: the `rank` field empty, or absent when !with_rank) or the
 * figures of one of its ranks. */
static void csv_row_line(uf_strbuf *b, const uf_table *t, const uf_row *row, int with_rank,
                         int rank)
{
    uf_csv_put_string(b, row->variant);
    uf_sb_putn(b, ",", 1);
    uf_csv_put_string(b, row->role);
    if (with_rank)
        uf_sb_putn(b, ",", 1);
    if (with_rank && rank >= 0)
        uf_sb_printf(b, "%d", rank);
    for (int a = 0; a < t->n_axes; a++) {
        uf_sb_putn(b, ",", 1);
        uf_csv_put_number(b, row->axis[a]);
    }
    for (int i = 0; i < uf_n_metrics; i++) {    /* a rank line: per-device metrics only */
        uf_sb_putn(b, ",", 1);
        uf_csv_put_number(b, rank >= 0 && !uf_metrics[i].per_device ? NAN : uf_row_value(row, i));
    }
    for (int e = 0; e < t->n_extra; e++) {
        uf_sb_putn(b, ",", 1);
        uf_csv_put_number(b, rank >= 0 ? NAN : row->extra[e]);
    }
    uf_sb_putn(b, ",", 1);
    uf_csv_put_string(b, row->skip_reason);
    uf_sb_putn(b, "\n", 1);
}

/* ",NAME" for each of n header names (the axes, the extras). */
static void csv_names(uf_strbuf *b, const char (*names)[UF_NAME_LEN], int n)
{
    for (int i = 0; i < n; i++) {
        uf_sb_putn(b, ",", 1);
        uf_csv_put_string(b, names[i]);
    }
}

/* A name the reader would refuse (bounds.h): -1 with err naming path, what and why. */
static int check_name(const char *path, const char *what, const char *name, char *err,
                      size_t errlen)
{
    int at = uf_bound_name_at(name);
    if (at < 0)
        return 0;
    char why[128];
    uf_bound_why(name, at, 1, why, sizeof why);
    return uf_set_err(err, errlen, "%s: not written: the %s: %s (the reader reads names only)",
                      path, what, why);
}

/* Every name the CSV holds is a name (texts are flattened as written): a file the reader
 * would refuse is not written. */
static int check_names(const uf_table *t, const char *path, char *err, size_t errlen)
{
    int rc = check_name(path, "scenario", t->scenario, err, errlen);
    for (int a = 0; rc == 0 && a < t->n_axes; a++)
        rc = check_name(path, "axis", t->axis_names[a], err, errlen);
    for (int e = 0; rc == 0 && e < t->n_extra; e++)
        rc = check_name(path, "extra column", t->extra_names[e], err, errlen);
    for (int i = 0; rc == 0 && i < t->meta.n; i++)
        rc = check_name(path, "metadata key", t->meta.key[i], err, errlen);
    for (int r = 0; rc == 0 && r < t->n_rows; r++)
        rc = check_name(path, "variant", t->rows[r].variant, err, errlen);
    return rc;
}

int uf_table_write_csv(const uf_table *t, const char *path, char *err, size_t errlen)
{
    if (check_names(t, path, err, errlen) != 0)
        return -1;
    uf_strbuf b = {0};
    const int with_rank = 1;    /* v3: the `rank` column is always there, empty on a row */
    uf_csv_preamble(&b, RESULTS_MAGIC, t->scenario, &t->meta);
    for (int e = 0; e < t->n_extra; e++) {
        char key[UF_NAME_LEN + 8];
        snprintf(key, sizeof key, "unit.%s", t->extra_names[e]);
        uf_csv_put_meta(&b, key, t->extra_units[e]);
    }
    uf_sb_puts(&b, with_rank ? "variant,role,rank" : "variant,role");
    csv_names(&b, t->axis_names, t->n_axes);
    for (int i = 0; i < uf_n_metrics; i++)
        uf_sb_printf(&b, ",%s", uf_metrics[i].name);
    csv_names(&b, t->extra_names, t->n_extra);
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

/* "NAME":VALUE members of an object, comma-separated: n names and their values. */
static void json_members(uf_strbuf *b, const char (*names)[UF_NAME_LEN], const double *values,
                         int n)
{
    for (int i = 0; i < n; i++) {
        uf_sb_puts(b, i > 0 ? "," : "");
        uf_sb_json_string(b, names[i]);
        uf_sb_putn(b, ":", 1);
        json_number(b, values[i]);
    }
}

static void json_row(uf_strbuf *b, const uf_table *t, const uf_row *row)
{
    uf_sb_puts(b, "{\"variant\":");
    uf_sb_json_string(b, row->variant);
    uf_sb_puts(b, ",\"role\":");
    uf_sb_json_string(b, row->role);
    uf_sb_puts(b, ",\"axes\":{");
    json_members(b, t->axis_names, row->axis, t->n_axes);
    uf_sb_puts(b, "},\"metrics\":{");
    for (int i = 0; i < uf_n_metrics; i++) {
        uf_sb_printf(b, "%s\"%s\":", i > 0 ? "," : "", uf_metrics[i].name);
        json_number(b, uf_row_value(row, i));
    }
    uf_sb_puts(b, "},\"extras\":{");
    json_members(b, t->extra_names, row->extra, t->n_extra);
    uf_sb_puts(b, "},\"skip_reason\":");
    uf_sb_json_string(b, row->skip_reason);
    for (int k = 0; k < row->n_ranks; k++) {
        const uf_row *rank = &row->ranks[k];
        uf_sb_printf(b, "%s{\"rank\":%d,\"metrics\":{", k > 0 ? "," : ",\"ranks\":[", k);
        for (int i = 0, n = 0; i < uf_n_metrics; i++) {
            if (!uf_metrics[i].per_device)
                continue;
            uf_sb_printf(b, "%s\"%s\":", n++ > 0 ? "," : "", uf_metrics[i].name);
            json_number(b, uf_row_value(rank, i));
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
    uf_csv_preamble(&b, SERIES_MAGIC, t->scenario, &t->meta);
    uf_sb_puts(&b, "variant");
    csv_names(&b, t->axis_names, t->n_axes);
    uf_sb_puts(&b, ",t_ms,sm_active_pct,occupancy_pct,tensor_active_pct,dram_pct\n");
    for (int r = 0; r < t->n_rows; r++) {
        const uf_row *row = &t->rows[r];
        for (size_t s = 0; row->samples != NULL && s < row->n_samples; s++) {
            const uf_pm_sample *p = &row->samples[s];
            uf_csv_put_string(&b, row->variant);
            for (int a = 0; a < t->n_axes; a++) {
                uf_sb_putn(&b, ",", 1);
                uf_csv_put_number(&b, row->axis[a]);
            }
            int64_t dt_ns = (int64_t)(p->start_ns - row->samples[0].start_ns);
            uf_sb_printf(&b, ",%.10g", (double)dt_ns / 1e6);
            const double v[4] = {p->sm_active_pct, p->occupancy_pct, p->tensor_active_pct,
                                 p->dram_pct};
            for (int k = 0; k < 4; k++) {
                uf_sb_putn(&b, ",", 1);
                uf_csv_put_number(&b, v[k]);
            }
            uf_sb_putn(&b, "\n", 1);
        }
    }
    return uf_sb_commit(&b, path, err, errlen);
}

/* The machine's ceilings (see results.h): their table, the ceilings.csv writer and strict
 * reader (csv.h describes the format), and the ceilings a results file records. */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "csv.h"
#include "fileutil.h"
#include "stats.h"
#include "strbuf.h"
#include "timeline.h"

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
        if (v && uf_csv_parse_number(v, &x) == 0 && !isnan(x)) {
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
    uf_csv_preamble(&b, CEILINGS_MAGIC, NULL, meta);
    for (int i = 0; i < N_CEILING_COLUMNS; i++)
        uf_sb_printf(&b, "%s%s", i > 0 ? "," : "", ceiling_columns[i]);
    uf_sb_putn(&b, "\n", 1);
    for (int i = 0; i < n; i++) {
        uf_csv_put_string(&b, rows[i].name);
        uf_sb_putn(&b, ",", 1);
        uf_csv_put_number(&b, rows[i].value);
        uf_sb_putn(&b, ",", 1);
        uf_csv_put_string(&b, rows[i].unit);
        uf_sb_putn(&b, ",", 1);
        uf_csv_put_number(&b, rows[i].spread_pct);
        uf_sb_putn(&b, ",", 1);
        uf_csv_put_string(&b, rows[i].note);
        uf_sb_putn(&b, "\n", 1);
    }
    return uf_sb_commit(&b, path, err, errlen);
}

static int check_ceiling_header(const uf_csv_reader *r, int line, char *err, size_t errlen)
{
    for (int i = 0; i < r->n_fields && i < N_CEILING_COLUMNS; i++)
        if (strcmp(r->fields[i], ceiling_columns[i]) != 0)
            return uf_csv_error(r, line, err, errlen, "unknown column '%s' (expected '%s')",
                                r->fields[i], ceiling_columns[i]);
    if (r->n_fields < N_CEILING_COLUMNS)
        return uf_csv_error(r, line, err, errlen, "missing required column '%s'",
                            ceiling_columns[r->n_fields]);
    if (r->n_fields > N_CEILING_COLUMNS)
        return uf_csv_error(r, line, err, errlen, "unknown column '%s'",
                            r->fields[N_CEILING_COLUMNS]);
    return 0;
}

/* The rows read so far, each as written and its line: for duplicates, and for
 * uf_ceilings_read_rows. */
typedef struct ceiling_name {
    uf_ceiling_row row;
    int line;
} ceiling_name;

typedef struct ceiling_names {
    ceiling_name *names;
    int n, cap;
} ceiling_names;

static int note_ceiling_name(const uf_csv_reader *r, int line, ceiling_names *seen, char *err,
                             size_t errlen)
{
    const char *name = r->fields[0];
    if (strlen(name) >= UF_NAME_LEN)
        return uf_csv_error_at(r, line, 1, err, errlen, "ceiling name longer than %d characters",
                               UF_NAME_LEN - 1);
    ceiling_name *names = uf_grow(seen->names, &seen->cap, seen->n + 1, sizeof *names, 32);
    if (names == NULL)
        return uf_csv_error(r, line, err, errlen, "out of memory");
    seen->names = names;
    seen->names[seen->n] = (ceiling_name){.line = line};
    uf_copy_str(seen->names[seen->n++].row.name, UF_NAME_LEN, name);
    return 0;
}

static int cmp_ceiling_name(const void *x, const void *y)
{
    const ceiling_name *a = x, *b = y;
    int c = strcmp(a->row.name, b->row.name);
    return c != 0 ? c : (a->line > b->line) - (a->line < b->line);
}

/* No ceiling twice: sorted by name (then line), neighbours compared. */
static int check_duplicate_ceilings(const uf_csv_reader *r, ceiling_names *seen, char *err,
                                    size_t errlen)
{
    if (seen->n < 2)
        return 0;
    qsort(seen->names, (size_t)seen->n, sizeof *seen->names, cmp_ceiling_name);
    for (int i = 1; i < seen->n; i++)
        if (strcmp(seen->names[i - 1].row.name, seen->names[i].row.name) == 0)
            return uf_csv_error_at(r, seen->names[i].line, 1, err, errlen, "duplicate ceiling '%s' "
                                   "(already on line %d)", seen->names[i].row.name,
                                   seen->names[i - 1].line);
    return 0;
}

/* One data line: the value goes into the struct when the name is a known ceiling, whose unit,
 * when given, must be its own. The name is a name, the unit and note texts; a ceiling is a
 * rate or a cost per operation: > 0 and within its unit's bound (bounds.h; empty when not
 * measured); its spread a spread. */
static int read_ceiling_row(const uf_csv_reader *r, int line, uf_ceilings *c, ceiling_names *seen,
                            char *err, size_t errlen)
{
    if (r->n_fields != N_CEILING_COLUMNS)
        return uf_csv_error(r, line, err, errlen, "%d fields, the header has %d", r->n_fields,
                            N_CEILING_COLUMNS);
    const char *name = r->fields[0];
    char unit[UF_NAME_LEN], note[UF_REASON_LEN];
    if (name[0] == '\0')
        return uf_csv_error_at(r, line, 1, err, errlen, "empty ceiling name");
    if (uf_csv_name(r, line, 0, "ceiling", unit, sizeof unit, err, errlen) != 0 ||
        uf_csv_text(r, line, 2, "unit", unit, sizeof unit, err, errlen) != 0 ||
        uf_csv_text(r, line, 4, "note", note, sizeof note, err, errlen) != 0)
        return -1;
    if (note_ceiling_name(r, line, seen, err, errlen) != 0)
        return -1;
    const uf_ceiling_desc *desc = NULL;
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, name) == 0)
            desc = &uf_ceiling_descs[i];
    /* a known ceiling in another unit would be read as if in its own (ms taken for us) */
    if (desc != NULL && unit[0] != '\0' && strcmp(unit, desc->unit) != 0)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, 2), err, errlen, "column 'unit': "
                               "'%s' for %s, which is in '%s'", unit, name, desc->unit);
    const char *in = desc != NULL ? desc->unit : unit;
    double value, spread;
    if (uf_csv_number(r, line, 1, "value", &value, err, errlen) != 0 ||
        uf_csv_number(r, line, 3, "spread_pct", &spread, err, errlen) != 0)
        return -1;
    if (!isnan(value) && !uf_bound_ceiling(value, in))
        return uf_csv_error_at(r, line, uf_csv_field_col(r, 1), err, errlen, "column 'value': "
                               "%s is outside its valid range > 0, at most %.16g%s%s (a rate or a cost)",
                               r->fields[1], uf_bound_ceiling_max(in), in[0] ? " " : "", in);
    if (spread < 0 || spread > UF_BOUND_SPREAD_PCT)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, 3), err, errlen, "column "
                               "'spread_pct': %s is outside its valid range [0, %.16g]",
                               r->fields[3], UF_BOUND_SPREAD_PCT);
    uf_ceiling_row *kept = &seen->names[seen->n - 1].row;
    kept->value = value;
    kept->spread_pct = spread;
    uf_copy_str(kept->unit, sizeof kept->unit, unit);
    uf_copy_str(kept->note, sizeof kept->note, note);
    if (desc != NULL)
        *(double *)((char *)c + desc->offset) = value;
    return 0;
}

/* The ceilings reader on an initialized reader (uf_csv_open); the rows, by name, into *keep
 * (NULL: not kept; the caller frees keep->names, also after an error). */
static int parse_ceilings(uf_csv_reader *r, uf_ceilings *c, uf_meta *meta, ceiling_names *keep,
                          char *err, size_t errlen)
{
    ceiling_names seen = {0};
    uf_meta *keys = calloc(1, sizeof *keys);   /* the metadata keys seen, for duplicates */
    int rc = -1, line = 0;
    if (keys == NULL) {
        uf_set_err(err, errlen, "%s: out of memory", r->path);
        goto out_free;
    }
    if (uf_csv_start(r, CEILINGS_MAGIC, "underfed ceilings", err, errlen) != 0)
        goto out_free;
    char *key, *value;
    while (uf_csv_meta(r, &key, &value)) {
        if (key == NULL)
            continue;
        if (uf_csv_check_meta(r, r->line - 1, key, value, keys, err, errlen) != 0)
            goto out_free;
        uf_meta_set(keys, key, "%s", "");
        if (meta != NULL)
            uf_meta_set(meta, key, "%s", value);
    }
    int got = uf_csv_record(r, &line, err, errlen);
    if (got < 0)
        goto out_free;
    if (got == 0) {
        uf_csv_error(r, r->line, err, errlen, "missing header line");
        goto out_free;
    }
    if (check_ceiling_header(r, line, err, errlen) != 0)
        goto out_free;
    while ((got = uf_csv_record(r, &line, err, errlen)) > 0)
        if (read_ceiling_row(r, line, c, &seen, err, errlen) != 0)
            goto out_free;
    if (got == 0)
        rc = check_duplicate_ceilings(r, &seen, err, errlen);

out_free:
    free(keys);
    if (keep != NULL)
        *keep = seen;
    else
        free(seen.names);
    return rc;
}

/* uf_ceilings_parse, keeping the rows in *keep (NULL: not kept). */
static int parse_text(const char *path, const char *data, size_t len, uf_ceilings *c,
                      uf_meta *meta, ceiling_names *keep, char *err, size_t errlen)
{
    uf_ceilings_clear(c);
    if (meta)
        memset(meta, 0, sizeof *meta);
    uf_csv_reader r;
    int rc = uf_csv_open(&r, path, data, len, err, errlen);
    if (rc == 0)
        rc = parse_ceilings(&r, c, meta, keep, err, errlen);
    uf_csv_close(&r);
    if (rc != 0)
        uf_ceilings_clear(c);
    return rc;
}

int uf_ceilings_parse(const char *path, const char *data, size_t len, uf_ceilings *c,
                      uf_meta *meta, char *err, size_t errlen)
{
    return parse_text(path, data, len, c, meta, NULL, err, errlen);
}

int uf_ceilings_read(const char *path, uf_ceilings *c, char *err, size_t errlen)
{
    return uf_ceilings_read_meta(path, c, NULL, err, errlen);
}

/* uf_ceilings_read_meta, keeping the rows in *keep (NULL: not kept). */
static int read_file(const char *path, uf_ceilings *c, uf_meta *meta, ceiling_names *keep,
                     char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    uf_ceilings_clear(c);
    if (meta)
        memset(meta, 0, sizeof *meta);
    if (uf_read_file(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = parse_text(path, data, len, c, meta, keep, err, errlen);
    free(data);
    return rc;
}

int uf_ceilings_read_meta(const char *path, uf_ceilings *c, uf_meta *meta, char *err,
                          size_t errlen)
{
    return read_file(path, c, meta, NULL, err, errlen);
}

int uf_ceilings_read_rows(const char *path, uf_ceiling_row **rows, int *n_rows, char *err,
                          size_t errlen)
{
    uf_ceilings c;
    ceiling_names seen = {0};
    int rc = read_file(path, &c, NULL, &seen, err, errlen);
    *rows = NULL;
    *n_rows = 0;
    if (rc == 0 && seen.n > 0 && (*rows = malloc((size_t)seen.n * sizeof **rows)) == NULL)
        rc = uf_set_err(err, errlen, "%s: out of memory", path);
    for (int i = 0; rc == 0 && i < seen.n; i++)
        (*rows)[i] = seen.names[i].row;
    *n_rows = rc == 0 ? seen.n : 0;
    free(seen.names);
    return rc;
}

size_t uf_ceiling_activity(uf_ceiling_row *row, const uf_pm_sample *samples, size_t n,
                           uint64_t t0_ns, uint64_t t1_ns, int counter)
{
    uf_pm_sample mean;
    uf_summary spread;
    double window[4], *values = NULL;
    size_t used = 0;
    row->value = NAN;
    row->spread_pct = NAN;
    if (counter < 0 || counter >= 4 || uf_pm_window_mean(samples, n, t0_ns, t1_ns, &mean) == 0)
        return 0;
    values = malloc(n * sizeof *values);
    if (values == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        double v[4];
        uint64_t lo = samples[i].start_ns > t0_ns ? samples[i].start_ns : t0_ns;
        uint64_t hi = samples[i].end_ns < t1_ns ? samples[i].end_ns : t1_ns;
        if (hi <= lo)
            continue;   /* the window mean's samples: those that overlap the window */
        uf_pm_counters(&samples[i], v);
        values[used++] = v[counter];
    }
    uf_pm_counters(&mean, window);
    if (window[counter] > 0) {   /* the file's rule: a ceiling is > 0 */
        row->value = window[counter];
        if (uf_summarize(values, (int)used, &spread) == 0)
            row->spread_pct = spread.spread_pct;
    }
    free(values);
    return used;
}

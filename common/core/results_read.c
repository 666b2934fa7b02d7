/* Results: the strict readers of the results CSV and the series CSV (see results.h; csv.h
 * describes the formats and what the reader refuses). */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "csv.h"
#include "fileutil.h"
#include "strbuf.h"

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
    int n_variants;         /* distinct variants so far, each with its role and first line */
    char variants[UF_MAX_VARIANTS][UF_NAME_LEN];
    char variant_roles[UF_MAX_VARIANTS][16];
    int variant_lines[UF_MAX_VARIANTS];
    int meta_lines[UF_MAX_META];    /* the line of each entry of the table's metadata */
} results_state;

static int read_unit_line(const uf_csv_reader *r, int line, const char *key, const char *value,
                          unit_list *units, char *err, size_t errlen)
{
    const char *name = key + 5;
    if (name[0] == '\0' || strlen(key) >= UF_NAME_LEN)
        return uf_csv_error(r, line, err, errlen, "bad unit line '%s'", key);
    if (strlen(value) >= UF_NAME_LEN)
        return uf_csv_error(r, line, err, errlen, "%s: unit longer than %d characters", key,
                            UF_NAME_LEN - 1);
    char why[128];
    int at = uf_bound_name_at(name);
    if (at >= 0 || (at = uf_bound_text_at(value)) >= 0) {
        int in_name = uf_bound_name_at(name) >= 0;
        uf_bound_why(in_name ? name : value, at, in_name, why, sizeof why);
        return uf_csv_error(r, line, err, errlen, "unit line: %s of the %s", why,
                            in_name ? "column's name" : "unit");
    }
    for (int u = 0; u < units->n; u++)
        if (strcmp(units->name[u], name) == 0)
            return uf_csv_error(r, line, err, errlen, "metadata key '%s' appears twice (line %d)",
                                key, units->line[u]);
    if (units->n >= UF_MAX_META)
        return uf_csv_error(r, line, err, errlen, "more than %d unit lines", UF_MAX_META);
    uf_copy_str(units->name[units->n], UF_NAME_LEN, name);
    uf_copy_str(units->unit[units->n], UF_NAME_LEN, value);
    units->line[units->n++] = line;
    return 0;
}

/* The metadata whose values the tools read as more than text (bounds.h): `# ceiling.NAME: V`
 * (a ceiling of the table, V a ceiling in its unit) and `# step_stat: median|mean`. */
static int check_meta_value(const uf_csv_reader *r, int line, const char *key, const char *value,
                            char *err, size_t errlen)
{
    if (strcmp(key, "step_stat") == 0 && strcmp(value, "median") != 0 &&
        strcmp(value, "mean") != 0)
        return uf_csv_error(r, line, err, errlen, "unknown step_stat '%s' (the step statistics "
                            "are median and mean)", value);
    if (strncmp(key, "ceiling.", 8) != 0)
        return 0;
    const uf_ceiling_desc *desc = NULL;
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        if (strcmp(uf_ceiling_descs[i].name, key + 8) == 0)
            desc = &uf_ceiling_descs[i];
    if (desc == NULL)
        return uf_csv_error(r, line, err, errlen, "metadata '%s': '%s' is not a ceiling (the "
                            "ceilings: copy_d2d_gbs, gemm_bf16_tflops, ... of ceilings.csv)", key,
                            key + 8);
    double v;
    if (uf_csv_parse_number(value, &v) != 0 || !uf_bound_ceiling(v, desc->unit))
        return uf_csv_error(r, line, err, errlen, "metadata '%s': '%s' is not a ceiling (a "
                            "number > 0, at most %.16g %s)", key, value,
                            uf_bound_ceiling_max(desc->unit), desc->unit);
    return 0;
}

static int read_results_meta(uf_csv_reader *r, uf_table *t, results_state *st, char *err,
                             size_t errlen)
{
    char *key, *value;
    while (uf_csv_meta(r, &key, &value)) {
        int line = r->line - 1;
        if (key == NULL)
            continue;
        if (strcmp(key, "scenario") == 0) {
            if (st->scenario_line != 0)
                return uf_csv_error(r, line, err, errlen, "metadata key 'scenario' appears twice "
                                    "(line %d)", st->scenario_line);
            if (value[0] == '\0' || strlen(value) >= sizeof t->scenario)
                return uf_csv_error(r, line, err, errlen, "scenario name empty or longer than %zu "
                                    "characters", sizeof t->scenario - 1);
            int at = uf_bound_name_at(value);
            if (at >= 0) {
                char why[128];
                uf_bound_why(value, at, 1, why, sizeof why);
                return uf_csv_error(r, line, err, errlen, "scenario: %s (a scenario is a name)",
                                    why);
            }
            uf_copy_str(t->scenario, sizeof t->scenario, value);
            st->scenario_line = line;
        } else if (strncmp(key, "unit.", 5) == 0) {
            if (read_unit_line(r, line, key, value, &st->units, err, errlen) != 0)
                return -1;
        } else {
            if (uf_csv_check_meta(r, line, key, value, &t->meta, err, errlen) != 0 ||
                check_meta_value(r, line, key, value, err, errlen) != 0)
                return -1;
            st->meta_lines[t->meta.n] = line;
            uf_meta_set(&t->meta, key, "%s", value);
        }
    }
    return 0;
}

/* `# default.AXIS: V` (read before the header): AXIS an axis of the file, V an axis value. */
static int check_defaults(const uf_csv_reader *r, const uf_table *t, const results_state *st,
                          char *err, size_t errlen)
{
    for (int i = 0; i < t->meta.n; i++) {
        const char *key = t->meta.key[i], *value = t->meta.value[i];
        double v;
        if (strncmp(key, "default.", 8) != 0)
            continue;
        int axis = -1;
        for (int a = 0; a < t->n_axes; a++)
            if (strcmp(t->axis_names[a], key + 8) == 0)
                axis = a;
        if (axis < 0)
            return uf_csv_error(r, st->meta_lines[i], err, errlen, "metadata '%s': the file has "
                                "no axis '%s'", key, key + 8);
        if (uf_csv_parse_number(value, &v) != 0 || !uf_bound_axis(v))
            return uf_csv_error(r, st->meta_lines[i], err, errlen, "metadata '%s': '%s' is not an "
                                "axis value (a number in [0, %.16g])", key, value,
                                UF_BOUND_COUNT);
    }
    return 0;
}

/* Map the header's columns: variant, role, rank (v3), axes, every fixed metric, extras,
 * skip_reason. */
static int map_header(uf_csv_reader *r, int line, int version, uf_table *t, col_map *cols,
                      char *err, size_t errlen)
{
    char **f = r->fields;
    int n = r->n_fields;
    int axis0 = version >= RESULTS_VERSION_RANKS ? 3 : 2;  /* the first axis column */
    if (strcmp(f[0], "variant") != 0)
        return uf_csv_error(r, line, err, errlen, "missing required column 'variant' (first)");
    if (n < 2 || strcmp(f[1], "role") != 0)
        return uf_csv_error(r, line, err, errlen, "missing required column 'role' (second)");
    if (axis0 == 3 && (n < 3 || strcmp(f[2], "rank") != 0))
        return uf_csv_error(r, line, err, errlen, "missing required column 'rank' (third, v3)");
    if (strcmp(f[n - 1], "skip_reason") != 0)
        return uf_csv_error(r, line, err, errlen, "missing required column 'skip_reason' (last)");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(f[i], f[j]) == 0)
                return uf_csv_error(r, line, err, errlen, "column '%s' appears twice", f[i]);
    /* Axes run from `role` to the first fixed metric (step_ms); extras from the last fixed
     * metric to skip_reason. */
    int first = -1, last = -1;
    for (int i = axis0; i < n - 1; i++) {
        if (first < 0 && strcmp(f[i], uf_metrics[0].name) == 0)
            first = i;
        if (uf_metric_index(f[i]) >= 0)
            last = i;
    }
    if (first < 0)
        return uf_csv_error(r, line, err, errlen, "missing required column '%s'",
                            uf_metrics[0].name);
    cols[0].kind = COL_VARIANT;
    cols[1].kind = COL_ROLE;
    if (axis0 == 3)
        cols[2].kind = COL_RANK;
    cols[n - 1].kind = COL_SKIP;
    if (first - axis0 > UF_MAX_AXES)
        return uf_csv_error(r, line, err, errlen, "too many axes (%d, at most %d)", first - axis0,
                            UF_MAX_AXES);
    for (int i = axis0; i < n - 1; i++) {
        int at = uf_bound_name_at(f[i]);
        if (at >= 0) {
            char why[128];
            uf_bound_why(f[i], at, 1, why, sizeof why);
            return uf_csv_error_at(r, line, uf_csv_field_col(r, i) + (f[i][0] ? at : 0), err,
                                   errlen, "column %d: %s (a column is a name)", i + 1, why);
        }
    }
    for (int i = axis0; i < first; i++) {
        if (f[i][0] == '\0' || uf_table_add_axis(t, f[i]) != 0)
            return uf_csv_error(r, line, err, errlen, "bad axis column '%s'", f[i]);
        cols[i].kind = COL_AXIS;
        cols[i].index = i - axis0;
    }
    int seen = 0;
    for (int i = first; i <= last; i++) {
        int m = uf_metric_index(f[i]);
        if (m < 0)
            return uf_csv_error(r, line, err, errlen, "unknown column '%s'", f[i]);
        if (uf_metrics[m].since > version)
            return uf_csv_error(r, line, err, errlen, "column '%s' is not in format v%d", f[i],
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
                return uf_csv_error(r, line, err, errlen, "missing required column '%s'",
                                    uf_metrics[m].name);
        }
    }
    if (n - 2 - last > UF_MAX_EXTRA)
        return uf_csv_error(r, line, err, errlen, "too many extra columns (%d, at most %d)",
                            n - 2 - last, UF_MAX_EXTRA);
    for (int i = last + 1; i < n - 1; i++) {
        if (f[i][0] == '\0' || uf_table_add_extra(t, f[i], "") != 0)
            return uf_csv_error(r, line, err, errlen, "bad extra column '%s'", f[i]);
        cols[i].kind = COL_EXTRA;
        cols[i].index = i - last - 1;
    }
    return 0;
}

/* Extra units from the unit list; unit lines naming no extra stay metadata. */
static int attach_units(const uf_csv_reader *r, uf_table *t, const unit_list *units, char *err,
                        size_t errlen)
{
    for (int u = 0; u < units->n; u++) {
        int matched = 0;
        for (int e = 0; e < t->n_extra; e++) {
            if (strcmp(t->extra_names[e], units->name[u]) == 0) {
                uf_copy_str(t->extra_units[e], UF_NAME_LEN, units->unit[u]);
                matched = 1;
            }
        }
        if (!matched) {
            char key[UF_NAME_LEN + 8];
            snprintf(key, sizeof key, "unit.%s", units->name[u]);
            if (uf_csv_check_meta(r, units->line[u], key, units->unit[u], &t->meta, err,
                                  errlen) != 0)
                return -1;
            uf_meta_set(&t->meta, key, "%s", units->unit[u]);
        }
    }
    return 0;
}

static int read_string_field(const uf_csv_reader *r, int line, int i, const char *col,
                             char *dst, size_t dstlen, char *err, size_t errlen)
{
    const char *s = r->fields[i];
    if (strlen(s) >= dstlen)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                               "column '%s': longer than %zu characters", col, dstlen - 1);
    uf_copy_str(dst, dstlen, s);
    return 0;
}

/* A rank line (its `rank` field in rank) belongs to the last row: same variant, role and
 * axes, the next rank in order, and only per-device metrics. Attach it there. */
static int attach_rank_line(const uf_csv_reader *r, int line, uf_table *t, const uf_row *got,
                            double rank, char *err, size_t errlen)
{
    uf_row *owner = t->n_rows > 0 ? &t->rows[t->n_rows - 1] : NULL;
    int same = owner != NULL && strcmp(owner->variant, got->variant) == 0 &&
               strcmp(owner->role, got->role) == 0;
    for (int a = 0; same && a < t->n_axes; a++)
        same = owner->axis[a] == got->axis[a] || (isnan(owner->axis[a]) && isnan(got->axis[a]));
    if (!same)
        return uf_csv_error(r, line, err, errlen, "rank %g: not after the line of its row (same "
                            "variant, role and axes, an empty rank)", rank);
    if (rank != owner->n_ranks || owner->n_ranks >= UF_MAX_RANKS)
        return uf_csv_error(r, line, err, errlen, "rank %g: expected rank %d (ranks in order from "
                            "0, at most %d)", rank, owner->n_ranks, UF_MAX_RANKS);
    for (int i = 0; i < uf_n_metrics; i++)
        if (!uf_metrics[i].per_device && !isnan(uf_row_value(got, i)))
            return uf_csv_error(r, line, err, errlen, "rank %g: column '%s' is not measured per "
                                "GPU, it must be empty", rank, uf_metrics[i].name);
    for (int e = 0; e < t->n_extra; e++)
        if (!isnan(got->extra[e]))
            return uf_csv_error(r, line, err, errlen, "rank %g: extra column '%s' must be empty",
                                rank, t->extra_names[e]);
    uf_row *k = uf_row_add_rank(owner);
    if (k == NULL)
        return uf_csv_error(r, line, err, errlen, "out of memory");
    for (int i = 0; i < uf_n_metrics; i++)
        *uf_row_value_ptr(k, i) = uf_row_value(got, i);
    uf_copy_str(k->skip_reason, sizeof k->skip_reason, got->skip_reason);
    return 0;
}

/* The name and role of a row: a variant is named, a role is broken or fixed. */
static int check_row_names(const uf_csv_reader *r, int line, const uf_row *row, char *err,
                           size_t errlen)
{
    if (row->variant[0] == '\0')
        return uf_csv_error_at(r, line, 1, err, errlen, "empty variant name");
    if (strcmp(row->role, "broken") != 0 && strcmp(row->role, "fixed") != 0)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, 1), err, errlen,
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
static int check_duplicate_rows(const uf_csv_reader *r, const uf_table *t, const int *lines,
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
        rc = uf_csv_error(r, second, err, errlen, "duplicate row: variant '%s' at this sweep point "
                          "is already on line %d", refs[i].row->variant, first);
    }
    free(refs);
    return rc;
}

/* The last row's line kept, and its variant counted: no more variants than the tools hold
 * (UF_MAX_VARIANTS). */
static int note_row(const uf_csv_reader *r, int line, const uf_table *t, results_state *st,
                    char *err, size_t errlen)
{
    const uf_row *row = &t->rows[t->n_rows - 1];
    int seen = -1;
    for (int v = 0; v < st->n_variants && seen < 0; v++)
        if (strcmp(st->variants[v], row->variant) == 0)
            seen = v;
    if (seen >= 0 && strcmp(st->variant_roles[seen], row->role) != 0)
        return uf_csv_error(r, line, err, errlen, "variant '%s' is %s here and %s on line %d (a "
                            "variant has one role)", row->variant, row->role,
                            st->variant_roles[seen], st->variant_lines[seen]);
    if (seen < 0) {
        if (st->n_variants == UF_MAX_VARIANTS)
            return uf_csv_error(r, line, err, errlen, "more than %d variants (the limit of the "
                                "tools)", UF_MAX_VARIANTS);
        uf_copy_str(st->variant_roles[st->n_variants], sizeof st->variant_roles[0], row->role);
        st->variant_lines[st->n_variants] = line;
        uf_copy_str(st->variants[st->n_variants++], UF_NAME_LEN, row->variant);
    }
    int *lines = uf_grow(st->row_lines, &st->cap_row_lines, t->n_rows, sizeof *lines, 64);
    if (lines == NULL)
        return uf_csv_error(r, line, err, errlen, "out of memory");
    st->row_lines = lines;
    st->row_lines[t->n_rows - 1] = line;
    return 0;
}

static int read_row(uf_csv_reader *r, int line, uf_table *t, results_state *st, char *err,
                    size_t errlen)
{
    if (r->n_fields != st->n_cols)
        return uf_csv_error(r, line, err, errlen, "%d fields, the header has %d", r->n_fields,
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
            rc = r->fields[i][0] == '\0'
                     ? uf_csv_error_at(r, line, 1, err, errlen, "empty variant name")
                     : uf_csv_name(r, line, i, name, row->variant, sizeof row->variant, err,
                                   errlen);
            break;
        case COL_ROLE:
            rc = read_string_field(r, line, i, name, row->role, sizeof row->role, err, errlen);
            break;
        case COL_SKIP:
            rc = uf_csv_text(r, line, i, name, row->skip_reason, sizeof row->skip_reason, err,
                             errlen);
            break;
        case COL_RANK:
            rc = uf_csv_number(r, line, i, name, &rank, err, errlen);
            if (rc == 0 && !isnan(rank) && (rank < 0 || rank != floor(rank)))
                rc = uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                                     "column 'rank': '%s' is not a rank", r->fields[i]);
            break;
        case COL_AXIS:
            rc = uf_csv_number(r, line, i, name, &row->axis[c->index], err, errlen);
            if (rc == 0 && !isnan(row->axis[c->index]) && !uf_bound_axis(row->axis[c->index]))
                rc = uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                                     "column '%s': %s is not an axis value (a sweep point is "
                                     "in [0, %.16g])", name, r->fields[i], UF_BOUND_COUNT);
            break;
        case COL_METRIC:
            rc = uf_csv_metric(r, line, i, &uf_metrics[c->index],
                               uf_row_value_ptr(row, c->index), err, errlen);
            break;
        case COL_EXTRA:
            rc = uf_csv_number(r, line, i, name, &row->extra[c->index], err, errlen);
            if (rc == 0 && !uf_bound_extra(row->extra[c->index]))
                rc = uf_csv_error_at(r, line, uf_csv_field_col(r, i), err, errlen,
                                     "column '%s': %s is outside the bounds of a scenario's "
                                     "figure (|v| <= %.16g)", name, r->fields[i],
                                     UF_BOUND_COUNT);
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
        return uf_csv_error(r, line, err, errlen, "out of memory");
    *appended = got;
    return note_row(r, line, t, st, err, errlen);
}

/* The header line: columns mapped, units attached. */
static int read_results_header(uf_csv_reader *r, uf_table *t, results_state *st, char *err,
                               size_t errlen)
{
    int line = r->line;
    int got = uf_csv_record(r, &line, err, errlen);
    if (got < 0)
        return -1;
    if (got == 0)
        return uf_csv_error(r, r->line, err, errlen, "missing header line");
    st->n_cols = r->n_fields;
    st->header = malloc((size_t)st->n_cols * sizeof *st->header);
    st->cols = calloc((size_t)st->n_cols, sizeof *st->cols);
    if (st->header == NULL || st->cols == NULL)
        return uf_csv_error(r, line, err, errlen, "out of memory");
    /* the fields point into r->buf: they stay valid while the reader is open */
    memcpy(st->header, r->fields, (size_t)st->n_cols * sizeof *st->header);
    if (map_header(r, line, st->version, t, st->cols, err, errlen) != 0 ||
        check_defaults(r, t, st, err, errlen) != 0)
        return -1;
    return attach_units(r, t, &st->units, err, errlen);
}

/* A result folder names each file after its scenario: `# scenario:` must say the same. */
static int check_scenario(const uf_csv_reader *r, const uf_table *t, const results_state *st,
                          const char *scenario, char *err, size_t errlen)
{
    if (scenario == NULL)
        return 0;
    if (st->scenario_line == 0)
        return uf_csv_error(r, 2, err, errlen, "no '# scenario:' line (the file name says '%s')",
                            scenario);
    if (strcmp(t->scenario, scenario) != 0)
        return uf_csv_error(r, st->scenario_line, err, errlen, "scenario '%s' does not match the "
                            "file name ('%s.csv')", t->scenario, scenario);
    return 0;
}

static const char *const results_magic[RESULTS_VERSION + 1] = {
    NULL, RESULTS_MAGIC_V1, RESULTS_MAGIC_V2, RESULTS_MAGIC_V3, RESULTS_MAGIC_V4, RESULTS_MAGIC};

/* The results reader on an initialized reader (uf_csv_open). */
static int parse_results(uf_csv_reader *r, uf_table *t, const char *scenario, char *err,
                         size_t errlen)
{
    int rc = -1;
    results_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", r->path);
    st->version = RESULTS_VERSION;     /* uf_csv_start reports any other magic line */
    for (int v = 1; v < RESULTS_VERSION; v++)
        if (uf_csv_has_magic(r, results_magic[v]))
            st->version = v;
    if (uf_csv_start(r, results_magic[st->version], "underfed results", err, errlen) != 0)
        goto out_free;
    if (read_results_meta(r, t, st, err, errlen) != 0 ||
        check_scenario(r, t, st, scenario, err, errlen) != 0 ||
        read_results_header(r, t, st, err, errlen) != 0)
        goto out_free;
    int got, line = r->line;
    while ((got = uf_csv_record(r, &line, err, errlen)) > 0)
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
    uf_csv_reader r;
    int rc = uf_csv_open(&r, path, data, len, err, errlen);
    if (rc == 0)
        rc = parse_results(&r, t, scenario, err, errlen);
    uf_csv_close(&r);
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
    if (uf_read_file(path, &data, &len, err, errlen) != 0)
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

/* ---- the series reader ------------------------------------------------------------------ */

static const char *const series_metrics[] = {"t_ms", "sm_active_pct", "occupancy_pct",
                                             "tensor_active_pct", "dram_pct"};
enum { N_SERIES_METRICS = 5 };

/* The header must be: variant, the table's axes in its order, then the series metrics. */
static int check_series_header(const uf_csv_reader *r, int line, const uf_table *t, char *err,
                               size_t errlen)
{
    int want = 1 + t->n_axes + N_SERIES_METRICS;
    for (int i = 0; i < r->n_fields && i < want; i++) {
        const char *expected = i == 0 ? "variant"
                               : i <= t->n_axes ? t->axis_names[i - 1]
                                                : series_metrics[i - 1 - t->n_axes];
        if (strcmp(r->fields[i], expected) != 0)
            return uf_csv_error(r, line, err, errlen, "column %d is '%s', expected '%s'", i + 1,
                                r->fields[i], expected);
    }
    if (r->n_fields != want)
        return uf_csv_error(r, line, err, errlen, "%d columns, expected %d (variant, %d axes, %d "
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

static int read_series_line(uf_csv_reader *r, int line, uf_table *t, int *last, char *err,
                            size_t errlen)
{
    int want = 1 + t->n_axes + N_SERIES_METRICS;
    if (r->n_fields != want)
        return uf_csv_error(r, line, err, errlen, "%d fields, the header has %d", r->n_fields,
                            want);
    double axis[UF_MAX_AXES], v[N_SERIES_METRICS];
    for (int i = 1; i < want; i++) {
        int a = i - 1, m = i - 1 - t->n_axes;
        int rc = i <= t->n_axes
                     ? uf_csv_number(r, line, i, t->axis_names[a], &axis[a], err, errlen)
                 : m == 0 ? uf_csv_number(r, line, i, "t_ms", &v[0], err, errlen)
                          : uf_csv_metric(r, line, i, uf_metric_find(series_metrics[m]), &v[m],
                                          err, errlen);
        if (rc != 0)
            return -1;
    }
    if (isnan(v[0]) || v[0] < 0 || v[0] > SERIES_MAX_T_MS)
        return uf_csv_error_at(r, line, uf_csv_field_col(r, 1 + t->n_axes), err, errlen,
                               "column 't_ms': '%s' is not a time in [0, %g] ms",
                               r->fields[1 + t->n_axes], SERIES_MAX_T_MS);
    if (uf_bound_name_at(r->fields[0]) >= 0)
        return uf_csv_name(r, line, 0, "variant", NULL, 0, err, errlen);
    uf_row *row = series_row(t, r->fields[0], axis, last);
    if (row == NULL)
        return uf_csv_error(r, line, err, errlen, "no row of the results for variant '%s' at this "
                            "sweep point", r->fields[0]);
    uint64_t start_ns = (uint64_t)llround(v[0] * 1e6);
    uf_pm_sample s = {.start_ns = start_ns, .end_ns = start_ns, .sm_active_pct = v[1],
                      .occupancy_pct = v[2], .tensor_active_pct = v[3], .dram_pct = v[4]};
    if (append_sample(row, &s) != 0)
        return uf_csv_error(r, line, err, errlen, "out of memory");
    return 0;
}

/* The series reader on an initialized reader (uf_csv_open). */
static int parse_series(uf_csv_reader *r, uf_table *t, char *err, size_t errlen)
{
    int line = 0, last = 0, scenario_line = 0;
    if (uf_csv_start(r, SERIES_MAGIC, "underfed series", err, errlen) != 0)
        return -1;
    char *key, *value;
    while (uf_csv_meta(r, &key, &value)) {
        if (key == NULL)
            continue;
        if (uf_csv_check_meta(r, r->line - 1, key, value, NULL, err, errlen) != 0)
            return -1;
        if (strcmp(key, "scenario") != 0)
            continue;
        if (scenario_line != 0)
            return uf_csv_error(r, r->line - 1, err, errlen, "metadata key 'scenario' appears "
                                "twice (line %d)", scenario_line);
        scenario_line = r->line - 1;
        if (t->scenario[0] != '\0' && strcmp(value, t->scenario) != 0)
            return uf_csv_error(r, r->line - 1, err, errlen, "series of scenario '%s', the "
                                "results are of '%s'", value, t->scenario);
    }
    int got = uf_csv_record(r, &line, err, errlen);
    if (got < 0)
        return -1;
    if (got == 0)
        return uf_csv_error(r, r->line, err, errlen, "missing header line");
    if (check_series_header(r, line, t, err, errlen) != 0)
        return -1;
    while ((got = uf_csv_record(r, &line, err, errlen)) > 0)
        if (read_series_line(r, line, t, &last, err, errlen) != 0)
            return -1;
    return got;
}

int uf_table_parse_series_csv(uf_table *t, const char *path, const char *data, size_t len,
                              char *err, size_t errlen)
{
    uf_csv_reader r;
    int rc = uf_csv_open(&r, path, data, len, err, errlen);
    if (rc == 0)
        rc = parse_series(&r, t, err, errlen);
    uf_csv_close(&r);
    return rc;
}

int uf_table_read_series_csv(uf_table *t, const char *path, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    if (uf_read_file(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = uf_table_parse_series_csv(t, path, data, len, err, errlen);
    free(data);
    return rc;
}

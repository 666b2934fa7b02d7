/* Results: the table model (see results.h): rows, their metrics by name, the run's metadata.
 * Plain C: no CUDA here, unit-tested with Criterion. */
#include "results.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

double *uf_row_value_ptr(uf_row *r, int i)
{
    return (double *)((char *)r + uf_metrics[i].offset);
}

double uf_row_value(const uf_row *r, int i)
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
        uf_copy_str(m->key[i], UF_NAME_LEN, key);
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
    uf_copy_str(t->scenario, sizeof t->scenario, scenario);
}

int uf_table_has_column(const uf_table *t, const char *name)
{
    if (uf_metric_index(name) >= 0)
        return 1;
    for (int i = 0; i < t->n_axes; i++)
        if (strcmp(t->axis_names[i], name) == 0)
            return 1;
    for (int i = 0; i < t->n_extra; i++)
        if (strcmp(t->extra_names[i], name) == 0)
            return 1;
    return 0;
}

/* A name already used by a column of the table (fixed, axis or extra). */
static int column_taken(const uf_table *t, const char *name)
{
    return strcmp(name, "variant") == 0 || strcmp(name, "role") == 0 ||
           strcmp(name, "rank") == 0 || strcmp(name, "skip_reason") == 0 ||
           uf_table_has_column(t, name);
}

/* 0, or -1 when full, the name is empty or too long, or the column exists already. */
int uf_table_add_axis(uf_table *t, const char *name)
{
    if (t->n_axes >= UF_MAX_AXES || name == NULL || name[0] == '\0' ||
        strlen(name) >= UF_NAME_LEN || column_taken(t, name))
        return -1;
    uf_copy_str(t->axis_names[t->n_axes++], UF_NAME_LEN, name);
    return 0;
}

int uf_table_add_extra(uf_table *t, const char *name, const char *unit)
{
    if (t->n_extra >= UF_MAX_EXTRA || name == NULL || name[0] == '\0' ||
        strlen(name) >= UF_NAME_LEN || column_taken(t, name))
        return -1;
    uf_copy_str(t->extra_names[t->n_extra], UF_NAME_LEN, name);
    uf_copy_str(t->extra_units[t->n_extra], UF_NAME_LEN, unit);
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
        *uf_row_value_ptr(r, i) = NAN;
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
    uf_copy_str(k->variant, sizeof k->variant, r->variant);
    uf_copy_str(k->role, sizeof k->role, r->role);
    memcpy(k->axis, r->axis, sizeof k->axis);
    return k;
}

double uf_row_rank_value(const uf_row *r, int rank, const char *name)
{
    if (r == NULL || name == NULL || rank < 0 || rank >= r->n_ranks)
        return NAN;
    int i = uf_metric_index(name);
    return i >= 0 && uf_metrics[i].per_device ? uf_row_value(&r->ranks[rank], i) : NAN;
}

uf_row *uf_table_append(uf_table *t)
{
    uf_row *rows = uf_grow(t->rows, &t->cap_rows, t->n_rows + 1, sizeof *rows, 16);
    if (rows == NULL)
        return NULL;
    t->rows = rows;
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

/* Where the column `name` of row r is: a fixed metric, an extra, or (with_axes) an axis;
 * NULL when t has no such column. */
static const double *value_address(const uf_table *t, const uf_row *r, const char *name,
                                   int with_axes)
{
    if (t == NULL || r == NULL || name == NULL)
        return NULL;
    int i = uf_metric_index(name);
    if (i >= 0)
        return (const double *)((const char *)r + uf_metrics[i].offset);
    for (int e = 0; e < t->n_extra; e++)
        if (strcmp(t->extra_names[e], name) == 0)
            return &r->extra[e];
    for (int a = 0; with_axes && a < t->n_axes; a++)
        if (strcmp(t->axis_names[a], name) == 0)
            return &r->axis[a];
    return NULL;
}

double *uf_row_metric(const uf_table *t, uf_row *r, const char *name)
{
    return (double *)value_address(t, r, name, 0);     /* r is the caller's to write */
}

double uf_table_value(const uf_table *t, const uf_row *r, const char *name)
{
    const double *v = value_address(t, r, name, 1);
    return v != NULL ? *v : NAN;
}

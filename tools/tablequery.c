/* Looking up a results table (results.h): its variants, the row of a variant at a point, the
 * point a `where` names, the rows of a sweep. Used by the text commands of `underfed` and by
 * the plot data (plotdata.c, plotfigs.c), so that both read the same rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "options.h"
#include "tablequery.h"

int tq_axis_index(const uf_table *t, const char *name)
{
    for (int a = 0; a < t->n_axes; a++)
        if (strcmp(t->axis_names[a], name) == 0)
            return a;
    return -1;
}

/* The variants in order of first appearance; returns how many. */
int tq_variants(const uf_table *t, const char **names, int max)
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

int tq_has_variant(const uf_table *t, const char *name)
{
    for (int i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].variant, name) == 0)
            return 1;
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

const uf_row *tq_row_at(const uf_table *t, const char *variant, const double *point)
{
    for (int i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].variant, variant) == 0 && at_point(t, &t->rows[i], point, -1))
            return &t->rows[i];
    return NULL;
}

int tq_point_has_rows(const uf_table *t, const double *point, int free_axis)
{
    for (int i = 0; i < t->n_rows; i++)
        if (at_point(t, &t->rows[i], point, free_axis))
            return 1;
    return 0;
}

int tq_distinct_values(const uf_table *t, int ax, double *seen, int max)
{
    int n = 0;
    for (int i = 0; i < t->n_rows; i++) {
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= seen[k] == t->rows[i].axis[ax];
        if (!dup && n < max)
            seen[n++] = t->rows[i].axis[ax];
    }
    return n;
}

/* Unnamed axes at the run's default (metadata default.AXIS, else the first row's value); a
 * named value replaced by the run's value it matches, so that rows match it exactly. */
int tq_point(const uf_table *t, const char *where, double *point, char *err, size_t errlen)
{
    uf_where_axis axes[UF_MAX_AXES];
    size_t per_axis = (size_t)(t->n_rows ? t->n_rows : 1);
    double *values = malloc(per_axis * UF_MAX_AXES * sizeof *values);
    int rc = -1;
    if (!values) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int a = 0; a < t->n_axes; a++) {
        char key[UF_NAME_LEN + 16];
        double *v = values + (size_t)a * per_axis;
        for (int i = 0; i < t->n_rows; i++)
            v[i] = t->rows[i].axis[a];
        snprintf(key, sizeof key, "default.%s", t->axis_names[a]);
        const char *def = uf_meta_get(&t->meta, key);
        axes[a] = (uf_where_axis){.name = t->axis_names[a], .default_value = NAN,
                                  .values = v, .n_values = t->n_rows};
        if (def)
            uf_parse_number(def, &axes[a].default_value);
        else if (t->n_rows)
            axes[a].default_value = t->rows[0].axis[a];
    }
    if (uf_where_parse(axes, t->n_axes, where, point, NULL, err, errlen) != 0)
        goto out;
    for (int a = 0; a < t->n_axes; a++)
        for (int i = 0; i < t->n_rows; i++)
            if (uf_axis_value_same(axes[a].values[i], point[a])) {
                point[a] = axes[a].values[i];
                break;
            }
    rc = 0;
out:
    free(values);
    return rc;
}

/* Rows in increasing order of their value on axis ax (insertion sort: a sweep is short). */
static void sort_by_axis(const uf_row **rows, int n, int ax)
{
    for (int i = 1; i < n; i++) {
        const uf_row *r = rows[i];
        int k = i;
        for (; k > 0 && rows[k - 1]->axis[ax] > r->axis[ax]; k--)
            rows[k] = rows[k - 1];
        rows[k] = r;
    }
}

int tq_sweep_rows(const uf_table *t, const char *variant, int ax, const double *point,
                  const uf_row **rows)
{
    int k = 0;
    for (int i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].variant, variant) == 0 && at_point(t, &t->rows[i], point, ax))
            rows[k++] = &t->rows[i];
    sort_by_axis(rows, k, ax);
    return k;
}

const char *tq_auto_share(const uf_table *t)
{
    static const char *const candidates[] = {"pct_of_gemm", "pct_of_copy", "busy_pct"};
    for (size_t c = 0; c < sizeof candidates / sizeof candidates[0]; c++)
        for (int i = 0; i < t->n_rows; i++)
            if (!isnan(uf_table_value(t, &t->rows[i], candidates[c])))
                return candidates[c];
    return "busy_pct";
}

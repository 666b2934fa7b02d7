/* The skeleton of the table queries (query.h): a query on one result file read, checked and
 * printed in one order, and the pieces the queries on folders use. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plotdata.h"
#include "query.h"
#include "tablequery.h"

int uf_query_load(uf_table *t, const char *path)
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

static int bad_where(const char *where)
{
    fprintf(stderr, "underfed: bad --where \"%s\" (AXIS=VALUE,...)\n", where);
    return EXIT_BAD;
}

/* The point --where names (defaults elsewhere) into point; with --where given, it must hold
 * a row of the file (free_axis aside): else an error naming the point and each axis's values. */
static int where_point(const args *a, const uf_table *t, const char *path, int free_axis,
                       double *point)
{
    if (resolve_point(t, a->where, point) != 0)
        return bad_where(a->where);
    if (!a->where || tq_point_has_rows(t, point, free_axis))
        return 0;
    fprintf(stderr, "underfed %s: %s has no row at --where \"%s\" (", a->cmd, path, a->where);
    for (int ax = 0; ax < t->n_axes; ax++) {
        double seen[UF_MAX_SWEEP];
        int n = tq_distinct_values(t, ax, seen, UF_MAX_SWEEP);
        fprintf(stderr, "%s%s:", ax ? "; " : "", t->axis_names[ax]);
        for (int k = 0; k < n; k++)
            fprintf(stderr, "%s%.10g", k ? ", " : " ", seen[k]);
    }
    fprintf(stderr, ")\n");
    return EXIT_BAD;
}

static int column_error(const args *a, const char *flag, const char *path, const uf_table *t,
                        const char *name)
{
    fprintf(stderr, "underfed %s: %s \"%s\": %s has no such column (its columns:", a->cmd, flag,
            name, path);
    for (int i = 0; i < uf_n_metrics; i++)
        fprintf(stderr, "%s %s", i ? "," : "", uf_metrics[i].name);
    for (int e = 0; e < t->n_extra; e++)
        fprintf(stderr, ", %s", t->extra_names[e]);
    for (int ax = 0; ax < t->n_axes; ax++)
        fprintf(stderr, ", %s", t->axis_names[ax]);
    fprintf(stderr, "; a name ending in ? may be absent: NaN then)\n");
    return EXIT_BAD;
}

int uf_query_columns(const args *a, const char *flag, const char *list, const uf_table *t,
                     const char *path, column_list *out)
{
    out->n = 0;
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        int optional = len > 0 && p[len - 1] == '?';
        size_t name_len = len - (size_t)optional;
        if (name_len == 0 || name_len >= UF_NAME_LEN || out->n >= MAX_COLUMNS) {
            fprintf(stderr, "underfed %s: %s \"%s\": %s\n", a->cmd, flag, list,
                    name_len == 0 ? "an empty name" : name_len >= UF_NAME_LEN
                                                          ? "a name too long"
                                                          : "too many names");
            return EXIT_BAD;
        }
        memcpy(out->name[out->n], p, name_len);
        out->name[out->n][name_len] = '\0';
        if (!optional && !uf_table_has_column(t, out->name[out->n]))
            return column_error(a, flag, path, t, out->name[out->n]);
        out->n++;
        p += len;
        if (*p == '\0')
            return 0;
    }
}

int uf_query_print(const args *a, uf_strbuf *b)
{
    int rc = 0;
    if (b->failed) {
        fprintf(stderr, "underfed %s: out of memory\n", a->cmd);
        rc = EXIT_BAD;
    } else if (b->data) {
        fputs(b->data, stdout);
    }
    free(b->data);
    return rc;
}

/* --variant: a variant of the file, else an error listing them. */
static int check_variant(const args *a, const uf_table *t, const char *path)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++)
        if (strcmp(names[v], a->variant) == 0)
            return 0;
    fprintf(stderr, "underfed %s: --variant \"%s\": %s has no such variant (variants:", a->cmd,
            a->variant, path);
    for (int v = 0; v < n; v++)
        fprintf(stderr, "%s %s", v ? "," : "", names[v]);
    fprintf(stderr, ")\n");
    return EXIT_BAD;
}

/* --x: an axis of the file into q->ax, else an error listing them. */
static int sweep_axis(uf_query *q)
{
    q->ax = tq_axis_index(&q->t, q->a->x);
    if (q->ax >= 0)
        return 0;
    fprintf(stderr, "underfed %s: --x \"%s\": %s has no such axis (axes:", q->a->cmd, q->a->x,
            q->path);
    for (int k = 0; k < q->t.n_axes; k++)
        fprintf(stderr, "%s %s", k ? "," : "", q->t.axis_names[k]);
    fprintf(stderr, "%s)\n", q->t.n_axes ? "" : " none");
    return EXIT_BAD;
}

/* FILE.series.csv beside FILE.csv: its samples into q->t. */
static int read_series(uf_query *q)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    size_t len = strlen(q->path);
    if (len < 4 || strcmp(q->path + len - 4, ".csv") != 0) {
        fprintf(stderr, "underfed %s: %s is not a .csv file\n", q->a->cmd, q->path);
        return EXIT_BAD;
    }
    if ((size_t)snprintf(path, sizeof path, "%.*s.series.csv", (int)(len - 4), q->path) >=
        sizeof path) {
        fprintf(stderr, "underfed %s: path too long: %s\n", q->a->cmd, q->path);
        return EXIT_BAD;
    }
    if (uf_table_read_series_csv(&q->t, path, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        return EXIT_BAD;
    }
    return 0;
}

int uf_query_file(const uf_command *c, const uf_file_query *fq, int argc, char **argv)
{
    args a;
    uf_query q = {.a = &a, .ax = -1};
    uf_strbuf body = {0};
    int rc = uf_parse_args(c, argc, argv, &a);
    if (rc != 0)
        return rc;
    q.path = a.pos[0];
    if (uf_query_load(&q.t, q.path) != 0)
        return EXIT_BAD;
    if (fq->series)
        rc = read_series(&q);
    if (rc == 0 && fq->sweep)
        rc = sweep_axis(&q);
    if (rc == 0 && fq->columns)
        rc = uf_query_columns(&a, "--metrics", a.metrics ? a.metrics : fq->default_columns,
                              &q.t, q.path, &q.cols);
    for (int k = 0; k < q.cols.n; k++)
        q.names[k] = q.cols.name[k];
    if (rc == 0 && a.variant)
        rc = check_variant(&a, &q.t, q.path);
    if (rc == 0 && fq->at_point)
        rc = where_point(&a, &q.t, q.path, q.ax, q.point);
    if (rc == 0) {
        fq->print(&q, &body);
        rc = uf_query_print(&a, &body);
    }
    uf_table_free(&q.t);
    return rc;
}

void uf_query_values(const uf_query *q, uf_strbuf *body)
{
    int count[MAX_COLUMNS];
    printf("# variant");
    for (int c = 0; c < q->cols.n; c++)
        printf(" %s", q->cols.name[c]);
    printf("\n# heading");     /* the metric table's label and unit; a name where it has none */
    for (int c = 0; c < q->cols.n; c++) {
        char heading[2 * UF_NAME_LEN];
        const uf_metric_desc *m = uf_metric_find(q->cols.name[c]);
        if (m)
            uf_metric_heading(m, heading, sizeof heading);
        printf(" \"%s\"", m ? heading : q->cols.name[c]);
    }
    printf("\n");
    pd_value_rows(body, &q->t, q->point, q->names, q->cols.n, count);
}

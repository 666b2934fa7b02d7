/* underfed points FILE.csv --x AXIS [--where W] [--metrics m1,...] [--variant V]: a sweep along
 * one axis, a block per variant (pd_points: the plot data's sweeps are these; a query on one
 * file, query.h). */
#include "plotdata.h"
#include "query.h"

static void print_points(const uf_query *q, uf_strbuf *body)
{
    int count[MAX_COLUMNS];
    pd_points(body, &q->t, q->ax, q->point, q->a->variant, q->names, q->cols.n, count);
}

static const uf_file_query points = {
    .columns = 1, .default_columns = "step_ms,busy_pct", .sweep = 1, .at_point = 1,
    .print = print_points,
};

int uf_cmd_points(int argc, char **argv)
{
    return uf_query_file(&uf_points_command, &points, argc, argv);
}

const uf_command uf_points_command = {
    "points", "FILE.csv", 1, 1, "--x! --where --metrics --variant",
    "a sweep along one axis, a block per variant", uf_cmd_points, 0};

/* underfed axes FILE.csv: each axis, how many values the run had, and 1 when a log scale suits
 * them (a query on one file, query.h). */
#include <math.h>
#include <stdio.h>

#include "options.h"
#include "query.h"
#include "tablequery.h"

static void print_axes(const uf_query *q, uf_strbuf *body)
{
    (void)body;
    for (int ax = 0; ax < q->t.n_axes; ax++) {
        double seen[UF_MAX_SWEEP];
        int n = tq_distinct_values(&q->t, ax, seen, UF_MAX_SWEEP);
        double lo = n ? seen[0] : NAN, hi = lo;
        for (int k = 1; k < n; k++) {
            lo = fmin(lo, seen[k]);
            hi = fmax(hi, seen[k]);
        }
        printf("%s %d %d\n", q->t.axis_names[ax], n, n > 1 && lo > 0 && hi / lo >= 16);
    }
}

static const uf_file_query axes = {.print = print_axes};

int uf_cmd_axes(int argc, char **argv)
{
    return uf_query_file(&uf_axes_command, &axes, argc, argv);
}

const uf_command uf_axes_command = {
    "axes", "FILE.csv", 1, 1, "",
    "each axis, its number of values, 1 when a log scale suits it", uf_cmd_axes, 0};

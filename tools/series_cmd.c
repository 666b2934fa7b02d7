/* underfed series FILE.csv [--where W]: the PM-sampled counters of FILE.series.csv at one
 * point (pd_series: the plot data's are these; a query on one file, query.h). */
#include "plotdata.h"
#include "query.h"

static void print_series(const uf_query *q, uf_strbuf *body)
{
    pd_series(body, &q->t, q->point);
}

static const uf_file_query series = {.series = 1, .at_point = 1, .print = print_series};

int uf_cmd_series(int argc, char **argv)
{
    return uf_query_file(&uf_series_command, &series, argc, argv);
}

const uf_command uf_series_command = {
    "series", "FILE.csv", 1, 1, "--where",
    "PM-sampled counters over time (FILE.series.csv)", uf_cmd_series, 0};

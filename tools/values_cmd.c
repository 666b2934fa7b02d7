/* underfed values FILE.csv --metrics m1,m2,... [--where W]: the named columns of each variant
 * at one point (a query on one file, query.h). */
#include "query.h"

static const uf_file_query values = {.columns = 1, .at_point = 1, .print = uf_query_values};

int uf_cmd_values(int argc, char **argv)
{
    return uf_query_file(&uf_values_command, &values, argc, argv);
}

const uf_command uf_values_command = {
    "values", "FILE.csv", 1, 1, "--metrics! --where",
    "the named columns of each variant at one point", uf_cmd_values, 0};

/* underfed ladder FILE.csv [--where W]: the utilization ladder of each variant at one point,
 * NVML util to step time (a query on one file, query.h). */
#include "query.h"

static const uf_file_query ladder = {
    .columns = 1,
    .default_columns = "nvml_util_pct,busy_pct,sm_active_pct,tensor_active_pct,dram_pct,step_ms",
    .at_point = 1,
    .print = uf_query_values,
};

int uf_cmd_ladder(int argc, char **argv)
{
    return uf_query_file(&uf_ladder_command, &ladder, argc, argv);
}

const uf_command uf_ladder_command = {
    "ladder", "FILE.csv", 1, 1, "--where",
    "the utilization ladder of each variant at one point", uf_cmd_ladder, 0};

/* The figures of one scenario each (plotfigs.c), written through the plot data writer
 * (plotdata.h); `underfed plotdata` (plotdata_cmd.c) asks for them after the figures every
 * scenario gets. */
#ifndef UF_TOOLS_PLOTFIGS_H
#define UF_TOOLS_PLOTFIGS_H

#include "plotdata.h"

/* A scenario file and what its figures read from it. */
typedef struct pd_source {
    const char *name;                       /* the scenario (file name without .csv) */
    const char *csv;                        /* its path */
    const char *dir;                        /* its folder: ceilings.csv */
    const char *out;                        /* the folder whose data/ gets the figure files
                                             * (the run's stage: see uf_cmd_plotdata) */
    const uf_table *t;
    const char *gpu;                        /* `# gpu:` of the file, "" when absent */
} pd_source;

/* The scenario figures (plotfigs.c): 0, 1 when the scenario has none, -1 on failure. */
int pd_scenario_figures(const pd_source *s);

#endif

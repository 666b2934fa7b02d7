/* `underfed crosscheck`: the suite's instruments against independent ones (ci/crosscheck.sh
 * runs the GPU side; this judges what it left), and the report's section on it. */
#ifndef UF_TOOLS_CROSSCHECK_CMD_H
#define UF_TOOLS_CROSSCHECK_CMD_H

#include <stdio.h>

#include "cmdline.h"
#include "crosscheck_judge.h"

/* argv after the command name: `plan` (the cases, one per line, for the driver) or
 * `judge DIR [--meta KEY=VALUE]...` (DIR/crosscheck.csv from the runs under DIR).
 * Returns the exit status: 0 every comparison agrees or is n/a with its reason, 1 one
 * disagrees, 2 usage or unreadable input. */
int uf_cmd_crosscheck(int argc, char **argv);
extern const uf_command uf_crosscheck_command;

/* REPORT.md's section "How far each instrument agrees with another" from
 * RESULTS_DIR/crosscheck/crosscheck.csv; nothing when that file is absent. 0, or -1 (with the
 * message on stderr) when it is malformed. */
int uf_report_crosscheck(FILE *f, const char *results_dir);
/* REPORT.md's table of NVML GPM against PM sampling, one line per scenario of the folder. */
void uf_report_gpm(FILE *f, const char (*names)[UF_NAME_LEN], const uf_gpm_tally *tally, int n);

#endif

/* `underfed report DIR`: DIR/REPORT.md from the folder's result files and its ceilings.csv. */
#ifndef UF_TOOLS_REPORT_CMD_H
#define UF_TOOLS_REPORT_CMD_H

#include "cmdline.h"

/* argv after the command name: DIR [--plots PLOTS] [--plots-link PREFIX] (the images to
 * link). Exit status: 0 written, 2 usage, no result files, a malformed one (ceilings.csv
 * included) or the page not written. */
int uf_cmd_report(int argc, char **argv);
extern const uf_command uf_report_command;

#endif

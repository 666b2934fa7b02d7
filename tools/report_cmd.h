/* `underfed report DIR`: DIR/REPORT.md from the folder's result files and its ceilings.csv. */
#ifndef UF_TOOLS_REPORT_CMD_H
#define UF_TOOLS_REPORT_CMD_H

#include "cli.h"

/* a->pos[0]: the folder; --plots, --plots-link: the images to link. Exit status: 0 written,
 * 2 no result files, a malformed one (ceilings.csv included) or the page not written. */
int uf_cmd_report(const args *a);

#endif

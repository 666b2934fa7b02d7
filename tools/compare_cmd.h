/* `underfed compare DIR_A DIR_B`: every scenario of two runs, row by row, judged against the
 * measured noise (compare.h). */
#ifndef UF_TOOLS_COMPARE_CMD_H
#define UF_TOOLS_COMPARE_CMD_H

#include "cli.h"

/* a->pos[0], a->pos[1]: the two folders; --threshold, --allow-missing. Exit status: 0 no
 * regression, 1 a regression (or rows of DIR_A missing from DIR_B, unless --allow-missing),
 * 2 a folder empty or unreadable or a file malformed. */
int uf_cmd_compare(const args *a);

#endif

/* `underfed compare DIR_A DIR_B`: every scenario of two runs, row by row, judged against the
 * measured noise (compare.h). */
#ifndef UF_TOOLS_COMPARE_CMD_H
#define UF_TOOLS_COMPARE_CMD_H

#include "cmdline.h"

/* argv after the command name: DIR_A DIR_B [--threshold PCT] [--allow-missing]. Exit status:
 * 0 no regression, 1 a regression (or rows of DIR_A missing from DIR_B, unless
 * --allow-missing), 2 usage, a folder empty or unreadable or a file malformed. */
int uf_cmd_compare(int argc, char **argv);
extern const uf_command uf_compare_command;

#endif

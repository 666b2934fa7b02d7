/* `underfed readme`: the figures of Markdown pages, generated from a results folder. */
#ifndef UF_TOOLS_README_CMD_H
#define UF_TOOLS_README_CMD_H

#include "cmdline.h"

/* argv after the command name: [--check] RESULTS_DIR FILE.md...
 * Returns the exit status: 0 in sync (or rewritten), 1 --check found a stale figure, 2 usage,
 * unreadable input or a figure that names nothing measured. */
int uf_cmd_readme(int argc, char **argv);
extern const uf_command uf_readme_command;

#endif

/* `underfed plotdata`: every plot's data and gnuplot variables, in OUT/data (plotdata.h: the
 * files' format). */
#ifndef UF_TOOLS_PLOTDATA_CMD_H
#define UF_TOOLS_PLOTDATA_CMD_H

#include "cmdline.h"

/* argv after the command name: RESULTS_DIR OUT_DIR, or --across RESULTS_DIR... OUT_DIR
 * OUT_DIR/data is written whole or not at all (staged beside it, then exchanged in one
 * rename), and the figures are listed only once it is in place. Returns the exit status: 0
 * written, 2 usage, unreadable input or a data set that could not be written (a message says
 * which; OUT_DIR/data is then as it was). */
int uf_cmd_plotdata(int argc, char **argv);
extern const uf_command uf_plotdata_command;

#endif

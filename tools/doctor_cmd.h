/* `underfed doctor`: diagnose a CUDA program (any: PyTorch included) from the records of the
 * suite's injection library, or from records made earlier (--from DIR). */
#ifndef UF_TOOLS_DOCTOR_CMD_H
#define UF_TOOLS_DOCTOR_CMD_H

#include "cmdline.h"

/* argv after the command name. Exit status: 0 diagnosed, 1 the traced command failed (the
 * diagnosis is still printed when there are records), 2 usage or unreadable records, 77 the
 * command skipped (exit 77: no GPU, too few GPUs). */
int uf_cmd_doctor(int argc, char **argv);
extern const uf_command uf_doctor_command;

#endif

/* A command of `underfed` (one file each, tools/NAME_cmd.c): what `underfed --help` lists of
 * it, the common options it takes, and the function that runs it; and the one parser of those
 * options (cmdline.c), which a command calls on its own argv. underfed.c dispatches to them. */
#ifndef UF_TOOLS_CMDLINE_H
#define UF_TOOLS_CMDLINE_H

#include <stdio.h>

#include "cli.h"

typedef struct uf_command {
    const char *name;
    const char *operands;           /* as the help shows them */
    int min_pos, max_pos;           /* operands uf_parse_args takes (0 0: the command reads its
                                     * own argv) */
    const char *options;            /* the common options it takes, space-separated; a '!'
                                     * after one marks it required */
    const char *summary;            /* its line in `underfed --help` */
    int (*run)(int argc, char **argv);  /* argv: the arguments after the command's name;
                                         * returns the exit status (only main exits) */
    int own_help;                   /* 1: --help is the command's own (the doctor's usage is
                                     * its own text); 0: underfed prints uf_print_command_help */
} uf_command;

/* argv (after the command's name) into a: c's options and operands, each checked. 0, or 2
 * with a message and c's synopsis on stderr. */
int uf_parse_args(const uf_command *c, int argc, char **argv, args *a);
/* uf_parse_args, then run(the parsed args) where the command line is good: the exit status. */
int uf_run_parsed(const uf_command *c, int argc, char **argv, int (*run)(const args *a));
/* `underfed COMMAND --help`: the synopsis, the summary and the options c takes. */
void uf_print_command_help(FILE *f, const uf_command *c);

#endif

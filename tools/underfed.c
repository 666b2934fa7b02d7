/* underfed: reads result folders (strictly: a malformed, truncated or foreign file is an error
 * naming the file and line) and turns them into plot data, a report, a comparison of two runs
 * or of several GPUs. No CUDA: it runs where the results are, GPU or not.
 *
 *   underfed COMMAND ARGS [options]; `underfed --help` lists the commands (the table at the
 *   end of this file), `underfed COMMAND --help` gives one command's arguments and options.
 *
 * W names axis values ("elems=4K,ops=1000", "max"/"min" allowed); unnamed axes take the
 * run's default (metadata default.AXIS). An option value that matches nothing (a column, a
 * variant, a point the file does not have) is an error, never a NaN or empty output. Exit: 0
 * ok, 1 compare found a regression (or rows of DIR_A missing from DIR_B, listed MISSING, unless
 * --allow-missing) or standard output could not be written (main checks it after every
 * command), 2 usage or unreadable input. `underfed --version` (-V) prints uf_tool_version().
 *
 * This file is the dispatcher: the table of commands, --help and --version, and the check of
 * standard output at exit. Each command is a file named for it (NAME_cmd.c: ladder, values,
 * points, series, axes, variants, ceiling and across on the table queries' skeleton, query.h;
 * compare, report, plotdata, readme, crosscheck, doctor), which fills a uf_command (cmdline.h)
 * and runs as uf_cmd_NAME(argc, argv) on the arguments after its name, returning the exit
 * status; the common options are parsed by cmdline.c, once. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmdline.h"
#include "compare_cmd.h"
#include "crosscheck_cmd.h"
#include "doctor_cmd.h"
#include "plotdata_cmd.h"
#include "query.h"
#include "readme_cmd.h"
#include "report_cmd.h"
#include "stdout_check.h"

/* The commands, in the order `underfed --help` lists them. */
static const uf_command *const commands[] = {
    &uf_ladder_command, &uf_values_command, &uf_points_command, &uf_series_command,
    &uf_axes_command, &uf_variants_command, &uf_ceiling_command, &uf_across_command,
    &uf_compare_command, &uf_report_command, &uf_plotdata_command, &uf_readme_command,
    &uf_crosscheck_command, &uf_doctor_command,
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static const uf_command *find_command(const char *name)
{
    for (int c = 0; c < N_COMMANDS; c++)
        if (strcmp(commands[c]->name, name) == 0)
            return commands[c];
    return NULL;
}

static void print_help(FILE *f)
{
    fprintf(f, "usage: underfed COMMAND ARGS [options]   (underfed COMMAND --help: its arguments "
               "and options)\n\ncommands:\n");
    int width = 0;
    for (int c = 0; c < N_COMMANDS; c++)
        if ((int)strlen(commands[c]->operands) > width)
            width = (int)strlen(commands[c]->operands);
    for (int c = 0; c < N_COMMANDS; c++)
        fprintf(f, "  %-10s %-*s  %s\n", commands[c]->name, width, commands[c]->operands,
                commands[c]->summary);
    fprintf(f, "\nW names axis values (\"elems=4K,ops=1000\", max and min allowed); unnamed axes "
               "take the run's\ndefault. Result files are read strictly: a malformed file is an "
               "error naming file and line.\nExit: 0 ok, 1 compare found a regression or standard "
               "output could not be written,\n2 usage or unreadable input. underfed --version "
               "(-V): this build's git describe.\n");
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static int is_version(const char *arg)
{
    return strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0;
}

/* The command argv names, run; its exit status. */
static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return EXIT_BAD;
    }
    if (is_version(argv[1])) {
        uf_print_version(stdout);
        return 0;
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        const uf_command *c = argc > 2 ? find_command(argv[2]) : NULL;
        char *own[] = {"--help", NULL};
        if (c && c->own_help)
            return c->run(1, own);
        if (c)
            uf_print_command_help(stdout, c);
        else
            print_help(stdout);
        return 0;
    }
    const uf_command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "underfed: unknown command %s (commands:", argv[1]);
        for (int k = 0; k < N_COMMANDS; k++)
            fprintf(stderr, "%s %s", k ? "," : "", commands[k]->name);
        fprintf(stderr, "; underfed --help)\n");
        return EXIT_BAD;
    }
    for (int i = 2; !c->own_help && i < argc && strcmp(argv[i], "--") != 0; i++)
        if (is_help(argv[i])) {     /* not COMMAND's own (after --) */
            uf_print_command_help(stdout, c);
            return 0;
        }
    return c->run(argc - 2, argv + 2);
}

/* Every command returns here, so that one check covers them all: what a command printed must
 * have reached standard output (a full disk or a closed pipe loses it silently otherwise).
 * It did not: a message, and exit 1 where the command would have exited 0. */
int main(int argc, char **argv)
{
    int rc = run_command(argc, argv);
    if (uf_stdout_flushed("underfed") != 0 && rc == 0)
        rc = EXIT_OUTPUT;
    return rc;
}

/* What the `underfed` commands share (cmdline.c parses the common options; each command is
 * its own NAME_cmd.c): their exit statuses, the parsed command line, and the helpers that
 * read a result folder. Each helper prints its own message on stderr when it fails. */
#ifndef UF_TOOLS_CLI_H
#define UF_TOOLS_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "results.h"

/* EXIT_OUTPUT: what a command printed could not all be written (standard output full or
 * closed); main checks it once, after every command. */
enum { EXIT_REGRESSED = 1, EXIT_OUTPUT = 1, EXIT_BAD = 2, MAX_DIRS = 16 };

/* The version of this build of the tool: `git describe` of its sources when it was built (the
 * results' `# git:` line says the same of a run), "unknown (no git)" without it. What
 * `underfed --version` prints after "underfed " (version.c), through uf_print_version. */
const char *uf_tool_version(void);

/* A command's options and operands, as cmdline.c's uf_parse_args fills them (tool_options). */
typedef struct args {
    const char *cmd;            /* the command's name, for messages */
    const char *where;
    const char *x;
    const char *metrics;
    const char *metric;
    const char *share;
    const char *plots_dir;
    const char *plots_link;
    const char *variant;
    double threshold_pct;
    int allow_missing;          /* compare: rows missing from the second run do not fail */
    const char *pos[MAX_DIRS + 2];
    int n_pos;
} args;

/* DIR/NAME SUFFIX into out; -1 (with a message) when it does not fit. */
int join_path(char *out, size_t len, const char *dir, const char *name, const char *suffix);
/* The point W names (NULL: the run's defaults; tablequery.h's tq_point); -1 with a message. */
int resolve_point(const uf_table *t, const char *where, double *point);
/* strcmp, for qsort over an array of names. */
int compare_names(const void *x, const void *y);
/* A folder's scenario result files, sorted, in *names (free it): how many, or -1 with a message. */
int list_results(const char *dir, char (**names)[UF_NAME_LEN]);
/* DIR/ceilings.csv into *c (and its metadata into *meta, NULL: not kept): 1 read, 0 the folder
 * has none (why in err), -1 with a message when it is there but malformed. */
int folder_ceilings(const char *dir, uf_ceilings *c, uf_meta *meta, char *err, size_t errlen);
/* "underfed VERSION (doctor trace format N)": `underfed --version` and `underfed doctor
 * --version` print this one line; VERSION is the build's git describe (uf_version.c). */
void uf_print_version(FILE *f);

#endif

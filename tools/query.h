/* The table queries of `underfed` (ladder, values, points, series, axes, variants, ceiling,
 * across: one file each, NAME_cmd.c) and the skeleton they share (query.c). A query on one
 * result file is a uf_file_query: what it reads and checks (its columns, the axis swept, the
 * samples, the point), then what it prints; uf_query_file does the rest, the same for each:
 * the command line, FILE.csv read strictly, the checks in one order (an error names the value
 * and lists what the file has), the printing, the table freed. ceiling and across read folders
 * and use the skeleton's pieces. */
#ifndef UF_TOOLS_QUERY_H
#define UF_TOOLS_QUERY_H

#include "cli.h"
#include "cmdline.h"
#include "results.h"
#include "strbuf.h"

enum { MAX_COLUMNS = 32 };

/* Column names from a comma list of an option, checked against a file's table. */
typedef struct column_list {
    int n;
    char name[MAX_COLUMNS][UF_NAME_LEN];
} column_list;

/* What the skeleton found for a query on one file, once every check passed. */
typedef struct uf_query {
    const args *a;
    uf_table t;                     /* FILE.csv (with its samples where the query reads them) */
    const char *path;               /* FILE.csv */
    int ax;                         /* the axis --x names; -1 where the query sweeps none */
    double point[UF_MAX_AXES];      /* the point --where names, where the query takes one */
    column_list cols;               /* the columns, where the query prints some */
    const char *names[MAX_COLUMNS]; /* their names, as the plot data writers take them */
} uf_query;

/* A query on FILE.csv (the first operand). */
typedef struct uf_file_query {
    int columns;                    /* it prints columns: --metrics, else default_columns */
    const char *default_columns;
    int sweep;                      /* --x names the axis swept (free at the point) */
    int series;                     /* it reads FILE.series.csv too (the PM samples) */
    int at_point;                   /* --where names the point (else the run's defaults) */
    void (*print)(const uf_query *q, uf_strbuf *body);  /* may print to stdout, or fill body */
} uf_file_query;

/* Command c, the query fq on its file: the exit status. */
int uf_query_file(const uf_command *c, const uf_file_query *fq, int argc, char **argv);

/* The pieces, for the queries on folders. */
/* path read strictly into t; -1 (with a message, t freed) when it cannot be. */
int uf_query_load(uf_table *t, const char *path);
/* LIST ("m1,m2,...") into out: each name a column of t, or ending in '?' (it may be absent,
 * and reads NaN then; the '?' is dropped). 0, or 2 with a message naming the value. */
int uf_query_columns(const args *a, const char *flag, const char *list, const uf_table *t,
                     const char *path, column_list *out);
/* Prints b (text the plot data writers made, as these commands print it) and frees it: 0,
 * or 2 when it could not all be made. */
int uf_query_print(const args *a, uf_strbuf *b);
/* ladder's and values' printing: "variant" then each column at the point, after two `#`
 * lines: the column names, and their headings (quoted words, for a plot's key). */
void uf_query_values(const uf_query *q, uf_strbuf *body);

/* The commands. */
extern const uf_command uf_ladder_command, uf_values_command, uf_points_command,
    uf_series_command, uf_axes_command, uf_variants_command, uf_ceiling_command,
    uf_across_command;
int uf_cmd_ladder(int argc, char **argv);
int uf_cmd_values(int argc, char **argv);
int uf_cmd_points(int argc, char **argv);
int uf_cmd_series(int argc, char **argv);
int uf_cmd_axes(int argc, char **argv);
int uf_cmd_variants(int argc, char **argv);
int uf_cmd_ceiling(int argc, char **argv);
int uf_cmd_across(int argc, char **argv);

#endif

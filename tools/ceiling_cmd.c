/* underfed ceiling NAME DIR: a row of DIR/ceilings.csv (NaN where not measured), as the
 * plot scripts and pages read the ceilings (a table query on a folder, query.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "query.h"

/* "unknown ceiling": the table's names, and where the file was read, that it has no such row. */
static int unknown_ceiling(const char *name, const char *path)
{
    fprintf(stderr, "underfed ceiling: unknown ceiling \"%s\" (", name);
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", uf_ceiling_descs[i].name);
    fprintf(stderr, "%s%s)\n", path ? ", or a row of " : "", path ? path : "");
    return EXIT_BAD;
}

/* The value of one ceiling of DIR/ceilings.csv: a name of the ceilings table, or any other row
 * the file has (copy_dram_pct, nccl_busbw_gbs@1048576, ...). NaN (and a note) when the file is
 * absent; NaN when the row is empty; an error when the file is malformed or the name unknown. */
static int ceiling(const args *a)
{
    char path[UF_PATH_LEN], err[UF_REASON_LEN];
    uf_ceiling_row *rows = NULL;
    const uf_ceiling_row *row = NULL;
    int known = 0, n = 0;
    for (int i = 0; i < uf_n_ceiling_descs; i++)
        known |= strcmp(uf_ceiling_descs[i].name, a->pos[0]) == 0;
    if (join_path(path, sizeof path, a->pos[1], "ceilings", ".csv") != 0)
        return EXIT_BAD;
    FILE *probe = fopen(path, "r");
    if (!probe) {
        if (!known)
            return unknown_ceiling(a->pos[0], NULL);
        fprintf(stderr, "underfed ceiling: no %s: %s not measured\n", path, a->pos[0]);
        printf("NaN\n");
        return 0;
    }
    fclose(probe);
    if (uf_ceilings_read_rows(path, &rows, &n, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        return EXIT_BAD;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, a->pos[0]) == 0)
            row = &rows[i];
    if (row == NULL && !known) {
        free(rows);
        return unknown_ceiling(a->pos[0], path);
    }
    if (row == NULL || isnan(row->value))
        printf("NaN\n");
    else
        printf("%.10g\n", row->value);
    free(rows);
    return 0;
}

int uf_cmd_ceiling(int argc, char **argv)
{
    return uf_run_parsed(&uf_ceiling_command, argc, argv, ceiling);
}

const uf_command uf_ceiling_command = {
    "ceiling", "NAME DIR", 2, 2, "", "a row of DIR/ceilings.csv (NaN where not measured)",
    uf_cmd_ceiling, 0};

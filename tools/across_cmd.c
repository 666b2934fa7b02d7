/* underfed across NAME DIR... [--metric M] [--share S|auto]: one scenario across result
 * folders (GPUs), raw and as shares, each at its defaults (pd_across: the plot data's are
 * these; a table query on folders, query.h). */
#include <stdio.h>
#include <string.h>

#include "plotdata.h"
#include "query.h"
#include "tablequery.h"

/* One scenario's metric and share of a ceiling in each folder, at its defaults (pd_across). */
static int across(const args *a)
{
    uf_table t[MAX_DIRS];
    double point[MAX_DIRS][UF_MAX_AXES];
    const double *at[MAX_DIRS];
    uf_strbuf body = {0};
    int n_dirs = a->n_pos - 1, rc = 0, loaded = 0, measured[2];
    const char *share = a->share && strcmp(a->share, "auto") != 0 ? a->share : NULL;
    column_list metric, share_col;
    if (n_dirs < 1 || n_dirs > MAX_DIRS) {
        fprintf(stderr, "underfed across: give 1 to %d result folders\n", MAX_DIRS);
        return EXIT_BAD;
    }
    /* Every folder's file must have the columns named. */
    for (; loaded < n_dirs; loaded++) {
        char path[UF_PATH_LEN];
        if (join_path(path, sizeof path, a->pos[loaded + 1], a->pos[0], ".csv") != 0 ||
            uf_query_load(&t[loaded], path) != 0) {
            rc = EXIT_BAD;
            goto out;
        }
        rc = uf_query_columns(a, "--metric", a->metric ? a->metric : "step_ms", &t[loaded], path,
                           &metric);
        if (rc == 0 && share)
            rc = uf_query_columns(a, "--share", share, &t[loaded], path, &share_col);
        if (rc == 0 && (metric.n != 1 || (share && share_col.n != 1))) {
            fprintf(stderr, "underfed across: --metric and --share take one column each\n");
            rc = EXIT_BAD;
        }
        if (rc != 0) {
            loaded++;
            goto out;
        }
    }
    const char *m[2] = {metric.name[0], share ? share_col.name[0] : tq_auto_share(&t[0])};
    for (int d = 0; d < n_dirs; d++)
        at[d] = resolve_point(&t[d], NULL, point[d]) == 0 ? point[d] : NULL;
    pd_across(&body, t, at, a->pos + 1, n_dirs, m, measured);
    rc = uf_query_print(a, &body);
out:
    for (int d = 0; d < loaded; d++)
        uf_table_free(&t[d]);
    return rc;
}

int uf_cmd_across(int argc, char **argv)
{
    return uf_run_parsed(&uf_across_command, argc, argv, across);
}

const uf_command uf_across_command = {
    "across", "NAME DIR...", 2, MAX_DIRS + 1, "--metric --share",
    "one scenario across result folders (GPUs), raw and as shares", uf_cmd_across, 0};

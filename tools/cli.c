/* The helpers the `underfed` commands share (cli.h): paths, points, a folder's result files
 * and its ceilings (the version is version.c's: it needs the build's generated file). */
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "tablequery.h"

/* DIR/NAME SUFFIX into out; -1 (with a message) when it does not fit. */
int join_path(char *out, size_t len, const char *dir, const char *name, const char *suffix)
{
    int n = snprintf(out, len, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "underfed: path too long: %s/%s%s\n", dir, name, suffix);
        return -1;
    }
    return 0;
}

/* The point W names (NULL: the run's defaults; see tq_point); -1 (with the reason on stderr)
 * when W is malformed or names an unknown axis. */
int resolve_point(const uf_table *t, const char *where, double *point)
{
    char err[UF_REASON_LEN];
    if (tq_point(t, where, point, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "underfed: --where: %s\n", err);
    return -1;
}

int compare_names(const void *x, const void *y)
{
    return strcmp((const char *)x, (const char *)y);
}

/* The scenario result files of a folder (not ceilings, not series), sorted, in *names (an
 * array that grows with the folder: no file is left out; free it). Returns how many, or -1
 * with a message (the folder unreadable, a name too long for a scenario). */
int list_results(const char *dir, char (**names)[UF_NAME_LEN])
{
    DIR *d = opendir(dir);
    int n = 0, cap = 0, rc = 0;
    *names = NULL;
    if (!d) {
        fprintf(stderr, "underfed: cannot read folder %s\n", dir);
        return -1;
    }
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0 ||
            strstr(e->d_name, ".series.csv") || strcmp(e->d_name, "ceilings.csv") == 0)
            continue;
        if (len - 4 >= UF_NAME_LEN) {
            fprintf(stderr, "underfed: %s/%s: a scenario name has at most %d characters\n", dir,
                    e->d_name, UF_NAME_LEN - 1);
            rc = -1;
        } else if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char (*bigger)[UF_NAME_LEN] = realloc(*names, (size_t)cap * sizeof *bigger);
            if (!bigger) {
                fprintf(stderr, "underfed: %s: out of memory\n", dir);
                rc = -1;
            } else {
                *names = bigger;
            }
        }
        if (rc == 0)
            snprintf((*names)[n++], UF_NAME_LEN, "%.*s", (int)(len - 4), e->d_name);
    }
    closedir(d);
    if (rc != 0) {
        free(*names);
        *names = NULL;
        return -1;
    }
    if (n > 0)
        qsort(*names, (size_t)n, UF_NAME_LEN, compare_names);
    return n;
}

/* DIR/ceilings.csv into *c, and its `# key: value` lines into *meta (NULL: not kept): 1 when
 * read; 0 when the folder has none (c all NaN, why in err); -1 (a message said why) when it
 * is there but malformed. */
int folder_ceilings(const char *dir, uf_ceilings *c, uf_meta *meta, char *err, size_t errlen)
{
    char path[UF_PATH_LEN];
    uf_ceilings_clear(c);
    if (join_path(path, sizeof path, dir, "ceilings", ".csv") != 0)
        return -1;
    if (uf_ceilings_read_meta(path, c, meta, err, errlen) == 0)
        return 1;
    FILE *probe = fopen(path, "r");
    if (!probe)
        return 0;
    fclose(probe);
    fprintf(stderr, "underfed: %s\n", err);
    return -1;
}

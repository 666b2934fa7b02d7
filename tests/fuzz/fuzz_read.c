/* One fuzzed input through the tool's reading path (see fuzz_read.h). */
#include "fuzz_read.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "results.h"

fuzz_kind fuzz_kind_of(const char *data, size_t len)
{
    static const struct {
        const char *magic;
        fuzz_kind kind;
    } kinds[] = {{"# underfed-ceilings", FUZZ_CEILINGS}, {"# underfed-series", FUZZ_SERIES},
                 {"underfed-doctor-trace", FUZZ_DOCTOR}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t n = strlen(kinds[k].magic);
        if (len >= n && memcmp(data, kinds[k].magic, n) == 0)
            return kinds[k].kind;
    }
    return FUZZ_RESULTS;
}

/* Does err start with "PATH:DIGITS:"? */
static int names_file_and_line(const char *err, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(err, path, n) != 0 || err[n] != ':' || !isdigit((unsigned char)err[n + 1]))
        return 0;
    const char *c = err + n + 1;
    while (isdigit((unsigned char)*c))
        c++;
    return *c == ':';
}

/* What the tool does with a table once read: compare it (against itself, and a second read of
 * itself when given), look values up. */
static void use_table(const uf_table *t)
{
    uf_diff diffs[8];
    uf_compare_tables(t, t, 5.0, diffs, 8);
    for (int i = 0; i < t->n_rows && i < 4; i++)
        for (int m = 0; m < uf_n_metrics; m += 7)
            (void)uf_table_value(t, &t->rows[i], uf_metrics[m].name);
}

int fuzz_read_one(fuzz_kind kind, const char *path, const char *scenario, const char *data,
                  size_t len, const char *results, size_t results_len, char *err,
                  size_t errlen)
{
    int rc = 0;
    err[0] = '\0';
    if (kind == FUZZ_DOCTOR)
        return fuzz_doctor_one(path, data, len, err, errlen);
    if (kind == FUZZ_CEILINGS) {
        uf_ceilings c;
        uf_meta *meta = calloc(1, sizeof *meta);
        if (meta == NULL)
            return 0;
        rc = uf_ceilings_parse(path, data, len, &c, meta, err, errlen);
        free(meta);
    } else {
        uf_table t;
        uf_table_init(&t, "");
        if (kind == FUZZ_SERIES) {
            char results_err[UF_REASON_LEN];
            if (results != NULL && uf_table_parse_csv(&t, "results.csv", results, results_len,
                                                      NULL, results_err,
                                                      sizeof results_err) != 0) {
                uf_table_free(&t);
                uf_table_init(&t, "");
            }
            rc = uf_table_parse_series_csv(&t, path, data, len, err, errlen);
        } else {
            rc = uf_table_parse_csv(&t, path, data, len, scenario, err, errlen);
        }
        if (rc == 0)
            use_table(&t);
        uf_table_free(&t);
    }
    if (rc == 0)
        return 0;
    return names_file_and_line(err, path) ? 1 : -1;
}

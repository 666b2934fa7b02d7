/* Unit tests of results.h (results_table.c, results_write.c, results_read.c, ceilings.c),
 * csv.c and fileutil.c: the metric table, rows, CSV round trip, JSON, series CSV, atomic
 * writes, the strict reader on malformed fixtures (tests/data), ceilings, mkdirs, slug. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_check.h"
#include "read_text.h"
#include "fileutil.h"
#include "options.h"
#include "results.h"
#include "strbuf.h"

#define DATA(name) UF_TEST_DATA_DIR "/" name

/* ---- helpers ---------------------------------------------------------------------------- */

static char *make_tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/uf_results_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void join(char *out, size_t outlen, const char *dir, const char *name)
{
    snprintf(out, outlen, "%s/%s", dir, name);
}

/* Remove a folder's files (one level), then the folder. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[512];
        join(p, sizeof p, dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static int any_tmp_file(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.") != NULL)
            found = 1;
    closedir(d);
    return found;
}

/* A table with two axes, two extras, metadata and three rows, one of them awkward. */
static void make_table(uf_table *t)
{
    uf_table_init(t, "launch_storm");
    cr_assert_eq(uf_table_add_axis(t, "elems"), 0);
    cr_assert_eq(uf_table_add_axis(t, "ops"), 0);
    cr_assert_eq(uf_table_add_extra(t, "tokens_per_s", "tokens/s"), 0);
    cr_assert_eq(uf_table_add_extra(t, "pad_pct", "%"), 0);
    uf_meta_set(&t->meta, "gpu", "%s", "NVIDIA H200");
    uf_meta_set(&t->meta, "sm_count", "%d", 132);
    uf_meta_set(&t->meta, "command", "%s", "launch_storm --sweep elems=4K,64M");

    uf_row *r = uf_table_append(t);
    snprintf(r->variant, sizeof r->variant, "eager");
    snprintf(r->role, sizeof r->role, "broken");
    r->axis[0] = 4096;
    r->axis[1] = 64;
    r->step_ms = 1.25;
    r->busy_pct = 37.5;
    r->launch_us = 2.125;
    r->nvml_util_pct = 100;
    r->sm_clock_mhz = 1712.5;
    r->sm_clock_min_mhz = 1410;
    r->power_w = 689.25;
    r->useful_flops = 1.5e15;
    r->max_rel_err = 3.0517578125e-05;
    r->verified = 1;
    r->extra[0] = 123456.75;

    r = uf_table_append(t);
    snprintf(r->variant, sizeof r->variant, "graph");
    snprintf(r->role, sizeof r->role, "fixed");
    r->axis[0] = 67108864;
    r->axis[1] = 64;
    r->step_ms = 0.5;
    r->extra[1] = -0.25;
    snprintf(r->skip_reason, sizeof r->skip_reason,
             "counters: not permitted, \"ERR_NVGPUCTRPERM\", see docs");

    r = uf_table_append(t);
    snprintf(r->variant, sizeof r->variant, "odd.name-2");
    snprintf(r->role, sizeof r->role, "fixed");
    r->axis[0] = 1;
    r->axis[1] = 2;
    snprintf(r->skip_reason, sizeof r->skip_reason, "two\nlines");   /* CSV: "two lines" */
}

/* Copy of the fixture src at path, with the first `from` replaced by `to`. */
static void write_edited(const char *src, const char *path, const char *from, const char *to)
{
    char *text = read_text(src);
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s lacks '%s'", src, from);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    cr_assert_eq(fclose(f), 0);
    free(text);
}

/* The file and line must appear in a reader's message, with the phrase. */
static void expect_read_error(const char *path, int line, const char *phrase)
{
    uf_table t;
    uf_table_init(&t, "");
    char err[512] = "";
    cr_assert_eq(uf_table_read_csv(&t, path, err, sizeof err), -1, "%s should be refused",
                 path);
    char where[512];
    snprintf(where, sizeof where, "%s:%d:", path, line);
    cr_assert(strstr(err, where) != NULL, "message '%s' should start with '%s'", err, where);
    cr_assert(strstr(err, phrase) != NULL, "message '%s' should say '%s'", err, phrase);
    uf_table_free(&t);
}

/* ---- the metric table ------------------------------------------------------------------- */

Test(results, metric_table_covers_the_row_in_order)
{
    cr_assert_str_eq(uf_metrics[0].name, "step_ms");
    cr_assert_str_eq(uf_metrics[uf_n_metrics - 1].name, "max_rel_err");
    cr_assert_eq(uf_metrics[0].offset, offsetof(uf_row, step_ms));
    size_t span = offsetof(uf_row, max_rel_err) - offsetof(uf_row, step_ms);
    cr_assert_eq((size_t)uf_n_metrics, span / sizeof(double) + 1, "every double field listed");
    for (int i = 1; i < uf_n_metrics; i++)
        cr_assert_eq(uf_metrics[i].offset, uf_metrics[i - 1].offset + sizeof(double),
                     "%s out of struct order", uf_metrics[i].name);
    for (int i = 0; i < uf_n_metrics; i++)
        cr_assert(uf_metrics[i].unit != NULL && uf_metrics[i].unit[0] != '\0');
}

/* The columns of format v2, after nvml_util_pct the NVML clock and power of the timing pass;
 * and of v3, the mean step after step_ms_max. */
Test(results, metric_table_v2_columns)
{
    static const struct { const char *name, *unit; } v2[] = {
        {"comm_sm_pct", "%"}, {"copy_overlap_pct", "%"}, {"sm_clock_mhz", "MHz"},
        {"sm_clock_min_mhz", "MHz"}, {"power_w", "W"},
    };
    size_t found = 0;
    for (int i = 0; i < uf_n_metrics; i++) {
        cr_assert(uf_metrics[i].since >= 1 && uf_metrics[i].since <= 5, "%s",
                  uf_metrics[i].name);
        if (uf_metrics[i].since == 5) {     /* v5: the host's calls, after the copy overlap */
            static const char *const v5[] = {
                "syncs_per_step", "stream_syncs_per_step", "context_syncs_per_step",
                "event_syncs_per_step", "pageable_copies_per_step", "drains_per_step",
                "sync_gap_us"};
            int k = i - uf_metric_index("syncs_per_step");
            cr_assert(k >= 0 && k < 7 && uf_metric_index("copy_overlap_pct") ==
                                             uf_metric_index("syncs_per_step") - 1);
            cr_assert_str_eq(uf_metrics[i].name, v5[k]);
        }
        if (uf_metrics[i].since == 4) {     /* v4: the GPM agreement after the GPM figures */
            cr_assert_str_eq(uf_metrics[i].name, "gpm_agree_pts");
            cr_assert_str_eq(uf_metrics[i - 1].name, "gpm_dram_pct");
        }
        if (uf_metrics[i].since == 3) {
            cr_assert_str_eq(uf_metrics[i].name, "step_ms_mean");
            cr_assert_str_eq(uf_metrics[i - 1].name, "step_ms_max");
            cr_assert_str_eq(uf_metrics[i].unit, "ms");
        }
        if (uf_metrics[i].since != 2)
            continue;
        cr_assert_lt(found, sizeof v2 / sizeof v2[0], "%s is v2 too", uf_metrics[i].name);
        cr_assert_str_eq(uf_metrics[i].name, v2[found].name);
        cr_assert_str_eq(uf_metrics[i].unit, v2[found].unit);
        found++;
    }
    cr_assert_eq(found, sizeof v2 / sizeof v2[0]);
    for (int i = 0; i + 1 < uf_n_metrics; i++)
        if (strcmp(uf_metrics[i].name, "nvml_util_pct") == 0)
            cr_assert_str_eq(uf_metrics[i + 1].name, "sm_clock_mhz");
}

Test(results, ceiling_table_covers_the_struct)
{
    cr_assert_eq((size_t)uf_n_ceiling_descs, sizeof(uf_ceilings) / sizeof(double));
    uf_ceilings c;
    uf_ceilings_clear(&c);
    cr_assert(isnan(c.copy_d2d_gbs) && isnan(c.nccl_busbw_gbs) && isnan(c.launch_us));
}

Test(results, new_row_is_empty)
{
    uf_table t;
    uf_table_init(&t, "x");
    for (int i = 0; i < 100; i++) {
        uf_row *r = uf_table_append(&t);
        cr_assert_not_null(r);
        cr_assert(isnan(r->step_ms) && isnan(r->max_rel_err) && isnan(r->extra[0]));
        cr_assert(isnan(r->axis[0]));
        cr_assert_str_eq(r->variant, "");
        cr_assert_null(r->samples);
    }
    cr_assert_eq(t.n_rows, 100);
    uf_table_free(&t);
    cr_assert_eq(t.n_rows, 0);
}

Test(results, table_columns)
{
    uf_table t;
    uf_table_init(&t, "x");
    for (int i = 0; i < UF_MAX_AXES; i++) {
        char name[8];
        snprintf(name, sizeof name, "a%d", i);
        cr_assert_eq(uf_table_add_axis(&t, name), 0);
    }
    cr_assert_eq(uf_table_add_axis(&t, "more"), -1, "full");
    cr_assert_eq(uf_table_add_extra(&t, "a0", "u"), -1, "name taken by an axis");
    cr_assert_eq(uf_table_add_extra(&t, "busy_pct", "u"), -1, "name taken by a metric");
    for (int i = 0; i < UF_MAX_EXTRA; i++) {
        char name[8];
        snprintf(name, sizeof name, "e%d", i);
        cr_assert_eq(uf_table_add_extra(&t, name, "u"), 0);
    }
    cr_assert_eq(uf_table_add_extra(&t, "more", "u"), -1, "full");
    cr_assert(uf_table_has_column(&t, "a3"), "an axis");
    cr_assert(uf_table_has_column(&t, "e0"), "an extra");
    cr_assert(uf_table_has_column(&t, "max_rel_err"), "a fixed metric");
    cr_assert(!uf_table_has_column(&t, "more"), "refused above");
    cr_assert(!uf_table_has_column(&t, "variant"), "a name column holds no value");
}

Test(results, values_by_name)
{
    uf_table t;
    make_table(&t);
    uf_row *r = &t.rows[0];
    cr_assert_float_eq(uf_table_value(&t, r, "step_ms"), 1.25, 0.0);
    cr_assert_float_eq(uf_table_value(&t, r, "tokens_per_s"), 123456.75, 0.0);
    cr_assert_float_eq(uf_table_value(&t, r, "elems"), 4096.0, 0.0);
    cr_assert(isnan(uf_table_value(&t, r, "no_such_column")));
    cr_assert(isnan(uf_table_value(&t, r, "gbs")), "empty is NaN");
    double *p = uf_row_metric(&t, r, "gbs");
    cr_assert_eq(p, &r->gbs);
    *p = 3.0;
    cr_assert_float_eq(uf_table_value(&t, r, "gbs"), 3.0, 0.0);
    cr_assert_eq(uf_row_metric(&t, r, "pad_pct"), &r->extra[1]);
    cr_assert_null(uf_row_metric(&t, r, "elems"), "axes are not metrics");
    cr_assert_null(uf_row_metric(&t, r, "nope"));
    uf_table_free(&t);
}

Test(results, meta_set_get_replace)
{
    uf_meta m = {0};
    uf_meta_set(&m, "gpu", "%s", "A");
    uf_meta_set(&m, "driver", "%d.%d", 580, 159);
    uf_meta_set(&m, "gpu", "%s", "B\nC");
    cr_assert_eq(m.n, 2);
    cr_assert_str_eq(uf_meta_get(&m, "gpu"), "B C");
    cr_assert_str_eq(uf_meta_get(&m, "driver"), "580.159");
    cr_assert_null(uf_meta_get(&m, "cuda"));
    for (int i = 0; i < UF_MAX_META + 5; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        uf_meta_set(&m, key, "%d", i);
    }
    cr_assert_eq(m.n, UF_MAX_META);
}

/* ---- CSV -------------------------------------------------------------------------------- */

Test(results, csv_round_trip)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "launch_storm.csv");
    uf_table t;
    make_table(&t);
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), 0, "%s", err);

    uf_table back;
    uf_table_init(&back, "");
    cr_assert_eq(uf_table_read_csv(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(back.scenario, "launch_storm");
    cr_assert_eq(back.n_axes, 2);
    cr_assert_str_eq(back.axis_names[1], "ops");
    cr_assert_eq(back.n_extra, 2);
    cr_assert_str_eq(back.extra_names[0], "tokens_per_s");
    cr_assert_str_eq(back.extra_units[0], "tokens/s");
    cr_assert_str_eq(back.extra_units[1], "%");
    cr_assert_eq(back.meta.n, 3);
    cr_assert_str_eq(uf_meta_get(&back.meta, "command"), "launch_storm --sweep elems=4K,64M");
    cr_assert_str_eq(uf_meta_get(&back.meta, "sm_count"), "132");
    cr_assert_eq(back.n_rows, t.n_rows);
    for (int i = 0; i < t.n_rows; i++) {
        const uf_row *a = &t.rows[i], *b = &back.rows[i];
        cr_assert_str_eq(b->variant, a->variant);
        cr_assert_str_eq(b->role, a->role);
        /* a text holds no control character: the writer makes a line break a space */
        cr_assert_str_eq(b->skip_reason, i == 2 ? "two lines" : a->skip_reason);
        for (int k = 0; k < 2; k++)
            cr_assert_float_eq(b->axis[k], a->axis[k], 0.0);
        for (int m = 0; m < uf_n_metrics; m++) {
            double va = uf_table_value(&t, a, uf_metrics[m].name);
            double vb = uf_table_value(&back, b, uf_metrics[m].name);
            if (isnan(va))
                cr_assert(isnan(vb), "row %d %s: NaN not kept", i, uf_metrics[m].name);
            else
                cr_assert_float_eq(vb, va, fabs(va) * 1e-9, "row %d %s", i,
                                   uf_metrics[m].name);
        }
        for (int e = 0; e < 2; e++) {
            if (isnan(a->extra[e]))
                cr_assert(isnan(b->extra[e]));
            else
                cr_assert_float_eq(b->extra[e], a->extra[e], 0.0);
        }
    }
    cr_assert_eq(count_entries(dir), 1, "no temporary left");
    uf_table_free(&t);
    uf_table_free(&back);
    remove_tree(dir);
}

Test(results, csv_layout)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "x.csv");
    uf_table t;
    make_table(&t);
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(strncmp(text, "# underfed-results v5\n# scenario: launch_storm\n# gpu: NVIDIA H200\n",
                      66) == 0, "%s", text);
    cr_assert(strstr(text, "# unit.tokens_per_s: tokens/s\n") != NULL);
    cr_assert(strstr(text, "\nvariant,role,rank,elems,ops,step_ms,step_ms_min,step_ms_max,"
                           "step_ms_mean,spread_pct,") != NULL);
    cr_assert(strstr(text, ",comm_overlap_pct,comm_exposed_ms,comm_sm_pct,copy_overlap_pct,"
                           "syncs_per_step,stream_syncs_per_step,context_syncs_per_step,"
                           "event_syncs_per_step,pageable_copies_per_step,drains_per_step,"
                           "sync_gap_us,sm_active_pct,") != NULL);
    cr_assert(strstr(text, ",nvml_util_pct,sm_clock_mhz,sm_clock_min_mhz,power_w,"
                           "useful_flops,") != NULL);
    cr_assert(strstr(text, ",max_rel_err,tokens_per_s,pad_pct,skip_reason\n") != NULL);
    cr_assert(strstr(text, "\neager,broken,,4096,64,1.25,,,") != NULL);
    cr_assert(strstr(text, ",\"counters: not permitted, \"\"ERR_NVGPUCTRPERM\"\", see docs\"\n")
              != NULL, "%s", text);
    cr_assert(strstr(text, "\nodd.name-2,fixed,,1,2,") != NULL);
    cr_assert(strstr(text, ",two lines\n") != NULL, "a line break of a text is a space");
    free(text);
    uf_table_free(&t);
    remove_tree(dir);
}

Test(results, read_committed_fixture)
{
    uf_table t;
    uf_table_init(&t, "");
    char err[512] = "";
    cr_assert_eq(uf_table_read_csv(&t, DATA("good.csv"), err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.scenario, "launch_storm");
    cr_assert_str_eq(uf_meta_get(&t.meta, "gpu"), "NVIDIA H200");
    cr_assert_eq(t.n_axes, 1);
    cr_assert_eq(t.n_extra, 1);
    cr_assert_str_eq(t.extra_units[0], "tokens/s");
    cr_assert_eq(t.n_rows, 2);
    cr_assert_float_eq(t.rows[0].step_ms, 1.25, 0.0);
    cr_assert_float_eq(t.rows[0].step_ms_mean, 1.5, 0.0);
    cr_assert(isnan(t.rows[1].step_ms_mean));
    cr_assert_float_eq(t.rows[0].verified, 1.0, 0.0);
    cr_assert_float_eq(t.rows[0].extra[0], 1000.0, 0.0);
    cr_assert(isnan(t.rows[1].extra[0]));
    cr_assert_float_eq(t.rows[1].busy_pct, 91.0, 0.0);
    cr_assert_float_eq(t.rows[0].comm_sm_pct, 24.24242424, 0.0);
    cr_assert(isnan(t.rows[0].comm_exposed_ms) && isnan(t.rows[0].copy_overlap_pct));
    cr_assert(isnan(t.rows[1].comm_sm_pct));
    cr_assert_float_eq(t.rows[0].sm_clock_mhz, 1712.5, 0.0);
    cr_assert_float_eq(t.rows[0].sm_clock_min_mhz, 1410.0, 0.0);
    cr_assert_float_eq(t.rows[0].power_w, 689.25, 0.0);
    cr_assert(isnan(t.rows[0].nvml_util_pct));
    cr_assert(isnan(t.rows[1].sm_clock_mhz) && isnan(t.rows[1].sm_clock_min_mhz) &&
              isnan(t.rows[1].power_w));
    cr_assert_str_eq(t.rows[1].skip_reason, "counters: not permitted, see \"docs\"");
    uf_table_free(&t);
}

/* Reading the committed fixture and writing it again gives the same bytes. */
Test(results, rewrite_of_fixture_is_identical)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "again.csv");
    uf_table t;
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, DATA("good.csv"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), 0, "%s", err);
    char *a = read_text(DATA("good.csv")), *b = read_text(path);
    cr_assert_str_eq(b, a);
    free(a);
    free(b);
    uf_table_free(&t);
    remove_tree(dir);
}

/* Format v1 (before comm_sm_pct, copy_overlap_pct, sm_clock_mhz, sm_clock_min_mhz and power_w)
 * is still read: the newer columns are empty. A v2 file must have them, and a v1 file must
 * not. */
Test(results, reader_format_versions)
{
    uf_table t;
    char err[512] = "";
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, DATA("good_v1.csv"), err, sizeof err), 0, "%s", err);
    cr_assert(t.n_rows > 0);
    cr_assert(isnan(uf_table_value(&t, &t.rows[0], "copy_overlap_pct")));
    cr_assert(isnan(uf_table_value(&t, &t.rows[0], "comm_sm_pct")));
    cr_assert(isnan(uf_table_value(&t, &t.rows[0], "sm_clock_mhz")));
    cr_assert(isnan(uf_table_value(&t, &t.rows[0], "sm_clock_min_mhz")));
    cr_assert(isnan(uf_table_value(&t, &t.rows[0], "power_w")));
    cr_assert(!isnan(uf_table_value(&t, &t.rows[0], "step_ms")));
    uf_table_free(&t);
    expect_read_error(DATA("v2_missing_column.csv"), 6, "missing required column 'copy_overlap_pct'");
    /* v2 (before step_ms_mean) is read too, the mean step empty; a v3 file must have it */
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, DATA("good_v2.csv"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n_rows, 2);
    cr_assert_float_eq(t.rows[0].step_ms, 1.25, 0.0);
    cr_assert(isnan(t.rows[0].step_ms_mean));
    uf_table_free(&t);
    expect_read_error(DATA("v1_with_v2_column.csv"), 6, "column 'copy_overlap_pct' is not in format v1");
    /* v3 (before gpm_agree_pts) is read, the agreement empty */
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, DATA("good_v3.csv"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n_rows, 2);
    cr_assert_float_eq(t.rows[0].step_ms_mean, 1.5, 0.0);
    cr_assert(isnan(t.rows[0].gpm_agree_pts));
    uf_table_free(&t);
    /* v4 (before the host-call columns) is read, those empty */
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, DATA("good_v4.csv"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n_rows, 2);
    cr_assert_float_eq(t.rows[0].sm_clock_mhz, 1712.5, 0.0);
    cr_assert(isnan(t.rows[0].drains_per_step) && isnan(t.rows[0].syncs_per_step));
    cr_assert(isnan(t.rows[0].sync_gap_us));
    uf_table_free(&t);

    /* the same for the NVML clock and power columns, on edited copies of the fixtures: each
     * fixture with `from` replaced by `to`, and the error the reader must give on line 6 */
    static const struct {
        const char *name, *fixture, *from, *to, *phrase;
    } edits[] = {
        {"v2_no_power.csv", "good.csv", ",sm_clock_min_mhz,power_w,", ",sm_clock_min_mhz,",
         "missing required column 'power_w'"},
        {"v3_no_mean.csv", "good.csv", ",step_ms_mean,", ",",
         "missing required column 'step_ms_mean'"},
        {"v4_no_agreement.csv", "good.csv", ",gpm_agree_pts,", ",",
         "missing required column 'gpm_agree_pts'"},
        {"v3_with_agreement.csv", "good_v3.csv", ",gpm_dram_pct,", ",gpm_dram_pct,gpm_agree_pts,",
         "column 'gpm_agree_pts' is not in format v3"},
        {"v5_no_drains.csv", "good.csv", ",drains_per_step,", ",",
         "missing required column 'drains_per_step'"},
        {"v4_with_drains.csv", "good_v4.csv", ",copy_overlap_pct,",
         ",copy_overlap_pct,drains_per_step,", "column 'drains_per_step' is not in format v4"},
        {"v2_with_mean.csv", "good_v2.csv", ",step_ms_max,", ",step_ms_max,step_ms_mean,",
         "column 'step_ms_mean' is not in format v2"},
        {"v1_with_clock.csv", "good_v1.csv", ",nvml_util_pct,", ",nvml_util_pct,sm_clock_mhz,",
         "column 'sm_clock_mhz' is not in format v1"},
    };
    char *dir = make_tmpdir();
    char path[256], src[512];
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        join(path, sizeof path, dir, edits[i].name);
        join(src, sizeof src, UF_TEST_DATA_DIR, edits[i].fixture);
        write_edited(src, path, edits[i].from, edits[i].to);
        expect_read_error(path, 6, edits[i].phrase);
    }
    remove_tree(dir);
}

Test(results, reader_needs_an_empty_table)
{
    uf_table t;
    make_table(&t);
    char err[512] = "";
    cr_assert_eq(uf_table_read_csv(&t, DATA("good.csv"), err, sizeof err), -1);
    uf_table_free(&t);
}

Test(results, reader_errors_name_file_and_line)
{
    expect_read_error(DATA("foreign.csv"), 1, "not an underfed results file");
    expect_read_error(DATA("truncated.csv"), 8, "truncated");
    expect_read_error(DATA("bad_number.csv"), 8, "'0.5ms' is not a number");
    expect_read_error(DATA("wrong_fields.csv"), 8, "fields, the header has");
    expect_read_error(DATA("unknown_column.csv"), 6, "unknown column 'bogus_metric'");
    expect_read_error(DATA("missing_column.csv"), 6, "missing required column 'busy_pct'");
    expect_read_error(DATA("unterminated_quote.csv"), 7, "unterminated quote");
    expect_read_error(DATA("too_many_axes.csv"), 6, "too many axes");
    expect_read_error(DATA("no_header.csv"), 6, "missing header");
}

Test(results, reader_missing_file)
{
    uf_table t;
    uf_table_init(&t, "");
    char err[512] = "";
    cr_assert_eq(uf_table_read_csv(&t, "/nonexistent/x.csv", err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/x.csv") != NULL, "%s", err);
}

/* ---- JSON and series -------------------------------------------------------------------- */

Test(results, json_is_well_formed)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "x.json");
    uf_table t;
    make_table(&t);
    cr_assert_eq(uf_table_write_json(&t, path, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(json_valid(text), "not valid JSON:\n%s", text);
    const char *keys[] = {"\"format\":\"underfed-results\"", "\"version\":5",
                          "\"scenario\":\"launch_storm\"", "\"meta\":{\"gpu\":\"NVIDIA H200\"",
                          "\"axes\":[\"elems\",\"ops\"]",
                          "\"extras\":[{\"name\":\"tokens_per_s\",\"unit\":\"tokens/s\"}",
                          "\"metrics\":[{\"name\":\"step_ms\",\"unit\":\"ms\"}",
                          "{\"name\":\"sm_clock_min_mhz\",\"unit\":\"MHz\"}",
                          "{\"name\":\"power_w\",\"unit\":\"W\"}", "\"power_w\":689.25",
                          "\"rows\":[", "\"skip_reason\":\"two\\nlines\"",
                          "\"variant\":\"odd.name-2\"", "ERR_NVGPUCTRPERM\\\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert(strstr(text, keys[i]) != NULL, "lacks %s", keys[i]);
    cr_assert_eq(count_occurrences(text, "\"variant\":"), 3);
    cr_assert(strstr(text, "\"step_ms_min\":null") != NULL, "NaN is null");
    /* parse one number back */
    const char *p = strstr(text, "\"useful_flops\":");
    cr_assert_not_null(p);
    cr_assert_float_eq(strtod(p + strlen("\"useful_flops\":"), NULL), 1.5e15, 0.0);
    free(text);
    uf_table_free(&t);
    remove_tree(dir);
}

Test(results, series_csv)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "series.csv");
    uf_table t;
    make_table(&t);
    uf_row *r = &t.rows[1];
    r->n_samples = 3;
    r->samples = calloc(3, sizeof *r->samples);
    for (int i = 0; i < 3; i++) {
        r->samples[i].start_ns = 1000000000000ULL + (uint64_t)i * 500000;
        r->samples[i].end_ns = r->samples[i].start_ns + 500000;
        r->samples[i].sm_active_pct = 10.0 * i;
        r->samples[i].occupancy_pct = 5.0;
        r->samples[i].tensor_active_pct = NAN;
        r->samples[i].dram_pct = 1.5;
    }
    cr_assert_eq(uf_table_write_series_csv(&t, path, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(strncmp(text, "# underfed-series v1\n", 21) == 0);
    cr_assert(strstr(text, "\nvariant,elems,ops,t_ms,sm_active_pct,occupancy_pct,"
                           "tensor_active_pct,dram_pct\n") != NULL, "%s", text);
    cr_assert(strstr(text, "\ngraph,67108864,64,0,0,5,,1.5\n") != NULL, "%s", text);
    cr_assert(strstr(text, "\ngraph,67108864,64,0.5,10,5,,1.5\n") != NULL, "%s", text);
    cr_assert(strstr(text, "\ngraph,67108864,64,1,20,5,,1.5\n") != NULL, "%s", text);
    cr_assert_eq(count_occurrences(text, "\ngraph,"), 3);
    cr_assert_eq(count_occurrences(text, "\neager,"), 0, "rows without samples have no lines");
    free(text);
    uf_table_free(&t);
    remove_tree(dir);
}

/* ---- files ------------------------------------------------------------------------------ */

Test(results, atomic_write_replaces_and_leaves_no_temporary)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "f.txt");
    cr_assert_eq(uf_write_file_atomic(path, "first\n", 6, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_write_file_atomic(path, "second\n", 7, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert_str_eq(text, "second\n");
    free(text);
    cr_assert_eq(count_entries(dir), 1);
    cr_assert_eq(any_tmp_file(dir), 0);
    remove_tree(dir);
}

Test(results, atomic_write_failure)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "missing/f.txt");
    cr_assert_eq(uf_write_file_atomic(path, "x", 1, err, sizeof err), -1);
    cr_assert(strstr(err, "missing/f.txt") != NULL, "%s", err);
    /* the target is a folder: the rename fails and the temporary is removed */
    char sub[256];
    join(sub, sizeof sub, dir, "sub");
    cr_assert_eq(mkdir(sub, 0755), 0);
    char child[300];
    join(child, sizeof child, sub, "child");
    cr_assert_eq(mkdir(child, 0755), 0);
    cr_assert_eq(uf_write_file_atomic(sub, "x", 1, err, sizeof err), -1);
    cr_assert_eq(any_tmp_file(dir), 0, "temporary left behind");
    remove_tree(dir);
}

/* uf_grow: the first capacity, then doubling until the need fits; no copy when it fits. */
Test(results, grow)
{
    int cap = 0;
    int *items = uf_grow(NULL, &cap, 1, sizeof *items, 4);
    cr_assert_not_null(items);
    cr_assert_eq(cap, 4);
    cr_assert_eq(uf_grow(items, &cap, 4, sizeof *items, 4), items, "fits: the same array");
    cr_assert_eq(cap, 4);
    int *bigger = uf_grow(items, &cap, 20, sizeof *items, 4);
    cr_assert_not_null(bigger);
    cr_assert_eq(cap, 32, "doubled until 20 fit");
    bigger[19] = 1;
    free(bigger);
}

Test(results, mkdirs)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "a/b//c/");
    cr_assert_eq(uf_mkdirs(path, err, sizeof err), 0, "%s", err);
    struct stat st;
    char c[256];
    join(c, sizeof c, dir, "a/b/c");
    cr_assert_eq(stat(c, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    cr_assert_eq(uf_mkdirs(path, err, sizeof err), 0, "existing is fine");
    char file[256];
    join(file, sizeof file, dir, "a/file");
    cr_assert_eq(uf_write_file_atomic(file, "x", 1, err, sizeof err), 0);
    char under[300];
    join(under, sizeof under, file, "d");
    cr_assert_eq(uf_mkdirs(under, err, sizeof err), -1);
    cr_assert(strstr(err, "a/file") != NULL, "%s", err);
    cr_assert_eq(uf_mkdirs("", err, sizeof err), -1);
    remove_tree(dir);
}

Test(results, slug)
{
    char s[64];
    uf_slug("NVIDIA H200", s, sizeof s);
    cr_assert_str_eq(s, "nvidia-h200");
    uf_slug("NVIDIA GeForce RTX 4090", s, sizeof s);
    cr_assert_str_eq(s, "nvidia-geforce-rtx-4090");
    uf_slug("  NVIDIA  H100 80GB HBM3 (PCIe) ", s, sizeof s);
    cr_assert_str_eq(s, "nvidia-h100-80gb-hbm3-pcie");
    uf_slug("--", s, sizeof s);
    cr_assert_str_eq(s, "");
    uf_slug("NVIDIA H200", s, 6);
    cr_assert_str_eq(s, "nvidi");
    uf_slug("NVIDIA H200", s, 8);
    cr_assert_str_eq(s, "nvidia", "no dangling dash");
}

/* ---- ceilings --------------------------------------------------------------------------- */

Test(results, ceilings_round_trip)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "ceilings.csv");
    uf_meta meta = {0};
    uf_meta_set(&meta, "gpu", "%s", "NVIDIA H200");
    uf_ceiling_row rows[4] = {
        {.name = "copy_d2d_gbs", .value = 3900.5, .spread_pct = 1.25, .unit = "GB/s",
         .note = "cudaMemcpyAsync, 1 GiB"},
        {.name = "launch_us", .value = 2.25, .spread_pct = NAN, .unit = "us", .note = ""},
        {.name = "nccl_busbw_gbs@1048576", .value = 80, .spread_pct = 3, .unit = "GB/s",
         .note = "per size"},
        {.name = "nccl_busbw_gbs", .value = 350, .spread_pct = 2, .unit = "GB/s",
         .note = "largest \"size\""},
    };
    cr_assert_eq(uf_ceilings_write(path, &meta, rows, 4, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(strncmp(text, "# underfed-ceilings v1\n# gpu: NVIDIA H200\n"
                            "ceiling,value,unit,spread_pct,note\n", 76) == 0, "%s", text);
    cr_assert(strstr(text, "\nlaunch_us,2.25,us,,\n") != NULL, "%s", text);
    free(text);
    uf_ceilings c;
    cr_assert_eq(uf_ceilings_read(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(c.copy_d2d_gbs, 3900.5, 0.0);
    cr_assert_float_eq(c.launch_us, 2.25, 0.0);
    cr_assert_float_eq(c.nccl_busbw_gbs, 350.0, 0.0, "the per-size row stays out");
    cr_assert(isnan(c.gemm_bf16_tflops) && isnan(c.graph_node_us) && isnan(c.h2d_pinned_gbs));
    cr_assert_eq(any_tmp_file(dir), 0);
    remove_tree(dir);
}

Test(results, ceilings_fixtures)
{
    uf_ceilings c;
    char err[512] = "";
    cr_assert_eq(uf_ceilings_read(DATA("ceilings_good.csv"), &c, err, sizeof err), 0, "%s",
                 err);
    cr_assert_float_eq(c.copy_d2d_gbs, 3900.5, 0.0);
    cr_assert_float_eq(c.nccl_busbw_gbs, 350.0, 0.0);

    cr_assert_eq(uf_ceilings_read(DATA("ceilings_bad_value.csv"), &c, err, sizeof err), -1);
    cr_assert(strstr(err, "ceilings_bad_value.csv:5:") != NULL, "%s", err);
    cr_assert(strstr(err, "'fast' is not a number") != NULL, "%s", err);
    cr_assert(isnan(c.copy_d2d_gbs), "nothing half-read on error");

    cr_assert_eq(uf_ceilings_read(DATA("ceilings_bad_header.csv"), &c, err, sizeof err), -1);
    cr_assert(strstr(err, "ceilings_bad_header.csv:3:") != NULL, "%s", err);
    cr_assert(strstr(err, "unknown column 'units'") != NULL, "%s", err);

    cr_assert_eq(uf_ceilings_read(DATA("good.csv"), &c, err, sizeof err), -1);
    cr_assert(strstr(err, "good.csv:1:") != NULL, "%s", err);
    cr_assert(strstr(err, "not an underfed ceilings file") != NULL, "%s", err);
}

/* benches/ceilings' activity rows: one PM counter over the window as the scenarios' columns
 * read it (overlap-weighted mean), the spread over the samples that overlap it. */
Test(results, ceiling_activity_row)
{
    const uint64_t ms = 1000000;
    const double dram[6] = {10, 80, 90, 100, 70, 20};
    uf_pm_sample s[6];
    for (int i = 0; i < 6; i++)
        s[i] = (uf_pm_sample){.start_ns = (uint64_t)i * ms, .end_ns = (uint64_t)(i + 1) * ms,
                              .sm_active_pct = 99, .occupancy_pct = 50,
                              .tensor_active_pct = dram[i] / 2, .dram_pct = dram[i]};
    uf_ceiling_row row = {.name = "copy_dram_pct"};
    /* [1.5, 4.5] ms: half of 80, 90, 100, half of 70 */
    cr_assert_eq(uf_ceiling_activity(&row, s, 6, 3 * ms / 2, 9 * ms / 2, 3), 4);
    cr_assert_float_eq(row.value, 265.0 / 3.0, 1e-9, "%g", row.value);
    /* 70 80 90 100: p25 77.5, p75 92.5, median 85 */
    cr_assert_float_eq(row.spread_pct, 15.0 / 85.0 * 100.0, 1e-9, "%g", row.spread_pct);
    cr_assert_eq(uf_ceiling_activity(&row, s, 6, 3 * ms / 2, 9 * ms / 2, 2), 4);
    cr_assert_float_eq(row.value, 265.0 / 6.0, 1e-9, "the tensor counter: %g", row.value);
    /* a window no sample reaches, a counter that does not exist: nothing made up */
    cr_assert_eq(uf_ceiling_activity(&row, s, 6, 7 * ms, 8 * ms, 3), 0);
    cr_assert(isnan(row.value) && isnan(row.spread_pct));
    cr_assert_eq(uf_ceiling_activity(&row, s, 6, 0, 6 * ms, 4), 0);
    cr_assert(isnan(row.value) && isnan(row.spread_pct));
    cr_assert_eq(uf_ceiling_activity(&row, NULL, 0, 0, 6 * ms, 3), 0);
    cr_assert(isnan(row.value));
    /* no activity at all (an fp32 GEMM's tensor pipe): samples, but no value the reader would
     * refuse (a ceiling is > 0) */
    for (int i = 0; i < 6; i++)
        s[i].tensor_active_pct = 0.0;
    cr_assert_eq(uf_ceiling_activity(&row, s, 6, 0, 6 * ms, 2), 6);
    cr_assert(isnan(row.value) && isnan(row.spread_pct), "%g", row.value);
}

/* An activity row PM sampling could not measure is written empty with its reason; the reader
 * keeps both rows (they are outside uf_ceilings) and the measured one's value. */
Test(results, ceilings_activity_rows_round_trip)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "ceilings.csv");
    uf_meta meta = {0};
    uf_ceiling_row rows[3] = {
        {.name = "copy_d2d_gbs", .value = 4200, .spread_pct = 0.2, .unit = "GB/s", .note = ""},
        {.name = "copy_dram_pct", .value = NAN, .spread_pct = NAN, .unit = "%",
         .note = "not measured: CUPTI PM sampling unavailable: insufficient privileges"},
        {.name = "gemm_bf16_tensor_pct", .value = 91.5, .spread_pct = 1.5, .unit = "%",
         .note = "PM sampling"},
    };
    cr_assert_eq(uf_ceilings_write(path, &meta, rows, 3, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(strstr(text, "\ncopy_dram_pct,,%,,not measured: CUPTI") != NULL, "%s", text);
    free(text);
    uf_ceiling_row *got = NULL;
    int n = 0;
    cr_assert_eq(uf_ceilings_read_rows(path, &got, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 3);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(got[i].name, "copy_dram_pct") == 0) {
            seen++;
            cr_expect(isnan(got[i].value) && strcmp(got[i].unit, "%") == 0);
            cr_expect(strstr(got[i].note, "insufficient privileges") != NULL, "%s", got[i].note);
        }
        if (strcmp(got[i].name, "gemm_bf16_tensor_pct") == 0) {
            seen++;
            cr_expect_float_eq(got[i].value, 91.5, 0.0);
        }
    }
    cr_assert_eq(seen, 2);
    free(got);
    remove_tree(dir);
}

/* ---- the ranks of a run on several GPUs (format v3) ------------------------------------- */

/* The metrics measured on each GPU: the trace pass's timeline, the counters and NVML. The
 * step time and the counted figures are the whole run's. */
Test(results, per_device_metrics)
{
    static const char *const per_device[] = {
        "busy_pct", "kernels_per_step", "kernel_us_mean", "launch_us", "idle_host_pct",
        "idle_other_pct", "comm_overlap_pct", "comm_exposed_ms", "comm_sm_pct",
        "copy_overlap_pct", "sm_active_pct", "occupancy_pct", "tensor_active_pct", "dram_pct",
        "gpm_sm_active_pct", "gpm_occupancy_pct", "gpm_tensor_active_pct", "gpm_dram_pct",
        "gpm_agree_pts", "nvml_util_pct", "sm_clock_mhz", "sm_clock_min_mhz", "power_w",
        "syncs_per_step", "stream_syncs_per_step", "context_syncs_per_step",
        "event_syncs_per_step", "pageable_copies_per_step", "drains_per_step", "sync_gap_us"};
    size_t n = sizeof per_device / sizeof per_device[0], found = 0;
    for (int i = 0; i < uf_n_metrics; i++) {
        int listed = 0;
        for (size_t k = 0; k < n; k++)
            listed |= strcmp(uf_metrics[i].name, per_device[k]) == 0;
        cr_assert_eq(uf_metrics[i].per_device, listed, "%s", uf_metrics[i].name);
        found += listed;
    }
    cr_assert_eq(found, n);
}

/* The launch_storm table with rank lines on its first row: rank k's busy_pct 40 + k, its
 * comm_exposed_ms 0.5 + k, a note on rank 1. */
static void make_ranked_table(uf_table *t)
{
    make_table(t);
    uf_row *row = &t->rows[0];
    for (int k = 0; k < 2; k++) {
        uf_row *rank = uf_row_add_rank(row);
        cr_assert_not_null(rank);
        cr_assert_str_eq(rank->variant, "eager");
        cr_assert_float_eq(rank->axis[1], 64.0, 0.0);
        rank->busy_pct = 40 + k;
        rank->comm_exposed_ms = 0.5 + k;
        rank->sm_clock_mhz = 1800 - 100 * k;
    }
    snprintf(row->ranks[1].skip_reason, sizeof row->ranks[1].skip_reason,
             "counters: not permitted, on device 1");
}

Test(results, rank_lines_round_trip)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "allreduce.csv");
    uf_table t;
    make_ranked_table(&t);
    /* the writer keeps a rank line to the per-device columns */
    t.rows[0].ranks[0].step_ms = 99;
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(strncmp(text, "# underfed-results v5\n", 22) == 0, "%.40s", text);
    cr_assert(strstr(text, "\nvariant,role,rank,elems,ops,step_ms,") != NULL);
    cr_assert(strstr(text, "\neager,broken,,4096,64,1.25,") != NULL, "the row: rank empty");
    cr_assert(strstr(text, "\neager,broken,0,4096,64,,") != NULL, "rank 0, no step_ms");
    cr_assert(strstr(text, "\neager,broken,1,4096,64,,") != NULL, "rank 1 after rank 0");
    free(text);

    uf_table back;
    uf_table_init(&back, "");
    cr_assert_eq(uf_table_read_csv(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.n_rows, 3, "rank lines are not rows");
    const uf_row *row = &back.rows[0];
    cr_assert_eq(row->n_ranks, 2);
    cr_assert_eq(back.rows[1].n_ranks, 0);
    cr_assert_float_eq(row->busy_pct, 37.5, 0.0);
    for (int k = 0; k < 2; k++) {
        cr_assert_float_eq(uf_row_rank_value(row, k, "busy_pct"), 40.0 + k, 0.0);
        cr_assert_float_eq(uf_row_rank_value(row, k, "comm_exposed_ms"), 0.5 + k, 0.0);
        cr_assert_float_eq(uf_row_rank_value(row, k, "sm_clock_mhz"), 1800.0 - 100 * k, 0.0);
        cr_assert(isnan(uf_row_rank_value(row, k, "step_ms")), "not a per-device metric");
        cr_assert(isnan(row->ranks[k].step_ms));
    }
    cr_assert_str_eq(row->ranks[1].skip_reason, "counters: not permitted, on device 1");
    cr_assert_str_eq(row->ranks[0].skip_reason, "");
    cr_assert(isnan(uf_row_rank_value(row, 2, "busy_pct")), "no rank 2");
    cr_assert(isnan(uf_row_rank_value(row, -1, "busy_pct")));
    cr_assert(isnan(uf_row_rank_value(NULL, 0, "busy_pct")));
    uf_table_free(&back);
    uf_table_free(&t);
    remove_tree(dir);
}

/* A row keeps at most UF_MAX_RANKS GPUs. */
Test(results, ranks_are_bounded)
{
    uf_table t;
    make_table(&t);
    for (int k = 0; k < UF_MAX_RANKS; k++)
        cr_assert_not_null(uf_row_add_rank(&t.rows[1]));
    cr_assert_null(uf_row_add_rank(&t.rows[1]));
    cr_assert_eq(t.rows[1].n_ranks, UF_MAX_RANKS);
    cr_assert_eq(uf_table_add_axis(&t, "rank"), -1, "rank is a column of its own");
    uf_table_free(&t);
}

Test(results, json_with_ranks)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "x.json");
    uf_table t;
    make_ranked_table(&t);
    cr_assert_eq(uf_table_write_json(&t, path, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    cr_assert(json_valid(text), "not valid JSON:\n%s", text);
    cr_assert(strstr(text, "\"version\":5") != NULL);
    cr_assert(strstr(text, ",\"ranks\":[{\"rank\":0,\"metrics\":{\"busy_pct\":40,") != NULL,
              "%s", text);
    cr_assert(strstr(text, "{\"rank\":1,\"metrics\":{\"busy_pct\":41,") != NULL);
    cr_assert(strstr(text, "\"skip_reason\":\"counters: not permitted, on device 1\"}]}") !=
              NULL);
    cr_assert_eq(count_occurrences(text, "\"ranks\":"), 1, "only the row that has ranks");
    free(text);
    uf_table_free(&t);
    remove_tree(dir);
}

/* Rank lines that do not follow their row, in order, with per-device figures only, are
 * refused with the file and line; v2 and v3 headers are told apart by the magic line. */
Test(results, reader_refuses_misplaced_rank_lines)
{
    char *dir = make_tmpdir();
    char good[256], path[256], err[512] = "";
    join(good, sizeof good, dir, "good_v3.csv");
    uf_table t;
    make_ranked_table(&t);
    cr_assert_eq(uf_table_write_csv(&t, good, err, sizeof err), 0, "%s", err);
    uf_table_free(&t);
    int header = 0;     /* the header's line number: after the magic and 5 metadata lines */
    char *text = read_text(good);
    for (char *c = text; *c && strncmp(c, "variant,", 8) != 0; c++)
        header += *c == '\n';
    header++;
    free(text);
    static const struct { const char *from, *to, *phrase; int line_after_header; } cases[] = {
        {"\neager,broken,1,", "\neager,broken,2,", "expected rank 1", 3},
        {"\neager,broken,0,", "\ngraph,broken,0,", "not after the line of its row", 2},
        {"\neager,broken,0,4096,", "\neager,broken,0,4095,", "not after the line of its row", 2},
        {"\neager,broken,1,4096,64,,", "\neager,broken,1,4096,64,2,",
         "column 'step_ms' is not measured per GPU", 3},
        {"\neager,broken,0,", "\neager,broken,x,", "column 'rank': 'x' is not a number", 2},
        {"\neager,broken,0,", "\neager,broken,nan,", "column 'rank': 'nan' is not a number", 2},
        {"variant,role,rank,", "variant,role,", "missing required column 'rank'", 0},
        {"# underfed-results v5", "# underfed-results v2", "bad axis column 'rank'", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        join(path, sizeof path, dir, "bad.csv");
        write_edited(good, path, cases[c].from, cases[c].to);
        expect_read_error(path, header + cases[c].line_after_header, cases[c].phrase);
    }
    remove_tree(dir);
}

/* ---- hostile input: every case is an error naming file, line (and column), never a crash -- */

/* The metric table: every column described (label, unit, hint), a sane range, and the
 * directions compare reads. */
Test(metrics, every_column_described)
{
    for (int i = 0; i < uf_n_metrics; i++) {
        const uf_metric_desc *m = &uf_metrics[i];
        cr_assert(m->label && m->label[0] && m->hint && m->hint[0], "%s", m->name);
        cr_assert(m->min <= m->max && !isnan(m->min), "%s", m->name);
        cr_assert(m->direction == UF_DIR_NONE || m->direction == UF_DIR_HIGHER ||
                  m->direction == UF_DIR_LOWER, "%s", m->name);
        cr_assert_eq(uf_metric_find(m->name), m);
        cr_assert(uf_metric_valid(m, NAN), "%s: empty is 'not measured'", m->name);
        cr_assert(!uf_metric_valid(m, INFINITY) && !uf_metric_valid(m, -INFINITY), "%s",
                  m->name);
        cr_assert(!uf_metric_valid(m, -1), "%s: nothing here is negative", m->name);
    }
    cr_assert_null(uf_metric_find("nosuch"));
    cr_assert_eq(uf_metric_find("step_ms")->direction, UF_DIR_LOWER);
    cr_assert_eq(uf_metric_find("busy_pct")->direction, UF_DIR_HIGHER);
    cr_assert_eq(uf_metric_find("tflops_useful")->direction, UF_DIR_HIGHER);
    cr_assert_eq(uf_metric_find("gbs")->direction, UF_DIR_HIGHER);
}

/* Headings as every printer shows them (the harness's table, REPORT.md, `underfed ladder`):
 * the label, then the unit unless it has no dimension or the label names it already. The
 * labels that name their unit are exactly these: a new label that contains its unit by
 * accident would lose it from every heading. */
Test(metrics, headings)
{
    static const struct { const char *name, *heading; } cases[] = {
        {"step_ms", "step ms"},         {"busy_pct", "busy %"},     {"gbs", "GB/s"},
        {"tflops_useful", "useful TFLOP/s"}, {"pct_of_gemm", "% of GEMM"},
        {"verified", "verified"},       {"steps_timed", "steps timed"},
        {"trace_overhead", "trace overhead"}, {"sm_clock_mhz", "SM clock MHz"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char heading[128];
        uf_metric_heading(uf_metric_find(cases[c].name), heading, sizeof heading);
        cr_expect_str_eq(heading, cases[c].heading, "%s", cases[c].name);
    }
    static const char *const unit_in_label[] = {"useful_flops", "executed_flops",
                                                "tflops_useful", "min_bytes", "gbs",
                                                "pct_of_gemm", "pct_of_copy"};
    int named = 0;
    for (int i = 0; i < uf_n_metrics; i++) {
        const uf_metric_desc *m = &uf_metrics[i];
        int dimension = strcmp(m->unit, "1") && strcmp(m->unit, "count") &&
                        strcmp(m->unit, "ratio");
        if (!dimension || uf_metric_unit_shown(m)[0] != '\0')
            continue;
        int listed = 0;
        for (size_t k = 0; k < sizeof unit_in_label / sizeof unit_in_label[0]; k++)
            listed |= strcmp(unit_in_label[k], m->name) == 0;
        cr_expect(listed, "%s: label '%s' hides its unit '%s'", m->name, m->label, m->unit);
        named++;
    }
    cr_expect_eq(named, (int)(sizeof unit_in_label / sizeof unit_in_label[0]));
}

/* Ranges from the definitions: times > 0, window shares in [0, 100], shares of a measured
 * ceiling and the trace ratio may exceed 100 (or 1), verified is 0 or 1. */
Test(metrics, ranges_follow_the_definitions)
{
    static const struct {
        const char *name;
        double value;
        int valid;
    } cases[] = {
        {"step_ms", 0, 0},           {"step_ms", 1e-6, 1},      {"trace_step_ms", 0, 0},
        {"busy_pct", 100, 1},        {"busy_pct", 100.001, 0},  {"busy_pct", 0, 1},
        {"idle_host_pct", 101, 0},   {"nvml_util_pct", 500, 0}, {"comm_overlap_pct", 100.5, 0},
        {"spread_pct", 163, 1},      {"pct_of_copy", 102.1, 1}, {"pct_of_gemm", 130, 1},
        {"trace_overhead", 0.7, 1},  {"trace_overhead", 1.8, 1}, {"trace_overhead", 0, 0},
        {"sm_active_pct", 0, 1},     {"verified", 1, 1},        {"verified", 0, 1},
        {"verified", 0.5, 0},        {"verified", 2, 0},        {"steps_timed", 0, 0},
        {"steps_timed", 20.5, 0},    {"launch_us", 0, 1},       {"max_rel_err", 0, 1},
        /* bounds.h: a day, 2^53 - 1, tenfold a counter or a ceiling */
        {"step_ms", 86400000, 1},    {"step_ms", 1e308, 0},     {"step_ms_mean", 9e7, 0},
        {"launch_us", 8.64e10, 1},   {"launch_us", 8.7e10, 0},  {"steps_timed", 1e30, 0},
        {"steps_timed", 9007199254740991.0, 1}, {"kernels_per_step", 1e16, 0},
        {"sm_active_pct", 181, 1},   {"sm_active_pct", 1001, 0}, {"pct_of_copy", 1001, 0},
        {"spread_pct", 220, 1},      {"spread_pct", 1e5, 0},    {"trace_overhead", 1e5, 0},
        {"tflops_useful", 2e5, 0},   {"gbs", 2e6, 0},           {"power_w", 2e4, 0},
        {"sm_clock_mhz", 2e4, 0},    {"useful_flops", 1e17, 0}, {"max_rel_err", 1e30, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const uf_metric_desc *m = uf_metric_find(cases[c].name);
        cr_assert_not_null(m, "%s", cases[c].name);
        cr_expect_eq(uf_metric_valid(m, cases[c].value), cases[c].valid, "%s = %g",
                     cases[c].name, cases[c].value);
    }
    char text[64];
    uf_metric_range_text(uf_metric_find("busy_pct"), text, sizeof text);
    cr_expect_str_eq(text, "[0, 100]");
    uf_metric_range_text(uf_metric_find("step_ms"), text, sizeof text);
    cr_expect_str_eq(text, "(0, 86400000]");
    uf_metric_range_text(uf_metric_find("steps_timed"), text, sizeof text);
    cr_expect_str_eq(text, "[1, 9007199254740991], a whole number");
    uf_metric_range_text(uf_metric_find("max_rel_err"), text, sizeof text);
    cr_expect_str_eq(text, ">= 0");
}

typedef struct bad_case {
    const char *from, *to;  /* the edit of the fixture */
    int line, col;          /* where the error must point (col 0: line only) */
    const char *phrase;
} bad_case;

/* Each case: good.csv with one edit, read by the strict reader; the message must name the
 * file, line (and column) and say the phrase. */
static void expect_bad_edits(const char *fixture, const bad_case *cases, size_t n)
{
    char *dir = make_tmpdir();
    for (size_t c = 0; c < n; c++) {
        char path[256], where[320], err[512] = "";
        snprintf(path, sizeof path, "%s/case%zu.csv", dir, c);
        write_edited(fixture, path, cases[c].from, cases[c].to);
        uf_table t;
        uf_table_init(&t, "");
        cr_expect_eq(uf_table_read_csv(&t, path, err, sizeof err), -1, "case %zu (%s) read", c,
                     cases[c].to);
        if (cases[c].col > 0)
            snprintf(where, sizeof where, "%s:%d:%d: ", path, cases[c].line, cases[c].col);
        else
            snprintf(where, sizeof where, "%s:%d: ", path, cases[c].line);
        cr_expect(strstr(err, where) == err && strstr(err, cases[c].phrase) != NULL,
                  "case %zu: message '%s', expected '%s' and '%s'", c, err, where,
                  cases[c].phrase);
        uf_table_free(&t);
    }
    remove_tree(dir);
}

Test(hostile, impossible_values_name_line_and_column)
{
    static const bad_case cases[] = {
        /* numbers: plain finite decimals only; empty is the only "not measured" */
        {"4096,1.25,", "4096,nan,", 7, 20, "column 'step_ms': 'nan' is not a number"},
        {"4096,1.25,", "4096,NaN,", 7, 20, "'NaN' is not a number"},
        {"4096,1.25,", "4096,inf,", 7, 20, "'inf' is not a number"},
        {"4096,1.25,", "4096,-Infinity,", 7, 20, "'-Infinity' is not a number"},
        {"4096,1.25,", "4096,0x1p3,", 7, 20, "'0x1p3' is not a number"},
        {"4096,1.25,", "4096,1e999,", 7, 20, "'1e999' is not a number"},
        {"4096,1.25,", "4096,1.25 ,", 7, 20, "'1.25 ' is not a number"},
        {"4096,1.25,", "4096,.,", 7, 20, "'.' is not a number"},
        {"eager,broken,,4096,", "eager,broken,,0x10,", 7, 15, "column 'elems': '0x10'"},
        {",1000,\n", ",nan,\n", 7, 107, "column 'tokens_per_s': 'nan' is not a number"},
        /* ranges */
        {"4096,1.25,", "4096,0,", 7, 20, "column 'step_ms': 0 is outside its valid range (0, "
                                          "86400000]"},
        {"4096,1.25,", "4096,1e308,", 7, 20, "column 'step_ms': 1e308 is outside its valid "
                                             "range (0, 86400000]"},
        {"4096,1.25,", "4096,-1.25,", 7, 20, "'step_ms': -1.25 is outside"},
        {",37.5,", ",-50,", 7, 35, "column 'busy_pct': -50 is outside its valid range [0, 100]"},
        {",37.5,", ",500,", 7, 35, "column 'busy_pct': 500 is outside its valid range [0, 100]"},
        {"4096,1.25,,,1.5,,", "4096,1.25,,,1.5,-3,", 7, 31, "column 'spread_pct': -3 is outside"},
        {",1,,1000,", ",0.5,,1000,", 7, 104, "column 'verified': 0.5 is outside its valid range "
                                           "0 or 1"},
        {",1712.5,", ",-1712.5,", 7, 77, "column 'sm_clock_mhz': -1712.5 is outside"},
    };
    expect_bad_edits(DATA("good.csv"), cases, sizeof cases / sizeof cases[0]);
}

Test(hostile, duplicates_and_names)
{
    static const bad_case cases[] = {
        {"\ngraph,fixed,,4096,0.5,", "\neager,broken,,4096,0.5,", 8, 0,
         "duplicate row: variant 'eager' at this sweep point is already on line 7"},
        {"\ngraph,fixed,,4096,0.5,", "\neager,fixed,,8192,0.5,", 8, 0,
         "variant 'eager' is fixed here and broken on line 7 (a variant has one role)"},
        {"\ngraph,fixed,", "\ngraph,fixd,", 8, 7, "column 'role': 'fixd' is not 'broken' or "
                                                  "'fixed'"},
        {"\ngraph,fixed,", "\n,fixed,", 8, 1, "empty variant name"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# gpu: NVIDIA H100\n", 4, 0,
         "metadata key 'gpu' appears twice"},
        {"# scenario: launch_storm\n", "# scenario: launch_storm\n# scenario: other\n", 3, 0,
         "metadata key 'scenario' appears twice (line 2)"},
        {"# unit.tokens_per_s: tokens/s\n",
         "# unit.tokens_per_s: tokens/s\n# unit.tokens_per_s: tok/s\n", 6, 0,
         "'unit.tokens_per_s' appears twice (line 5)"},
        {"# scenario: launch_storm\n", "# scenario: \n", 2, 0, "scenario name empty"},
        {"# gpu: ", "#: ", 3, 0, "empty key"},
    };
    expect_bad_edits(DATA("good.csv"), cases, sizeof cases / sizeof cases[0]);
}

/* What the tools read from a file beyond a number or a name: each absurd value or name of the
 * hostile tries of #32 refused with file, line (and column), by the bounds of bounds.h. */
Test(hostile, metadata_values_and_names_within_bounds)
{
    static const bad_case cases[] = {
        /* `# ceiling.NAME:` a ceiling of the table, a number > 0 within its unit's bound */
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# ceiling.gemm_bf16_tflops: abc\n", 4, 0,
         "metadata 'ceiling.gemm_bf16_tflops': 'abc' is not a ceiling (a number > 0, at most "
         "100000 TFLOP/s)"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# ceiling.gemm_bf16_tflops: -804\n", 4, 0,
         "'-804' is not a ceiling"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# ceiling.launch_us: 0\n", 4, 0,
         "'0' is not a ceiling (a number > 0, at most 86400000000 us)"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# ceiling.copy_d2d_gbs: 4e6\n", 4, 0,
         "'4e6' is not a ceiling"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# ceiling.copy_gbs: 4000\n", 4, 0,
         "metadata 'ceiling.copy_gbs': 'copy_gbs' is not a ceiling"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# step_stat: trimmed\n", 4, 0,
         "unknown step_stat 'trimmed' (the step statistics are median and mean)"},
        /* `# default.AXIS:` an axis of the file, an axis value */
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# default.elems: -4096\n", 4, 0,
         "metadata 'default.elems': '-4096' is not an axis value"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# default.elems: 4K\n", 4, 0,
         "'4K' is not an axis value"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA H200\n# default.ops: 100\n", 4, 0,
         "metadata 'default.ops': the file has no axis 'ops'"},
        /* values: a sweep point >= 0, a count below 2^53, a scenario's figure finite */
        {"eager,broken,,4096,", "eager,broken,,-4096,", 7, 15,
         "column 'elems': -4096 is not an axis value (a sweep point is in [0, 9007199254740991])"},
        {"eager,broken,,4096,", "eager,broken,,1e300,", 7, 15, "column 'elems': 1e300 is not"},
        {"4096,1.25,,,1.5,,", "4096,1.25,,,1.5,,1e30", 7, 32,
         "column 'steps_timed': 1e30 is outside its valid range [1, 9007199254740991]"},
        {",1000,\n", ",-1e300,\n", 7, 107, "column 'tokens_per_s': -1e300 is outside the bounds"},
        /* names: no control character, no space, no leading - (bounds.h) */
        {"\ngraph,fixed,", "\ngr\x1b[31maph,fixed,", 8, 3,
         "column 'variant': character 3 (byte 0x1b) is not a letter"},
        {"\ngraph,fixed,", "\ngr aph,fixed,", 8, 3, "character 3 (' ') is not a letter"},
        {"\ngraph,fixed,", "\n-graph,fixed,", 8, 1, "character 1 ('-') is not a letter, digit, "
                                                   "_ @ (. and - only after the first)"},
        {",elems,", ",el|ems,", 6, 21, "column 4: character 3 ('|') is not a letter"},
        {"# scenario: launch_storm\n", "# scenario: launch/storm\n", 2, 0,
         "scenario: character 7 ('/')"},
        {"# gpu: NVIDIA H200\n", "# g\x1bpu: NVIDIA H200\n", 3, 0,
         "metadata key: character 2 (byte 0x1b)"},
        /* texts: UTF-8 without control characters */
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA\x1b[2J H200\n", 3, 0,
         "metadata 'gpu': byte 7 (0x1b) is a control character of the value"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA\xc2\x9b" "2J H200\n", 3, 0,
         "byte 7 (0xc2) is not UTF-8 text (or is a C1 control)"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA\xff H200\n", 3, 0, "byte 7 (0xff) is not UTF-8"},
        {"# gpu: NVIDIA H200\n", "# gpu: NVIDIA\tH200\n", 3, 0, "byte 7 (0x09) is a control"},
        {"# unit.tokens_per_s: tokens/s\n", "# unit.tokens_per_s: tok\x07/s\n", 5, 0,
         "unit line: byte 4 (0x07) is a control character of the unit"},
        {"see \"\"docs\"\"\"", "see \x1b]0;title\x07\"", 8, 73,
         "column 'skip_reason': byte 30 (0x1b) is a control character"},
    };
    expect_bad_edits(DATA("good.csv"), cases, sizeof cases / sizeof cases[0]);
}

/* No message quotes a control character of the file: a terminal showing the error runs no
 * escape sequence (C0 and C1 both shown as '?'). The reader quotes a bad role or number as it
 * is. */
Test(hostile, messages_quote_no_control_character)
{
    static const struct {
        const char *from, *to, *shown;
    } cases[] = {
        {"\ngraph,fixed,", "\ngraph,fix\x1b[2Jed,", "column 'role': 'fix?[2Jed'"},
        {"4096,1.25,", "4096,1\x1b]0;t\x07,", "column 'step_ms': '1?]0;t?' is not a number"},
        {",1000,\n", ",1\xc2\x9b" "0m,\n", "column 'tokens_per_s': '1??0m' is not a number"},
    };
    char *dir = make_tmpdir();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[256], err[512] = "";
        snprintf(path, sizeof path, "%s/case%zu.csv", dir, c);
        write_edited(DATA("good.csv"), path, cases[c].from, cases[c].to);
        uf_table t;
        uf_table_init(&t, "");
        cr_expect_eq(uf_table_read_csv(&t, path, err, sizeof err), -1);
        cr_expect(strstr(err, cases[c].shown) != NULL, "case %zu: '%s'", c, err);
        for (const unsigned char *u = (const unsigned char *)err; *u; u++)
            cr_expect(*u >= 0x20 && *u != 0x7f && !(u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f),
                      "case %zu: byte 0x%02x in the message", c, *u);
        uf_table_free(&t);
    }
    remove_tree(dir);
}

/* A name the reader would refuse is not written: the writer says which, and writes nothing. */
Test(hostile, writer_refuses_what_is_not_a_name)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "w.csv");
    uf_table t;
    make_table(&t);
    snprintf(t.rows[2].variant, sizeof t.rows[2].variant, "odd,name");
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), -1);
    cr_assert(strstr(err, "w.csv: not written: the variant: character 4 (',')") != NULL, "%s",
              err);
    cr_assert_eq(count_entries(dir), 0);
    snprintf(t.rows[2].variant, sizeof t.rows[2].variant, "odd");
    snprintf(t.axis_names[1], sizeof t.axis_names[1], "o ps");
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), -1);
    cr_assert(strstr(err, "the axis: character 2 (' ')") != NULL, "%s", err);
    uf_table_free(&t);
    remove_tree(dir);
}

/* A text may be any UTF-8 (a unit in µs, a note with an arrow); a name any of its characters. */
Test(hostile, utf8_texts_and_plain_names_are_read)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "ok.csv");
    write_edited(DATA("good.csv"), path, "# gpu: NVIDIA H200\n",
                 "# gpu: NVIDIA H200 \xe2\x86\x92 µs\n# step_stat: mean\n"
                 "# ceiling.launch_us: 3.2\n# default.elems: 4096\n");
    uf_table t;
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, path, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(uf_meta_get(&t.meta, "gpu"), "NVIDIA H200 \xe2\x86\x92 µs");
    uf_table_free(&t);
    remove_tree(dir);
}

/* The writer writes nothing the reader would refuse: a text's control characters become
 * spaces (a skip reason, a metadata value). */
Test(hostile, writer_flattens_control_characters)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    join(path, sizeof path, dir, "w.csv");
    uf_table t;
    make_table(&t);
    snprintf(t.rows[0].skip_reason, sizeof t.rows[0].skip_reason, "a\tb\x1b[0mc");
    uf_meta_set(&t.meta, "note", "%s", "x\x1by");
    cr_assert_eq(uf_table_write_csv(&t, path, err, sizeof err), 0, "%s", err);
    uf_table back;
    uf_table_init(&back, "");
    cr_assert_eq(uf_table_read_csv(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(back.rows[0].skip_reason, "a b [0mc");
    cr_assert_str_eq(uf_meta_get(&back.meta, "note"), "x y");
    uf_table_free(&t);
    uf_table_free(&back);
    remove_tree(dir);
}

/* The crashes of the first fuzzing (SIGSEGV: reader_meta wrote through the NULL that
 * strchr(line, '\n') returned on a NUL byte), kept as fixtures; and a NUL inside a name. */
Test(hostile, nul_bytes_are_errors_not_crashes)
{
    static const struct {
        const char *path, *where;
    } cases[] = {
        {DATA("nul/launch_storm.csv"), "nul/launch_storm.csv:9:11: NUL byte"},
        {DATA("nul_name.csv"), "nul_name.csv:8:3: NUL byte"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uf_table t;
        char err[512] = "";
        uf_table_init(&t, "");
        cr_expect_eq(uf_table_read_csv(&t, cases[c].path, err, sizeof err), -1);
        cr_expect(strstr(err, cases[c].where) != NULL, "message '%s'", err);
        uf_table_free(&t);
    }
    uf_ceilings c;
    uf_meta meta;
    char err[512] = "";
    cr_expect_eq(uf_ceilings_read_meta(DATA("nul/ceilings.csv"), &c, &meta, err, sizeof err),
                 -1);
    cr_expect(strstr(err, "nul/ceilings.csv:3:11: NUL byte") != NULL, "message '%s'", err);
    uf_table t;
    uf_table_init(&t, "");
    cr_assert_eq(uf_table_read_csv(&t, DATA("gpu-a/launch_storm.csv"), err, sizeof err), 0);
    cr_expect_eq(uf_table_read_series_csv(&t, DATA("nul/launch_storm.series.csv"), err,
                                          sizeof err), -1);
    cr_expect(strstr(err, "nul/launch_storm.series.csv:9:11: NUL byte") != NULL, "'%s'", err);
    uf_table_free(&t);
    /* in memory too, at the first byte and the last */
    static const char at_start[] = "\0# underfed-results v2\n";
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_parse_csv(&t, "mem", at_start, sizeof at_start - 1, NULL, err,
                                    sizeof err), -1);
    cr_expect_str_eq(err, "mem:1:1: NUL byte: not a text file");
    uf_table_free(&t);
    static const char at_end[] = "# underfed-results v2\n# a: b\n\0";
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_parse_csv(&t, "mem", at_end, sizeof at_end - 1, NULL, err,
                                    sizeof err), -1);
    cr_expect_str_eq(err, "mem:3:1: NUL byte: not a text file");
    uf_table_free(&t);
}

/* A result folder names each file after its scenario. */
Test(hostile, scenario_must_match_the_file_name)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    uf_table t;
    join(path, sizeof path, dir, "launch_storm.csv");
    write_edited(DATA("good.csv"), path, "# gpu:", "# gpu:");
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_read_scenario(&t, dir, "launch_storm", err, sizeof err), 0, "%s", err);
    uf_table_free(&t);
    join(path, sizeof path, dir, "other_run.csv");
    write_edited(DATA("good.csv"), path, "# gpu:", "# gpu:");
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_read_scenario(&t, dir, "other_run", err, sizeof err), -1);
    cr_expect(strstr(err, "other_run.csv:2: scenario 'launch_storm' does not match the file "
                          "name ('other_run.csv')") != NULL, "'%s'", err);
    uf_table_free(&t);
    join(path, sizeof path, dir, "nameless.csv");
    write_edited(DATA("good.csv"), path, "# scenario: launch_storm\n", "");
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_read_scenario(&t, dir, "nameless", err, sizeof err), -1);
    cr_expect(strstr(err, "nameless.csv:2: no '# scenario:' line") != NULL, "'%s'", err);
    uf_table_free(&t);
    remove_tree(dir);
}

/* Limits are named, never silently applied. */
Test(hostile, limits_are_errors)
{
    char *dir = make_tmpdir();
    char path[256], err[512] = "";
    uf_table t;
    /* a metadata value of UF_META_VALUE_LEN characters: too long, not cut */
    char *long_line = malloc(UF_META_VALUE_LEN + 32);
    cr_assert_not_null(long_line);
    int n = snprintf(long_line, 32, "# note: ");
    memset(long_line + n, 'x', UF_META_VALUE_LEN);
    strcpy(long_line + n + UF_META_VALUE_LEN, "\n# gpu:");
    join(path, sizeof path, dir, "long.csv");
    write_edited(DATA("good.csv"), path, "# gpu:", long_line);
    free(long_line);
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_read_csv(&t, path, err, sizeof err), -1);
    cr_expect(strstr(err, "long.csv:3: metadata 'note': value longer than") != NULL, "'%s'", err);
    uf_table_free(&t);
    /* a value of 300 characters is kept whole (the table holds UF_META_VALUE_LEN - 1) */
    char mid[400];
    n = snprintf(mid, 16, "# note: ");
    memset(mid + n, 'y', 300);
    strcpy(mid + n + 300, "\n# gpu:");
    write_edited(DATA("good.csv"), path, "# gpu:", mid);
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_read_csv(&t, path, err, sizeof err), 0, "%s", err);
    cr_expect_eq(strlen(uf_meta_get(&t.meta, "note")), 300u);
    uf_table_free(&t);
    /* more variants than the tools hold: eager, then v0..v15 at one point (the fields after
     * elems empty: every metric, tokens_per_s and skip_reason) */
    char rows[UF_MAX_VARIANTS * 96 + 64] = "\n", empties[96];
    cr_assert_lt(uf_n_metrics + 3, (int)sizeof empties);
    memset(empties, ',', (size_t)uf_n_metrics + 2);
    empties[uf_n_metrics + 2] = '\0';
    for (int v = 0; v < UF_MAX_VARIANTS; v++) {
        size_t used = strlen(rows);
        snprintf(rows + used, sizeof rows - used, "v%d,fixed,,4096%s", v,
                 v + 1 < UF_MAX_VARIANTS ? empties : "");
        if (v + 1 < UF_MAX_VARIANTS)
            strcat(rows, "\n");
    }
    join(path, sizeof path, dir, "many.csv");
    write_edited(DATA("good.csv"), path, "\ngraph,fixed,,4096", rows);
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_read_csv(&t, path, err, sizeof err), -1);
    cr_expect(strstr(err, "many.csv:23: more than 16 variants") != NULL, "'%s'", err);
    uf_table_free(&t);
    remove_tree(dir);
}

Test(hostile, ceilings_bad_input)
{
    static const struct {
        const char *text, *where, *phrase;
    } cases[] = {
        {"", ":1: ", "not an underfed ceilings file"},
        {"# underfed-ceilings v1\n# gpu: X\nceiling,value,unit,spread_pct,note\ncopy_d2d_gbs,1",
         ":4: ", "truncated"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\n", NULL, NULL},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,2,us,,\n"
         "launch_us,3,us,,\n", ":4:1: ", "duplicate ceiling 'launch_us' (already on line 3)"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,0,us,,\n",
         ":3:11: ", "column 'value': 0 is outside its valid range > 0"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,-2,us,,\n",
         ":3:11: ", "outside"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,nan,us,,\n",
         ":3:11: ", "'nan' is not a number"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,2,us,-1,\n",
         ":3:16: ", "column 'spread_pct': -1 is outside"},
        {"# underfed-ceilings v1\n# gpu: A\n# gpu: B\nceiling,value,unit,spread_pct,note\n",
         ":3: ", "metadata key 'gpu' appears twice"},
        /* bounds.h: a ceiling within its unit's bound, a name, texts */
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\ncopy_d2d_gbs,4e6,GB/s,,\n",
         ":3:14: ", "column 'value': 4e6 is outside its valid range > 0, at most 1000000 GB/s"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\ncopy_dram_pct,1e4,%,,\n",
         ":3:15: ", "at most 1000 %"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,2,us,1e5,\n",
         ":3:16: ", "column 'spread_pct': 1e5 is outside its valid range [0, 10000]"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch\x1b_us,2,us,,\n",
         ":3:7: ", "column 'ceiling': character 7 (byte 0x1b)"},
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,2,us,,a\x1b" "b\n",
         ":3:", "column 'note': byte 2 (0x1b) is a control character"},
        {"# underfed-ceilings v1\n# gpu: A\x07\nceiling,value,unit,spread_pct,note\n",
         ":2: ", "metadata 'gpu': byte 2 (0x07) is a control character"},
        /* a known ceiling in another unit would be read as if in its own */
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,0.003,ms,,\n",
         ":3:17: ", "column 'unit': 'ms' for launch_us, which is in 'us'"},
        /* ... an empty unit is its own (a6395d5's file has one), and a row the suite does not
         * know keeps whatever unit it has */
        {"# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\nlaunch_us,3,,,\n"
         "copy_dram_pct,90,%,,\n", NULL, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uf_ceilings ceil;
        uf_meta meta;
        char err[512] = "";
        int rc = uf_ceilings_parse("ceilings.csv", cases[c].text, strlen(cases[c].text), &ceil,
                                   &meta, err, sizeof err);
        if (cases[c].where == NULL) {
            cr_expect_eq(rc, 0, "case %zu: %s", c, err);
            continue;
        }
        cr_expect_eq(rc, -1, "case %zu", c);
        cr_expect(strncmp(err, "ceilings.csv", 12) == 0 && strstr(err, cases[c].where) &&
                  strstr(err, cases[c].phrase), "case %zu: '%s'", c, err);
    }
}

Test(hostile, series_bad_values)
{
    static const struct {
        const char *line, *message;
    } cases[] = {
        {"eager,4096,1000,0,-1,2,0,3\n", ":3:19: column 'sm_active_pct': -1 is outside"},
        {"eager,4096,1000,0,nan,2,0,3\n", ":3:19: column 'sm_active_pct': 'nan' is not"},
        {"eager,4096,1000,inf,1,2,0,3\n", ":3:17: column 't_ms': 'inf' is not a number"},
        {"eager,4096,1000,1e300,1,2,0,3\n", ":3:17: column 't_ms': '1e300' is not a time"},
        {"eager,4096,1000,-1,1,2,0,3\n", ":3:17: column 't_ms': '-1' is not a time"},
        {"eager,0x1000,1000,0,1,2,0,3\n", ":3:7: column 'elems': '0x1000' is not a number"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[512], err[512] = "";
        snprintf(text, sizeof text, "# underfed-series v1\nvariant,elems,ops,t_ms,"
                 "sm_active_pct,occupancy_pct,tensor_active_pct,dram_pct\n%s", cases[c].line);
        uf_table t;
        uf_table_init(&t, "");
        cr_assert_eq(uf_table_read_csv(&t, DATA("gpu-a/launch_storm.csv"), err, sizeof err), 0);
        cr_expect_eq(uf_table_parse_series_csv(&t, "s.csv", text, strlen(text), err,
                                               sizeof err), -1, "case %zu", c);
        cr_expect(strstr(err, cases[c].message) != NULL, "case %zu: '%s'", c, err);
        uf_table_free(&t);
    }
}

/* Every committed file meant to be good reads: the H200 results (with their series), the
 * ceilings, and the fixture folders. */
Test(hostile, committed_results_still_read)
{
    static const char *const dirs[] = {
        UF_TEST_DATA_DIR "/../../results/nvidia-h200", DATA("gpu-a"), DATA("gpu-b"),
    };
    static const char *const scenarios[] = {
        "allreduce_overlap", "checkpoint_recompute", "elementwise_chain", "host_sync",
        "launch_storm", "small_batch", "starved_input", "tensor_alignment", "varlen_attention",
    };
    int read = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char path[512], err[512] = "";
        uf_ceilings c;
        snprintf(path, sizeof path, "%s/ceilings.csv", dirs[d]);
        cr_expect_eq(uf_ceilings_read(path, &c, err, sizeof err), 0, "%s", err);
        for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
            snprintf(path, sizeof path, "%s/%s.csv", dirs[d], scenarios[s]);
            if (access(path, F_OK) != 0)
                continue;
            uf_table t;
            uf_table_init(&t, "");
            cr_expect_eq(uf_table_read_scenario(&t, dirs[d], scenarios[s], err, sizeof err), 0,
                         "%s", err);
            snprintf(path, sizeof path, "%s/%s.series.csv", dirs[d], scenarios[s]);
            cr_expect_eq(uf_table_read_series_csv(&t, path, err, sizeof err), 0, "%s", err);
            uf_table_free(&t);
            read++;
        }
    }
    cr_expect_eq(read, 11, "9 H200 scenarios and the two fixture folders");
}

/* Duplicates are found by sorting, not by comparing every pair: 40,000 rows and 40,000
 * ceilings read in well under the timeout, and a duplicate at the end is still found. */
Test(hostile, many_rows_read_without_quadratic_time, .timeout = 30)
{
    enum { ROWS = 40000 };
    uf_strbuf b = {0};
    uf_sb_puts(&b, "# underfed-results v5\n# scenario: many\nvariant,role,rank,elems");
    for (int i = 0; i < uf_n_metrics; i++)
        uf_sb_printf(&b, ",%s", uf_metrics[i].name);
    uf_sb_puts(&b, ",skip_reason\n");
    for (int i = 0; i < ROWS; i++) {
        uf_sb_printf(&b, "v%d,fixed,,%d,1", i % UF_MAX_VARIANTS, i / UF_MAX_VARIANTS);
        for (int m = 1; m < uf_n_metrics; m++)
            uf_sb_putn(&b, ",", 1);
        uf_sb_puts(&b, ",\n");
    }
    char err[512] = "";
    uf_table t;
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_parse_csv(&t, "many.csv", b.data, b.len, "many", err, sizeof err), 0,
                 "%s", err);
    cr_expect_eq(t.n_rows, ROWS);
    uf_table_free(&t);
    uf_sb_puts(&b, "v3,fixed,,0,1");     /* v3 at elems=0 again: the row of line 7 */
    for (int m = 1; m < uf_n_metrics; m++)
        uf_sb_putn(&b, ",", 1);
    uf_sb_puts(&b, ",\n");
    uf_table_init(&t, "");
    cr_expect_eq(uf_table_parse_csv(&t, "many.csv", b.data, b.len, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "many.csv:40004: duplicate row: variant 'v3' at this sweep point is "
                          "already on line 7") != NULL, "'%s'", err);
    uf_table_free(&t);
    free(b.data);

    uf_strbuf c = {0};
    uf_sb_puts(&c, "# underfed-ceilings v1\nceiling,value,unit,spread_pct,note\n");
    for (int i = 0; i < ROWS; i++)
        uf_sb_printf(&c, "c%d,1,us,,\n", i);
    uf_ceilings ceil;
    cr_expect_eq(uf_ceilings_parse("ceilings.csv", c.data, c.len, &ceil, NULL, err, sizeof err),
                 0, "%s", err);
    uf_sb_puts(&c, "c17,2,us,,\n");
    cr_expect_eq(uf_ceilings_parse("ceilings.csv", c.data, c.len, &ceil, NULL, err, sizeof err),
                 -1);
    cr_expect(strstr(err, "ceilings.csv:40003:1: duplicate ceiling 'c17' (already on line 20)"),
              "'%s'", err);
    free(c.data);
}

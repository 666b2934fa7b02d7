/* Unit tests of results.c: the metric table, rows, CSV round trip, JSON, series CSV, atomic
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
#include "results.h"

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

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    cr_assert_not_null(text);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
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
    snprintf(r->variant, sizeof r->variant, "odd,name");
    snprintf(r->role, sizeof r->role, "fixed");
    r->axis[0] = 1;
    r->axis[1] = 2;
    snprintf(r->skip_reason, sizeof r->skip_reason, "two\nlines");
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
        cr_assert(uf_metrics[i].since >= 1 && uf_metrics[i].since <= 3, "%s",
                  uf_metrics[i].name);
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
        cr_assert_str_eq(b->skip_reason, a->skip_reason);
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
    cr_assert(strncmp(text, "# underfed-results v3\n# scenario: launch_storm\n# gpu: NVIDIA H200\n",
                      66) == 0, "%s", text);
    cr_assert(strstr(text, "# unit.tokens_per_s: tokens/s\n") != NULL);
    cr_assert(strstr(text, "\nvariant,role,elems,ops,step_ms,step_ms_min,step_ms_max,"
                           "step_ms_mean,spread_pct,") != NULL);
    cr_assert(strstr(text, ",comm_overlap_pct,comm_exposed_ms,comm_sm_pct,copy_overlap_pct,"
                           "sm_active_pct,") != NULL);
    cr_assert(strstr(text, ",nvml_util_pct,sm_clock_mhz,sm_clock_min_mhz,power_w,"
                           "useful_flops,") != NULL);
    cr_assert(strstr(text, ",max_rel_err,tokens_per_s,pad_pct,skip_reason\n") != NULL);
    cr_assert(strstr(text, "\neager,broken,4096,64,1.25,,,") != NULL);
    cr_assert(strstr(text, ",\"counters: not permitted, \"\"ERR_NVGPUCTRPERM\"\", see docs\"\n")
              != NULL, "%s", text);
    cr_assert(strstr(text, "\n\"odd,name\",fixed,1,2,") != NULL);
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

    /* the same for the NVML clock and power columns, on edited copies of the fixtures */
    char *dir = make_tmpdir();
    char path[256];
    join(path, sizeof path, dir, "v2_no_power.csv");
    write_edited(DATA("good.csv"), path, ",sm_clock_min_mhz,power_w,", ",sm_clock_min_mhz,");
    expect_read_error(path, 6, "missing required column 'power_w'");
    join(path, sizeof path, dir, "v3_no_mean.csv");
    write_edited(DATA("good.csv"), path, ",step_ms_mean,", ",");
    expect_read_error(path, 6, "missing required column 'step_ms_mean'");
    join(path, sizeof path, dir, "v2_with_mean.csv");
    write_edited(DATA("good_v2.csv"), path, ",step_ms_max,", ",step_ms_max,step_ms_mean,");
    expect_read_error(path, 6, "column 'step_ms_mean' is not in format v2");
    join(path, sizeof path, dir, "v1_with_clock.csv");
    write_edited(DATA("good_v1.csv"), path, ",nvml_util_pct,", ",nvml_util_pct,sm_clock_mhz,");
    expect_read_error(path, 6, "column 'sm_clock_mhz' is not in format v1");
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
    const char *keys[] = {"\"format\":\"underfed-results\"", "\"version\":3",
                          "\"scenario\":\"launch_storm\"", "\"meta\":{\"gpu\":\"NVIDIA H200\"",
                          "\"axes\":[\"elems\",\"ops\"]",
                          "\"extras\":[{\"name\":\"tokens_per_s\",\"unit\":\"tokens/s\"}",
                          "\"metrics\":[{\"name\":\"step_ms\",\"unit\":\"ms\"}",
                          "{\"name\":\"sm_clock_min_mhz\",\"unit\":\"MHz\"}",
                          "{\"name\":\"power_w\",\"unit\":\"W\"}", "\"power_w\":689.25",
                          "\"rows\":[", "\"skip_reason\":\"two\\nlines\"",
                          "\"variant\":\"odd,name\"", "ERR_NVGPUCTRPERM\\\""};
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

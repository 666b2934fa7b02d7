/* `underfed plotdata` (tools/plotdata.c, plotfigs.c): the data files and gnuplot includes the
 * plot scripts read, on the fixture folders of tests/data (made for the tests). */
#define _XOPEN_SOURCE 700       /* nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plotdata.h"

/* A fresh output folder under /tmp. */
static void temp_dir(char *out, size_t len)
{
    snprintf(out, len, "/tmp/uf_plotdata_XXXXXX");
    cr_assert_not_null(mkdtemp(out));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *walk)
{
    (void)st, (void)flag, (void)walk;
    return remove(path);
}

/* The output folder and everything in it, deepest first. */
static void remove_out(const char *out)
{
    nftw(out, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* The whole of DIR/data/NAME into a malloc'd string (NULL when absent). */
static char *slurp(const char *dir, const char *name)
{
    char path[UF_PATH_LEN];
    snprintf(path, sizeof path, "%s/data/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static int run(int argc, const char **argv)
{
    return uf_cmd_plotdata(argc, (char **)argv);
}

/* `underfed plotdata DIR OUT` of a fixture folder into a fresh OUT. */
static void plot_folder(const char *fixture, char *out, size_t len)
{
    char dir[UF_PATH_LEN];
    snprintf(dir, sizeof dir, "%s/%s", UF_TEST_DATA_DIR, fixture);
    temp_dir(out, len);
    const char *argv[] = {dir, out};
    cr_assert_eq(run(2, argv), 0, "underfed plotdata %s %s", dir, out);
}

Test(plotdata, ladder_says_its_names_and_counts)
{
    char out[64];
    plot_folder("gpu-a", out, sizeof out);
    char *gp = slurp(out, "launch_storm_ladder.gp");
    char *dat = slurp(out, "launch_storm_ladder.dat");
    cr_assert_not_null(gp);
    cr_assert_not_null(dat);
    cr_expect_not_null(strstr(gp, "\nnames = 'eager graph fused'\nn = 3\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\ndata = 'data/launch_storm_ladder.dat'\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\nout = 'launch_storm_ladder'\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "ttl = 'launch_storm on Test GPU A: utilization ladder"),
                       "%s", gp);
    /* the fixture has NVML, busy, counters and step time for all three variants */
    cr_expect_not_null(strstr(gp, "\ncounts = '3 3 3 3 3 3'\n"), "%s", gp);
    /* the data file: the same facts as comments, then the table */
    cr_expect_not_null(strstr(dat, "\n# names: eager graph fused\n# n: 3\n"), "%s", dat);
    cr_expect_not_null(strstr(dat, "\n# variant nvml_util_pct busy_pct"), "%s", dat);
    cr_expect_not_null(strstr(dat, "\n\"eager\" "), "%s", dat);
    free(gp);
    free(dat);
    remove_out(out);
}

Test(plotdata, sweeps_only_along_axes_with_several_values)
{
    char out[64];
    plot_folder("gpu-a", out, sizeof out);
    /* elems: 4 values from 4K up, 16x or more apart: log x; ops: 2 values, 10x apart */
    char *elems = slurp(out, "launch_storm_sweep_elems.gp");
    char *ops = slurp(out, "launch_storm_sweep_ops.gp");
    cr_assert_not_null(elems);
    cr_assert_not_null(ops);
    cr_expect_not_null(strstr(elems, "\nxname = 'elems'\nlogx = 1\n"), "%s", elems);
    cr_expect_not_null(strstr(ops, "\nxname = 'ops'\nlogx = 0\n"), "%s", ops);
    free(elems);
    free(ops);
    remove_out(out);
    /* derived-good: starved_input sweeps tok_cost only; workers has one value */
    plot_folder("derived-good", out, sizeof out);
    char *tok = slurp(out, "starved_input_sweep_tok_cost.gp");
    char *workers = slurp(out, "starved_input_sweep_workers.gp");
    cr_expect_not_null(tok);
    cr_expect_null(workers);
    free(tok);
    free(workers);
    remove_out(out);
}

Test(plotdata, strings_quoted_for_gnuplot)
{
    pd_fig f;
    pd_fig_begin(&f, "/tmp", "x", "dir/x.csv");
    pd_str(&f, "ttl", "it's");
    pd_num(&f, "v", NAN);
    pd_num(&f, "w", 0.125);
    cr_expect_not_null(strstr(f.vars.data, "ttl = 'it''s'\n"), "%s", f.vars.data);
    cr_expect_not_null(strstr(f.vars.data, "source = 'x.csv'\n"), "%s", f.vars.data);
    cr_expect_not_null(strstr(f.vars.data, "v = NaN\nw = 0.125\n"), "%s", f.vars.data);
    cr_expect_not_null(strstr(f.head.data, "# ttl: it's\n"), "%s", f.head.data);
    pd_fig_free(&f);
}

/* The Pareto front: in order of memory, each point faster than every point before it. */
Test(plotdata, pareto_front_only_undominated_policies)
{
    char out[64];
    plot_folder("derived-good", out, sizeof out);
    char *front = slurp(out, "checkpoint_recompute_pareto_front.dat");
    char *pol = slurp(out, "checkpoint_recompute_pareto_policies.dat");
    cr_assert_not_null(front);
    cr_assert_not_null(pol);
    double last_x = -INFINITY, last_y = INFINITY;
    int points = 0;
    for (char *line = strtok(front, "\n"); line; line = strtok(NULL, "\n")) {
        double x, y;
        if (line[0] == '#')
            continue;
        cr_assert_eq(sscanf(line, "%lf %lf", &x, &y), 2, "%s", line);
        cr_expect(x >= last_x && y < last_y, "front point %s after %g %g", line, last_x, last_y);
        last_x = x;
        last_y = y;
        points++;
    }
    cr_expect_gt(points, 0);
    free(front);
    free(pol);
    remove_out(out);
}

Test(plotdata, bad_usage_exits_2)
{
    const char *one[] = {UF_TEST_DATA_DIR "/gpu-a"};
    const char *none[] = {UF_TEST_DATA_DIR "/no-such-folder", "/tmp/uf_plotdata_none"};
    const char *across_one[] = {"--across", UF_TEST_DATA_DIR "/gpu-a", "/tmp/x"};
    const char *truncated[] = {UF_TEST_DATA_DIR "/gpu-truncated", "/tmp/uf_plotdata_trunc"};
    cr_expect_eq(run(1, one), 2);
    cr_expect_eq(run(2, none), 2);
    cr_expect_eq(run(3, across_one), 2);
    cr_expect_eq(run(2, truncated), 2);
    remove_out("/tmp/uf_plotdata_trunc");
}

Test(plotdata, across_counts_each_block)
{
    char out[64];
    temp_dir(out, sizeof out);
    const char *argv[] = {"--across", UF_TEST_DATA_DIR "/gpu-a", UF_TEST_DATA_DIR "/gpu-b", out};
    cr_assert_eq(run(4, argv), 0);
    char *gp = slurp(out, "launch_storm_across.gp");
    cr_assert_not_null(gp);
    cr_expect_not_null(strstr(gp, "\nngpu = 2\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\ncounts = '6 "), "%s", gp);
    free(gp);
    remove_out(out);
}

/* `underfed plotdata` (tools/plotdata_cmd.c, plotdata.c, plotfigs.c): the data files and gnuplot includes the
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
#include "plotdata_cmd.h"

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

/* The numeric lines of a data file (comments and block headings skipped): up to max rows of
 * up to 8 columns into v; returns the rows read. */
static int numeric_rows(char *text, double v[][8], int max, int *cols)
{
    int n = 0;
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        char *end;
        double first = strtod(line, &end);
        if (line[0] == '#' || end == line)
            continue;
        int c = 0;
        v[n][c++] = first;
        for (char *p = end; c < 8;) {
            double x = strtod(p, &end);
            if (end == p)
                break;
            v[n][c++] = x;
            p = end;
        }
        cols[n++] = c;
    }
    return n;
}

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

/* tests/data/shape/small_batch.csv: 1e8 weights, per step 6 FLOPs and 6 bytes per weight and
 * token and 6e5 bytes per token more, so useful_flops / min_bytes = 1000 M / (1000 + M); its
 * ceilings.csv: copy 4000 GB/s, bf16 GEMM 800 TFLOP/s. */
static double shape_slope(double m)
{
    return 1000 * m / (1000 + m) * 4000 / 1000;     /* FLOP/B x GB/s = GFLOP/s, in TFLOP/s */
}

/* A figure's four files of the "shape" fixture's plot folder, read whole (NULL: missing). */
typedef struct fig4 {
    char out[64];
    char *text[4];
} fig4;

static void fig4_load(fig4 *f, const char *const names[4])
{
    plot_folder("shape", f->out, sizeof f->out);
    for (int i = 0; i < 4; i++)
        f->text[i] = slurp(f->out, names[i]);
    cr_assert(f->text[0] && f->text[1] && f->text[2] && f->text[3]);
}

static void fig4_free(fig4 *f)
{
    for (int i = 0; i < 4; i++)
        free(f->text[i]);
    remove_out(f->out);
}

/* small_batch's roofline: the copy slope of each M from the file's own FLOP and byte counts
 * and the folder's copy ceiling, the roof at the GEMM ceiling, the ridge where they meet
 * (log-log between the rows around it), large_micro at its GEMM rows. */
Test(plotdata, small_batch_roofline_from_counts_and_ceilings)
{
    static const char *const names[4] = {"small_batch.gp", "small_batch_micro1.dat",
                                         "small_batch_roof.dat", "small_batch_large.dat"};
    fig4 f;
    double v[32][8];
    int cols[32];
    fig4_load(&f, names);
    char *gp = f.text[0], *micro = f.text[1], *roof = f.text[2], *large = f.text[3];
    cr_expect_not_null(strstr(gp, "\ncopy = 4000\ngemm = 800\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\ncounts = '6 6 6 6 6 6'\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\nflop_per_byte_per_token = 0.999000999\n"), "%s", gp);
    /* M, TFLOP/s, GB/s, slope, NVML, SM, tensor; micro1 at 1, 8, 32, 128, 512, 2048 */
    int n = numeric_rows(micro, v, 32, cols);
    cr_assert_eq(n, 6, "micro1 rows: %d", n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(cols[i], 7);
        cr_expect(near(v[i][3], shape_slope(v[i][0]), 1e-5), "slope at M = %g: %g, want %g",
                  v[i][0], v[i][3], shape_slope(v[i][0]));
        cr_expect(v[i][1] < v[i][3] && v[i][1] <= 800, "M = %g: rate %g above its roofs", v[i][0],
                  v[i][1]);
    }
    /* the ridge: between M = 128 (slope 453.9) and 512 (1354.5), log-log */
    double t = log(800 / shape_slope(128)) / log(shape_slope(512) / shape_slope(128));
    double ridge = 128 * pow(4, t);
    char *at = strstr(gp, "\nridge = ");
    cr_assert_not_null(at, "%s", gp);
    cr_expect(near(strtod(at + 9, NULL), ridge, 1e-6), "ridge %s, want %g", at + 9, ridge);
    /* the roofline: min(slope, roof) at each M, the ridge inserted at the roof */
    n = numeric_rows(roof, v, 32, cols);
    cr_assert_eq(n, 7, "roof points: %d", n);
    for (int i = 0, k = 0; i < n; i++) {
        if (near(v[i][0], ridge, 1e-5)) {
            cr_expect_eq(v[i][1], 800);
            k = 1;
            continue;
        }
        cr_expect(near(v[i][1], fmin(shape_slope(v[i][0]), 800), 1e-5), "roof at M = %g: %g",
                  v[i][0], v[i][1]);
        cr_expect(k == (v[i][0] > ridge), "M = %g out of order around the ridge", v[i][0]);
    }
    /* large_micro: one micro-batch of global_tokens = 4096 rows at 690 TFLOP/s */
    n = numeric_rows(large, v, 32, cols);
    cr_assert_eq(n, 1);
    cr_expect(v[0][0] == 4096 && near(v[0][1], 690, 1e-5), "large_micro at %g, %g", v[0][0],
              v[0][1]);
    fig4_free(&f);
}

/* tensor_alignment: odd_hidden's spikes are the dims that are multiples of 8 (and only
 * those); each bar is drawn against its own math's ceiling, the one the scenario measured it
 * against (tflops_useful over pct_of_own_ceiling; the folder's ceilings.csv says 800, 50, 400). */
Test(plotdata, tensor_alignment_spikes_and_own_ceilings)
{
    static const char *const bars[] = {"\"odd_vocab\" broken 96 800 19\n",
                                       "\"padded_vocab\" fixed 600 800 83\n",
                                       "\"fp32\" broken 50 50 0\n", "\"tf32\" fixed 330 400 95\n",
                                       "\"bf16\" fixed 670 800 92\n"};
    static const char *const names[4] = {"tensor_alignment.gp", "tensor_alignment_spikes.dat",
                                         "tensor_alignment_bars.dat", "tensor_alignment_dim.dat"};
    fig4 f;
    double v[32][8];
    int cols[32];
    fig4_load(&f, names);
    char *gp = f.text[0], *spikes = f.text[1], *bar = f.text[2], *dims = f.text[3];
    cr_expect_not_null(strstr(gp, "\nnsweep = 2\nndim = 34\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\nnspike = 3\n"), "%s", gp);
    cr_expect_not_null(strstr(gp, "\nbnames = 'odd_vocab padded_vocab fp32 tf32 bf16'\nnbar = 5\n"
                                  "nbrate = 5\n"), "%s", gp);
    int n = numeric_rows(spikes, v, 32, cols);
    cr_assert_eq(n, 3, "spikes: %d", n);
    for (int i = 0; i < n; i++)
        cr_expect(v[i][0] == 4088 + 8 * i && near(v[i][1], 650, 1e-5), "spike %d: %g %g", i,
                  v[i][0], v[i][1]);
    const char *at = bar;
    for (int i = 0; i < 5; i++) {
        const char *hit = strstr(at, bars[i]);
        cr_expect_not_null(hit, "no bar line %s in\n%s", bars[i], bar);
        at = hit ? hit : at;                        /* and in this order */
    }
    /* two blocks of 17 dims: odd_hidden then aligned_hidden */
    cr_expect_not_null(strstr(dims, "dim \"odd_hidden\" tflops_useful\n4088 650\n4089 130\n"
                                    "4090 260\n"), "%s", dims);
    cr_expect_not_null(strstr(dims, "\n\n\ndim \"aligned_hidden\" tflops_useful\n4088 670\n"),
                       "%s", dims);
    fig4_free(&f);
}

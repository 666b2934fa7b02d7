/* serial_decode's figure (tools/plotfigs.c, fig_serial_decode) on its fixture folder
 * tests/data/decode (made for the test: copy ceiling 4000 GB/s; persistent absent at
 * d = 256): per d_model each variant's step time and share of copy, the floor of a batch-1
 * step (its bytes at the copy ceiling), the counts per column and batched's speed-up. */
#define _XOPEN_SOURCE 700       /* nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plotdata.h"
#include "plotdata_cmd.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *walk)
{
    (void)st, (void)flag, (void)walk;
    return remove(path);
}

/* The whole of OUT/data/NAME into a malloc'd string. */
static char *slurp(const char *out, const char *name)
{
    char path[UF_PATH_LEN];
    snprintf(path, sizeof path, "%s/data/%s", out, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no %s", path);
    char *text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

Test(plot_serial_decode, steps_shares_and_the_floor_along_d_model)
{
    char out[] = "/tmp/uf_plot_decode_XXXXXX", dir[UF_PATH_LEN];
    snprintf(dir, sizeof dir, "%s/decode", UF_TEST_DATA_DIR);
    cr_assert_not_null(mkdtemp(out));
    const char *argv[] = {dir, out};
    cr_assert_eq(uf_cmd_plotdata(2, (char **)argv), 0);
    char *dat = slurp(out, "serial_decode_decode.dat"), *gp = slurp(out, "serial_decode.gp");
    /* 256: no persistent row (NaN); floor 4e7 B / 4000 GB/s = 0.01 ms */
    cr_expect_not_null(strstr(dat, "\n256 0.4 0.2 NaN 0.3 2.5 5 NaN 5 0.01\n"), "%s", dat);
    /* 4096: floor 6e9 B / 4000 GB/s = 1.5 ms */
    cr_expect_not_null(strstr(dat, "\n4096 2 1.75 1.6 2 75 85.7143 93.75 87.5 1.5\n"), "%s", dat);
    cr_expect_not_null(strstr(gp, "\nvariants = 'eager_b1 graph_b1 persistent batched'\n"
                                  "counts = '2 2 1 2 2 2 1 2 2'\n"), "%s", gp);
    /* 64 sequences in 2 ms against one in 1.75 ms: 56x */
    const char *sp = strstr(gp, "\nspeedup = ");
    cr_assert_not_null(sp, "%s", gp);
    cr_expect(fabs(strtod(sp + 11, NULL) - 56.0) < 1e-4, "%s", sp);
    free(dat);
    free(gp);
    nftw(out, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* `underfed compare` (compare_cmd.h): lists both folders, prints each scenario's diffs (the
 * values, the change, the verdict and why a host-bound change was excused) and counts the
 * regressions and what is missing. */
#include "compare_cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

/* Both folders listed and holding results; -1 (a message said why) otherwise. */
static int list_both(const args *a, char (**names)[UF_NAME_LEN], int *n,
                     char (**other)[UF_NAME_LEN], int *n_other)
{
    *n = list_results(a->pos[0], names);
    *n_other = *n < 0 ? -1 : list_results(a->pos[1], other);
    if (*n < 0 || *n_other < 0)
        return -1;
    for (int k = 0; k < 2; k++)
        if ((k ? *n_other : *n) == 0) {
            fprintf(stderr, "underfed compare: no result files in %s\n", a->pos[k]);
            return -1;
        }
    return 0;
}

static int listed(char (*names)[UF_NAME_LEN], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static void print_value(double v)
{
    if (isnan(v))
        printf(" %12s", "-");
    else
        printf(" %12.6g", v);
}

/* A diff's verdict, with why the noise model judged it so where the row is host-bound:
 * "NOISY (host-bound: idle_host 83 %, strict SLOWER, tolerance 59 %)", or where busy_pct's
 * trace window explains the change: "NOISY (trace window drift 10.3 %)". */
static void print_verdict(const uf_diff *d)
{
    printf(" %s", uf_verdict_name(d->verdict));
    if (d->verdict == UF_NOISY && d->strict == UF_NOISY && d->window_drift_pct > 0)
        printf(" (trace window drift %.1f %%: trace_overhead moved)\n", d->window_drift_pct);
    else if (isnan(d->idle_host_pct) || (d->verdict != UF_SLOWER && d->verdict != UF_FASTER &&
                                         d->verdict == d->strict))
        printf("\n");
    else if (d->verdict != d->strict)
        printf(" (host-bound: idle_host %.0f %%, strict %s, tolerance %.0f %%)\n",
               d->idle_host_pct, uf_verdict_name(d->strict), d->tolerance_pct);
    else
        printf(" (host-bound: idle_host %.0f %%, beyond its tolerance %.0f %%)\n",
               d->idle_host_pct, d->tolerance_pct);
}

/* The launch floor of DIR/ceilings.csv into *launch_us: NaN without that file. 0, or -1 (a
 * message said why) when the file is there but malformed. */
static int folder_launch_us(const char *dir, double *launch_us)
{
    char err[UF_REASON_LEN];
    uf_ceilings c;
    int got = folder_ceilings(dir, &c, NULL, err, sizeof err);
    *launch_us = c.launch_us;
    return got < 0 ? -1 : 0;
}

/* What one scenario's comparison counted. */
typedef struct compare_counts {
    int regressed, lost, excused;
} compare_counts;

/* One scenario in both folders: its diffs printed and counted. A file that does not record
 * its host's launch floor takes its folder's ceilings.csv's. 0, or EXIT_BAD when a file is
 * unreadable. */
static int compare_scenario(const args *a, const char *name, compare_counts *counts)
{
    char err[UF_REASON_LEN];
    uf_table ta, tb;
    uf_table_init(&ta, "");
    uf_table_init(&tb, "");
    int rc = EXIT_BAD;
    uf_diff *diffs = NULL;
    if (uf_table_read_scenario(&ta, a->pos[0], name, err, sizeof err) != 0 ||
        uf_table_read_scenario(&tb, a->pos[1], name, err, sizeof err) != 0) {
        fprintf(stderr, "underfed: %s\n", err);
        goto out;
    }
    uf_compare_noise noise = {a->threshold_pct, uf_table_launch_us(&ta), uf_table_launch_us(&tb)};
    if ((isnan(noise.launch_us_a) && folder_launch_us(a->pos[0], &noise.launch_us_a) != 0) ||
        (isnan(noise.launch_us_b) && folder_launch_us(a->pos[1], &noise.launch_us_b) != 0))
        goto out;
    int nd = uf_compare_tables_noise(&ta, &tb, &noise, NULL, 0);
    diffs = malloc((size_t)(nd > 0 ? nd : 1) * sizeof *diffs);
    if (!diffs) {
        fprintf(stderr, "underfed compare: out of memory\n");
        goto out;
    }
    uf_compare_tables_noise(&ta, &tb, &noise, diffs, nd);
    for (int i = 0; i < nd; i++) {
        const uf_diff *d = &diffs[i];
        printf("%-22s %-14s %-28s %-14s", name, d->variant, d->where, d->metric);
        print_value(d->a);
        print_value(d->b);
        if (isnan(d->change_pct))
            printf(" %9s", "");
        else
            printf(" %+8.1f%%", d->change_pct);
        print_verdict(d);
        counts->regressed += d->verdict == UF_SLOWER;
        counts->lost += d->verdict == UF_MISSING;
        counts->excused += d->verdict != d->strict;
    }
    rc = 0;
out:
    free(diffs);
    uf_table_free(&ta);
    uf_table_free(&tb);
    return rc;
}

/* Every scenario of A against B, judged by compare.h's noise model (host-bound rows against a
 * run-to-run tolerance from the hosts' launch floors; every excuse printed). A scenario, row
 * or value of A absent from B is MISSING, one of B absent from A NEW. Exit 1 on a regression,
 * or on anything MISSING unless --allow-missing; 2 when a folder is empty or unreadable or a
 * file malformed. */
static int compare_runs(const args *a)
{
    char (*names)[UF_NAME_LEN] = NULL, (*other)[UF_NAME_LEN] = NULL;
    int n, n_other, rc = 0;
    compare_counts counts = {0, 0, 0};
    if (list_both(a, &names, &n, &other, &n_other) != 0) {
        rc = EXIT_BAD;
        goto out;
    }
    printf("# %s → %s, threshold %.1f %%; FASTER/SLOWER: the second run is better/worse; "
           "MISSING: only in the first, NEW: only in the second\n",
           a->pos[0], a->pos[1], a->threshold_pct);
    printf("# host-bound rows (idle_host_pct >= %.0f %% on either side) are judged against "
           "threshold + launch-floor drift + %.0f %% + spread; an excused change says so\n",
           UF_HOST_BOUND_IDLE_PCT, UF_HOST_ALLOWANCE_PCT);
    printf("# spread: step_ms, tflops_useful, gbs the timing pass's; busy_pct its trace "
           "window's drift (|change of trace_overhead|)\n");
    for (int f = 0; f < n && rc == 0; f++) {
        if (!listed(other, n_other, names[f])) {
            printf("%-22s MISSING (only in %s)\n", names[f], a->pos[0]);
            counts.lost++;
            continue;
        }
        rc = compare_scenario(a, names[f], &counts);
    }
    for (int g = 0; g < n_other && rc == 0; g++)
        if (!listed(names, n, other[g]))
            printf("%-22s NEW (only in %s)\n", other[g], a->pos[1]);
    if (rc == 0) {
        printf("%d regression(s) beyond %.1f %% and the measured spread; %d host-bound "
               "change(s) excused as NOISY; %d MISSING from %s%s\n",
               counts.regressed, a->threshold_pct, counts.excused, counts.lost, a->pos[1],
               counts.lost && a->allow_missing ? " (allowed: --allow-missing)" : "");
        fflush(stdout);     /* the listing before the message, where both go to one file */
        if (counts.lost && !a->allow_missing)
            fprintf(stderr, "underfed compare: %d scenario(s), row(s) or value(s) of %s are "
                    "missing from %s (--allow-missing accepts that)\n", counts.lost, a->pos[0],
                    a->pos[1]);
        rc = counts.regressed || (counts.lost && !a->allow_missing) ? EXIT_REGRESSED : 0;
    }
out:
    free(names);
    free(other);
    return rc;
}

int uf_cmd_compare(int argc, char **argv)
{
    return uf_run_parsed(&uf_compare_command, argc, argv, compare_runs);
}

const uf_command uf_compare_command = {
    "compare", "DIR_A DIR_B", 2, 2, "--threshold --allow-missing",
    "two runs: SAME/FASTER/SLOWER/NOISY, host-aware; exit 1: worse", uf_cmd_compare, 0};

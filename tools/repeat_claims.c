/* repeat_claims: the claims of several runs of the same scenarios, side by side (ci/repeat.sh
 * runs the scenarios N times and calls this on the N result folders).
 *
 *   repeat_claims [--min-margin M] [--width W] DIR...
 *
 * DIR: a results folder of one run (SCENARIO.csv files, as ci/suite.sh --out D writes D/GPU/).
 * For each scenario and claim: in how many runs it held, the values it was judged on (min,
 * median, max), its bound, the run-to-run spread of the value and the margin of the median and
 * of the worst run from the bound in spreads (claimstats.h says which spread and why), the
 * headroom of the median in % of the bound (room%: what one run alone can say), and a
 * standing: steady, LOW (margin below M, default 3), FLAKY (failed or missing in some run) or
 * n/a (never judged, for a legitimate reason). Then the claims that are not steady, the least
 * margin first. Exit: 0 every claim steady (or legitimately n/a), 1 one is LOW or FLAKY, 2 bad
 * usage or input (a file that does not read, a claim line that does not parse, runs of one
 * scenario in different modes), with the file named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimstats.h"
#include "cli.h"
#include "options.h"
#include "results.h"

enum { DEFAULT_WIDTH = 100 };

static void usage(FILE *f)
{
    fprintf(f, "usage: repeat_claims [--min-margin M] [--width W] DIR...\n"
               "  DIR: the results folder of one run (its SCENARIO.csv files); give each run's\n"
               "  --min-margin M: a claim held every time is LOW below M spreads (default 3)\n"
               "  --width W: characters of each claim's wording shown (default %d)\n",
            DEFAULT_WIDTH);
}

/* Every scenario file of one run's folder into the set. 0, or -1 with the message printed. */
static int add_folder(cs_set *set, const char *dir)
{
    char (*names)[UF_NAME_LEN] = NULL;
    int n = list_results(dir, &names), rc = 0;
    if (n < 0)
        return -1;
    if (n == 0) {
        fprintf(stderr, "repeat_claims: %s holds no results file (SCENARIO.csv)\n", dir);
        return -1;
    }
    uf_table *t = malloc(sizeof *t);
    if (!t) {
        free(names);
        fprintf(stderr, "repeat_claims: out of memory\n");
        return -1;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        char path[UF_PATH_LEN], err[UF_REASON_LEN];
        if (join_path(path, sizeof path, dir, names[i], ".csv") != 0) {
            rc = -1;
            break;
        }
        uf_table_init(t, "");
        if (uf_table_read_csv(t, path, err, sizeof err) != 0) {
            fprintf(stderr, "repeat_claims: %s\n", err);
            rc = -1;
        } else if (cs_add_table(set, names[i], t, err, sizeof err) != 0) {
            fprintf(stderr, "repeat_claims: %s: %s\n", path, err);
            rc = -1;
        }
        uf_table_free(t);
    }
    free(t);
    free(names);
    return rc;
}

static const char *cmp_text(uf_cmp c)
{
    return c == UF_LE ? "<=" : c == UF_GE ? ">=" : c == UF_LT ? "<" : ">";
}

/* A value in a column of `width`: "-" where NaN, inf as "inf". */
static void print_number(double v, int width)
{
    if (isnan(v))
        printf(" %*s", width, "-");
    else if (isinf(v))
        printf(" %*s", width, v > 0 ? "inf" : "-inf");
    else
        printf(" %*.4g", width, v);
}

static void print_claim(const cs_claim *c, const cs_summary *sum, cs_standing st, int runs,
                        int width)
{
    char held[32], bound[48];
    snprintf(held, sizeof held, "%d/%d", c->held, runs);
    if (c->bound_known)
        snprintf(bound, sizeof bound, "%s %.4g", cmp_text(c->cmp), c->bound);
    else
        snprintf(bound, sizeof bound, "%s", c->bounds_differ ? "differs" : "?");
    printf("%4d %-7s %6s %4d", c->index, cs_standing_name(st), held, c->na);
    print_number(sum->min, 10);
    print_number(sum->median, 10);
    print_number(sum->max, 10);
    printf(" %12s", bound);
    print_number(sum->spread, 9);
    print_number(sum->margin, 7);
    print_number(sum->worst_margin, 7);
    print_number(sum->room_pct, 7);
    printf("  %.*s%s\n", width, c->text, (int)strlen(c->text) > width ? "..." : "");
    if (c->texts_differ)
        printf("     (worded differently in %d run%s)\n", c->texts_differ,
               c->texts_differ == 1 ? "" : "s");
}

/* The not-steady claims, least margin first (NaN margins, i.e. unknown, first of all). */
typedef struct risky {
    const cs_claim *c;
    double margin;
    cs_standing st;
} risky;

static int by_margin(const void *x, const void *y)
{
    const risky *a = x, *b = y;
    if (isnan(a->margin) || isnan(b->margin))
        return isnan(b->margin) - isnan(a->margin);
    return (a->margin > b->margin) - (a->margin < b->margin);
}

static int report(const cs_set *set, double min_margin, int width)
{
    int tally[4] = {0}, n_risky = 0, rc = 0;
    risky *list = malloc(((size_t)set->n_claims + 1) * sizeof *list);
    if (!list) {
        fprintf(stderr, "repeat_claims: out of memory\n");
        return 2;
    }
    for (int s = 0; s < set->n_scenarios; s++) {
        const cs_scenario *sc = &set->scenarios[s];
        if (sc->modes_differ) {
            fprintf(stderr, "repeat_claims: %s: the runs were made in different modes (the first "
                    "'%s', %d other): give runs of one mode (--quick or not)\n", sc->name,
                    sc->mode, sc->modes_differ);
            free(list);
            return 2;
        }
    }
    for (int s = 0; s < set->n_scenarios; s++) {
        const cs_scenario *sc = &set->scenarios[s];
        printf("%s: %d run%s, mode %s, git %s\n", sc->name, sc->runs, sc->runs == 1 ? "" : "s",
               sc->mode[0] ? sc->mode : "?", sc->git[0] ? sc->git : "?");
        if (sc->gits_differ)
            printf("  warning: %d run%s of another commit than the first's\n", sc->gits_differ,
                   sc->gits_differ == 1 ? "" : "s");
        printf("%4s %-7s %6s %4s %10s %10s %10s %12s %9s %7s %7s %7s  %s\n", "#", "stands",
               "held", "n/a", "min", "median", "max", "bound", "spread", "margin", "worst",
               "room%", "claim");
        for (int i = 0; i < set->n_claims; i++) {
            const cs_claim *c = &set->claims[i];
            if (strcmp(c->scenario, sc->name) != 0)
                continue;
            cs_summary sum;
            cs_summarize(c, &sum);
            cs_standing st = cs_standing_of(c, &sum, sc->runs, min_margin);
            tally[st]++;
            print_claim(c, &sum, st, sc->runs, width);
            if (st == CS_LOW || st == CS_FLAKY) {
                list[n_risky++] = (risky){c, sum.margin, st};
                rc = 1;
            }
        }
        printf("\n");
    }
    printf("%d claims: %d steady (held every run, margin >= %g spreads), %d LOW, %d FLAKY, "
           "%d n/a in every run\n", set->n_claims, tally[CS_STEADY], min_margin, tally[CS_LOW],
           tally[CS_FLAKY], tally[CS_UNJUDGED]);
    qsort(list, (size_t)n_risky, sizeof *list, by_margin);
    if (n_risky)
        printf("not steady, least margin first:\n");
    for (int i = 0; i < n_risky; i++) {
        printf("  %-20s claim.%-3d %-6s margin", list[i].c->scenario, list[i].c->index,
               cs_standing_name(list[i].st));
        print_number(list[i].margin, 7);
        printf("  %.*s\n", width < 60 ? width : 60, list[i].c->text);
    }
    free(list);
    return rc;
}

int main(int argc, char **argv)
{
    double min_margin = 3.0;
    int width = DEFAULT_WIDTH, first_dir = 1;
    for (; first_dir < argc && argv[first_dir][0] == '-'; first_dir++) {
        const char *opt = argv[first_dir];
        double v;
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if ((strcmp(opt, "--min-margin") != 0 && strcmp(opt, "--width") != 0) ||
            first_dir + 1 >= argc) {
            fprintf(stderr, "repeat_claims: %s\n", first_dir + 1 >= argc &&
                    (strcmp(opt, "--min-margin") == 0 || strcmp(opt, "--width") == 0)
                        ? "an option needs its value" : "unknown option");
            usage(stderr);
            return 2;
        }
        const char *value = argv[++first_dir];
        if (uf_parse_number(value, &v) != 0 || !(v >= 0) || isinf(v) ||
            (strcmp(opt, "--width") == 0 && (v < 10 || v > 400 || v != floor(v)))) {
            fprintf(stderr, "repeat_claims: %s '%s': %s\n", opt, value,
                    strcmp(opt, "--width") == 0 ? "a whole number from 10 to 400"
                                                 : "a number >= 0");
            return 2;
        }
        if (strcmp(opt, "--width") == 0)
            width = (int)v;
        else
            min_margin = v;
    }
    if (first_dir >= argc) {
        usage(stderr);
        return 2;
    }
    cs_set set;
    cs_set_init(&set);
    int rc = 0;
    for (int i = first_dir; i < argc && rc == 0; i++)
        if (add_folder(&set, argv[i]) != 0)
            rc = 2;
    if (rc == 0)
        rc = report(&set, min_margin, width);
    cs_set_free(&set);
    return rc;
}

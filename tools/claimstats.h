/* The claims of several runs of the same scenarios, side by side (tools/repeat_claims.c, run by
 * ci/repeat.sh): for each claim, in how many runs it held, the values it was judged on, its
 * bound, and how far from the bound the usual run lies in units of the run-to-run spread.
 * Plain C, no CUDA; tests/unit/test_claimstats.c pins it.
 *
 * The spread of a claim's value over the runs is 1.4826 x its median absolute deviation from
 * the median (MAD): for normally distributed values that is their standard deviation, so a
 * margin of 3 reads "3 sigma", yet with 5 to 10 runs one odd run moves neither the median nor
 * the MAD (a standard deviation or a range would swing with it, and an interquartile range of
 * 5 values rests on interpolated quartiles). The odd run is not hidden: the held count, min
 * and max, and the worst run's own margin stand beside it. */
#ifndef UF_TOOLS_CLAIMSTATS_H
#define UF_TOOLS_CLAIMSTATS_H

#include <stddef.h>

#include "expect.h"
#include "results.h"

/* The MAD's factor to the standard deviation of a normal distribution (1 / Phi^-1(3/4)). */
#define CS_MAD_TO_SIGMA 1.4826

/* One claim (scenario and claim.K) over the runs that recorded it. */
typedef struct cs_claim {
    char scenario[UF_NAME_LEN];
    int index;                  /* K of the metadata key claim.K */
    char text[UF_META_VALUE_LEN];   /* the first run's wording */
    int runs;                   /* runs that recorded it */
    int held, failed, na, na_legit;
    int texts_differ;           /* runs whose wording is not the first run's */
    double *values;             /* the judged values (held or FAILED), in run order */
    int n_values, cap_values;
    int bound_known;            /* every judged run said the same bound */
    int bounds_differ;          /* judged runs said different bounds (or some none) */
    double bound;
    uf_cmp cmp;
} cs_claim;

/* The runs of one scenario: how many files, and their mode and git (each differing one
 * counted). */
typedef struct cs_scenario {
    char name[UF_NAME_LEN];
    int runs;
    char mode[UF_NAME_LEN], git[UF_NAME_LEN];
    int modes_differ, gits_differ;
} cs_scenario;

typedef struct cs_set {
    cs_claim *claims;
    int n_claims, cap_claims;
    cs_scenario *scenarios;
    int n_scenarios, cap_scenarios;
} cs_set;

void cs_set_init(cs_set *s);
void cs_set_free(cs_set *s);

/* Add one run's results table of `scenario`: every `claim.K` metadata line (expect.h's
 * uf_claim_parse). 0, or -1 with the reason in err (a claim line that does not parse, a key
 * claim.K with K not a whole number >= 1, out of memory); a table with no claim adds a run
 * with none. */
int cs_add_table(cs_set *s, const char *scenario, const uf_table *t, char *err, size_t errlen);

/* One claim over its runs. NaN where not defined: min, median, max with no judged value;
 * spread with fewer than 3 (CS_MIN_SPREAD_RUNS); margin and worst_margin where the spread or
 * the bound is unknown. margin: (median - bound) / spread, signed so that > 0 is the side on
 * which the claim holds; worst_margin the same for the worst judged value (the smallest for
 * >= and >, the largest for <= and <). A spread of 0 gives +-inf beside the bound's side
 * and 0 on it. */
enum { CS_MIN_SPREAD_RUNS = 3 };
typedef struct cs_summary {
    int judged;
    double min, median, max, spread, margin, worst_margin;
    double room_pct;            /* (median - bound) / |bound| x 100 on the holding side: the
                                 * headroom in the value's own scale (NaN for a bound of 0) */
} cs_summary;
void cs_summarize(const cs_claim *c, cs_summary *out);

/* How a claim stands over `runs` runs of its scenario: CS_FLAKY failed in some run, n/a with no
 * legitimate reason, or missing from a run (fewer than `runs` recorded it); CS_UNJUDGED every
 * run n/a with a legitimate reason (e.g. needs a full run); CS_LOW held in every judged run
 * with its margin below min_margin, or with fewer than 3 judged runs, or with its bound
 * unknown or differing (nothing says how safe it is); CS_STEADY held every time with margin
 * >= min_margin. A margin of 0 with a spread of 0 (a count exactly at its bound every run, as
 * "drains_per_step >= 1" measured 1) is steady: it cannot drift, only break. */
typedef enum { CS_STEADY, CS_LOW, CS_FLAKY, CS_UNJUDGED } cs_standing;
cs_standing cs_standing_of(const cs_claim *c, const cs_summary *sum, int runs, double min_margin);
const char *cs_standing_name(cs_standing s);

#endif

/* The expectation engine: the claims a scenario makes about its results, each judged `held`,
 * `FAILED` or `n/a` with the reason, and the run's verdict from them. Plain C, no CUDA: the
 * harness evaluates a scenario's expect() through it, tools/underfed shares its `where`
 * grammar, and Criterion tests pin its rules (tests/unit/test_expect.c).
 *
 * An `n/a` never counts as held. It is legitimate only when the user switched the pass that
 * measures it off (--no-trace, --no-counters), when the GPU does not permit the counters, or
 * when the scenario declared that the claim needs a full run and this is --quick; anything
 * else (no ceilings file, a row not run or skipped, a NaN for another reason) is not. A claim
 * naming a variant, metric or point that does not exist is a programming error: a dry report
 * (uf_claims_new with no table) runs the claim list before any GPU work and records each
 * unknown name. */
#ifndef UF_EXPECT_H
#define UF_EXPECT_H

#include <stddef.h>
#include <stdio.h>
#include "results.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the `where` grammar --------------------------------------------------------------- */

/* One axis as a `where` sees it. */
typedef struct uf_where_axis {
    const char *name;
    double default_value;       /* the value when `where` does not name the axis (NaN: none) */
    const double *values;       /* the values run: what `max` and `min` choose from */
    int n_values;
} uf_where_axis;

/* How each axis of a parsed point got its value. */
typedef enum { UF_WHERE_DEFAULT, UF_WHERE_NUMBER, UF_WHERE_EXTREME } uf_where_how;

/* "AXIS=VALUE,AXIS=VALUE": VALUE a number as on the command line (4096, 4K, 64M, 1G, 0.5,
 * 1e6; uf_parse_number) or `max` / `min`, the largest / smallest of the axis's values. Axes
 * not named are at their default; NULL or "" names none. No spaces; each axis at most once.
 * Fills point[n_axes] (and how[n_axes] unless NULL). 0, or -1 with a message in err. */
int uf_where_parse(const uf_where_axis *axes, int n_axes, const char *where, double *point,
                   uf_where_how *how, char *err, size_t errlen);

/* The one rule for "the same axis value": equal within a relative 1e-9 (absolute below 1),
 * so that 4K, 4096 and 4096.0000000001 name one point. */
int uf_axis_value_same(double a, double b);

/* ---- claims ------------------------------------------------------------------------------ */

typedef enum { UF_LE, UF_GE, UF_LT, UF_GT } uf_cmp;
typedef enum { UF_HELD, UF_FAILED, UF_NA } uf_claim_verdict;

/* Where a metric comes from: what an empty one says about why. */
typedef enum {
    UF_SRC_AXIS,        /* the sweep point itself: never empty in a row */
    UF_SRC_TIMING,      /* timing pass and verify: step_ms, ..., verified, max_rel_err */
    UF_SRC_TRACE,       /* trace pass (CUPTI Activity) */
    UF_SRC_COUNTERS,    /* counters pass (CUPTI PM sampling, NVML GPM) */
    UF_SRC_NVML,        /* NVML view during the timing pass */
    UF_SRC_CEILINGS,    /* a share of a measured ceiling (ceilings.csv) */
    UF_SRC_SCENARIO,    /* counted by the scenario (describe), and its own columns */
    UF_N_SOURCES
} uf_source;

/* The source of a fixed column (uf_metrics); -1 when the name is not one. */
int uf_metric_source(const char *metric);

/* What became of each source in this run. */
typedef enum {
    UF_PASS_RAN = 0,    /* ran: an empty value is the row's problem (see its skip_reason) */
    UF_PASS_OFF,        /* the user switched it off: a legitimate n/a */
    UF_PASS_DENIED,     /* the GPU does not permit it (UF_SKIP with a reason): legitimate */
    UF_PASS_FAILED      /* unavailable for another reason (no ceilings file, no NVML): not */
} uf_pass_state;

typedef struct uf_run_facts {
    int quick;                                  /* --quick: claims needing a full run are n/a */
    uf_pass_state state[UF_N_SOURCES];
    char reason[UF_N_SOURCES][UF_REASON_LEN];   /* why, for every state but RAN */
} uf_run_facts;

/* One axis as the claims see it. */
typedef struct uf_claims_axis {
    const char *name;
    double default_value;
    const double *values;       /* this report's: the values run; when checking, the values
                                 * declared for the mode checked */
    int n_values;
    const double *full_values;  /* declared for a full run: where a claim marked with
                                 * uf_expect_full_run may point when checked in --quick */
    int n_full_values;
} uf_claims_axis;

/* The names a claim may use: the scenario's declarations. */
typedef struct uf_claims_decl {
    const char *const *variants;
    int n_variants;
    const uf_claims_axis *axes;     /* in the table's axis order */
    int n_axes;
    const char *const *extras;      /* the scenario's own columns */
    int n_extras;
} uf_claims_decl;

typedef struct uf_claim {
    char text[512];             /* what is claimed and why */
    double value, bound;
    uf_cmp cmp;
    uf_claim_verdict verdict;
    int legit;                  /* n/a only: every reason is a legitimate one */
    char reason[512];           /* n/a only: why it was not judged */
} uf_claim;

/* The measured table as a scenario's expect() sees it, and the claims it makes. */
typedef struct uf_report uf_report;
typedef struct uf_expectations uf_expectations;

/* Start an evaluation. decl is copied; its names and value arrays, and `table` (the measured
 * results, in decl's axis order), must outlive the evaluation. NULL `table`: a dry report for checking names: a row for every variant at every
 * point of the axes' values, every metric empty; every name given to uf_find, uf_value and
 * uf_axis_values is checked against decl, and every point's values against the declared
 * ones (decl's values, or full_values for a claim marked uf_expect_full_run). Unknown names
 * are recorded as errors (in a real evaluation too). NULL when out of memory. */
uf_expectations *uf_claims_new(const uf_claims_decl *decl, const uf_table *table,
                               const uf_run_facts *facts);
void uf_claims_free(uf_expectations *ex);
const uf_report *uf_claims_report(const uf_expectations *ex);

int uf_claims_count(const uf_expectations *ex);
const uf_claim *uf_claims_at(const uf_expectations *ex, int i);
/* Call when expect() has returned: a uf_expect_full_run with no claim after it is an error. */
void uf_claims_end(uf_expectations *ex);
/* Programming errors found (unknown names, malformed points, a declaration with no claim). */
int uf_claims_n_errors(const uf_expectations *ex);
const char *uf_claims_error(const uf_expectations *ex, int i);

typedef struct uf_claims_tally {
    int held, failed, na, na_legit;   /* na counts every n/a; na_legit those with a legit reason */
} uf_claims_tally;

uf_claims_tally uf_claims_tally_of(const uf_expectations *ex);

/* The verdict of a run's claims (status.h's codes): UF_UNMET when any claim FAILED, when any
 * n/a has no legitimate reason, or, with require_gpu (UNDERFED_REQUIRE_GPU=1), when any claim
 * is n/a; UF_OK otherwise. */
int uf_claims_exit_code(uf_claims_tally t, int require_gpu);

/* The "## Expectation" section: one line per claim (n/a with its reason), the counts, and
 * what they make of the exit code. */
void uf_claims_print(FILE *f, const uf_expectations *ex, int require_gpu);
/* One claim for the results' metadata: "[held] (measured V, bound CMP B) TEXT", "[FAILED]
 * (measured V, bound CMP B) TEXT" or "[n/a] (REASON; legitimate|not legitimate) TEXT"; V and B
 * with 6 significant digits, CMP one of <= >= < >, so that a reader of several runs
 * (uf_claim_parse) has the value and the bound each claim was judged against. */
void uf_claim_line(const uf_claim *c, char *out, size_t len);

/* A claim line read back (uf_claim_parse). */
typedef struct uf_claim_read {
    uf_claim_verdict verdict;
    double value;               /* NaN for n/a */
    double bound;               /* NaN for n/a, and where the line does not say it (below) */
    uf_cmp cmp;                 /* meaningful where bound is not NaN */
    int legit;                  /* n/a only */
    const char *text;           /* into the line: what is claimed and why */
} uf_claim_read;

/* Parse what uf_claim_line wrote. Lines written before the bound was recorded ("[held]
 * (measured V) TEXT") give the bound where TEXT has uf_expect_metric's or uf_expect_ratio's
 * shape ("... CMP B: why", B the last word before the first ": "), NaN where it has not (a
 * claim of free wording, whose number need not be its bound: "by >= 40 % of" judged 0.4).
 * 0, or -1 when the line is not a claim line (the reason in err). */
int uf_claim_parse(const char *line, uf_claim_read *out, char *err, size_t errlen);

/* ---- what a scenario's expect() calls ------------------------------------------------- */

/* The row of a variant at a point (`where`, the grammar above; NULL: every axis at its
 * default). NULL when that row was not run. */
const uf_row *uf_find(const uf_report *rep, const char *variant, const char *where);
/* Metric of a row by column name (fixed, extra or axis); NaN when the row is NULL or the value
 * is empty. An empty value is remembered with why, for the next claim made: look a claim's
 * inputs up after the previous claim, so that its n/a names the right reason. */
double uf_value(const uf_report *rep, const uf_row *row, const char *metric);
/* The values of an axis in this report (run, or declared when checking); returns how many,
 * 0 for an unknown axis (an error). For claims made at every point run. */
int uf_axis_values(const uf_report *rep, const char *axis, const double **values);

/* One claim: value `cmp` bound. `claim` says what and why, in a sentence. A NaN value (not
 * run, not measured) leaves the claim n/a with the reasons of the empty values looked up
 * since the previous claim; never held. */
void uf_expect(uf_expectations *ex, const char *claim, double value, uf_cmp cmp, double bound);
/* Shorthands: metric of one variant, or the ratio metric(a) / metric(b), at `where`. */
void uf_expect_metric(uf_expectations *ex, const uf_report *rep, const char *variant,
                      const char *where, const char *metric, uf_cmp cmp, double bound,
                      const char *why);
void uf_expect_ratio(uf_expectations *ex, const uf_report *rep, const char *variant_a,
                     const char *variant_b, const char *where, const char *metric, uf_cmp cmp,
                     double bound, const char *why);
/* Declare that the next claim needs a full run: a timing pass of full length, or points only
 * the full sweep has. Call it before that claim's lookups. Under --quick the claim is n/a with
 * `why`, a legitimate reason; its points are checked against the full run's values. */
void uf_expect_full_run(uf_expectations *ex, const char *why);

#ifdef __cplusplus
}
#endif
#endif

/* underfed: the scenario contract. A scenario fills one uf_scenario (variants, sweep axes,
 * callbacks, expectation) and calls uf_main; the harness owns everything else: options,
 * warm-up, repetitions, the four measurement passes, statistics, results files, the table,
 * the trace export and the exit code. See DESIGN.md. */
#ifndef UNDERFED_H
#define UNDERFED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "results.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes and callback statuses (DESIGN.md). */
enum {
    UF_OK = 0,      /* reproduced and verified */
    UF_ERR = 1,     /* error or wrong result */
    UF_USAGE = 2,   /* bad usage: bad flag, size that cannot fit, zero or negative count */
    UF_UNMET = 3,   /* ran and verified, but the expectation did not hold */
    UF_SKIP = 77,   /* not applicable here: no GPU, too few GPUs, a feature unavailable */
    UF_SKIP_POINT = 78 /* from setup only: this sweep point does not apply (the reason in
                        * ctx->reason); its rows stay empty, the run goes on. Never an exit code */
};

/* Report a failed call (expression, file, line, message) on stderr. */
void uf_report_failure(const char *file, int line, const char *expr, const char *msg);

/* The CUDA runtime check: on error, report it, set rc = UF_ERR and jump to label. */
#define UF_CUDA_OR_GOTO(rc, expr, label)                                                   \
    do {                                                                                   \
        cudaError_t uf_e_ = (expr);                                                        \
        if (uf_e_ != cudaSuccess) {                                                        \
            uf_report_failure(__FILE__, __LINE__, #expr, cudaGetErrorString(uf_e_));       \
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* The status check for the scenario's own helpers: a non-zero status is kept in rc and
 * execution jumps to label (the callee has already reported why). */
#define UF_STATUS_OR_GOTO(rc, expr, label)                                                 \
    do {                                                                                   \
        int uf_s_ = (expr);                                                                \
        if (uf_s_ != UF_OK) {                                                              \
            (rc) = uf_s_;                                                                  \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

typedef enum { UF_BROKEN = 0, UF_FIXED = 1 } uf_role;

typedef struct uf_variant_desc {
    const char *name;           /* "eager" */
    uf_role role;
    const char *summary;        /* one line: what this variant does */
} uf_variant_desc;

/* A sweep axis: its values are data. A run visits the cartesian product of all axes. */
typedef struct uf_axis_desc {
    const char *name;           /* "elems" — used in --sweep elems=4K,64M and in results columns */
    const char *unit;           /* "elements" */
    const char *summary;
    double default_value;       /* the value an expectation means when it does not name the axis */
    const double *values;       /* full run */
    int n_values;
    const double *quick_values; /* --quick (must hold the points the expectation names) */
    int n_quick_values;
} uf_axis_desc;

/* A scenario-specific column (e.g. tokens_per_s), filled by describe(). */
typedef struct uf_extra_desc {
    const char *name;
    const char *unit;
    const char *summary;
} uf_extra_desc;

struct uf_scenario;

/* What the harness hands every callback. */
typedef struct uf_ctx {
    const struct uf_scenario *scenario;
    const uf_options *opt;
    int device;                 /* the primary CUDA device (--device); current when callbacks run */
    int n_gpus;                 /* GPUs this run may use: device, device+1, ...; setup may
                                 * lower it to the GPUs this process drives. On several, the
                                 * trace, counters and NVML record each GPU's figures (the
                                 * row's ranks) */
    cudaStream_t stream;        /* the stream steps run on (created by the harness, non-blocking) */
    int point_index;            /* index of the current sweep point */
    const double *axis;         /* values at the current point, in the scenario's axis order */
    uint64_t seed;              /* --seed, for setup's inputs */
    int quick;                  /* --quick */
    const uf_ceilings *ceilings;/* the machine's measured ceilings; NaN where unknown */
    void *state;                /* the scenario's, set by setup */
    char reason[UF_REASON_LEN]; /* why a callback returned UF_SKIP / UF_USAGE / UF_ERR */
} uf_ctx;

/* Value of the named axis at the current point (NaN if the scenario has no such axis). */
double uf_axis(const uf_ctx *ctx, const char *name);

/* Record why, print it on stderr, and return status: `return uf_fail(ctx, UF_USAGE, "...")`. */
int uf_fail(uf_ctx *ctx, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* UF_OK when `bytes` fit in the device's free memory (cudaMemGetInfo, with a 5 % margin);
 * otherwise UF_USAGE with the memory it would need in the reason. Call before allocating. */
int uf_check_fits(uf_ctx *ctx, size_t bytes, const char *what);

/* ---- expectations ---------------------------------------------------------------------- */

typedef enum { UF_LE, UF_GE, UF_LT, UF_GT } uf_cmp;

typedef struct uf_report uf_report;         /* the measured table, as expect() sees it */
typedef struct uf_expectations uf_expectations;

/* The row of a variant at a point. `where` names axis values ("elems=4096,ops=64", numbers
 * with suffixes as on the command line, or "elems=max" / "elems=min" for the largest/smallest
 * value run); axes it does not name are at their default value. NULL `where`: all defaults.
 * NULL when that row was not run. */
const uf_row *uf_find(const uf_report *rep, const char *variant, const char *where);
/* Metric of a row by column name (fixed, extra or axis); NaN when the row is NULL or empty. */
double uf_value(const uf_report *rep, const uf_row *row, const char *metric);

/* One claim: value `cmp` bound. `claim` says what and why, in a sentence. A NaN value (not
 * run, not measured) leaves the claim unchecked: reported as n/a, never as passed. */
void uf_expect(uf_expectations *ex, const char *claim, double value, uf_cmp cmp, double bound);
/* Shorthands: metric of one variant, or the ratio metric(a) / metric(b), at `where`. */
void uf_expect_metric(uf_expectations *ex, const uf_report *rep, const char *variant,
                      const char *where, const char *metric, uf_cmp cmp, double bound,
                      const char *why);
void uf_expect_ratio(uf_expectations *ex, const uf_report *rep, const char *variant_a,
                     const char *variant_b, const char *where, const char *metric, uf_cmp cmp,
                     double bound, const char *why);

/* ---- the scenario ---------------------------------------------------------------------- */

typedef struct uf_scenario {
    const char *name;           /* "launch_storm": the program, the results file, the folder */
    const char *title;          /* one line */
    const char *failure;        /* what goes wrong, 1–3 sentences (printed with the results) */
    const char *fix;            /* the cure, 1–2 sentences */
    const uf_variant_desc *variants;
    int n_variants;
    const uf_axis_desc *axes;
    int n_axes;
    const uf_extra_desc *extras;
    int n_extras;
    int min_gpus;               /* 1, or more for multi-GPU scenarios (fewer visible: exit 77) */
    int repeat, quick_repeat;   /* timed steps per variant and point (defaults; --repeat overrides) */
    int warmup;                 /* warm-up steps (default; --warmup overrides) */

    /* Allocate and make inputs from ctx->seed for the point ctx->axis; set ctx->state.
     * Check sizes against device memory before allocating (uf_check_fits). */
    int (*setup)(uf_ctx *ctx);
    /* Optional: before/after the passes of one variant at one point (e.g. capture a graph,
     * start workers). begin_variant may return UF_SKIP with ctx->reason set when the variant
     * does not apply at this point (e.g. an axis it ignores is not at its default): the row
     * stays empty with that reason, and nothing is measured twice. */
    int (*begin_variant)(uf_ctx *ctx, int variant);
    int (*end_variant)(uf_ctx *ctx, int variant);
    /* One training-like step of the variant, enqueued on ctx->stream. No host synchronisation
     * inside unless the failure is the synchronisation. */
    int (*run_step)(uf_ctx *ctx, int variant);
    /* Draw fresh random inputs from `seed`, run the variant, compare with the reference
     * (host or a trusted variant). UF_OK when within the scenario's stated tolerance, UF_ERR
     * with the reason otherwise; *max_rel_err gets the error measured. */
    int (*verify)(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);
    /* Optional: fill what the scenario counts for this variant at this point: useful_flops,
     * executed_flops, min_bytes, peak_mem_bytes, extra[]. Called after the timing pass and
     * verify, between the same begin_variant/end_variant (row->step_ms is measured, and what
     * verify found is still in the state); the trace and counters passes come later. */
    int (*describe)(uf_ctx *ctx, int variant, uf_row *row);
    void (*teardown)(uf_ctx *ctx);
    /* The expectation: the claims that must hold for the reproduction to count. */
    void (*expect)(const uf_report *rep, uf_expectations *ex);
} uf_scenario;

/* Run the scenario with the command line; returns the exit code. */
int uf_main(const uf_scenario *s, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif

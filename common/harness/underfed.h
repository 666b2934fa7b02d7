/* underfed: the scenario contract. A scenario fills one uf_scenario (variants, sweep axes,
 * callbacks, expectation) and calls uf_main; the harness owns everything else: options,
 * warm-up, repetitions, the four measurement passes, statistics, results files, the table,
 * the trace export and the exit code. See docs/design.md, "The scenario contract". */
#ifndef UNDERFED_H
#define UNDERFED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "errors.h"
#include "status.h"
#include "fileutil.h"
#include "results.h"
#include "options.h"
#include "expect.h"
#include "launcher_env.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit codes and callback statuses (UF_OK, UF_ERR, UF_USAGE, UF_UNMET, UF_SKIP,
 * UF_SKIP_POINT): status.h. */

/* The check macros (UF_CUDA_OR_GOTO, UF_STATUS_OR_GOTO and the other libraries'): errors.h. */

typedef enum { UF_BROKEN = 0, UF_FIXED = 1 } uf_role;

typedef struct uf_variant_desc {
    const char *name;           /* "eager" */
    uf_role role;
    const char *summary;        /* one line: what this variant does */
} uf_variant_desc;

/* A sweep axis: its values are data. A run visits the cartesian product of all axes. What
 * values it takes is declared too (options.h: uf_axis_rule): the harness checks --sweep values
 * and the declared ones against it, so the scenario's setup receives only values in range. */
typedef struct uf_axis_desc {
    const char *name;           /* "elems" — used in --sweep elems=4K,64M and in results columns */
    const char *unit;           /* "elements" */
    const char *summary;
    uf_axis_kind kind;          /* UF_AXIS_INT, UF_AXIS_FLOAT or UF_AXIS_CHOICE */
    double min, max;            /* INT, FLOAT: inclusive bounds */
    const uf_axis_choice *choices;  /* CHOICE: names and the values the results hold */
    int n_choices;
    double default_value;       /* the value an expectation means when it does not name the axis */
    const double *values;       /* full run */
    int n_values;
    const double *quick_values; /* --quick (must hold the points the expectation names) */
    int n_quick_values;
} uf_axis_desc;

/* An axis's rule inside its uf_axis_desc initializer, every field named (C++ warns about a
 * designated initializer that leaves one out): .name = "ops", ..., UF_AXIS_INTS(1, 16), ... */
#define UF_AXIS_INTS(lo, hi) \
    .kind = UF_AXIS_INT, .min = (lo), .max = (hi), .choices = NULL, .n_choices = 0
#define UF_AXIS_FLOATS(lo, hi) \
    .kind = UF_AXIS_FLOAT, .min = (lo), .max = (hi), .choices = NULL, .n_choices = 0
#define UF_AXIS_CHOICES(list)                                                  \
    .kind = UF_AXIS_CHOICE, .min = 0, .max = 0, .choices = (list),             \
    .n_choices = (int)(sizeof(list) / sizeof((list)[0]))

/* The statistic of the timing pass's step times that every figure derived from a step time
 * uses (tflops_useful, pct_of_gemm, gbs, pct_of_copy, and the scenario's own rates such as
 * tokens_per_s): one per scenario, named in the results' metadata (`# step_stat:`). step_ms
 * stays the median whatever this says (docs/metrics.md, step_ms). */
typedef enum {
    UF_STAT_MEDIAN = 0,         /* the default: a typical step, robust to a stray slow one */
    UF_STAT_MEAN = 1            /* total time / steps: a rate over the whole pass, for steps
                                 * that alternate between two kinds (bimodal) */
} uf_step_stat;

/* A scenario-specific column (e.g. tokens_per_s), filled by describe(). */
typedef struct uf_extra_desc {
    const char *name;
    const char *unit;
    const char *summary;
} uf_extra_desc;

struct uf_scenario;
struct uf_peers;

/* The watch over a multi-GPU run (multigpu.h installs it in ctx->watch at setup): while one is
 * set, every wait of the harness polls its stream or event with a deadline and asks check
 * whether a rank is lost, instead of blocking for ever; on a loss or a hang it calls abort. */
typedef struct uf_watch {
    int (*check)(void *arg, char *why, size_t len);    /* UF_OK, or UF_ERR with why */
    void (*abort)(void *arg);   /* end every communicator: their kernels stop waiting */
    void *arg;
    double limit_s;             /* a wait longer than this is taken as a hang */
} uf_watch;

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
    int timing;                 /* 1 while the timing pass runs its timed steps (not its warm-up,
                                 * nor verify, the trace or the counters pass): for a scenario
                                 * that measures something of its own over exactly those steps
                                 * (varlen_attention: the SM clock its kernel counts); else 0 */
    const uf_ceilings *ceilings;/* the machine's measured ceilings; NaN where unknown */
    void *state;                /* the scenario's, set by setup */
    char reason[UF_REASON_LEN]; /* why a callback returned UF_SKIP / UF_USAGE / UF_ERR */
    /* Multi-GPU scenarios (min_gpus > 1): the launcher's world (launcher_env.h; process mode when a
     * launcher started one process per GPU, ctx->device is then this rank's GPU), the other
     * ranks for the whole run (rank_exchange.h; process mode only), and the watch (NULL: none) */
    const uf_launch *launch;
    struct uf_peers *peers;
    const uf_watch *watch;
} uf_ctx;

/* Wait for a stream / an event: cudaStreamSynchronize / cudaEventSynchronize, or, while
 * ctx->watch is set, a watched poll (uf_watch). UF_OK, or UF_ERR with why in ctx->reason. */
int uf_wait_stream(uf_ctx *ctx, cudaStream_t stream, const char *what);
int uf_wait_event(uf_ctx *ctx, cudaEvent_t event, const char *what);
/* For a setup that calibrates something on its own step (host_sync's host work, starved_input's
 * tokenizing): `enqueue` (one step on stream) back to back for at least warmup_ms of wall time,
 * in batches of `batch` steps each waited for (the host's clock then says how long the GPU has
 * been at it: its clocks settle under the load), then `steps` more, each between two events;
 * their median into *median_ms. UF_OK, or the first failure's status (reported, or its reason
 * in ctx->reason). */
int uf_calibrate_step_ms(uf_ctx *ctx, cudaStream_t stream,
                         int (*enqueue)(void *arg, cudaStream_t stream), void *arg,
                         double warmup_ms, int batch, int steps, double *median_ms);
/* For a teardown: drain ctx->stream before freeing what it used; a failure is reported on
 * stderr and the teardown goes on (it frees what it can). */
void uf_teardown_drain(uf_ctx *ctx);

/* Value of the named axis at the current point (NaN if the scenario has no such axis). */
double uf_axis(const uf_ctx *ctx, const char *name);

/* For begin_variant of a variant that does not use the named axis, so is measured once, at the
 * axis's default: UF_OK at a point where the axis is at its default (or the scenario has no
 * such axis); elsewhere UF_SKIP with "VARIANT does not depend on AXIS: measured at
 * AXIS=DEFAULT only" in ctx->reason. */
int uf_only_at_default(uf_ctx *ctx, int variant, const char *axis);

/* Record why, print it on stderr, and return status: `return uf_fail(ctx, UF_USAGE, "...")`. */
int uf_fail(uf_ctx *ctx, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The row's step time in the scenario's declared statistic (step_ms or step_ms_mean), in ms:
 * what describe() divides by for a rate, so that its figures and the harness's agree. */
double uf_step_ms(const uf_ctx *ctx, const uf_row *row);

/* UF_OK when `bytes` fit in the device's free memory (cudaMemGetInfo, with a 5 % margin);
 * otherwise UF_USAGE with the memory it would need in the reason. Call before allocating. */
int uf_check_fits(uf_ctx *ctx, size_t bytes, const char *what);

/* ---- expectations ----------------------------------------------------------------------
 * A scenario's expect() makes its claims with uf_find, uf_value, uf_axis_values, uf_expect,
 * uf_expect_metric, uf_expect_ratio and uf_expect_full_run: see expect.h (the plain-C engine
 * that judges them). Each claim is held, FAILED or n/a with the reason; names that do not
 * exist are caught before any GPU work (and by `NAME --check-claims`, a unit test). */

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
    /* The least wall time the timing pass warms up for, in ms (full run and --quick alike; 0:
     * none, the default): after the warm-up steps, whole steps more until this long has passed
     * since the first, so that the GPU's clock settles to the workload's own power and
     * temperature rather than those of what ran before. --warmup N sets the steps and this still
     * applies; --warmup 0 means no warm-up at all; off in process mode (every rank runs the same
     * steps). See warmup.h. */
    double warmup_min_ms;
    uf_step_stat step_stat;     /* the step statistic of every derived figure (default median) */

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

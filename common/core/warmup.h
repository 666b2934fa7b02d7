/* underfed: the timing pass's warm-up. A whole number of steps, and optionally a least wall
 * time: a GPU's clock follows its power and temperature, which what ran just before sets; a
 * few milliseconds of warm-up do not let the clock settle to the workload's own state (seen
 * on the H200 by varlen_attention: its README, "How steady the first claim is"). Plain C, no
 * CUDA, unit-tested (tests/unit/test_warmup.c); the harness runs the steps it asks for. */
#ifndef UF_WARMUP_H
#define UF_WARMUP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    UF_WARMUP_MAX_BATCH = 1 << 20   /* the most steps one round enqueues before a wait */
};

/* The warm-up of every timing pass of a run. */
typedef struct uf_warmup {
    int steps;          /* at least this many steps (0: none) */
    double min_ms;      /* and at least this much wall time from the first warm-up step; 0: no
                         * least time */
    double asked_ms;    /* the scenario's least time, also where min_ms is 0 (see off) */
    const char *off;    /* why the scenario's least time is not applied (NULL: it is, or it is
                         * 0) */
} uf_warmup;

/* The run's warm-up from the scenario's steps (<= 0: default_steps) and least time (ms, <= 0
 * or NaN: none), --warmup (-1: not given; N >= 1 sets the steps and the least time still
 * applies; 0 asks for no warm-up at all, so no least time either), and fixed_steps (1: every
 * rank of a multi-process run must run the same steps, so no warm-up may be lengthened by
 * time, which differs between ranks). */
void uf_warmup_plan(int scenario_steps, double scenario_min_ms, int default_steps, int opt_steps,
                    int fixed_steps, uf_warmup *out);

/* How many more warm-up steps to enqueue, after `done` steps in elapsed_ms of wall time since
 * the warm-up began (the steps done are complete: the caller waited for them); 0: the warm-up
 * is over, time the steps. First the planned steps; then, while less than min_ms has passed,
 * enough steps to fill the time left at the mean step time so far, but at most as many as
 * were done (a round at most doubles the warm-up, so a first estimate that is too low costs
 * at most twice the time) and at least one. A NaN or negative elapsed_ms ends the warm-up. */
int uf_warmup_next(const uf_warmup *w, int done, double elapsed_ms);

/* The warm-up for the run's header line: "3" (no least time: as before there was one),
 * "3 steps and >= 1000 ms", or "0 (the scenario's >= 1000 ms off: WHY)". */
void uf_warmup_describe(const uf_warmup *w, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif

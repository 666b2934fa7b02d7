/* allreduce_overlap: jobs on every rank, bracketed multi-GPU steps, setup and the state's
 * release (allreduce_overlap_runner.cu). */
#ifndef AR_RUNNER_H
#define AR_RUNNER_H

#include "underfed.h"
#include "allreduce_overlap_state.h"

/* The scenario's setup, with the story's schedule: the point's shape and knobs, the ranks (one
 * per GPU of this process) and their communicators, the inputs, and the figures describe()
 * reports, timed at setup; ctx->state is the ar_state. */
int ar_setup_schedule(uf_ctx *ctx, ar_enqueue_fn enqueue);

/* Run a job on its ranks (runner: abort on any rank's failure, naming it). */
int run_job(uf_ctx *ctx, ar_state *st, ar_job job, const char *what);

/* Wait for ctx->stream (hence every rank's step), watched. */
int wait_ctx_stream(uf_ctx *ctx, ar_state *st, const char *what);

/* One bracketed multi-GPU step of `kind`: begin event on ctx->stream, every rank enqueues
 * (waiting on it), ctx->stream waits on every rank's end event. `mark` as in ar_job. */
int enqueue_bracketed(uf_ctx *ctx, ar_state *st, int kind, int variant, int mark,
                      const char *what);

/* Releases the ranks, the runner and the state (NULL: nothing). */
void destroy_state(uf_ctx *ctx, ar_state *st);

#endif

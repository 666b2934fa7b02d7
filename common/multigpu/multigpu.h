/* The multi-GPU runner (nccl-tests' common.cu, for the scenario contract): one worker thread
 * per GPU this process drives, their communicators, jobs posted to every rank, abort on any
 * rank's failure, and watched waits. A scenario keeps only its schedule: what each rank
 * enqueues, and what it overlaps with what.
 *
 * Thread mode: one process drives ctx->n_gpus GPUs (ranks 0..n-1 on devices ctx->device...).
 * Process mode (ctx->launch from torchrun, Slurm or Open MPI; launcher_env.h): this process drives
 * one GPU as launch->rank of launch->world_size, the NCCL unique id reaching it through
 * ctx->peers (TCP or a file; rank_exchange.h).
 *
 * Watched waits: no wait of any rank blocks for ever. Every stream wait polls the stream with
 * a deadline (UF_MG_WAIT_LIMIT_S), NCCL's asynchronous error of the rank's communicators, and,
 * in process mode, the other ranks' liveness (rank_exchange.h): a lost rank ends the run, its
 * survivors abort every communicator (ncclCommAbort: NCCL's kernels stop waiting) and fail naming
 * it.
 * The harness's own waits go through the same check (ctx->watch, set by uf_mg_open). */
#ifndef UF_MULTIGPU_H
#define UF_MULTIGPU_H

#include <pthread.h>
#include <stdint.h>

#include <nccl.h>

#include "underfed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reports a failed NCCL call for UF_NCCL_OR_GOTO (errors.h): NCCL's message for the code and its
 * last error text. */
void uf_report_nccl_failure(const char *file, int line, const char *expr, ncclResult_t r);

enum {
    UF_MG_MAX_COMMS = 2,        /* communicators per rank: [0] uf_mg_init_comms, [1] a split */
    UF_MG_WAIT_LIMIT_S = 300,   /* a job or a wait that takes longer is taken as a hang */
    UF_MG_STOP_S = 2,           /* after a rank is lost: how long the workers get to stop */
    UF_MG_GRACE_S = 10          /* after ncclCommAbort: how long they get to come back */
};

struct uf_mg;

/* One rank this process drives. */
typedef struct uf_mg_rank {
    struct uf_mg *mg;
    int local;                  /* index among this process's ranks */
    int rank;                   /* global NCCL rank */
    int device;
    ncclComm_t comm[UF_MG_MAX_COMMS];   /* NULL where not made, or aborted */
    void *user;                 /* the scenario's per-rank state */
    char reason[UF_REASON_LEN]; /* why its last job failed */
    /* the runner's */
    pthread_t thread;
    uint64_t done_seq;          /* last job finished (under the board's lock) */
    int status;                 /* its status */
    int stopped;                /* it failed only because another rank had failed */
} uf_mg_rank;

/* A job: runs on a rank's worker thread, its device current. UF_OK, or a status with
 * rk->reason set (or a failure already reported by a check macro). */
typedef int (*uf_mg_job_fn)(uf_mg_rank *rk, void *arg);

typedef struct uf_mg {
    uf_ctx *ctx;
    int proc_mode;              /* one process per GPU */
    int n_ranks;                /* global */
    int n_local;                /* ranks (GPUs) this process drives */
    uf_mg_rank *ranks;
    /* the runner's: the job board (the harness thread posts, the workers run) */
    pthread_mutex_t mu;
    pthread_cond_t job_cv, done_cv;
    int board_ready;
    uint64_t job_seq;
    uf_mg_job_fn job_fn;
    void *job_arg;
    int job_target;             /* local index of the one worker that runs it, -1: all */
    int n_done;
    int n_threads;              /* workers started */
    int stop;                   /* atomic: workers abandon their waits */
    int failed;                 /* communicators aborted: every later job fails */
    int lost;                   /* a worker never came back: leave its resources alone */
    char lost_why[UF_REASON_LEN];   /* a lost rank seen by the harness thread's watch */
    uf_watch watch;
} uf_mg;

/* Plan the ranks (thread or process mode), start a worker per local GPU and install the watch
 * in ctx. UF_SKIP with fewer than 2 GPUs in thread mode. *out is set even on failure (NULL when
 * nothing was made): give it to uf_mg_close. */
int uf_mg_open(uf_ctx *ctx, uf_mg **out);

/* Every rank's comm[0], NCCL's defaults: one unique id (process mode: through ctx->peers),
 * ncclCommInitRankConfig on each worker. */
int uf_mg_init_comms(uf_mg *mg);

/* comm[slot] split from comm[0] on every rank (same ranks, same order), with `ctas` CTAs per
 * collective (uf_mg_config). */
int uf_mg_split(uf_mg *mg, int slot, int ctas);

/* A communicator's configuration: blocking; with ctas > 0, exactly that many CTAs per
 * collective (minCTAs = maxCTAs); its own channels and buffers (splitShare = 0). */
ncclConfig_t uf_mg_config(int ctas);

/* Run fn on every rank (target -1) or on local rank `target`, and wait until each has done it.
 * On any failure or hang every communicator is aborted and UF_ERR returned, naming the rank
 * that failed (or was lost) and why, in ctx->reason. */
int uf_mg_run(uf_mg *mg, uf_mg_job_fn fn, void *arg, int target, const char *what);

/* On a worker: wait for stream s, watched (module comment). UF_OK, or UF_ERR with rk->reason. */
int uf_mg_wait(uf_mg_rank *rk, cudaStream_t s, const char *what);

/* Stop the workers, finalize and destroy the communicators, remove the watch. 1 when the
 * scenario may free its per-rank resources; 0 when a worker never came back (leave them). */
int uf_mg_close(uf_mg *mg);

#ifdef __cplusplus
}
#endif
#endif

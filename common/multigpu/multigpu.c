/* The multi-GPU runner (multigpu.h): workers, communicators, abort, watched waits. */
#include "multigpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "rank_exchange.h"

enum { POLL_NS = 100000, BOARD_SLICE_MS = 20 };

void uf_report_nccl_failure(const char *file, int line, const char *expr, ncclResult_t r)
{
    char m[UF_REASON_LEN];
    snprintf(m, sizeof m, "%s (%s)", ncclGetErrorString(r), ncclGetLastError(NULL));
    uf_report_failure(file, line, expr, m);
}

static void nap(void)
{
    struct timespec ts = {0, POLL_NS};
    nanosleep(&ts, NULL);
}

ncclConfig_t uf_mg_config(int ctas)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    config.splitShare = 0;
    if (ctas > 0) {
        config.minCTAs = ctas;
        config.maxCTAs = ctas;
    }
    return config;
}

/* ---- the watch: lost ranks and NCCL's asynchronous errors ------------------------------- */

/* UF_OK, or UF_ERR with why: another process's rank is lost (peers), or one of `rk`'s
 * communicators (all local ranks' when rk is NULL) reports an asynchronous error. */
static int check_ranks(uf_mg *mg, const uf_mg_rank *rk, char *why, size_t len)
{
    if (mg->proc_mode && mg->ctx->peers && uf_peers_check(mg->ctx->peers, why, len) != 0)
        return UF_ERR;
    for (int i = 0; i < mg->n_local; i++) {
        const uf_mg_rank *r = &mg->ranks[i];
        if (rk && r != rk)
            continue;
        for (int c = 0; c < UF_MG_MAX_COMMS; c++) {
            ncclResult_t async = ncclSuccess;
            if (!r->comm[c] || ncclCommGetAsyncError(r->comm[c], &async) != ncclSuccess ||
                async == ncclSuccess || async == ncclInProgress)
                continue;
            snprintf(why, len, "NCCL reports an asynchronous error on rank %d: %s", r->rank,
                     ncclGetErrorString(async));
            return UF_ERR;
        }
    }
    return UF_OK;
}

static int watch_check(void *arg, char *why, size_t len)
{
    return check_ranks((uf_mg *)arg, NULL, why, len);
}

/* Abort one communicator (if any) and forget it. */
static void abort_comm(ncclComm_t *comm)
{
    ncclResult_t r;
    if (!*comm)
        return;
    r = ncclCommAbort(*comm);
    if (r != ncclSuccess)
        uf_report_failure(__FILE__, __LINE__, "ncclCommAbort(*comm)", ncclGetErrorString(r));
    *comm = NULL;
}

/* Abort every communicator, the splits first: in-flight NCCL kernels exit, so no rank (here or
 * in another process) waits for ever on one that failed. Only called while no worker is inside
 * NCCL, except as the last resort after a hang. */
static void abort_all(uf_mg *mg)
{
    __atomic_store_n(&mg->stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < mg->n_local; i++)
        for (int c = UF_MG_MAX_COMMS - 1; c >= 0; c--)
            abort_comm(&mg->ranks[i].comm[c]);
    mg->failed = 1;
}

static void watch_abort(void *arg)
{
    abort_all((uf_mg *)arg);
}

int uf_mg_wait(uf_mg_rank *rk, cudaStream_t s, const char *what)
{
    double deadline = uf_mono_s() + UF_MG_WAIT_LIMIT_S;
    char why[UF_REASON_LEN / 2];
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess)
            return UF_OK;
        if (e != cudaErrorNotReady) {
            snprintf(rk->reason, sizeof rk->reason, "%s: %s", what, cudaGetErrorString(e));
            return UF_ERR;
        }
        if (__atomic_load_n(&rk->mg->stop, __ATOMIC_ACQUIRE)) {
            rk->stopped = 1;
            snprintf(rk->reason, sizeof rk->reason,
                     "stopped waiting for %s: another rank failed", what);
            return UF_ERR;
        }
        if (check_ranks(rk->mg, rk, why, sizeof why) != UF_OK) {
            snprintf(rk->reason, sizeof rk->reason, "waiting for %s: %s", what, why);
            return UF_ERR;
        }
        if (uf_mono_s() > deadline) {
            snprintf(rk->reason, sizeof rk->reason, "%s did not finish within %d s (a rank "
                     "hung?)", what, UF_MG_WAIT_LIMIT_S);
            return UF_ERR;
        }
        nap();
    }
}

/* ---- the workers and the board ---------------------------------------------------------- */

/* The worker: wait for a job, run it if it is for this rank, report, until fn is NULL (quit). */
static void *rank_thread(void *arg)
{
    uf_mg_rank *rk = (uf_mg_rank *)arg;
    uf_mg *mg = rk->mg;
    uint64_t seen = 0;
    int device_status = UF_OK;
    cudaError_t e = cudaSetDevice(rk->device);
    if (e != cudaSuccess) {
        uf_report_failure(__FILE__, __LINE__, "cudaSetDevice(rk->device)", cudaGetErrorString(e));
        device_status = UF_ERR;
    }
    for (;;) {
        uf_mg_job_fn fn;
        void *job_arg;
        int target, status = UF_OK;
        pthread_mutex_lock(&mg->mu);
        while (mg->job_seq == seen)
            pthread_cond_wait(&mg->job_cv, &mg->mu);
        seen = mg->job_seq;
        fn = mg->job_fn;
        job_arg = mg->job_arg;
        target = mg->job_target;
        pthread_mutex_unlock(&mg->mu);

        rk->reason[0] = '\0';
        rk->stopped = 0;
        if (fn && (target < 0 || target == rk->local))
            status = device_status != UF_OK ? device_status : fn(rk, job_arg);
        if (status != UF_OK && rk->reason[0] == '\0')
            snprintf(rk->reason, sizeof rk->reason, "a CUDA, cuBLAS or NCCL call failed (above)");

        pthread_mutex_lock(&mg->mu);
        rk->status = status;
        rk->done_seq = seen;
        mg->n_done++;
        pthread_cond_broadcast(&mg->done_cv);
        pthread_mutex_unlock(&mg->mu);
        if (!fn)
            break;
    }
    return NULL;
}

static int any_failed_locked(const uf_mg *mg)
{
    for (int i = 0; i < mg->n_threads; i++)
        if (mg->ranks[i].done_seq == mg->job_seq && mg->ranks[i].status != UF_OK)
            return 1;
    return 0;
}

/* Wait (lock held) until every worker finished the current job or limit_s passed, polling the
 * watch: a failed worker or a lost rank makes the others stop waiting on their GPUs (and a
 * lost rank shortens the wait to UF_MG_STOP_S). 1 when all came back. */
static int wait_workers_locked(uf_mg *mg, double limit_s)
{
    double deadline = uf_mono_s() + limit_s;
    while (mg->n_done < mg->n_threads) {
        struct timespec slice;
        if (any_failed_locked(mg))
            __atomic_store_n(&mg->stop, 1, __ATOMIC_RELEASE);
        if (!mg->lost_why[0] && mg->proc_mode && mg->ctx->peers &&
            uf_peers_check(mg->ctx->peers, mg->lost_why, sizeof mg->lost_why) != 0) {
            __atomic_store_n(&mg->stop, 1, __ATOMIC_RELEASE);
            if (deadline > uf_mono_s() + UF_MG_STOP_S)
                deadline = uf_mono_s() + UF_MG_STOP_S;
        }
        if (uf_mono_s() > deadline)
            return 0;
        clock_gettime(CLOCK_REALTIME, &slice);
        uf_timespec_add_ns(&slice, BOARD_SLICE_MS * 1000000ull);
        (void)pthread_cond_timedwait(&mg->done_cv, &mg->mu, &slice);
    }
    return 1;
}

/* The rank whose failure made the job fail (not one that merely stopped waiting), or NULL. */
static const uf_mg_rank *first_failure(const uf_mg *mg)
{
    const uf_mg_rank *found = NULL;
    for (int i = 0; i < mg->n_threads; i++) {
        const uf_mg_rank *rk = &mg->ranks[i];
        if (rk->status != UF_OK && (!found || (found->stopped && !rk->stopped)))
            found = rk;
    }
    return found;
}

/* Post a job (fn NULL: quit) and wait for every worker. 1 when all came back. */
static int post_and_wait(uf_mg *mg, uf_mg_job_fn fn, void *arg, int target, double limit_s)
{
    int all_back;
    pthread_mutex_lock(&mg->mu);
    mg->job_fn = fn;
    mg->job_arg = arg;
    mg->job_target = target;
    mg->n_done = 0;
    mg->job_seq++;
    pthread_cond_broadcast(&mg->job_cv);
    all_back = wait_workers_locked(mg, limit_s);
    pthread_mutex_unlock(&mg->mu);
    return all_back;
}

int uf_mg_run(uf_mg *mg, uf_mg_job_fn fn, void *arg, int target, const char *what)
{
    const uf_mg_rank *failed;
    if (mg->failed)
        return uf_fail(mg->ctx, UF_ERR, "%s: the communicators were aborted after an earlier "
                       "failure", what);
    if (!post_and_wait(mg, fn, arg, target, UF_MG_WAIT_LIMIT_S)) {
        /* someone is stuck inside a CUDA or NCCL call: aborting is NCCL's documented way out */
        int all_back;
        abort_all(mg);
        pthread_mutex_lock(&mg->mu);
        all_back = wait_workers_locked(mg, UF_MG_GRACE_S);
        pthread_mutex_unlock(&mg->mu);
        mg->lost = !all_back;
        if (mg->lost_why[0])
            return uf_fail(mg->ctx, UF_ERR, "%s: %s; every communicator was aborted%s", what,
                           mg->lost_why, all_back ? "" : " and a worker thread is still stuck");
        return uf_fail(mg->ctx, UF_ERR, "%s: a rank did not finish within %d s; every "
                       "communicator was aborted%s", what, UF_MG_WAIT_LIMIT_S,
                       all_back ? "" : " and a worker thread is still stuck");
    }
    failed = first_failure(mg);
    if (!failed)
        return UF_OK;
    abort_all(mg);
    if (mg->lost_why[0])    /* the workers stopped because a rank elsewhere was lost */
        return uf_fail(mg->ctx, UF_ERR, "%s: %s; every communicator was aborted", what,
                       mg->lost_why);
    return uf_fail(mg->ctx, UF_ERR, "%s failed on rank %d (device %d): %s; every communicator "
                   "was aborted", what, failed->rank, failed->device, failed->reason);
}

/* ---- communicators ---------------------------------------------------------------------- */

typedef struct init_job {
    ncclUniqueId id;
    int slot, ctas;
} init_job;

static int init_rank_comm(uf_mg_rank *rk, void *arg)
{
    const init_job *job = (const init_job *)arg;
    ncclConfig_t config = uf_mg_config(0);
    int rc = UF_OK;
    UF_NCCL_OR_GOTO(rc, ncclCommInitRankConfig(&rk->comm[0], rk->mg->n_ranks, job->id, rk->rank,
                                               &config), out);
out:
    return rc;
}

int uf_mg_init_comms(uf_mg *mg)
{
    init_job job;
    char err[UF_REASON_LEN];
    int rc = UF_OK;
    memset(&job, 0, sizeof job);
    if (!mg->proc_mode || mg->ranks[0].rank == 0)
        UF_NCCL_OR_GOTO(rc, ncclGetUniqueId(&job.id), out);
    if (mg->proc_mode &&
        uf_peers_share(mg->ctx->peers, &job.id, sizeof job.id, UF_MG_WAIT_LIMIT_S, err,
                       sizeof err) != 0)
        return uf_fail(mg->ctx, UF_ERR, "sharing the NCCL unique id: %s", err);
    rc = uf_mg_run(mg, init_rank_comm, &job, -1, "creating the NCCL communicators");
out:
    return rc;
}

static int split_rank_comm(uf_mg_rank *rk, void *arg)
{
    const init_job *job = (const init_job *)arg;
    ncclConfig_t config = uf_mg_config(job->ctas);
    int rc = UF_OK;
    UF_NCCL_OR_GOTO(rc, ncclCommSplit(rk->comm[0], 0, rk->rank, &rk->comm[job->slot], &config),
                    out);
out:
    return rc;
}

int uf_mg_split(uf_mg *mg, int slot, int ctas)
{
    init_job job;
    memset(&job, 0, sizeof job);
    if (slot < 1 || slot >= UF_MG_MAX_COMMS)
        return uf_fail(mg->ctx, UF_ERR, "communicator slot %d outside [1, %d)", slot,
                       UF_MG_MAX_COMMS);
    job.slot = slot;
    job.ctas = ctas;
    return uf_mg_run(mg, split_rank_comm, &job, -1, "splitting the NCCL communicators");
}

/* Finalize (collective: every rank's worker at once) and destroy each rank's communicators,
 * the splits first; aborted ones are already gone. */
static int finalize_rank_comms(uf_mg_rank *rk, void *arg)
{
    (void)arg;
    for (int c = UF_MG_MAX_COMMS - 1; c >= 0; c--) {
        ncclResult_t r;
        if (!rk->comm[c])
            continue;
        r = ncclCommFinalize(rk->comm[c]);
        if (r != ncclSuccess)
            uf_report_nccl_failure(__FILE__, __LINE__, "ncclCommFinalize", r);
        r = ncclCommDestroy(rk->comm[c]);
        if (r != ncclSuccess)
            uf_report_nccl_failure(__FILE__, __LINE__, "ncclCommDestroy", r);
        rk->comm[c] = NULL;
    }
    return UF_OK;
}

/* ---- open and close --------------------------------------------------------------------- */

/* Thread mode: ranks 0..n_gpus-1 on devices ctx->device...; process mode: launch->rank alone,
 * on ctx->device (the harness chose it from the local rank). */
static int plan_ranks(uf_ctx *ctx, uf_mg *mg, int *first_rank)
{
    if (ctx->launch && ctx->launch->mode == UF_LAUNCH_PROCESSES) {
        mg->proc_mode = 1;
        mg->n_ranks = ctx->launch->world_size;
        mg->n_local = 1;
        *first_rank = ctx->launch->rank;
        ctx->n_gpus = 1;    /* this process drives one GPU: the harness records that one's */
        return UF_OK;
    }
    if (ctx->n_gpus < 2)
        return uf_fail(ctx, UF_SKIP, "a multi-GPU run needs at least 2 GPUs; %d given",
                       ctx->n_gpus);
    mg->n_local = mg->n_ranks = ctx->n_gpus;
    *first_rank = 0;
    return UF_OK;
}

static int init_board(uf_mg *mg)
{
    if (pthread_mutex_init(&mg->mu, NULL) != 0)
        return uf_fail(mg->ctx, UF_ERR, "pthread_mutex_init failed");
    if (pthread_cond_init(&mg->job_cv, NULL) != 0) {
        pthread_mutex_destroy(&mg->mu);
        return uf_fail(mg->ctx, UF_ERR, "pthread_cond_init failed");
    }
    if (pthread_cond_init(&mg->done_cv, NULL) != 0) {
        pthread_cond_destroy(&mg->job_cv);
        pthread_mutex_destroy(&mg->mu);
        return uf_fail(mg->ctx, UF_ERR, "pthread_cond_init failed");
    }
    mg->board_ready = 1;
    return UF_OK;
}

static int start_workers(uf_mg *mg)
{
    for (int i = 0; i < mg->n_local; i++) {
        int e = pthread_create(&mg->ranks[i].thread, NULL, rank_thread, &mg->ranks[i]);
        if (e != 0)
            return uf_fail(mg->ctx, UF_ERR, "pthread_create for rank %d: %s",
                           mg->ranks[i].rank, strerror(e));
        mg->n_threads++;
    }
    return UF_OK;
}

int uf_mg_open(uf_ctx *ctx, uf_mg **out)
{
    uf_mg *mg = (uf_mg *)calloc(1, sizeof *mg);
    int first_rank = 0, rc = UF_OK;
    *out = mg;
    if (!mg)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    mg->ctx = ctx;
    UF_STATUS_OR_GOTO(rc, plan_ranks(ctx, mg, &first_rank), out);
    mg->ranks = (uf_mg_rank *)calloc((size_t)mg->n_local, sizeof *mg->ranks);
    if (!mg->ranks)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    for (int i = 0; i < mg->n_local; i++) {
        mg->ranks[i].mg = mg;
        mg->ranks[i].local = i;
        mg->ranks[i].rank = first_rank + i;
        mg->ranks[i].device = ctx->device + i;
    }
    UF_STATUS_OR_GOTO(rc, init_board(mg), out);
    UF_STATUS_OR_GOTO(rc, start_workers(mg), out);
    mg->watch = (uf_watch){.check = watch_check, .abort = watch_abort, .arg = mg,
                           .limit_s = UF_MG_WAIT_LIMIT_S};
    ctx->watch = &mg->watch;
out:
    return rc;
}

int uf_mg_close(uf_mg *mg)
{
    int safe;
    if (!mg)
        return 1;
    if (mg->ctx->watch == &mg->watch)
        mg->ctx->watch = NULL;
    if (mg->n_threads > 0 && !mg->lost && !mg->failed &&
        !post_and_wait(mg, finalize_rank_comms, NULL, -1, UF_MG_WAIT_LIMIT_S))
        abort_all(mg);
    if (mg->n_threads > 0 && !mg->lost)
        mg->lost = !post_and_wait(mg, NULL, NULL, -1, UF_MG_GRACE_S);
    if (mg->lost)
        return 0;   /* a stuck worker may still use the runner: leave it */
    for (int i = 0; i < mg->n_threads; i++)
        pthread_join(mg->ranks[i].thread, NULL);
    safe = 1;
    if (mg->board_ready) {
        pthread_cond_destroy(&mg->done_cv);
        pthread_cond_destroy(&mg->job_cv);
        pthread_mutex_destroy(&mg->mu);
    }
    free(mg->ranks);
    free(mg);
    return safe;
}

/* allreduce_overlap: around the schedule: a rank's fill, checksum and host reference (verify),
 * its jobs on the multi-GPU runner (common/multigpu/multigpu.h: worker threads, communicators,
 * abort, watched waits), the timing of jobs at setup, and setup (plan, per-GPU resources) and
 * teardown. The schedule itself (rank_enqueue) is the story's, handed to setup. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "multigpu.h"
#include "stats.h"
#include "timing.h"
#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "uf_cublas.h"
#include "allreduce_overlap_kernels.h"
#include "allreduce_overlap_state.h"
#include "allreduce_overlap_rank.h"
#include "allreduce_overlap_runner.h"

#define AR_TIMED_REPS_QUICK 5
#define AR_WARMUP_REPS 2

/* Inputs of this rank from `seed`; gradients poisoned (0xFFFF is a bf16 NaN) so that an element
 * no GEMM wrote fails verification. */
static int rank_fill_all(ar_rank *rk, uint64_t seed)
{
    const ar_shape *sh = &rk->st->shape;
    int rc = UF_OK;
    for (int j = 0; j < sh->layers; j++)
        UF_STATUS_OR_GOTO(rc, rank_fill_layer(rk, seed, rk->rank, j), out);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(rk->grads, 0xFF, sh->grad_bytes, rk->compute_stream),
                    out);
    rc = rank_wait(rk, rk->compute_stream, "filling the inputs");
out:
    return rc;
}

/* Checksum of the reduced gradients, and its max and min over all ranks (NCCL): the ranks hold
 * bitwise-identical results iff max == min. */
static int rank_checksum(ar_rank *rk)
{
    const ar_shape *sh = &rk->st->shape;
    unsigned long long host[3] = {0, 0, 0};
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(rk->checksum_dev, 0, sizeof host, rk->compute_stream),
                    out);
    ar_checksum_kernel<<<1024, AR_THREADS, 0, rk->compute_stream>>>(
        (const unsigned short *)rk->grads, sh->grad_elems, rk->checksum_dev);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_NCCL_OR_GOTO(rc, ncclAllReduce(rk->checksum_dev, rk->checksum_dev + 1, 1, ncclUint64,
                                      ncclMax, rk->mg->comm[AR_COMM_DEFAULT],
                                      rk->compute_stream), out);
    UF_NCCL_OR_GOTO(rc, ncclAllReduce(rk->checksum_dev, rk->checksum_dev + 2, 1, ncclUint64,
                                      ncclMin, rk->mg->comm[AR_COMM_DEFAULT],
                                      rk->compute_stream), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(host, rk->checksum_dev, sizeof host,
                                        cudaMemcpyDeviceToHost, rk->compute_stream), out);
    UF_STATUS_OR_GOTO(rc, rank_wait(rk, rk->compute_stream, "the checksum all-reduce"), out);
    rk->check.checksum = host[0];
    rk->check.checksum_max = host[1];
    rk->check.checksum_min = host[2];
out:
    return rc;
}

/* Host check of sampled dW elements of one (rank, layer) contribution against dYᵀ·X computed
 * exactly from the input formula. */
static void spot_check(const ar_shape *sh, uint64_t seed, int rank, int slot,
                       const uint16_t *contrib, ar_check *ck)
{
    uint64_t kx = ar_input_key(seed, rank, slot, TENSOR_X);
    uint64_t kdy = ar_input_key(seed, rank, slot, TENSOR_DY);
    for (int s = 0; s < AR_SPOT_SAMPLES; s++) {
        uint64_t h = ar_mix64(kx ^ kdy ^ (uint64_t)s);
        size_t row = (size_t)(h % (uint64_t)sh->rows);            /* output feature */
        size_t col = (size_t)((h >> 32) % (uint64_t)sh->cols);    /* input feature */
        long long dot = 0, dot_abs = 0;
        for (size_t t = 0; t < (size_t)sh->tokens; t++) {
            long long p = (long long)ar_input_int(kdy, t * sh->rows + row) *
                          ar_input_int(kx, t * sh->cols + col);
            dot += p;
            dot_abs += p < 0 ? -p : p;
        }
        double want = (double)dot / 4096.0, scale = (double)dot_abs / 4096.0;
        double got = uf_bf16_value(contrib[row * sh->cols + col]);
        if (!(fabs(got - want) <= AR_TOLERANCE * scale))
            ck->n_spot_bad++;
    }
}

/* Compare one slot of the reduced gradients with the host sum of every rank's contribution:
 * max_rel_err (verify.h) of the slot. The check keeps the largest over the slots, and the
 * first slot out of tolerance with its element (first non-finite, or largest difference). */
static void compare_slot(const ar_shape *sh, int slot, const uint16_t *reduced, const float *sum,
                         ar_check *ck)
{
    uf_err err;
    uf_err_init(&err);
    for (size_t e = 0; e < sh->layer_elems; e++)
        uf_err_add(&err, e, uf_bf16_value(reduced[e]), sum[e]);
    const double rel = uf_err_value(&err);
    ck->n_nan += err.nonfinite;
    if (rel > ck->max_err)
        ck->max_err = rel;
    if (rel > AR_TOLERANCE) {
        if (ck->n_bad == 0) {
            ck->bad_slot = slot;
            ck->bad_index = err.nonfinite > 0 ? err.first_nonfinite : err.worst;
            ck->bad_got = uf_bf16_value(reduced[ck->bad_index]);
            ck->bad_want = sum[ck->bad_index];
        }
        ck->n_bad++;
    }
}

/* Copy one gradient slot to host memory and wait. */
static int rank_copy_slot(ar_rank *rk, int slot, uint16_t *host)
{
    const ar_shape *sh = &rk->st->shape;
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(host, rk->grads + (size_t)slot * sh->layer_elems,
                                        sh->layer_elems * sizeof(uint16_t),
                                        cudaMemcpyDeviceToHost, rk->compute_stream), out);
    rc = rank_wait(rk, rk->compute_stream, "a gradient copy to the host");
out:
    return rc;
}

/* The reference, layer by layer: save this rank's reduced slot, then recompute every rank's
 * contribution to it here (inputs are a function of (seed, rank), so any GPU can), sum them on
 * the host in fp32 and compare. Afterwards this rank's own inputs are restored. */
static int rank_reference(ar_rank *rk, uint64_t seed)
{
    ar_state *st = rk->st;
    const ar_shape *sh = &st->shape;
    uint16_t *reduced = NULL, *contrib = NULL;
    float *sum = NULL;
    size_t slot_bytes = sh->layer_elems * sizeof(uint16_t);
    int rc = UF_OK;

    /* the checksum fields stay: the checksum job ran just before */
    rk->check.max_err = 0.0;
    rk->check.n_bad = rk->check.n_nan = rk->check.n_spot_bad = 0;
    rk->check.bad_slot = -1;
    UF_CUDA_OR_GOTO(rc, cudaMallocHost((void **)&reduced, slot_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMallocHost((void **)&contrib, slot_bytes), out_free_reduced);
    sum = (float *)malloc(sh->layer_elems * sizeof(float));
    if (!sum) {
        snprintf(rk->mg->reason, sizeof rk->mg->reason, "out of host memory for the reference");
        rc = UF_ERR;
        goto out_free_sums;
    }
    for (int j = 0; j < sh->layers; j++) {
        UF_STATUS_OR_GOTO(rc, rank_copy_slot(rk, j, reduced), out_free_sums);
        memset(sum, 0, sh->layer_elems * sizeof(float));
        for (int r = 0; r < st->n_ranks; r++) {
            UF_STATUS_OR_GOTO(rc, rank_fill_layer(rk, seed, r, j), out_free_sums);
            UF_STATUS_OR_GOTO(rc, rank_layer_gemm(rk, rk->cublas, j), out_free_sums);
            UF_STATUS_OR_GOTO(rc, rank_copy_slot(rk, j, contrib), out_free_sums);
            spot_check(sh, seed, r, j, contrib, &rk->check);
            for (size_t e = 0; e < sh->layer_elems; e++)
                sum[e] += uf_bf16_value(contrib[e]);
        }
        compare_slot(sh, j, reduced, sum, &rk->check);
    }
    rc = rank_fill_all(rk, seed);
out_free_sums:
    free(sum);
    cudaFreeHost(contrib);
out_free_reduced:
    cudaFreeHost(reduced);
out:
    return rc;
}

static int rank_run_job(ar_rank *rk, const ar_job *job)
{
    switch (job->kind) {
    case JOB_FILL:
        return rank_fill_all(rk, job->seed);
    case JOB_STEP:
    case JOB_BACKWARD:
    case JOB_ALLREDUCE:
        return rk->st->enqueue(rk, job);
    case JOB_CHECKSUM:
        return rank_checksum(rk);
    case JOB_REFERENCE:
        return rank_reference(rk, job->seed);
    default:
        return UF_OK;
    }
}

/* ---- the harness thread's side: jobs on every rank, bracketed steps, their timing ------- */

static int rank_job(uf_mg_rank *m, void *arg)
{
    return rank_run_job((ar_rank *)m->user, (const ar_job *)arg);
}

/* Run a job on its ranks (runner: abort on any rank's failure, naming it). */
int run_job(uf_ctx *ctx, ar_state *st, ar_job job, const char *what)
{
    (void)ctx;
    return uf_mg_run(st->mg, rank_job, &job, job.target, what);
}

/* Wait for ctx->stream (hence every rank's step), watched. */
int wait_ctx_stream(uf_ctx *ctx, ar_state *st, const char *what)
{
    (void)st;
    return uf_wait_stream(ctx, ctx->stream, what);
}

/* One bracketed multi-GPU step of `kind`: begin event on ctx->stream, every rank enqueues
 * (waiting on it), ctx->stream waits on every rank's end event. `mark` as in ar_job. */
int enqueue_bracketed(uf_ctx *ctx, ar_state *st, int kind, int variant, int mark,
                             const char *what)
{
    ar_job job = {.kind = kind, .variant = variant, .target = -1, .seed = 0, .mark = mark};
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaEventRecord(st->step_begin, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, run_job(ctx, st, job, what), out);
    for (int i = 0; i < st->n_local; i++)
        UF_CUDA_OR_GOTO(rc, cudaStreamWaitEvent(ctx->stream, st->ranks[i].step_done, 0), out);
out:
    return rc;
}

/* span_ms[i] = the longest, over this process's ranks, of gemm pair i's begin -> end: the
 * i-th timed job's GEMMs, from the step's start on the compute stream to the end of its last
 * GEMM. The events are complete: ctx->stream, already waited for, waited on every step_done,
 * which each compute stream records after them. Each rank's events are read on its device. */
static int gemm_spans(uf_ctx *ctx, ar_state *st, int reps, double *span_ms)
{
    cudaError_t e;
    int rc = UF_OK;
    for (int i = 0; i < reps; i++)
        span_ms[i] = 0.0;
    for (int r = 0; r < st->n_local; r++) {
        const ar_rank *rk = &st->ranks[r];
        UF_CUDA_OR_GOTO(rc, cudaSetDevice(rk->device), out);
        for (int i = 0; i < reps; i++) {
            float ms = 0.0f;
            UF_STATUS_OR_GOTO(rc, uf_marks_ms(&rk->gemm, 2 * i + GEMM_BEGIN, 2 * i + GEMM_END,
                                              &ms), out);
            if (ms > span_ms[i])
                span_ms[i] = ms;
        }
    }
out:
    e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) {
        uf_report_failure(__FILE__, __LINE__, "cudaSetDevice(ctx->device)", cudaGetErrorString(e));
        rc = UF_ERR;
    }
    return rc;
}

/* `reps` back-to-back bracketed jobs of `kind` (`variant` for JOB_STEP) after `warmup` untimed
 * ones. bracket_ms (unless NULL): the median time of one job on ctx->stream. gemm_ms (unless
 * NULL; JOB_STEP and JOB_BACKWARD): the median span of its GEMMs (gemm_spans). */
static int time_job(uf_ctx *ctx, ar_state *st, int kind, int variant, int warmup, int reps,
                    const char *what, double *bracket_ms, double *gemm_ms)
{
    double each_ms[AR_TIMED_REPS], span_ms[AR_TIMED_REPS];
    int rc = UF_OK;
    if (reps < 1 || reps > AR_TIMED_REPS)
        return uf_fail(ctx, UF_ERR, "%s: %d timed repetitions, not in [1, %d]", what, reps,
                       AR_TIMED_REPS);
    for (int i = 0; i < warmup; i++)
        UF_STATUS_OR_GOTO(rc, enqueue_bracketed(ctx, st, kind, variant, 0, what), out);
    UF_STATUS_OR_GOTO(rc, uf_marks_record(&st->timing, 0, ctx->stream), out);
    for (int i = 0; i < reps; i++) {
        UF_STATUS_OR_GOTO(rc, enqueue_bracketed(ctx, st, kind, variant, gemm_ms ? i + 1 : 0,
                                                what), out);
        UF_STATUS_OR_GOTO(rc, uf_marks_record(&st->timing, i + 1, ctx->stream), out);
    }
    UF_STATUS_OR_GOTO(rc, wait_ctx_stream(ctx, st, what), out);
    for (int i = 0; i < reps; i++) {
        float ms = 0.0f;
        UF_STATUS_OR_GOTO(rc, uf_marks_ms(&st->timing, i, i + 1, &ms), out);
        each_ms[i] = ms;
    }
    if (bracket_ms)
        *bracket_ms = uf_median(each_ms, reps);
    if (gemm_ms) {
        UF_STATUS_OR_GOTO(rc, gemm_spans(ctx, st, reps, span_ms), out);
        *gemm_ms = uf_median(span_ms, reps);
    }
out:
    return rc;
}

/* ---- setup: plan, per-GPU resources, communicators -------------------------------------- */

static int plan_shape(uf_ctx *ctx, ar_shape *sh)
{
    double bucket_mib = uf_axis(ctx, "bucket_mib");
    double tokens = uf_axis(ctx, "tokens");
    double bucket_elems;
    /* tokens, comm_ctas and sm_margin: whole numbers in the axes' declared ranges, checked by
     * the harness before setup (UF_AXIS_INTS in allreduce_overlap.cu) */
    sh->layers = AR_LAYERS;
    sh->rows = AR_ROWS;
    sh->cols = AR_COLS;
    sh->tokens = (int)tokens;
    sh->layer_elems = (size_t)sh->rows * sh->cols;
    sh->grad_elems = sh->layer_elems * (size_t)sh->layers;
    sh->grad_bytes = sh->grad_elems * sizeof(uint16_t);
    sh->x_elems = (size_t)sh->tokens * sh->cols;
    sh->dy_elems = (size_t)sh->tokens * sh->rows;

    bucket_elems = floor(bucket_mib * 1048576.0 / sizeof(uint16_t));
    if (!(bucket_elems >= 1))
        return uf_fail(ctx, UF_USAGE, "bucket_mib must hold at least one bf16 element, not %g",
                       bucket_mib);
    sh->bucket_elems = bucket_elems >= (double)sh->grad_elems ? sh->grad_elems
                                                              : (size_t)bucket_elems;
    if ((sh->grad_elems + sh->bucket_elems - 1) / sh->bucket_elems > AR_MAX_BUCKETS)
        return uf_fail(ctx, UF_USAGE, "bucket_mib=%g makes more than %d all-reduces of the "
                       "%zu MiB of gradients per step; use a larger bucket", bucket_mib,
                       AR_MAX_BUCKETS, sh->grad_bytes >> 20);
    sh->n_buckets = (int)((sh->grad_elems + sh->bucket_elems - 1) / sh->bucket_elems);
    return UF_OK;
}

/* comm_ctas: how many CTAs (channels) NCCL uses per collective on bucketed's communicator
 * (ncclConfig_t minCTAs = maxCTAs); 0 leaves NCCL's default (bucketed then shares comm). */
static int plan_comm_ctas(uf_ctx *ctx, int *comm_ctas)
{
    *comm_ctas = (int)uf_axis(ctx, "comm_ctas");
    return UF_OK;
}

/* sm_margin: the SMs that bucketed's overlapped GEMMs leave to NCCL (their cuBLAS SM count
 * target is sm_count - sm_margin); 0: no target. Needs at least one SM left on every GPU this
 * process drives, and sets each rank's sm_count. */
static int plan_sm_margin(uf_ctx *ctx, ar_state *st)
{
    int rc = UF_OK;
    st->sm_margin = (int)uf_axis(ctx, "sm_margin");
    for (int i = 0; i < st->n_local; i++) {
        ar_rank *rk = &st->ranks[i];
        UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&rk->sm_count, cudaDevAttrMultiProcessorCount,
                                                   rk->device), out);
        if (st->sm_margin >= rk->sm_count)
            return uf_fail(ctx, UF_USAGE, "sm_margin=%d leaves no SM of device %d's %d to the "
                           "GEMMs: it must be below the SM count", st->sm_margin, rk->device,
                           rk->sm_count);
    }
out:
    return rc;
}

/* One whole number from the environment, or UF_USAGE. */
static int env_int(uf_ctx *ctx, const char *name, const char *text, long lo, long hi, int *out)
{
    char *end = NULL;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        return uf_fail(ctx, UF_USAGE, "%s=%s: expected a whole number in [%ld, %ld]", name,
                       text, lo, hi);
    *out = (int)v;
    return UF_OK;
}

/* UF_AR_BROKEN_OVERLAP: unset or 0, the fix as written; 1, bucketed's all-reduces on the
 * compute stream (overlap broken on purpose: its claims must then fail). */
static int plan_broken_overlap(uf_ctx *ctx, int *broken)
{
    const char *text = getenv(AR_BROKEN_OVERLAP_ENV);
    *broken = 0;
    return text ? env_int(ctx, AR_BROKEN_OVERLAP_ENV, text, 0, 1, broken) : UF_OK;
}

/* Buffers, streams, events and the cuBLAS handle of one rank, on its device. */
static int make_rank(uf_ctx *ctx, ar_state *st, ar_rank *rk)
{
    const ar_shape *sh = &st->shape;
    size_t input_bytes = (sh->x_elems + sh->dy_elems) * (size_t)sh->layers * sizeof(uint16_t);
    int least = 0, greatest = 0, rc = UF_OK;

    UF_CUDA_OR_GOTO(rc, cudaSetDevice(rk->device), out);
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, sh->grad_bytes + input_bytes,
                                        "the gradients and layer inputs of one GPU"), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&rk->grads, sh->grad_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&rk->x,
                                   sh->x_elems * (size_t)sh->layers * sizeof(uint16_t)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&rk->dy,
                                   sh->dy_elems * (size_t)sh->layers * sizeof(uint16_t)), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&rk->checksum_dev, 3 * sizeof(unsigned long long)),
                    out);
    /* The comm stream gets the highest priority so that NCCL's blocks are scheduled ahead of
     * the next GEMM's as SMs free up (what DDP and Megatron do). */
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetStreamPriorityRange(&least, &greatest), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithPriority(&rk->compute_stream, cudaStreamNonBlocking,
                                                     least), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithPriority(&rk->comm_stream, cudaStreamNonBlocking,
                                                     greatest), out);
    for (int j = 0; j < AR_LAYERS; j++)
        UF_CUDA_OR_GOTO(rc, cudaEventCreateWithFlags(&rk->layer_done[j],
                                                     cudaEventDisableTiming), out);
    UF_CUDA_OR_GOTO(rc, cudaEventCreateWithFlags(&rk->comm_done, cudaEventDisableTiming), out);
    UF_CUDA_OR_GOTO(rc, cudaEventCreateWithFlags(&rk->step_done, cudaEventDisableTiming), out);
    UF_STATUS_OR_GOTO(rc, uf_marks_create(&rk->gemm, 2 * AR_TIMED_REPS), out);
    UF_CUBLAS_OR_GOTO(rc, cublasCreate(&rk->cublas), out);
    UF_CUBLAS_OR_GOTO(rc, cublasSetStream(rk->cublas, rk->compute_stream), out);
    if (st->sm_margin > 0) {
        /* Transformer Engine's sm_margin: GEMMs that run beside communication are planned for
         * the SMs it leaves, so that no CTA of theirs waits for an SM NCCL holds. */
        UF_CUBLAS_OR_GOTO(rc, cublasCreate(&rk->cublas_overlap), out);
        UF_CUBLAS_OR_GOTO(rc, cublasSetStream(rk->cublas_overlap, rk->compute_stream), out);
        UF_CUBLAS_OR_GOTO(rc, cublasSetSmCountTarget(rk->cublas_overlap,
                                                     rk->sm_count - st->sm_margin), out);
    }
out:
    return rc;     /* partial resources are freed by destroy_state */
}

/* Free one rank's resources (whatever was made). */
static void destroy_rank(ar_rank *rk)
{
    if (cudaSetDevice(rk->device) != cudaSuccess)
        return;
    if (rk->cublas_overlap)
        cublasDestroy(rk->cublas_overlap);
    if (rk->cublas)
        cublasDestroy(rk->cublas);
    for (int j = 0; j < AR_LAYERS; j++)
        if (rk->layer_done[j])
            cudaEventDestroy(rk->layer_done[j]);
    uf_marks_free(&rk->gemm);
    if (rk->comm_done)
        cudaEventDestroy(rk->comm_done);
    if (rk->step_done)
        cudaEventDestroy(rk->step_done);
    if (rk->comm_stream)
        cudaStreamDestroy(rk->comm_stream);
    if (rk->compute_stream)
        cudaStreamDestroy(rk->compute_stream);
    cudaFree(rk->checksum_dev);
    cudaFree(rk->dy);
    cudaFree(rk->x);
    cudaFree(rk->grads);
}

/* Undo setup, however far it got: the runner first (its workers, the communicators), then
 * each rank's resources unless a worker never came back (it may still use them). */
void destroy_state(uf_ctx *ctx, ar_state *st)
{
    int safe;
    if (!st)
        return;
    safe = uf_mg_close(st->mg);
    if (safe && st->ranks)
        for (int i = 0; i < st->n_local; i++)
            destroy_rank(&st->ranks[i]);
    (void)cudaSetDevice(ctx->device);
    uf_marks_free(&st->timing);
    if (st->step_begin)
        cudaEventDestroy(st->step_begin);
    if (safe) {
        free(st->ranks);
        free(st);
    }
}

/* This point's communicators: comm[0] with NCCL's defaults on every rank, and, when
 * comm_ctas > 0, bucketed's split with comm_ctas CTAs (ncclCommSplit: same ranks, no second
 * unique id). A failure aborts every one made (uf_mg_run). */
static int init_nccl(ar_state *st)
{
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, uf_mg_init_comms(st->mg), out);
    if (st->comm_ctas > 0)
        UF_STATUS_OR_GOTO(rc, uf_mg_split(st->mg, AR_COMM_OVERLAP, st->comm_ctas), out);
out:
    return rc;
}

/* This process's ranks, from the runner's: the scenario's state of each. */
static int make_ranks(uf_ctx *ctx, ar_state *st)
{
    uf_mg *mg = st->mg;
    st->n_ranks = mg->n_ranks;
    st->n_local = mg->n_local;
    st->ranks = (ar_rank *)calloc((size_t)st->n_local, sizeof *st->ranks);
    if (!st->ranks)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    for (int i = 0; i < st->n_local; i++) {
        st->ranks[i].st = st;
        st->ranks[i].mg = &mg->ranks[i];
        st->ranks[i].local = i;
        st->ranks[i].rank = mg->ranks[i].rank;
        st->ranks[i].device = mg->ranks[i].device;
        mg->ranks[i].user = &st->ranks[i];
    }
    return UF_OK;
}

/* Events on ctx->stream (primary device): the step's begin, and the timing marks. */
static int make_ctx_events(ar_state *st)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaEventCreateWithFlags(&st->step_begin, cudaEventDisableTiming), out);
    UF_STATUS_OR_GOTO(rc, uf_marks_create(&st->timing, AR_TIMED_REPS + 1), out);
out:
    return rc;
}

/* For describe(), with this point's communicators: the all-reduce alone on each variant's
 * communicator (which also sets NCCL's connections up; one measure when they share comm) and
 * the backward alone, each timed as a bracketed multi-GPU step (comm_ms, compute_ms); the
 * backward's GEMM span inside each variant's step (in_step_ms), for compute_slowdown_pct. */
static int measure_at_setup(uf_ctx *ctx, ar_state *st)
{
    int reps = ctx->quick ? AR_TIMED_REPS_QUICK : AR_TIMED_REPS;
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, time_job(ctx, st, JOB_ALLREDUCE, VAR_SEQUENTIAL, AR_WARMUP_REPS, reps,
                                   "the all-reduce alone", &st->comm_ms[VAR_SEQUENTIAL], NULL),
                      out);
    st->comm_ms[VAR_BUCKETED] = st->comm_ms[VAR_SEQUENTIAL];
    if (st->comm_ctas > 0)
        UF_STATUS_OR_GOTO(rc, time_job(ctx, st, JOB_ALLREDUCE, VAR_BUCKETED, AR_WARMUP_REPS, reps,
                                       "the all-reduce alone on bucketed's communicator",
                                       &st->comm_ms[VAR_BUCKETED], NULL), out);
    UF_STATUS_OR_GOTO(rc, time_job(ctx, st, JOB_BACKWARD, 0, AR_WARMUP_REPS, reps,
                                   "the backward alone", &st->compute_ms, NULL), out);
    UF_STATUS_OR_GOTO(rc, time_job(ctx, st, JOB_STEP, VAR_SEQUENTIAL, 1, reps,
                                   "the backward inside sequential steps", NULL,
                                   &st->in_step_ms[VAR_SEQUENTIAL]), out);
    UF_STATUS_OR_GOTO(rc, time_job(ctx, st, JOB_STEP, VAR_BUCKETED, 1, reps,
                                   "the backward inside bucketed steps", NULL,
                                   &st->in_step_ms[VAR_BUCKETED]), out);
out:
    return rc;
}

int ar_setup_schedule(uf_ctx *ctx, ar_enqueue_fn enqueue)
{
    /* The sweep is a cross, not a grid: each of bucket_mib, comm_ctas and sm_margin is swept
     * with the other two at their defaults (each point costs communicators and ~100
     * calibration steps). */
    const int off_default = (uf_axis(ctx, "bucket_mib") != AR_DEFAULT_BUCKET_MIB) +
                            (uf_axis(ctx, "comm_ctas") != AR_DEFAULT_COMM_CTAS) +
                            (uf_axis(ctx, "sm_margin") != AR_DEFAULT_SM_MARGIN);
    if (off_default > 1) {
        snprintf(ctx->reason, sizeof ctx->reason, "bucket_mib, comm_ctas and sm_margin are each "
                 "swept with the other two at their defaults (%d MiB, %d, %d)",
                 AR_DEFAULT_BUCKET_MIB, AR_DEFAULT_COMM_CTAS, AR_DEFAULT_SM_MARGIN);
        return UF_SKIP_POINT;
    }
    ar_state *st = (ar_state *)calloc(1, sizeof *st);
    ar_job fill = {.kind = JOB_FILL, .variant = 0, .target = -1, .seed = ctx->seed, .mark = 0};
    size_t free_before = 0, free_after = 0, total = 0;
    int rc = UF_OK;

    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    st->enqueue = enqueue;
    UF_STATUS_OR_GOTO(rc, plan_shape(ctx, &st->shape), out_destroy);
    UF_STATUS_OR_GOTO(rc, plan_comm_ctas(ctx, &st->comm_ctas), out_destroy);
    UF_STATUS_OR_GOTO(rc, plan_broken_overlap(ctx, &st->broken_overlap), out_destroy);
    UF_STATUS_OR_GOTO(rc, uf_mg_open(ctx, &st->mg), out_destroy);
    UF_STATUS_OR_GOTO(rc, make_ranks(ctx, st), out_destroy);
    UF_STATUS_OR_GOTO(rc, plan_sm_margin(ctx, st), out_destroy);
    UF_CUDA_OR_GOTO(rc, cudaMemGetInfo(&free_before, &total), out_destroy);
    UF_STATUS_OR_GOTO(rc, make_ctx_events(st), out_destroy);
    for (int i = 0; i < st->n_local; i++)
        UF_STATUS_OR_GOTO(rc, make_rank(ctx, st, &st->ranks[i]), out_destroy);
    UF_STATUS_OR_GOTO(rc, init_nccl(st), out_destroy);
    UF_CUDA_OR_GOTO(rc, cudaSetDevice(ctx->device), out_destroy);
    UF_STATUS_OR_GOTO(rc, run_job(ctx, st, fill, "filling the inputs"), out_destroy);
    UF_STATUS_OR_GOTO(rc, measure_at_setup(ctx, st), out_destroy);
    UF_CUDA_OR_GOTO(rc, cudaMemGetInfo(&free_after, &total), out_destroy);
    st->held_bytes = (double)(free_before > free_after ? free_before - free_after : 0);
    ctx->state = st;
    return UF_OK;

out_destroy:
    destroy_state(ctx, st);
    ctx->state = NULL;
    return rc;
}

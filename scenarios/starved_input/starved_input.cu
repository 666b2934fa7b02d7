/* starved_input: a data pipeline that cannot feed the GPU, and its fixes.
 *
 * Each step trains on one batch of token ids: an embedding lookup, two bf16 GEMMs through
 * cuBLAS and a GELU between them. The ids come from a synthetic text corpus that a real CPU
 * tokenizer (text cleaning, byte-level pre-tokenization, BPE merges, special tokens,
 * truncation and padding) turns into batches. Three variants feed the same batches, in the
 * same order:
 *   sync          the main thread tokenizes the next batch inside the step, copies it from
 *                 pageable memory and waits for the copy: the GPU waits for the CPU;
 *   workers       N threads tokenize ahead into a bounded queue of pinned staging buffers;
 *                 the step copies asynchronously on a copy stream into one of two device
 *                 buffers, so batch k+1 is copied while step k computes;
 *   pretokenized  the corpus is tokenized once ahead of time into a memory-mapped file; the
 *                 same prefetching path only copies ids.
 * Setup calibrates the tokenizing: one thread takes SI_TOK_STEP_MULTIPLE GPU steps a batch on
 * any host (the tokenizer's passes over each document set from the measured times).
 * See README.md (printed by --explain). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "uf_cublas.h"
#include "tokenizer.h"                /* the corpus and the BPE tokenizer (plain C) */
#include "starved_input_ref.h"        /* host weights, host reference, checksum (plain C) */
#include "starved_input_source.h"     /* clock and core-count helpers, where batches come from */
#include "starved_input_pipeline.h"   /* the workers' pipeline */
#include "starved_input_pretok.h"     /* the pretokenized corpus */
#include "starved_input_state.h"      /* a variant's feed, the scenario's state */
#include "starved_input_feed.h"       /* a feed opened and closed */
#include "starved_input_kernels.h"    /* the model step every variant enqueues */
#include "starved_input_setup.h"      /* setup, teardown */
#include "starved_input_verify.h"     /* verify */

static_assert((int)UF_OK == (int)UF_OK && (int)UF_ERR == (int)UF_ERR,
              "tokenizer.c returns the harness's statuses");

/* ---- sizes ---------------------------------------------------------------------------- */

/* The step's shape and the corpus size. hidden and ffn are the same in both modes so that the
 * GPU time per token, hence the ratio of CPU to GPU time per batch, is the same: --quick only
 * has fewer rows per batch and a smaller corpus. */
static const si_shape SI_FULL = {.rows = 256, .seq_len = 512, .hidden = 1280, .ffn = 5120,
                                 .corpus_batches = 16};
static const si_shape SI_QUICK = {.rows = 64, .seq_len = 512, .hidden = 1280, .ffn = 5120,
                                  .corpus_batches = 6};

enum { SI_MAX_WORKERS = 256, SI_MAX_TOK_COST = 64 };   /* the axes' limits */

/* How long one thread tokenizes a batch, in GPU steps, at tok_cost 1: setup measures this
 * host's tokenizer and GPU step and sets the passes a batch runs to match (si_setup_shape;
 * issue #29: at one pass a document the H200's host took 2.6 steps, and claim 1 held by 0.5
 * point). The claims need it between two bounds. sync: its thread tokenizes batch k+1 while
 * the GPU runs step k, so busy ~ 1 / multiple, at most 40 % from 2.5 steps on; 4 keeps busy
 * near 25 %, 15 points under. workers: 8 threads produce 8 / multiple batches a step if they
 * scale, and on the H200's 16 cores 8 busy threads each tokenized 18 % slower than one
 * (17.2 against 14.6 ms a batch at ac3d474): at 4, 8 / (4 x 1.18) = 1.7 batches a step, ahead
 * of the GPU with room for the workers' hiccups; from 6.8 on they would fall behind. Claim 3's
 * ratio of tokens/s is then ~ the multiple, 4 against its bound of 2. 4 is the claims' "4x"
 * (their texts say it). */
#define SI_TOK_STEP_MULTIPLE 4.0

/* ---- feeding steps -------------------------------------------------------------------- */

/* sync: tokenize the batch on this thread, copy it from pageable memory on the step's stream
 * and wait for the copy (what tensor.to("cuda") does without pinned memory), then enqueue the
 * step. The GPU idles while this thread tokenizes and waits. */
static int feed_step_sync(si_state *st, si_feed *f, cudaStream_t stream,
                          unsigned long long *d_checksum, char *err, size_t errlen)
{
    int rc = UF_OK;
    /* the thread's CPU time: what tokenizing a batch really cost, not wall time */
    const uint64_t wall0_ns = uf_mono_ns(), cpu0_ns = uf_thread_cpu_ns();
    UF_STATUS_OR_GOTO(rc, produce_batch(&f->src, f->next_batch, f->pageable_ids, &f->scratch, err,
                                        errlen), out);
    f->cpu_ns += (int64_t)(uf_thread_cpu_ns() - cpu0_ns);
    f->wait_ns += (int64_t)(uf_mono_ns() - wall0_ns);
    f->batches++;
    f->next_batch++;
    f->steps++;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_ids[0], f->pageable_ids, st->batch_bytes,
                                        cudaMemcpyHostToDevice, stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(stream), out);
    rc = enqueue_step(st, stream, st->d_ids[0], d_checksum);
out:
    return rc;
}

/* workers, pretokenized: take the next ready batch (waiting if none: the starvation), copy it
 * asynchronously on the copy stream into device buffer k once the step that last read k is
 * done, make the step's stream wait for the copy, enqueue the step. Batch k+1's copy overlaps
 * step k; nothing here waits for the GPU. */
static int feed_step_prefetch(si_state *st, si_feed *f, cudaStream_t stream,
                              unsigned long long *d_checksum, char *err, size_t errlen)
{
    int rc = UF_OK, recorded = 0, k = st->parity;
    si_slot *slot = NULL;
    const uint64_t wall0_ns = uf_mono_ns();
    UF_STATUS_OR_GOTO(rc, pipeline_take(f->pipe, &slot, err, errlen), out);
    f->wait_ns += (int64_t)(uf_mono_ns() - wall0_ns);
    f->steps++;
    UF_CUDA_OR_GOTO(rc, cudaStreamWaitEvent(st->copy_stream, st->step_done[k], 0), out_release);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_ids[k], slot->ids, st->batch_bytes,
                                        cudaMemcpyHostToDevice, st->copy_stream), out_release);
    UF_CUDA_OR_GOTO(rc, cudaEventRecord(slot->copied, st->copy_stream), out_release);
    recorded = 1;
    UF_CUDA_OR_GOTO(rc, cudaStreamWaitEvent(stream, slot->copied, 0), out_release);
out_release:
    pipeline_release(f->pipe, slot, recorded);
    if (rc != UF_OK)
        goto out;
    UF_STATUS_OR_GOTO(rc, enqueue_step(st, stream, st->d_ids[k], d_checksum), out);
    UF_CUDA_OR_GOTO(rc, cudaEventRecord(st->step_done[k], stream), out);
    st->parity = k ^ 1;
out:
    return rc;
}

static int feed_step(si_state *st, si_feed *f, cudaStream_t stream,
                     unsigned long long *d_checksum, char *err, size_t errlen)
{
    if (!f->open) {
        snprintf(err, errlen, "run_step called outside begin_variant/end_variant");
        return UF_ERR;
    }
    if (f->variant == SI_SYNC)
        return feed_step_sync(st, f, stream, d_checksum, err, errlen);
    return feed_step_prefetch(st, f, stream, d_checksum, err, errlen);
}

/* Setup at the mode's shape, the tokenizing calibrated to SI_TOK_STEP_MULTIPLE GPU steps a
 * batch; verify feeds its steps with feed_step. */
static int si_setup(uf_ctx *ctx)
{
    return si_setup_shape(ctx, ctx->quick ? &SI_QUICK : &SI_FULL, feed_step,
                          SI_TOK_STEP_MULTIPLE);
}

/* ---- the variant's life --------------------------------------------------------------- */

/* Open the variant's feed: for workers, start the workers; for pretokenized, tokenize the
 * corpus into its file first (once per point: the offline step, not measured). */
static int si_begin_variant(uf_ctx *ctx, int variant)
{
    si_state *st = (si_state *)ctx->state;
    const double workers_default = ctx->scenario->axes[0].default_value;
    if (variant != SI_WORKERS && uf_axis(ctx, "workers") != workers_default) {
        /* sync and pretokenized start no workers: measured once, at the default count */
        snprintf(ctx->reason, sizeof ctx->reason,
                 "%s does not use the workers axis: measured at workers=%g only",
                 ctx->scenario->variants[variant].name, workers_default);
        return UF_SKIP;
    }
    char err[UF_REASON_LEN] = "";
    si_source src;
    text_source(st, &st->corpus, st->shape.corpus_batches, &src);
    if (variant == SI_PRETOKENIZED) {
        if (!st->pretok &&
            pretok_build(&src, &st->pretok, &st->pretok_bytes, err, sizeof err) != UF_OK)
            return uf_fail(ctx, UF_ERR, "pretokenizing the corpus failed: %s", err);
        src.corpus = NULL;
        src.pretok = st->pretok;
    }
    if (feed_open(st, &st->feed, variant, &src, err, sizeof err) != UF_OK)
        return uf_fail(ctx, UF_ERR, "%s", err);
    return UF_OK;
}

/* Wait for the last step, then stop and join the workers and free the staging buffers. */
static int si_end_variant(uf_ctx *ctx, int variant)
{
    si_state *st = (si_state *)ctx->state;
    cudaError_t e = cudaStreamSynchronize(ctx->stream);
    (void)variant;
    feed_close(st, &st->feed);
    if (e != cudaSuccess)
        return uf_fail(ctx, UF_ERR, "cudaStreamSynchronize at the end of a variant failed: %s",
                       cudaGetErrorString(e));
    return UF_OK;
}

static int si_run_step(uf_ctx *ctx, int variant)
{
    si_state *st = (si_state *)ctx->state;
    char err[UF_REASON_LEN] = "";
    if (st->feed.open && st->feed.variant != variant)
        return uf_fail(ctx, UF_ERR, "run_step of one variant while another's feed is open");
    if (feed_step(st, &st->feed, ctx->stream, NULL, err, sizeof err) != UF_OK)
        return uf_fail(ctx, UF_ERR, "%s", err[0] ? err : "a CUDA or cuBLAS call failed "
                                                         "(reported above)");
    return UF_OK;
}

/* ---- what is counted ------------------------------------------------------------------ */

static int si_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    si_state *st = (si_state *)ctx->state;
    si_feed *f = &st->feed;
    int64_t cpu_ns = f->cpu_ns, batches = f->batches;
    double flops = 4.0 * (double)st->tokens * st->shape.hidden * st->shape.ffn;  /* 2 GEMMs */
    (void)variant;
    if (f->pipe)
        pipeline_stats(f->pipe, &cpu_ns, &batches);
    row->useful_flops = flops;
    row->executed_flops = flops;
    row->peak_mem_bytes = (double)st->device_bytes;
    /* Over the declared step (the mean: see si_scenario.step_stat), the same one the
     * harness's tflops_useful and pct_of_gemm use. */
    row->extra[0] = (double)st->tokens / (uf_step_ms(ctx, row) * 1e-3);
    row->extra[1] = batches > 0 ? (double)cpu_ns / 1e6 / (double)batches : NAN;
    row->extra[2] = f->steps > 0 ? (double)f->wait_ns / 1e6 / (double)f->steps : NAN;
    /* the calibration (setup of the timing pass's point): what a batch's work was set from */
    row->extra[3] = st->first_pass_ms;
    row->extra[4] = st->next_pass_ms;
    row->extra[5] = st->gpu_step_ms;
    row->extra[6] = (double)st->batch_passes / st->shape.rows;
    row->extra[7] = (st->first_pass_ms + (row->extra[6] - 1.0) * st->next_pass_ms) /
                    st->gpu_step_ms;
    return UF_OK;
}

/* The claims, at the default point (workers=8, tok_cost=1), where setup has made one thread's
 * tokenizing of a batch SI_TOK_STEP_MULTIPLE (4) GPU steps long on any host; claim 2 also
 * needs 8 cores free for the workers (the H200's host has 16). */
static void si_expect(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "sync", NULL, "busy_pct", UF_LE, 40.0,
                     "the step thread tokenizes each batch, calibrated at setup to 4x the GPU "
                     "step, before it can enqueue the step, so the GPU computes ~1/4 of the time");
    uf_expect_metric(ex, rep, "workers", "workers=8", "busy_pct", UF_GE, 90.0,
                     "8 workers tokenize 8 batches at once, each in 4 GPU steps (calibrated), "
                     "about twice as fast as the GPU consumes them, so a batch is always ready "
                     "and steps run back to back");
    uf_expect_ratio(ex, rep, "workers", "sync", "workers=8", "tokens_per_s", UF_GE, 2.0,
                    "the same steps on the same batches, no longer waiting ~4 GPU steps for "
                    "the tokenizer");
    uf_expect_metric(ex, rep, "pretokenized", NULL, "busy_pct", UF_GE, 95.0,
                     "feeding a pretokenized batch is a 0.5 MB memcpy, so the GPU never waits; "
                     "only the ~us gaps between kernels remain");
}

/* ---- the scenario --------------------------------------------------------------------- */

static const uf_variant_desc si_variants[] = {
    {.name = "sync", .role = UF_BROKEN,
     .summary = "the step thread tokenizes each batch, copies it from pageable memory and waits"},
    {.name = "workers", .role = UF_FIXED,
     .summary = "worker threads tokenize ahead into pinned buffers; async double-buffered copy"},
    {.name = "pretokenized", .role = UF_FIXED,
     .summary = "ids tokenized once offline into a mapped file; the same prefetching path"},
};

static const double si_workers_full[] = {1, 2, 4, 8, 16};
static const double si_workers_quick[] = {2, 8};
static const double si_tok_cost_full[] = {1, 2, 4};
static const double si_tok_cost_quick[] = {1};

static const uf_axis_desc si_axes[] = {
    {.name = "workers", .unit = "threads",
     .summary = "producer threads of workers and pretokenized; sync (the step thread "
                "tokenizes: zero workers) ignores it, so its rows repeat one measurement",
     UF_AXIS_INTS(1, SI_MAX_WORKERS), .default_value = 8,
     .values = si_workers_full, .n_values = 5,
     .quick_values = si_workers_quick, .n_quick_values = 2},
    {.name = "tok_cost", .unit = "x",
     .summary = "times the calibrated tokenizing time of a batch (4 GPU steps of one thread at "
                "1; the tokenizer's passes over each document set at setup): a tokenizer that "
                "much more costly",
     UF_AXIS_INTS(1, SI_MAX_TOK_COST),
     .default_value = 1,
     .values = si_tok_cost_full, .n_values = 3,
     .quick_values = si_tok_cost_quick, .n_quick_values = 1},
};

static const uf_extra_desc si_extras[] = {
    {.name = "tokens_per_s", .unit = "tokens/s",
     .summary = "batch positions (rows x seq_len) per second over the timing pass: tokens / "
                "the mean step time (not the median: starved steps are bimodal)"},
    {.name = "cpu_ms_per_batch", .unit = "ms",
     .summary = "CPU time to produce one batch (thread CPU time of whoever produced it)"},
    {.name = "input_wait_ms", .unit = "ms",
     .summary = "mean host time a step spent getting its batch (waiting, or tokenizing inline)"},
    {.name = "first_pass_ms", .unit = "ms",
     .summary = "calibration (setup): one thread's CPU time for one tokenizer pass over a "
                "batch's documents, mean over the corpus"},
    {.name = "next_pass_ms", .unit = "ms",
     .summary = "calibration (setup): what a second pass over them added"},
    {.name = "gpu_step_ms", .unit = "ms",
     .summary = "calibration (setup): the step back to back with nothing in its way (median, "
                "events)"},
    {.name = "passes_per_doc", .unit = "passes",
     .summary = "tokenizer passes a document, mean over a batch: set at setup so that "
                "first_pass_ms + (passes_per_doc - 1) x next_pass_ms = tok_cost x 4 x "
                "gpu_step_ms"},
    {.name = "tok_step_multiple", .unit = "x",
     .summary = "(first_pass_ms + (passes_per_doc - 1) x next_pass_ms) / gpu_step_ms: the GPU "
                "steps one thread tokenizes a batch in, as calibrated (cpu_ms_per_batch: as "
                "run)"},
};

static const uf_scenario si_scenario = {
    .name = "starved_input",
    .title = "CPU-starved input: the GPU waits while the CPU tokenizes the next batch",
    .failure = "The training loop tokenizes, pads and copies each batch on its own thread "
               "before it launches the step, so the GPU idles for the whole CPU time of every "
               "batch: high step time, low busy %, and nvidia-smi utilization to match.",
    .fix = "Tokenize ahead on worker threads into pinned buffers and copy asynchronously on a "
           "second stream, double-buffered; or tokenize the corpus once offline and only copy.",
    .variants = si_variants,
    .n_variants = 3,
    .axes = si_axes,
    .n_axes = 2,
    .extras = si_extras,
    .n_extras = (int)(sizeof si_extras / sizeof si_extras[0]),
    .min_gpus = 1,
    .repeat = 30,
    .quick_repeat = 20,
    .warmup = 5,
    .warmup_min_ms = 0,
    /* Rates over the whole timing pass (total work / total time): a starved pipeline
     * alternates steps that find a batch ready with steps that wait for one, so its step
     * times are bimodal and the median is one kind or the other, not the rate (workers=8 at
     * tok_cost=4 on the H200: median 5.18 ms, mean 8.12). tokens_per_s, tflops_useful and
     * pct_of_gemm all use this one mean. */
    .step_stat = UF_STAT_MEAN,
    .setup = si_setup,
    .begin_variant = si_begin_variant,
    .end_variant = si_end_variant,
    .run_step = si_run_step,
    .verify = si_verify,
    .describe = si_describe,
    .teardown = si_teardown,
    .expect = si_expect,
};

int main(int argc, char **argv)
{
    return uf_main(&si_scenario, argc, argv);
}

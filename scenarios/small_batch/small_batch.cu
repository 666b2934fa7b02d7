/* small_batch: fine-tuning with micro-batches of a few dozen tokens. Every GEMM of a
 * transformer layer's projections (QKV, O, MLP up and down; forward, input and weight
 * gradients) then has M = a few dozen rows: it streams its 2-byte weights from HBM once and does
 * 2·M FLOPs per weight, far too few to keep the tensor cores busy. The step time barely moves
 * from M = 1 to M = 128, so the tokens per second grow with M for free, and nvidia-smi says
 * 100 % throughout.
 *
 * Variants (cuBLAS bf16 GEMMs, fp32 accumulation, on a stack of SB_LAYERS layers):
 *   micro1       one micro-batch of M tokens per step (broken at small M; the sweep over M);
 *   accumulate   the global batch G as G/M micro-batches of M with gradient accumulation: the
 *                same small GEMMs, G/M times (broken: accumulation fixes the batch, not M);
 *   large_micro  the global batch as one micro-batch of G tokens (fixed: compute-bound GEMMs;
 *                its activation memory is reported);
 *   one_block    one thread block spinning for the whole step: NVML 100 %, one SM of 132;
 *   latency_bound one warp per SM chasing pointers through HBM: NVML 100 %, every SM
 *                "active", the tensor pipes and HBM idle;
 *   wave         one M × 8192 × 8192 GEMM through cublasLt: its tile count against the SMs
 *                (the wave-quantization report; no claim). See README.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "small_batch_ref.h"        /* inputs, counts, fp64 reference, chains, wave arithmetic */
#include "small_batch_kernels.h"    /* fill/spin/chase kernels */
#include "small_batch_stack.h"      /* the linears' GEMMs, the wave GEMM, the stack */
#include "small_batch_state.h"      /* the variants, the constants, the state */
#include "small_batch_setup.h"      /* setup, teardown, begin/end_variant */
#include "small_batch_verify.h"     /* verify */
#include "small_batch_describe.h"   /* FLOPs, bytes, tokens/s, the wave report */

/* ---- the failure and its fix: one step's schedule --------------------------------------------- */

/* Tokens per micro-batch and micro-batches per step of a GEMM variant, for micro-batches of M
 * tokens and a global batch of G: micro1 (M, 1), accumulate (M, G/M), large_micro (G, 1). */
static void step_shape(int M, int G, int variant, int *micro, int *n_micro)
{
    *micro = variant == SB_LARGE_MICRO ? G : M;
    *n_micro = variant == SB_ACCUMULATE ? G / M : 1;
}

/* One optimizer step's worth of GEMMs: n_micro micro-batches of `micro` tokens, each a forward
 * and a backward of the stack, the weight gradients of each added to the previous (beta 1).
 * micro1 runs (M, 1); accumulate (M, G/M): the same M-row GEMMs, G/M times over; large_micro
 * (G, 1): the same tokens and FLOPs as accumulate in GEMMs G rows tall. Nothing else differs. */
static int run_schedule(sb_stack *m, int micro, int n_micro)
{
    int rc = UF_OK;
    for (int b = 0; b < n_micro; b++) {
        const size_t first = (size_t)b * micro * m->d;
        UF_STATUS_OR_GOTO(rc, stack_forward(m, m->x0 + first, micro), out);
        UF_STATUS_OR_GOTO(rc, stack_backward(m, m->x0 + first, m->dy + first, micro,
                                             b == 0 ? 0.0f : 1.0f), out);
    }
out:
    return rc;
}

/* ---- nvidia-smi's view: two kernels it calls 100 % busy ---------------------------------------- */

/* one_block: <<<1, 128>>> spinning for the step; latency_bound: <<<SMs, 32>>>, a block per SM
 * (shared memory keeps out a second), each waiting on a chain of dependent HBM loads. */
static int enqueue_chains(sb_state *st, int variant, uint64_t seed, cudaStream_t stream)
{
    int rc = UF_OK;
    if (variant == SB_ONE_BLOCK)
        spin_kernel<<<1, SB_SPIN_THREADS, 0, stream>>>(st->small_out, seed, SB_SPIN_ITERS);
    else
        chase_kernel<<<st->sms, 32, st->chase_smem, stream>>>(st->chase, SB_CHASE_MASK, seed,
                                                             SB_CHASE_HOPS, st->small_out);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

static int sb_run_step(uf_ctx *ctx, int variant)
{
    sb_state *st = (sb_state *)ctx->state;
    int micro = 0, n_micro = 0;
    switch (variant) {
    case SB_ONE_BLOCK:
    case SB_LATENCY_BOUND:
        return enqueue_chains(st, variant, st->seed, ctx->stream);
    case SB_WAVE:
        return lt_gemm_run(st->lt, &st->wave, st->wave_x, st->wave_w, st->wave_y, st->blas_ws,
                           ctx->stream);
    default:
        step_shape(st->tokens, st->global_tokens, variant, &micro, &n_micro);
        return run_schedule(&st->m, micro, n_micro);
    }
}

/* What verify runs and describe counts: the schedule above. */
static const sb_schedule sb_story_schedule = {
    .step_shape = step_shape,
    .run_schedule = run_schedule,
    .enqueue_chains = enqueue_chains,
};

static int sb_setup(uf_ctx *ctx)
{
    return sb_setup_schedule(ctx, &sb_story_schedule);
}

/* ---- the claims -------------------------------------------------------------------------------- */

#define SB_SMALL_M 32               /* "a few dozen rows": the claims' small micro-batches */
/* Why every NVML claim waits for a full run (uf_expect_full_run). */
#define SB_NVML_PERIOD "NVML's utilization samples last 200 ms on the H200: the 450 ms timing " \
                       "pass of --quick holds one or two, too few to judge"

/* At every M <= 32 run: the GEMMs stream their weights, idle the tensor cores, and NVML says
 * busy. The copy-rate floor is judged on the forward GEMM alone (wave) at every M, as the
 * issue's cuBLAS figure was measured, and on micro1's whole step (forward and both backward
 * GEMMs) from M = 2: at M = 1 the weight gradient is a k = 1 product, for which cuBLAS 13.1
 * runs an align1 fallback (cutlass_75_tensorop_bf16_s1688gemm_bf16_64x64_nt_align1, 79 us on the
 * H200 where M = 2 runs nvjet_sm90_tst_128x256 in 40 us): micro1 reads 50 % of the copy rate
 * there; the README reports it beside the claims. */
static void expect_small_m(const uf_report *rep, uf_expectations *ex)
{
    const double *tokens = NULL;
    char at[64];
    const int n = uf_axis_values(rep, "tokens", &tokens);
    for (int i = 0; i < n; i++) {
        if (tokens[i] > SB_SMALL_M)
            continue;
        snprintf(at, sizeof at, "tokens=%g", tokens[i]);
        uf_expect_metric(ex, rep, "wave", at, "pct_of_copy", UF_GE, 60.0,
                         "with M <= 32 rows a GEMM does 2*M FLOPs per 2-byte weight, under the "
                         "GPU's ~190 FLOPs per byte: it is a stream of its weights, like a copy "
                         "(cuBLAS measured 71 % of the copy rate at M = 1)");
        if (tokens[i] >= 2)
            uf_expect_metric(ex, rep, "micro1", at, "pct_of_copy", UF_GE, 60.0,
                             "a whole layer's step at M rows is three such streams: W read in "
                             "forward and backward, its gradient written");
        uf_expect_metric(ex, rep, "micro1", at, "pct_of_gemm", UF_LE, 15.0,
                         "the weight stream caps the rate at 2*M FLOPs per 2 bytes at ~3 TB/s: "
                         "96 TFLOP/s at M = 32, 12 % of the bf16 ceiling, less below");
        uf_expect_full_run(ex, SB_NVML_PERIOD);
        uf_expect_metric(ex, rep, "micro1", at, "nvml_util_pct", UF_GE, 90.0,
                         "the step is back-to-back GEMM kernels with no host sync: some kernel "
                         "runs in every NVML period, however little of the GPU it uses");
    }
}

/* micro1's step time from M = 1 to 32, and large_micro's tokens/s against micro1's. */
static void expect_tokens_for_free(const uf_report *rep, uf_expectations *ex)
{
    const uf_row *m1 = uf_find(rep, "micro1", "tokens=1");
    const uf_row *m32 = uf_find(rep, "micro1", "tokens=32");
    uf_expect(ex,
              "micro1's step at M = 32 takes <= 2x its step at M = 1 (32x the tokens): both are "
              "the same weight stream, whose bytes do not depend on M (cuBLAS measured the "
              "same 45 us per 128 MiB weight at M = 1 and 32)",
              uf_value(rep, m32, "step_ms") / uf_value(rep, m1, "step_ms"), UF_LE, 2.0);
    const uf_row *large = uf_find(rep, "large_micro", NULL);
    uf_expect(ex,
              "large_micro's tokens/s >= 30x micro1's at M = 1: its GEMMs run near the ceiling "
              "while micro1's stream 6 bytes per weight for 1 token (~260x by the model)",
              uf_value(rep, large, "tokens_per_s") / uf_value(rep, m1, "tokens_per_s"), UF_GE,
              30.0);
    uf_expect(ex,
              "large_micro's tokens/s >= 4x micro1's at M = 32: the same weight stream carries "
              "32 tokens, still 12 % of the ceiling (8x by the model)",
              uf_value(rep, large, "tokens_per_s") / uf_value(rep, m32, "tokens_per_s"), UF_GE,
              4.0);
}

/* The two kernels NVML calls busy, and what the counters say instead. */
static void expect_nvml_lies(const uf_report *rep, uf_expectations *ex)
{
    const char *nvml = "a kernel runs for the whole step and the next is queued behind it: "
                       "every NVML period has one running, which is all NVML counts";
    uf_expect_full_run(ex, SB_NVML_PERIOD);
    uf_expect_metric(ex, rep, "one_block", NULL, "nvml_util_pct", UF_GE, 90.0, nvml);
    uf_expect_metric(ex, rep, "one_block", NULL, "sm_active_pct", UF_LE, 2.0,
                     "one block occupies one SM of 132 (0.8 %): the counters see the other "
                     "131 idle");
    uf_expect_full_run(ex, SB_NVML_PERIOD);
    uf_expect_metric(ex, rep, "latency_bound", NULL, "nvml_util_pct", UF_GE, 90.0, nvml);
    uf_expect_metric(ex, rep, "latency_bound", NULL, "sm_active_pct", UF_GE, 80.0,
                     "every SM holds a resident warp for the whole step: SM active, a "
                     "residency count, calls them all busy too");
    uf_expect_metric(ex, rep, "latency_bound", NULL, "tensor_active_pct", UF_LE, 1.0,
                     "pointer chasing issues integer loads only: no tensor instruction");
    uf_expect_metric(ex, rep, "latency_bound", NULL, "dram_pct", UF_LE, 5.0,
                     "one dependent 4-byte load per SM in flight, ~1 us each: ~132 sectors "
                     "per microsecond, well under 1 % of HBM's bandwidth");
}

static void sb_expect(const uf_report *rep, uf_expectations *ex)
{
    expect_small_m(rep, ex);
    expect_tokens_for_free(rep, ex);
    uf_expect_metric(ex, rep, "accumulate", NULL, "pct_of_gemm", UF_LE, 15.0,
                     "accumulation runs micro1's M = 32 GEMMs G/M times over: the batch grows, "
                     "each GEMM's shape, and so its rate, does not");
    uf_expect_ratio(ex, rep, "accumulate", "micro1", NULL, "tokens_per_s", UF_LE, 1.1,
                    "the same GEMMs per token, plus the accumulated gradients read back once "
                    "per micro-batch: no faster than micro1");
    uf_expect_metric(ex, rep, "large_micro", NULL, "pct_of_gemm", UF_GE, 85.0,
                     "at G = 4096 rows every GEMM does 4096 FLOPs per weight byte, 20x the "
                     "GPU's FLOP-per-byte ratio: compute-bound, near the measured ceiling "
                     "(cuBLAS measured 97 % at M = 2048 on 4096 x 16384)");
    expect_nvml_lies(rep, ex);
}

/* ---- the scenario table ------------------------------------------------------------------------ */

static const uf_variant_desc sb_variants[SB_N_VARIANTS] = {
    {.name = "micro1", .role = UF_BROKEN,
     .summary = "one micro-batch of M tokens per step: every GEMM M rows tall"},
    {.name = "accumulate", .role = UF_BROKEN,
     .summary = "the global batch as G/M micro-batches of M, gradients accumulated: same GEMMs"},
    {.name = "large_micro", .role = UF_FIXED,
     .summary = "the global batch as one micro-batch of G tokens: compute-bound GEMMs"},
    {.name = "one_block", .role = UF_BROKEN,
     .summary = "one thread block spinning for the step: NVML 100 %, one SM busy"},
    {.name = "latency_bound", .role = UF_BROKEN,
     .summary = "one warp per SM chasing pointers through HBM: SMs 'active', nothing flowing"},
    {.name = "wave", .role = UF_BROKEN,
     .summary = "one M x 8192 x 8192 GEMM (cublasLt): its tiles against the SMs (report)"},
};

static const double sb_tokens_values[] = {1,    2,    4,    8,    16,   32,   64,
                                          128,  256,  512,  1024, 1792, 1920, 2048,
                                          2176, 2304, 4096, 8192, 16384};
static const double sb_tokens_quick[] = {1, 32, 2048};
static const double sb_global_values[] = {4096};
static const double sb_d_values[] = {4096};

static const uf_axis_desc sb_axes[] = {
    {.name = "tokens", .unit = "tokens",
     .summary = "M: tokens per micro-batch, the rows of every GEMM (and of the wave GEMM)",
     UF_AXIS_INTS(1, 65536),
     .default_value = 32, .values = sb_tokens_values,
     .n_values = (int)(sizeof sb_tokens_values / sizeof sb_tokens_values[0]),
     .quick_values = sb_tokens_quick,
     .n_quick_values = (int)(sizeof sb_tokens_quick / sizeof sb_tokens_quick[0])},
    {.name = "global_tokens", .unit = "tokens",
     .summary = "G: the global batch of accumulate and large_micro", UF_AXIS_INTS(1, 65536),
     .default_value = 4096, .values = sb_global_values, .n_values = 1,
     .quick_values = sb_global_values, .n_quick_values = 1},
    {.name = "d_model", .unit = "features",
     .summary = "d: model width (QKV 3d, MLP 4d; a multiple of 64)", UF_AXIS_INTS(64, 16384),
     .default_value = 4096, .values = sb_d_values, .n_values = 1, .quick_values = sb_d_values,
     .n_quick_values = 1},
};

static const uf_extra_desc sb_extras[SB_N_EXTRAS] = {
    {.name = "tokens_per_s", .unit = "tokens/s", .summary = "tokens of the step / step time"},
    {.name = "tokens_per_step", .unit = "tokens", .summary = "micro-batches x tokens each"},
    {.name = "micro_batches", .unit = "micro-batches", .summary = "forward+backward passes per step"},
    {.name = "act_bytes", .unit = "B",
     .summary = "activations one micro-batch keeps for its backward (9*d per token and layer)"},
    {.name = "tile_rows", .unit = "outputs", .summary = "wave: the tile's extent over the 8192 "
                                                        "output features (cuBLAS m)"},
    {.name = "tile_cols", .unit = "tokens", .summary = "wave: the tile's extent over M (cuBLAS n)"},
    {.name = "splitk", .unit = "slices", .summary = "wave: split-K slices per output tile"},
    {.name = "tiles", .unit = "blocks", .summary = "wave: output tiles x split-K slices"},
    {.name = "waves", .unit = "waves", .summary = "wave: tiles / SMs"},
    {.name = "wave_eff_pct", .unit = "%",
     .summary = "wave: tiles / (SMs x whole waves): SM slots with a tile"},
    {.name = "tile_fill_pct", .unit = "%",
     .summary = "wave: M*N / area of the tiles: outputs that are not padding"},
};

static const uf_scenario sb_scenario = {
    .name = "small_batch",
    .title = "Micro-batches too small to fill the GPU, and what nvidia-smi says meanwhile",
    .failure = "With a few dozen tokens per micro-batch every GEMM of the step is a few dozen "
               "rows tall: it streams its weights from HBM at the copy rate and does 2 FLOPs "
               "per weight and token, a few % of the tensor cores' rate, while nvidia-smi "
               "reports the GPU 100 % busy. Gradient accumulation keeps the same small GEMMs.",
    .fix = "Grow the micro-batch (checkpointing activations where memory runs out) until each "
           "GEMM is compute-bound: the step time barely changes up to M ~ 128, so tokens per "
           "second grow almost in proportion.",
    .variants = sb_variants,
    .n_variants = SB_N_VARIANTS,
    .axes = sb_axes,
    .n_axes = (int)(sizeof sb_axes / sizeof sb_axes[0]),
    .extras = sb_extras,
    .n_extras = SB_N_EXTRAS,
    .min_gpus = 1,
    .repeat = 10,
    .quick_repeat = 3,
    .warmup = 2,
    .warmup_min_ms = 0,
    .step_stat = UF_STAT_MEDIAN,
    .setup = sb_setup,
    .begin_variant = sb_begin_variant,
    .end_variant = sb_end_variant,
    .run_step = sb_run_step,
    .verify = sb_verify,
    .describe = sb_describe,
    .teardown = sb_teardown,
    .expect = sb_expect,
};

int main(int argc, char **argv) { return uf_main(&sb_scenario, argc, argv); }

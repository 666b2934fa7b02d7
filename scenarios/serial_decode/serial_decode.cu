/* serial_decode: generating one token at a time. Each decode step of a batch-1 sequence is a
 * pass through every layer with one row: every matrix product is a matrix-vector product
 * that streams its whole weight matrix from HBM for one token, and a small model adds dozens
 * of launches per token. A step is a copy of the weights (and of the KV cache): its floor is
 * their bytes over the copy bandwidth, whatever the kernels do; only decoding several
 * sequences per weight read (batching) moves past it.
 *
 * The model (serial_decode_ref.h): SD_LAYERS pre-norm layers of width d (64-wide heads, 4
 * query heads per KV head, a GELU MLP of 4d), a ring KV cache of SD_CACHE positions, a
 * vocabulary of SD_VOCAB; bf16 weights and cache, fp32 accumulation and residual; greedy
 * decoding, each step's argmax fed back on the device.
 *   eager_b1     batch 1, one launch per op: embed, per layer QKV GEMV (its RMSNorm and the
 *                cache write inside), attention, O GEMV, MLP up, MLP down, then the head and
 *                the argmax: 5 L + 3 kernels a token (broken: at small d the launches);
 *   graph_b1     the same kernels replayed from a CUDA graph (broken: the launch gaps go, the
 *                weight stream stays);
 *   persistent   one cooperative kernel per token: every layer, grid barriers between
 *                dependent phases, each warp's weights streamed through a shared-memory ring
 *                that runs ahead across the barriers (broken: the floor of batch 1, at the
 *                copy rate; still one token per weight read);
 *   batched      SD_BATCH sequences in lockstep (continuous batching's steady state): cuBLAS
 *                GEMMs of M = SD_BATCH rows, the same weight stream for SD_BATCH tokens, each
 *                sequence's own cache (fixed).
 * See README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "serial_decode_state.h"
#include "uf_cublas.h"

/* ---- the failure: one token per step, one launch per op --------------------------------------
 * Every kernel but the first is launched with programmatic stream serialization: it starts in
 * its predecessor's tail, issues its first weight loads, and waits for its input there. */
int sd_enqueue_ops(const sd_model *m, int only_gemv, cudaStream_t stream)
{
    int rc = UF_OK;
    const int L = m->s.layers;
    if (!only_gemv)
        UF_STATUS_OR_GOTO(rc, sd_launch_embed(m, stream), out);
    for (int l = 0; l < L; l++) {
        UF_STATUS_OR_GOTO(rc, sd_launch_gemv(m, 4 * l + SD_QKV, only_gemv ? l > 0 : 1, stream),
                          out);
        if (!only_gemv)
            UF_STATUS_OR_GOTO(rc, sd_launch_attention(m, l, 1, stream), out);
        for (int j = SD_O; j <= SD_DOWN; j++)
            UF_STATUS_OR_GOTO(rc, sd_launch_gemv(m, 4 * l + j, 1, stream), out);
    }
    UF_STATUS_OR_GOTO(rc, sd_launch_gemv(m, 4 * L, 1, stream), out);          /* the head */
    if (!only_gemv)
        UF_STATUS_OR_GOTO(rc, sd_launch_argmax(m, 1, stream), out);
out:
    return rc;
}

/* ---- fix 2: many sequences per weight read ---------------------------------------------------
 * Y (batch x rows, fp32) = X (batch x cols, bf16) W^T, plus beta Y: x += for the residual. */
static int gemm(sd_state *st, int ph, const bf16 *in, float beta, float *out)
{
    int rc = UF_OK;
    const sd_model *m = &st->m;
    const int head = ph == 4 * m->s.layers;
    const int rows = head ? m->s.vocab : sd_mat_rows(&m->s, ph % 4);
    const int cols = head ? m->s.d : sd_mat_cols(&m->s, ph % 4);
    const bf16 *w = head ? m->head
                         : m->layers + (size_t)(ph / 4) * sd_layer_elems(&m->s) +
                               sd_mat_offset(&m->s, ph % 4);
    const float one = 1.0f;
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(st->blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, m->s.batch,
                                       cols, &one, w, CUDA_R_16BF, cols, in, CUDA_R_16BF, cols,
                                       &beta, out, CUDA_R_32F, rows, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT), out);
out:
    return rc;
}

/* The same layer for SD_BATCH sequences: its small kernels once for all of them, each GEMM's
 * weights read once for SD_BATCH rows. */
int sd_enqueue_batched(sd_state *st, cudaStream_t stream)
{
    int rc = UF_OK;
    const sd_model *m = &st->m;
    const int L = m->s.layers;
    UF_STATUS_OR_GOTO(rc, sd_launch_embed(m, stream), out);
    for (int l = 0; l < L; l++) {
        UF_STATUS_OR_GOTO(rc, sd_launch_rmsnorm(m, stream), out);
        UF_STATUS_OR_GOTO(rc, gemm(st, 4 * l + SD_QKV, m->h, 0.0f, m->qkv), out);
        UF_STATUS_OR_GOTO(rc, sd_launch_scatter(m, l, stream), out);
        UF_STATUS_OR_GOTO(rc, sd_launch_attention(m, l, 0, stream), out);
        UF_STATUS_OR_GOTO(rc, gemm(st, 4 * l + SD_O, m->a, 1.0f, m->x), out);
        UF_STATUS_OR_GOTO(rc, sd_launch_rmsnorm(m, stream), out);
        UF_STATUS_OR_GOTO(rc, gemm(st, 4 * l + SD_UP, m->h, 0.0f, m->upf), out);
        UF_STATUS_OR_GOTO(rc, sd_launch_gelu(m, stream), out);
        UF_STATUS_OR_GOTO(rc, gemm(st, 4 * l + SD_DOWN, m->u, 1.0f, m->x), out);
    }
    UF_STATUS_OR_GOTO(rc, sd_launch_rmsnorm(m, stream), out);
    UF_STATUS_OR_GOTO(rc, gemm(st, 4 * L, m->h, 0.0f, m->logits), out);
    UF_STATUS_OR_GOTO(rc, sd_launch_argmax(m, 0, stream), out);
out:
    return rc;
}

/* ---- fix 1: the same launches, replayed -------------------------------------------------------
 * graph_b1 (eager_b1's launches, or their GEMVs alone) or batched, captured once. */
int sd_capture(sd_state *st, int variant, int only_gemv, cudaStream_t stream,
               cudaGraphExec_t *exec)
{
    int rc = UF_OK, enqueued;
    cudaError_t ended;
    cudaGraph_t graph = NULL;
    const sd_model one = sd_sequence_view(&st->m, 0);    /* batch 1: sequence 0 alone */
    *exec = NULL;
    UF_CUDA_OR_GOTO(rc, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), out);
    enqueued = variant == V_BATCHED ? sd_enqueue_batched(st, stream)
                                    : sd_enqueue_ops(&one, only_gemv, stream);
    ended = cudaStreamEndCapture(stream, &graph);   /* even after a failed launch */
    UF_STATUS_OR_GOTO(rc, enqueued, out_graph);
    UF_CUDA_OR_GOTO(rc, ended, out_graph);
    UF_CUDA_OR_GOTO(rc, cudaGraphInstantiate(exec, graph, 0), out_graph);
    UF_CUDA_OR_GOTO(rc, cudaGraphUpload(*exec, stream), out_graph);
out_graph:
    if (graph)
        cudaGraphDestroy(graph);
out:
    return rc;
}

int sd_enqueue(sd_state *st, int variant, cudaStream_t stream)
{
    int rc = UF_OK;
    switch (variant) {
    case V_EAGER_B1: {
        const sd_model one = sd_sequence_view(&st->m, 0);
        return sd_enqueue_ops(&one, 0, stream);
    }
    case V_PERSISTENT:   /* the floor of batch 1: one kernel, the weights at the copy rate */
        return sd_launch_persistent(&st->m, &st->plan, stream);
    default:             /* graph_b1, batched */
        if (!st->graph) {
            uf_report_failure(__FILE__, __LINE__, "sd_enqueue", "step run before its graph");
            return UF_ERR;
        }
        UF_CUDA_OR_GOTO(rc, cudaGraphLaunch(st->graph, stream), out);
    }
out:
    return rc;
}

static int sd_run_step(uf_ctx *ctx, int variant)
{
    return sd_enqueue((sd_state *)ctx->state, variant, ctx->stream);
}

/* ---- the claims --------------------------------------------------------------------------------
 * At d = 4096 (the default) the step streams 5.6 GB of layers, 0.27 GB of head and 16 MiB of
 * cache per sequence: 94x the L2, so the copy ceiling is the roof. At d = 256 the whole model
 * (39 MB) sits in L2 and each kernel does a few microseconds of work: the launches are the
 * step. */
static void sd_expect(const uf_report *rep, uf_expectations *ex)
{
    uf_expect_metric(ex, rep, "graph_b1", NULL, "pct_of_copy", UF_GE, 85.0,
                     "a batch-1 step is a copy of the weights and the cache: replayed from a "
                     "graph, its 83 kernels stream them at the copy rate but for each kernel's "
                     "ramp and tail, attention's and the argmax's few us (PyTorch's "
                     "graph-replayed decode, without attention: 86 %)");
    uf_expect_metric(ex, rep, "graph_b1", NULL, "gemv_chain_pct", UF_GE, 90.0,
                     "graph_b1's 65 GEMV kernels alone, replayed as a graph (events, describe): "
                     "weight bytes / their time; each loses only its ramp and tail");
    uf_expect_metric(ex, rep, "persistent", NULL, "pct_of_copy", UF_GE, 92.0,
                     "one kernel per token, its warps' weight rings running ahead through the "
                     "81 grid barriers: HBM streams the whole step (one kernel reading all the "
                     "weights: ~95 % of copy)");
    uf_expect_metric(ex, rep, "eager_b1", "d_model=256", "busy_pct", UF_LE, 60.0,
                     "at d = 256 a kernel runs ~1-2 us and a launch costs the host ~3.2 us "
                     "(launch_us): the GPU waits for the next launch most of the step");
    uf_expect_ratio(ex, rep, "eager_b1", "graph_b1", "d_model=256", "step_ms", UF_GE, 1.5,
                    "eager's step is ~83 launches (launch_us ~3.2 us each), graph_b1's ~83 "
                    "replayed dependent kernels (~1.9 us each): the ratio is launch_us over "
                    "the replayed kernel, 1.7-2.1 on the H200's hosts");
    uf_expect_ratio(ex, rep, "batched", "graph_b1", NULL, "tokens_per_s", UF_GE, 40.0,
                    "64 sequences share one read of the weights (GEMMs of M = 64 are still "
                    "memory-bound) and add only their caches (1 GiB): ~1.2x the bytes for 64x "
                    "the tokens");
}

/* ---- the scenario table -------------------------------------------------------------------------- */

static const uf_variant_desc sd_variants[SD_N_VARIANTS] = {
    {.name = "eager_b1", .role = UF_BROKEN,
     .summary = "batch 1, one launch per op: 5 L + 3 kernels a token"},
    {.name = "graph_b1", .role = UF_BROKEN,
     .summary = "batch 1, the same kernels replayed from a CUDA graph"},
    {.name = "persistent", .role = UF_BROKEN,
     .summary = "batch 1, one persistent kernel per token: the floor of batch 1"},
    {.name = "batched", .role = UF_FIXED,
     .summary = "64 sequences in lockstep: GEMMs of 64 rows, one weight read for 64 tokens"},
};

static const double sd_d_values[] = {256, 1024, 4096};
static const double sd_d_quick[] = {256, 4096};
static const double sd_bps_values[] = {1};
static const double sd_warps_values[] = {16};
static const double sd_ring_values[] = {128};

static const uf_axis_desc sd_axes[] = {
    {.name = "d_model", .unit = "features",
     .summary = "d: model width (a multiple of 256)", UF_AXIS_INTS(256, 16384),
     .default_value = 4096, .values = sd_d_values,
     .n_values = (int)(sizeof sd_d_values / sizeof sd_d_values[0]), .quick_values = sd_d_quick,
     .n_quick_values = (int)(sizeof sd_d_quick / sizeof sd_d_quick[0])},
    {.name = "p_bps", .unit = "blocks",
     .summary = "persistent: blocks per SM (all resident: cooperative launch)",
     UF_AXIS_INTS(1, 4), .default_value = 1, .values = sd_bps_values, .n_values = 1,
     .quick_values = sd_bps_values, .n_quick_values = 1},
    {.name = "p_warps", .unit = "warps", .summary = "persistent: warps per block",
     UF_AXIS_INTS(1, SD_P_MAX_WARPS), .default_value = 16, .values = sd_warps_values,
     .n_values = 1, .quick_values = sd_warps_values, .n_quick_values = 1},
    {.name = "p_ring_kib", .unit = "KiB",
     .summary = "persistent: weight ring per SM (prefetch depth: stages of 2 KiB per warp)",
     UF_AXIS_INTS(2, 224), .default_value = 128, .values = sd_ring_values, .n_values = 1,
     .quick_values = sd_ring_values, .n_quick_values = 1},
};

static const uf_extra_desc sd_extras[SD_N_EXTRAS] = {
    {.name = "tokens_per_s", .unit = "tokens/s", .summary = "sequences x steps / time"},
    {.name = "batch", .unit = "sequences", .summary = "sequences decoded per step"},
    {.name = "weight_bytes", .unit = "B", .summary = "layers and head read per step"},
    {.name = "cache_bytes", .unit = "B", .summary = "KV cache read per step (all sequences)"},
    {.name = "launches_per_step", .unit = "launches", .summary = "host launches per step"},
    {.name = "gemv_chain_ms", .unit = "ms",
     .summary = "graph_b1: its GEMV kernels alone replayed as a graph, per step (events)"},
    {.name = "gemv_chain_pct", .unit = "%",
     .summary = "graph_b1: weight bytes / gemv_chain_ms, % of the copy ceiling"},
    {.name = "bitwise_diff", .unit = "logits",
     .summary = "verify: logits not bit-equal to eager_b1's, over the steps compared"},
    {.name = "steps_compared", .unit = "steps",
     .summary = "verify: decode steps compared with eager_b1 (or the host, for eager_b1)"},
    {.name = "p_stages", .unit = "stages", .summary = "persistent: ring stages per warp"},
    {.name = "p_grid", .unit = "blocks", .summary = "persistent: blocks of the cooperative grid"},
    {.name = "p_bulk", .unit = "0/1", .summary = "persistent: ring filled by bulk copies (1) or by "
                                             "every lane's 16-byte cp.async (0); -DSD_P_BULK"},
};

static const uf_scenario sd_scenario = {
    .name = "serial_decode",
    .title = "Generating one token at a time: every step a copy of the weights",
    .failure = "At batch 1 every matrix product of a decode step is a GEMV that streams its "
               "whole weight matrix from HBM for one token: the step is a copy of the model, "
               "and at small widths its dozens of launches cost more than its kernels.",
    .fix = "Decode many sequences together (continuous batching): one weight read serves them "
           "all. A CUDA graph removes the launch gaps and a persistent kernel reaches the copy "
           "rate, but neither moves past one token per weight read.",
    .variants = sd_variants,
    .n_variants = SD_N_VARIANTS,
    .axes = sd_axes,
    .n_axes = (int)(sizeof sd_axes / sizeof sd_axes[0]),
    .extras = sd_extras,
    .n_extras = SD_N_EXTRAS,
    .min_gpus = 1,
    .repeat = 50,
    .quick_repeat = 20,
    .warmup = 5,
    .warmup_min_ms = 200,
    .step_stat = UF_STAT_MEDIAN,
    .setup = sd_setup,
    .begin_variant = sd_begin_variant,
    .end_variant = sd_end_variant,
    .run_step = sd_run_step,
    .verify = sd_verify,
    .describe = sd_describe,
    .teardown = sd_teardown,
    .expect = sd_expect,
};

int main(int argc, char **argv) { return uf_main(&sd_scenario, argc, argv); }

/* checkpoint_recompute: activation checkpointing of a stack of transformer MLP blocks,
 * y = x + W2·gelu(W1·LN(x)), in bf16 with cuBLAS GEMMs and hand-written LayerNorm / GELU /
 * residual kernels, forward and backward (gradients of the input and of every weight).
 *
 * Four activation policies (variants) run the very same kernels; they differ only in what the
 * forward pass keeps for the backward pass and what the backward pass recomputes:
 *   store_all  keeps everything (no recompute): the time reference, most memory;
 *   full       keeps each block's input, re-runs each block's forward in backward (broken:
 *              the usual "checkpoint every layer" default, +1/6 GEMM FLOPs);
 *   every_k    keeps the input of every k-th block, re-runs k-block segments (as
 *              torch.utils.checkpoint_sequential does);
 *   selective  keeps each block's input and GEMM output h, recomputes only LN(x) and gelu(h)
 *              (Korthikanti et al. 2022): about half the memory at almost no extra time.
 *
 * Activations come from a bump arena (free-to-mark, LIFO) that records its peak. A dry run of
 * the step's allocation sequence (the same code, no kernels) sizes each variant's arena, so
 * cudaMemGetInfo around its cudaMalloc shows what the policy really holds. Because recompute
 * re-runs the same kernels on bitwise-equal inputs on one stream, every policy's gradients equal
 * store_all's bit for bit; verify checks that, and anchors store_all against an fp64 host
 * reference on a tiny model. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "uf_cublas.h"
#include "checkpoint_recompute_ref.h"       /* random inputs, fp64 host reference (plain C) */
#include "checkpoint_recompute_kernels.h"   /* LN/GELU/residual kernels */
#include "checkpoint_recompute_model.h"     /* the arena, the model, one block forward, backward */
#include "checkpoint_recompute_state.h"     /* the state, the policies' ids */
#include "checkpoint_recompute_setup.h"     /* setup, teardown, each variant's arena */
#include "checkpoint_recompute_verify.h"    /* verify */

/* ---- constants ------------------------------------------------------------------------- */

enum { X_ACT_PEAK, X_MEMGETINFO, X_MFU, X_HFU, X_RECOMPUTE, X_GRAD_MISMATCH, CR_N_EXTRAS };

/* ---- the policies ------------------------------------------------------------------------ */

/* Keep every activation; backward frees each block's region after its own backward. */
static int step_store_all(cr_model *m)
{
    int rc = UF_OK;
    const bf16 *x = m->x0;
    for (int i = 0; i < m->L; i++) {
        cr_acts *a = &m->acts[i];
        memset(a, 0, sizeof *a);
        a->mark = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_STATS | ACT_XN | ACT_H | ACT_G | ACT_Y), out);
        UF_STATUS_OR_GOTO(rc, block_forward(m, i, x, a, a->y), out);
        x = a->y;
    }
    UF_STATUS_OR_GOTO(rc, begin_backward(m), out);
    for (int i = m->L - 1; i >= 0; i--) {
        UF_STATUS_OR_GOTO(rc, block_backward(m, i, i == 0 ? m->x0 : m->acts[i - 1].y, &m->acts[i]),
                          out);
        arena_free_to(m->arena, m->acts[i].mark);
    }
out:
    return rc;
}

/* Forward of segment [a, b) from its checkpoint, keeping nothing but its output checkpoint:
 * intermediate block outputs ping-pong between two buffers, per-block temporaries are freed. */
static int segment_forward(cr_model *m, int a, int b)
{
    int rc = UF_OK;
    void *p = NULL;
    bf16 *pp[2] = {NULL, NULL};
    size_t seg_top = 0, tmp_top = 0;
    m->seg_mark[a] = m->arena->top;
    UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, td_elems(m) * sizeof(bf16), &p), out);
    m->ckpt[b] = (bf16 *)p;
    seg_top = m->arena->top;
    for (int k = 0; k < 2 && k < b - a - 1; k++) {
        UF_STATUS_OR_GOTO(rc, arena_alloc(m->arena, td_elems(m) * sizeof(bf16), &p), out);
        pp[k] = (bf16 *)p;
    }
    tmp_top = m->arena->top;
    for (int i = a; i < b; i++) {
        cr_acts t;
        memset(&t, 0, sizeof t);
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, &t, ACT_XN | ACT_H | ACT_G), out);
        UF_STATUS_OR_GOTO(rc, block_forward(m, i, i == a ? m->ckpt[a] : pp[(i - a - 1) % 2], &t,
                                            i == b - 1 ? m->ckpt[b] : pp[(i - a) % 2]),
                          out);
        arena_free_to(m->arena, tmp_top);
    }
    arena_free_to(m->arena, seg_top);
out:
    return rc;
}

/* Backward of segment [a, b): free its output checkpoint (its consumer is done), re-run the
 * segment forward keeping everything its backward needs, then run the blocks' backward,
 * freeing each after its own. The recompute stops at the last tensor the backward needs, as
 * torch.utils.checkpoint does by default (non-reentrant, early stop): the last block's W2 GEMM
 * and residual, whose output is the next segment's checkpoint, are not re-run. */
static int segment_backward(cr_model *m, int a, int b)
{
    int rc = UF_OK;
    arena_free_to(m->arena, m->seg_mark[a]);
    for (int i = a; i < b; i++) {
        cr_acts *t = &m->acts[i];
        const bf16 *x = i == a ? m->ckpt[a] : m->acts[i - 1].y;
        const int last = i == b - 1;
        memset(t, 0, sizeof *t);
        t->mark = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, t, ACT_STATS | ACT_XN | ACT_H | ACT_G |
                                                   (last ? 0 : ACT_Y)),
                          out);
        if (last)
            UF_STATUS_OR_GOTO(rc, block_forward_to_g(m, i, x, t), out);
        else
            UF_STATUS_OR_GOTO(rc, block_forward(m, i, x, t, t->y), out);
    }
    for (int i = b - 1; i >= a; i--) {
        UF_STATUS_OR_GOTO(rc, block_backward(m, i, i == a ? m->ckpt[a] : m->acts[i - 1].y,
                                             &m->acts[i]),
                          out);
        arena_free_to(m->arena, m->acts[i].mark);
    }
out:
    return rc;
}

/* Checkpoint every k-th block (k = 1: every block, the "full" policy). */
static int step_segments(cr_model *m, int k)
{
    int rc = UF_OK;
    const int n_seg = (m->L + k - 1) / k;
    m->ckpt[0] = m->x0;
    for (int s = 0; s < n_seg; s++)
        UF_STATUS_OR_GOTO(rc, segment_forward(m, s * k, s * k + k < m->L ? s * k + k : m->L), out);
    UF_STATUS_OR_GOTO(rc, begin_backward(m), out);
    for (int s = n_seg - 1; s >= 0; s--)
        UF_STATUS_OR_GOTO(rc, segment_backward(m, s * k, s * k + k < m->L ? s * k + k : m->L),
                          out);
out:
    return rc;
}

/* Keep the block input (as the previous block's output), the LayerNorm statistics and the
 * GEMM output h; recompute LN(x) and gelu(h) in backward. */
static int step_selective(cr_model *m)
{
    int rc = UF_OK;
    const bf16 *x = m->x0;
    size_t tmp_top = 0;
    for (int i = 0; i < m->L; i++) {
        cr_acts *a = &m->acts[i];
        memset(a, 0, sizeof *a);
        a->mark = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_STATS | ACT_H | ACT_Y), out);
        tmp_top = m->arena->top;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_XN | ACT_G), out);
        UF_STATUS_OR_GOTO(rc, block_forward(m, i, x, a, a->y), out);
        arena_free_to(m->arena, tmp_top);
        a->xn = a->g = NULL;
        x = a->y;
    }
    UF_STATUS_OR_GOTO(rc, begin_backward(m), out);
    for (int i = m->L - 1; i >= 0; i--) {
        cr_acts *a = &m->acts[i];
        const bf16 *xi = i == 0 ? m->x0 : m->acts[i - 1].y;
        UF_STATUS_OR_GOTO(rc, alloc_acts(m, a, ACT_XN | ACT_G), out);
        /* the same kernels on the same inputs: bitwise the activations of the forward */
        UF_STATUS_OR_GOTO(rc, ln_forward(m, i, xi, a->xn, NULL, NULL), out);
        UF_STATUS_OR_GOTO(rc, ew_launch(m, gelu_forward_kernel, a->h, a->g, th_elems(m)), out);
        UF_STATUS_OR_GOTO(rc, block_backward(m, i, xi, a), out);
        arena_free_to(m->arena, a->mark);
    }
out:
    return rc;
}

/* One training step (forward + backward) of a policy; the arena is empty before and after. */
static int run_policy(cr_model *m, int policy, int k)
{
    int rc = UF_ERR;
    m->arena->top = 0;
    switch (policy) {
    case CR_STORE_ALL: rc = step_store_all(m); break;
    case CR_FULL: rc = step_segments(m, 1); break;
    case CR_EVERY_K: rc = step_segments(m, k); break;
    case CR_SELECTIVE: rc = step_selective(m); break;
    default: break;
    }
    return rc;
}

/* Setup plans each policy by a dry run of run_policy (checkpoint_recompute_setup.cu). */
static int cr_setup(uf_ctx *ctx)
{
    return cr_setup_policies(ctx, run_policy);
}

static int cr_run_step(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    cr_state *st = (cr_state *)ctx->state;
    if (!st->arena.base)
        return uf_fail(ctx, UF_ERR, "run_step before begin_variant: no activation arena");
    UF_STATUS_OR_GOTO(rc, bind_stream(st, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, run_policy(&st->m, variant, st->k), out);
out:
    return rc;
}

static int cr_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    cr_state *st = (cr_state *)ctx->state;
    const cr_model *m = &st->m;
    const double gemm_flops = 2.0 * m->T * (double)m->d * m->hidden; /* one of the six */
    const double useful = 6.0 * m->L * gemm_flops;
    /* A recomputed segment of n blocks re-runs 2n - 1 GEMMs (not its last W2): over the
     * model 2L - segments, L for full (k = 1). */
    const int k = variant == CR_FULL ? 1 : variant == CR_EVERY_K ? (int)uf_axis(ctx, "k") : 0;
    const double recomputed_gemms = k > 0 ? 2.0 * m->L - (m->L + k - 1) / k : 0.0;
    const double executed = useful + recomputed_gemms * gemm_flops;
    const double ceiling_tflops = ctx->ceilings ? ctx->ceilings->gemm_bf16_tflops : NAN;
    const double step_ms = uf_step_ms(ctx, row);   /* the statistic tflops_useful uses */
    const double step_s = step_ms > 0 ? step_ms * 1e-3 : NAN;
    row->useful_flops = useful;
    row->executed_flops = executed;
    row->peak_mem_bytes =
        (double)(model_device_bytes(m) + CR_BLAS_WS_BYTES + st->arena.peak);
    row->extra[X_ACT_PEAK] = (double)st->arena.peak;
    row->extra[X_MEMGETINFO] = (double)(st->setup_mem_bytes + st->arena_mem_bytes);
    row->extra[X_MFU] = 100.0 * useful / step_s / (ceiling_tflops * 1e12);
    row->extra[X_HFU] = 100.0 * executed / step_s / (ceiling_tflops * 1e12);
    row->extra[X_RECOMPUTE] = 100.0 * (executed - useful) / useful;
    row->extra[X_GRAD_MISMATCH] = st->grad_mismatch;
    return UF_OK;
}

/* ---- the expectation ----------------------------------------------------------------------- */

/* At the largest size run (the issue's default in a full run, the quick size with --quick),
 * k at its default. */
#define CR_AT "layers=max,tokens=max,d_model=max"

static void cr_expect(const uf_report *rep, uf_expectations *ex)
{
    static const char *const checked[] = {"store_all", "full", "every_k", "selective"};
    const char *bitwise = "recompute re-runs the same kernels on bitwise-equal inputs on one "
                          "stream with a fixed cuBLAS workspace: gradients equal store_all's "
                          "bit for bit";
    const char *recompute_time = "re-running each block's forward up to gelu(h), as "
                                 "torch.utils.checkpoint does by default, adds 1 of its 6 GEMMs "
                                 "(+17 % GEMM FLOPs) and the LayerNorm and GELU kernels";
    uf_expect_ratio(ex, rep, "full", "store_all", CR_AT, "step_ms", UF_GE, 1.10, recompute_time);
    uf_expect_ratio(ex, rep, "full", "store_all", CR_AT, "step_ms", UF_LE, 1.30, recompute_time);
    uf_expect_ratio(ex, rep, "full", "store_all", CR_AT, "act_peak_bytes", UF_LE, 0.50,
                    "full's peak is the last block's forward: L kept block outputs plus that "
                    "block's LN(x), h and gelu(h) (9 T*d units), against store_all's 10 units "
                    "per block: (L+9)/(10L) = 0.14 at L=24, 0.21 at L=8");
    uf_expect_ratio(ex, rep, "selective", "store_all", CR_AT, "step_ms", UF_LE, 1.10,
                    "recomputing LayerNorm and GELU is memory-bound work worth a few % of a "
                    "block whose six GEMMs do 48*T*d^2 FLOPs");
    uf_expect_ratio(ex, rep, "selective", "store_all", CR_AT, "act_peak_bytes", UF_LE, 0.60,
                    "selective keeps x and h (5 of a block's 10 T*d units) plus one block's "
                    "recomputed LN(x) and gelu(h): (5L+5)/(10L) = 0.52 at L=24, 0.56 at L=8");
    uf_expect_metric(ex, rep, "store_all", CR_AT, "mfu_pct", UF_GE, 75.0,
                     "at d=4096 the GEMMs are ~94 % of the step (elementwise kernels move "
                     "~58*d bytes per token and block against 48*d^2 FLOPs) and large enough "
                     "to run near the measured ceiling");
    for (int v = 0; v < 4; v++)
        uf_expect_metric(ex, rep, checked[v], CR_AT, "grad_mismatch", UF_LE, 0.0, bitwise);
}

/* ---- the scenario table ------------------------------------------------------------------ */

static const uf_variant_desc cr_variants[CR_N_POLICIES] = {
    {.name = "store_all", .role = UF_FIXED,
     .summary = "no checkpointing: every activation kept for backward (the time reference)"},
    {.name = "full", .role = UF_BROKEN,
     .summary = "checkpoint every block: keep block inputs, re-run each block up to GELU in backward"},
    {.name = "every_k", .role = UF_BROKEN,
     .summary = "checkpoint every k-th block: keep segment inputs, re-run k-block segments"},
    {.name = "selective", .role = UF_FIXED,
     .summary = "keep block inputs and GEMM outputs, recompute only LayerNorm and GELU"},
};

static const double cr_k_values[] = {2, 4, 8};
static const double cr_k_quick[] = {4};
static const double cr_layers_values[] = {24};
static const double cr_layers_quick[] = {8};
static const double cr_tokens_values[] = {8192};
static const double cr_tokens_quick[] = {2048};
static const double cr_d_values[] = {4096};
static const double cr_d_quick[] = {4096};

static const uf_axis_desc cr_axes[] = {
    {.name = "k", .unit = "blocks",
     .summary = "every_k: a checkpoint every k blocks (the other policies ignore k)",
     UF_AXIS_INTS(1, 4096),
     .default_value = 4, .values = cr_k_values, .n_values = 3, .quick_values = cr_k_quick,
     .n_quick_values = 1},
    {.name = "layers", .unit = "blocks", .summary = "L: MLP blocks in the stack",
     UF_AXIS_INTS(1, 4096),
     .default_value = 24, .values = cr_layers_values, .n_values = 1,
     .quick_values = cr_layers_quick, .n_quick_values = 1},
    {.name = "tokens", .unit = "tokens", .summary = "T: tokens per step (batch x sequence)",
     UF_AXIS_INTS(1, 1 << 20),
     .default_value = 8192, .values = cr_tokens_values, .n_values = 1,
     .quick_values = cr_tokens_quick, .n_quick_values = 1},
    {.name = "d_model", .unit = "features", .summary = "d: model width (hidden 4d, multiple of 64)",
     UF_AXIS_INTS(64, 32768),
     .default_value = 4096, .values = cr_d_values, .n_values = 1, .quick_values = cr_d_quick,
     .n_quick_values = 1},
};

static const uf_extra_desc cr_extras[CR_N_EXTRAS] = {
    {.name = "act_peak_bytes", .unit = "B",
     .summary = "peak of the activation arena: kept plus recomputed activations"},
    {.name = "memgetinfo_bytes", .unit = "B",
     .summary = "device memory the scenario's allocations took, by cudaMemGetInfo"},
    {.name = "mfu_pct", .unit = "%",
     .summary = "useful GEMM FLOPs / step time / measured bf16 GEMM ceiling"},
    {.name = "hfu_pct", .unit = "%",
     .summary = "executed GEMM FLOPs (recompute included) / step time / ceiling"},
    {.name = "recompute_pct", .unit = "%", .summary = "(executed - useful) / useful FLOPs"},
    {.name = "grad_mismatch", .unit = "elements",
     .summary = "gradient elements differing bitwise from store_all's (verify)"},
};

static const uf_scenario cr_scenario = {
    .name = "checkpoint_recompute",
    .title = "Activation checkpointing: full recompute vs selective, memory against step time",
    .failure = "Checkpointing every block keeps only block inputs and re-runs each block's "
               "forward (up to the last tensor its backward needs, as torch.utils.checkpoint "
               "does) in the backward pass: activation memory falls to a fraction, but a sixth "
               "more GEMM FLOPs run, so the step is ~1/6 slower while the tensor cores look as "
               "busy as ever (a seventh of their work is recompute).",
    .fix = "Keep the GEMM outputs and recompute only the cheap LayerNorm and GELU (selective "
           "recompute): about half of store_all's activation memory at almost no extra time.",
    .variants = cr_variants,
    .n_variants = CR_N_POLICIES,
    .axes = cr_axes,
    .n_axes = 4,
    .extras = cr_extras,
    .n_extras = CR_N_EXTRAS,
    .min_gpus = 1,
    .repeat = 10,
    .quick_repeat = 10,
    .warmup = 2,
    .warmup_min_ms = 0,
    .step_stat = UF_STAT_MEDIAN,
    .setup = cr_setup,
    .begin_variant = cr_begin_variant,
    .end_variant = cr_end_variant,
    .run_step = cr_run_step,
    .verify = cr_verify,
    .describe = cr_describe,
    .teardown = cr_teardown,
    .expect = cr_expect,
};

int main(int argc, char **argv) { return uf_main(&cr_scenario, argc, argv); }

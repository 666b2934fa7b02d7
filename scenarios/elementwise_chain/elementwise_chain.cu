/* elementwise_chain: the tail of a transformer layer (bias add, GELU, dropout, scale, residual
 * add, and more elementwise ops up to N) applied to an activation tensor many times the size
 * of the L2. `unfused` runs one kernel per op, each reading and writing the whole tensor;
 * `fused` runs the chain in one pass, 16-byte loads and stores, intermediates in registers.
 * Both are memory-bound: fusion wins by moving fewer bytes, and its speed-up follows the ratio
 * of bytes moved. Both variants run the same kernel (ops [first, end) of the table), so the
 * only differences are the bytes moved and where results are rounded to the storage type. */
#include <stdint.h>
#include <stdio.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "elementwise_chain_ref.h"        /* the op table, the host reference (plain C) */
#include "elementwise_chain_kernels.h"    /* the chain kernel, fill and check kernels */
#include "elementwise_chain_state.h"      /* the state, the variant ids */
#include "elementwise_chain_setup.h"      /* setup, the inputs */
#include "elementwise_chain_verify.h"     /* bitwise, device and host references */
#include "elementwise_chain_describe.h"   /* bytes moved, describe, teardown */

/* One launch: ops [first, end) from `in` to the output tensor. */
static int ew_launch_ops(uf_ctx *ctx, const ew_state *st, const void *in, int first, int end)
{
    int rc = UF_OK;
    ew_launch p = {
        .in = in,
        .out = st->y,
        .residual = st->residual,
        .bias = st->bias,
        .rows = (uint32_t)(st->n / EW_HIDDEN),
        .first = first,
        .end = end,
        .load_residual = ew_ops_read(first, end, 0),
        .load_bias = ew_ops_read(first, end, 1),
        .seed = st->seed,
    };
    if (st->bits == 32)
        ew_chain_f32<<<p.rows, EW_BLOCK, 0, ctx->stream>>>(p);
    else
        ew_chain_bf16<<<p.rows, EW_BLOCK, 0, ctx->stream>>>(p);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* unfused: op k reads the tensor op k-1 wrote (the input for k = 0) and writes it back, in
 * place, rounding to the storage type each time. fused: all N ops in one pass. */
static int ew_run_step(uf_ctx *ctx, int variant)
{
    const ew_state *st = (const ew_state *)ctx->state;
    if (variant == EW_FUSED)
        return ew_launch_ops(ctx, st, st->x, 0, st->n_ops);
    for (int k = 0; k < st->n_ops; ++k) {
        int rc = ew_launch_ops(ctx, st, k == 0 ? st->x : st->y, k, k + 1);
        if (rc != UF_OK)
            return rc;
    }
    return UF_OK;
}

/* The claims. Each names its physical reason. */
static void ew_expect(const uf_report *rep, uf_expectations *ex)
{
    const double *ops_run = NULL;
    const int n_ops_run = uf_axis_values(rep, "ops", &ops_run);
    for (int k = 0; k < n_ops_run; ++k) {
        char at_ops[32];
        snprintf(at_ops, sizeof at_ops, "ops=%.17g", ops_run[k]);
        uf_expect_metric(ex, rep, "fused", at_ops, "pct_of_copy", UF_GE, 90.0,
                         "one pass moves only the bytes the chain needs, with 16-byte "
                         "accesses and a block per row on every SM, and its few flops per byte "
                         "hide under the memory time: it streams like a copy");
    }

    const uf_row *u_max = uf_find(rep, "unfused", "ops=max");
    const uf_row *f_max = uf_find(rep, "fused", "ops=max");
    double speedup_vs_bytes = uf_value(rep, u_max, "step_ms") / uf_value(rep, f_max, "step_ms") /
                              uf_value(rep, f_max, "bytes_ratio");
    uf_expect(ex,
              "at the largest N, the fusion speed-up (unfused/fused step_ms) is >= 0.8x the "
              "ratio of bytes moved: both stream at about the copy rate, so time follows bytes",
              speedup_vs_bytes, UF_GE, 0.8);
    uf_expect(ex,
              "at the largest N, the fusion speed-up is <= 1.2x the ratio of bytes moved: "
              "fusion saves bytes, not flops; it cannot beat the bandwidth saved",
              speedup_vs_bytes, UF_LE, 1.2);

    const uf_row *u_min = uf_find(rep, "unfused", "ops=min");
    if (uf_value(rep, u_max, "ops") > uf_value(rep, u_min, "ops")) {
        double growth_vs_bytes =
            uf_value(rep, u_max, "step_ms") / uf_value(rep, u_min, "step_ms") /
            (uf_value(rep, u_max, "bytes_moved") / uf_value(rep, u_min, "bytes_moved"));
        uf_expect(ex,
                  "unfused step time grows with N like its bytes (step_ms(max N)/step_ms(min N) "
                  ">= 0.75x the bytes_moved ratio): each op is one more full round trip to HBM",
                  growth_vs_bytes, UF_GE, 0.75);
        uf_expect(ex,
                  "unfused step time grows no faster than its bytes (<= 1.25x the bytes_moved "
                  "ratio): every op kernel is bandwidth-bound, none adds compute time",
                  growth_vs_bytes, UF_LE, 1.25);
    }

    const char *why_dram = "a few flops per byte: the kernels wait on HBM, whichever the variant";
    const char *why_tensor = "elementwise math runs on the FP32 pipes; no tensor core has "
                             "anything to do, fused or not";
    uf_expect_metric(ex, rep, "unfused", NULL, "dram_pct", UF_GE, 60.0, why_dram);
    uf_expect_metric(ex, rep, "fused", NULL, "dram_pct", UF_GE, 60.0, why_dram);
    uf_expect_metric(ex, rep, "unfused", NULL, "tensor_active_pct", UF_LE, 1.0, why_tensor);
    uf_expect_metric(ex, rep, "fused", NULL, "tensor_active_pct", UF_LE, 1.0, why_tensor);
}

/* ---- the table of the scenario --------------------------------------------------------- */

static const uf_variant_desc ew_variants[] = {
    {.name = "unfused", .role = UF_BROKEN,
     .summary = "one kernel per op: each reads and writes the whole tensor (N round trips)"},
    {.name = "fused", .role = UF_FIXED,
     .summary = "one kernel for the chain: 16-byte loads, intermediates in registers, one pass"},
};

static const double ew_ops_values[] = {1, 2, 3, 4, 5, 6, 8, 12, 16};
static const double ew_ops_quick[] = {1, 5, 16};
static const double ew_bits_values[] = {32, 16};

/* bits: the storage type by name; the results hold the bit count. */
static const uf_axis_choice ew_bits_choices[] = {{"fp32", 32}, {"bf16", 16}};

static const uf_axis_desc ew_axes[] = {
    {.name = "ops", .unit = "ops",
     .summary = "ops of the chain applied: the first N rows of the op table (1..16)",
     UF_AXIS_INTS(1, EW_MAX_OPS),
     .default_value = 5, .values = ew_ops_values,
     .n_values = (int)(sizeof ew_ops_values / sizeof ew_ops_values[0]),
     .quick_values = ew_ops_quick,
     .n_quick_values = (int)(sizeof ew_ops_quick / sizeof ew_ops_quick[0])},
    {.name = "bits", .unit = "bits",
     .summary = "storage type: 32 = fp32, 16 = bf16 (math in fp32 registers either way)",
     UF_AXIS_CHOICES(ew_bits_choices),
     .default_value = 32, .values = ew_bits_values,
     .n_values = (int)(sizeof ew_bits_values / sizeof ew_bits_values[0]),
     .quick_values = ew_bits_values,
     .n_quick_values = (int)(sizeof ew_bits_values / sizeof ew_bits_values[0])},
};

static const uf_extra_desc ew_extras[] = {
    {.name = "bytes_moved", .unit = "bytes",
     .summary = "bytes through DRAM per step, counted from the op table"},
    {.name = "intensity_flop_per_byte", .unit = "flop/B",
     .summary = "flops per step / bytes_moved: where the variant sits on the roofline"},
    {.name = "bytes_ratio", .unit = "x",
     .summary = "unfused bytes_moved / fused bytes_moved at this point"},
};

static const uf_scenario ew_scenario = {
    .name = "elementwise_chain",
    .title = "Elementwise chain (bias, GELU, dropout, scale, residual, ...): a kernel per op "
             "vs one fused pass",
    .failure = "Each elementwise op of the layer's tail runs as its own kernel, reading and "
               "writing the whole activation tensor: N ops move it through HBM N times. Every "
               "kernel keeps the GPU busy at near-peak bandwidth, yet most bytes are intermediates.",
    .fix = "Fuse the chain into one kernel: read the input (and residual) once with 16-byte "
           "loads, keep intermediates in registers, write once. Time falls by the bytes saved.",
    .variants = ew_variants,
    .n_variants = (int)(sizeof ew_variants / sizeof ew_variants[0]),
    .axes = ew_axes,
    .n_axes = (int)(sizeof ew_axes / sizeof ew_axes[0]),
    .extras = ew_extras,
    .n_extras = (int)(sizeof ew_extras / sizeof ew_extras[0]),
    .min_gpus = 1,
    .repeat = 20,
    .quick_repeat = 10,
    .warmup = 3,
    .warmup_min_ms = 0,
    .step_stat = UF_STAT_MEDIAN,
    .setup = ew_setup,
    .begin_variant = NULL,
    .end_variant = NULL,
    .run_step = ew_run_step,
    .verify = ew_verify,
    .describe = ew_describe,
    .teardown = ew_teardown,
    .expect = ew_expect,
};

int main(int argc, char **argv)
{
    return uf_main(&ew_scenario, argc, argv);
}

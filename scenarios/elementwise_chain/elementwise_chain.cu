/* elementwise_chain: the tail of a transformer layer (bias add, GELU, dropout, scale, residual
 * add, and more elementwise ops up to N) applied to an activation tensor many times the size
 * of the L2. `unfused` runs one kernel per op, each reading and writing the whole tensor;
 * `fused` runs the chain in one pass, 16-byte loads and stores, intermediates in registers.
 * Both are memory-bound: fusion wins by moving fewer bytes, and its speed-up follows the ratio
 * of bytes moved. Both variants run the same kernel (ops [first, end) of the table), so the
 * only differences are the bytes moved and where results are rounded to the storage type. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "elementwise_chain_ref.h"          /* the op table, the host reference (plain C) */
#include "elementwise_chain_kernels.cuh"    /* the chain kernel, fill and check kernels */

#define EW_MIB ((size_t)1 << 20)
#define EW_GIB ((size_t)1 << 30)

enum {
    EW_SAMPLE_BLOCKS = 16,      /* host check: this many runs of contiguous elements ... */
    EW_SAMPLE_ELEMS = 2048      /* ... of this length (first, last, and spread between) */
};

enum { EW_UNFUSED = 0, EW_FUSED = 1 };

/* ---- the scenario's state -------------------------------------------------------------- */

typedef struct ew_state {
    int n_ops, bits;
    size_t elem_bytes;
    size_t n;                   /* elements of the activation */
    size_t tensor_bytes, bias_bytes;
    void *x, *residual, *y, *bias;
    unsigned long long *d_bad;  /* the check kernels' two counters */
    uint32_t seed;              /* dropout mask of the current inputs */
    int check_blocks;
} ew_state;

/* Tensor size: far larger than the L2, so that every op really goes to HBM. Full: 1 GiB or
 * 16x the L2; quick: 64 MiB or 4x the L2 (256 MiB on an H200, whose L2 is 50 MiB: a 64 MiB
 * tensor would partly stay in L2 between the unfused kernels and flatter them). */
static size_t ew_tensor_bytes(int quick, int l2_bytes)
{
    size_t floor_bytes = quick ? 64 * EW_MIB : EW_GIB;
    size_t want = (size_t)(l2_bytes > 0 ? l2_bytes : 0) * (quick ? 4 : 16);
    size_t bytes = floor_bytes;
    while (bytes < want)
        bytes *= 2;
    return bytes;
}

static void ew_free_state(ew_state *st)
{
    if (st == NULL)
        return;
    cudaFree(st->d_bad);
    cudaFree(st->bias);
    cudaFree(st->y);
    cudaFree(st->residual);
    cudaFree(st->x);
    free(st);
}

static int ew_fill(uf_ctx *ctx, const ew_state *st, void *p, size_t n, uint32_t key,
                   float amplitude)
{
    int rc = UF_OK;
    ew_fill_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(p, n, st->bits, key, amplitude);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Fresh random inputs (never zeros) and dropout seed from `seed`, enqueued on the stream. */
static int ew_make_inputs(uf_ctx *ctx, ew_state *st, uint64_t seed)
{
    int rc = UF_OK;
    uint32_t base = uf_mix32((uint32_t)seed ^ uf_mix32((uint32_t)(seed >> 32) + 0x51ed27u));
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->x, st->n, uf_mix32(base + 1), 2.0f), out);
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->residual, st->n, uf_mix32(base + 2), 1.0f), out);
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->bias, EW_HIDDEN, uf_mix32(base + 3), 0.5f), out);
    st->seed = uf_mix32(base + 4);
out:
    return rc;
}

/* The GELU's reciprocal must be correctly rounded for the device and host results to agree:
 * checked once per setup on every value it can take (ew_rcp_check_kernel). */
static int ew_check_rcp(uf_ctx *ctx, const ew_state *st)
{
    int rc = UF_OK;
    unsigned long long bad = 0;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_bad, 0, sizeof *st->d_bad, ctx->stream), out);
    ew_rcp_check_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(st->d_bad);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(&bad, st->d_bad, sizeof bad, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
    if (bad != 0)
        rc = uf_fail(ctx, UF_ERR, "the branch-free reciprocal of the GELU differs from "
                     "__frcp_rn at %llu values of [27, 108]", bad);
out:
    return rc;
}

/* ---- callbacks ------------------------------------------------------------------------- */

static int ew_setup(uf_ctx *ctx)
{
    int rc = UF_OK, l2_bytes = 0, sms = 0;
    double ops = uf_axis(ctx, "ops"), bits = uf_axis(ctx, "bits");
    ew_state *st = NULL;

    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ctx->device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->device),
                    out);
    st = (ew_state *)calloc(1, sizeof *st);
    if (st == NULL)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    st->n_ops = (int)ops;
    st->bits = (int)bits;
    st->elem_bytes = st->bits / 8;
    st->tensor_bytes = ew_tensor_bytes(ctx->quick, l2_bytes);
    st->n = st->tensor_bytes / st->elem_bytes;
    st->bias_bytes = EW_HIDDEN * st->elem_bytes;
    if (st->n % EW_HIDDEN != 0 || st->n >= ((size_t)1 << 32)) {
        rc = uf_fail(ctx, UF_ERR, "%zu elements: need a multiple of %d below 2^32", st->n,
                     (int)EW_HIDDEN);
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, 3 * st->tensor_bytes + st->bias_bytes + 64,
                                        "input, residual and output tensors"), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->x, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->residual, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->y, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->bias, st->bias_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->d_bad, 2 * sizeof *st->d_bad), out_free);
    st->check_blocks = 8 * sms;
    UF_STATUS_OR_GOTO(rc, ew_check_rcp(ctx, st), out_free);
    UF_STATUS_OR_GOTO(rc, ew_make_inputs(ctx, st, ctx->seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out_free);
    ctx->state = st;
    return UF_OK;
out_free:
    ew_free_state(st);
out:
    return rc;
}

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

/* Host copies of a run of elements of each tensor, for the host check. */
typedef struct ew_host_sample {
    void *x, *residual, *y, *bias;
} ew_host_sample;

typedef struct ew_host_result {
    size_t bad;
    size_t first_bad;           /* element index */
    float first_got, first_want;
    uf_err err;                 /* max_rel_err over the checked elements (verify.h) */
} ew_host_result;

/* Copy elements [offset, offset + count) of x, residual and y (and the bias) to the host and
 * compare each, bitwise, with the host reference of the variant. */
static int ew_host_check(uf_ctx *ctx, const ew_state *st, const ew_host_sample *h, size_t offset,
                         size_t count, int round_each, ew_host_result *res)
{
    int rc = UF_OK;
    size_t eb = st->elem_bytes, at = offset * eb, len = count * eb;
    cudaStream_t s = ctx->stream;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->x, (const char *)st->x + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->residual, (const char *)st->residual + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->y, (const char *)st->y + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->bias, st->bias, st->bias_bytes,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(s), out);
    for (size_t j = 0; j < count; ++j) {
        size_t e = offset + j;
        float x = ew_host_storage_value(ew_host_load_bits(h->x, j, st->bits), st->bits);
        float r = ew_host_storage_value(ew_host_load_bits(h->residual, j, st->bits), st->bits);
        float b = ew_host_storage_value(ew_host_load_bits(h->bias, e % EW_HIDDEN, st->bits),
                                        st->bits);
        uint32_t want = ew_host_chain_bits(x, r, b, e, st->n_ops, st->seed, round_each,
                                           st->bits);
        uint32_t got = ew_host_load_bits(h->y, j, st->bits);
        float got_f = ew_host_storage_value(got, st->bits);
        float want_f = ew_host_storage_value(want, st->bits);
        uf_err_add(&res->err, e, got_f, want_f);    /* the poison left in place: infinite */
        if (got == want)
            continue;
        if (res->bad++ == 0) {
            res->first_bad = e;
            res->first_got = got_f;
            res->first_want = want_f;
        }
    }
out:
    return rc;
}

/* Where host-check run s starts: the first and last elements, and runs spread by the seed. */
static size_t ew_sample_offset(const ew_state *st, uint64_t seed, int s)
{
    size_t span = st->n - EW_SAMPLE_ELEMS;
    if (s == 0)
        return 0;
    if (s == EW_SAMPLE_BLOCKS - 1)
        return span;
    uint64_t h = ((uint64_t)uf_mix32((uint32_t)seed + (uint32_t)s) << 32) |
                 uf_mix32((uint32_t)(seed >> 32) ^ (0x85ebca6bu * (uint32_t)s));
    return (size_t)(h % (span + 1));
}

/* The device check of every element against the variant's rounding model. */
static int ew_device_check(uf_ctx *ctx, const ew_state *st, int round_each,
                           unsigned long long *bad)
{
    int rc = UF_OK;
    ew_check_args a = {
        .x = st->x,
        .residual = st->residual,
        .bias = st->bias,
        .y = st->y,
        .n = st->n,
        .bits = st->bits,
        .n_ops = st->n_ops,
        .round_each = round_each,
        .seed = st->seed,
        .bad = st->d_bad,
    };
    bad[0] = 0;
    bad[1] = ~0ull;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_bad, bad, 2 * sizeof *bad, cudaMemcpyHostToDevice,
                                        ctx->stream), out);
    ew_check_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(a);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(bad, st->d_bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* Fresh inputs, poisoned output (0xff bytes: NaN in fp32 and bf16), one step of the variant;
 * then every element is compared bitwise with a plain per-element device reference, and runs
 * of elements with the host reference. Both model the variant's rounding: unfused rounds to
 * the storage type after every op, fused once at the end. In fp32 the two models are the same
 * function, so fused and unfused outputs are bitwise identical; in bf16 they differ by design,
 * and each is exact against its own model. Tolerance: none (bitwise); max_rel_err (verify.h)
 * over the host-checked elements is 0 when they all agree. */
static int ew_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    ew_state *st = (ew_state *)ctx->state;
    int round_each = variant == EW_UNFUSED;
    const char *name = variant == EW_UNFUSED ? "unfused" : "fused";
    unsigned long long bad[2];
    ew_host_result res;
    ew_host_sample h;
    memset(&res, 0, sizeof res);
    memset(&h, 0, sizeof h);
    uf_err_init(&res.err);
    *max_rel_err = NAN;

    h.x = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.residual = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.y = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.bias = malloc(st->bias_bytes);
    if (!h.x || !h.residual || !h.y || !h.bias) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, ew_make_inputs(ctx, st, seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->y, 0xff, st->tensor_bytes, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, ew_run_step(ctx, variant), out_free);
    UF_STATUS_OR_GOTO(rc, ew_device_check(ctx, st, round_each, bad), out_free);
    for (int s = 0; s < EW_SAMPLE_BLOCKS; ++s)
        UF_STATUS_OR_GOTO(rc, ew_host_check(ctx, st, &h, ew_sample_offset(st, seed, s),
                                            EW_SAMPLE_ELEMS, round_each, &res), out_free);
    if (bad[0] > 0 && res.bad == 0)  /* the host sample missed it: look at the first one */
        UF_STATUS_OR_GOTO(rc, ew_host_check(ctx, st, &h, (size_t)bad[1], 1, round_each, &res),
                          out_free);
    *max_rel_err = uf_err_value(&res.err);
    if (res.bad > 0)
        rc = uf_fail(ctx, UF_ERR,
                     "%s: %llu of %zu elements differ from the per-element reference, %zu of %zu "
                     "checked from the host reference (element %zu: got %.9g, expected %.9g)",
                     name, bad[0], st->n, res.bad, res.err.count, res.first_bad,
                     (double)res.first_got, (double)res.first_want);
    else if (bad[0] > 0)
        rc = uf_fail(ctx, UF_ERR,
                     "%s: %llu of %zu elements differ from the per-element device reference, "
                     "though element %llu agrees with the host reference: a reference is wrong",
                     name, bad[0], st->n, bad[1]);
out_free:
    free(h.bias);
    free(h.y);
    free(h.residual);
    free(h.x);
    return rc;
}

/* Bytes through DRAM per step. fused: input, residual (if any op needs it) and bias read once,
 * output written once: the minimum the chain must move. unfused: per op, the whole tensor
 * read and written, plus the residual or bias that op reads. */
static double ew_bytes_moved(const ew_state *st, int variant)
{
    double t = (double)st->tensor_bytes, bias = (double)st->bias_bytes;
    if (variant == EW_FUSED)
        return 2.0 * t + (ew_ops_read(0, st->n_ops, 0) ? t : 0.0) +
               (ew_ops_read(0, st->n_ops, 1) ? bias : 0.0);
    double bytes = 0.0;
    for (int k = 0; k < st->n_ops; ++k)
        bytes += 2.0 * t + (ew_ops_read(k, k + 1, 0) ? t : 0.0) +
                 (ew_ops_read(k, k + 1, 1) ? bias : 0.0);
    return bytes;
}

/* Extras, in ew_extras order. */
enum { EW_X_BYTES_MOVED, EW_X_INTENSITY, EW_X_BYTES_RATIO };

static int ew_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const ew_state *st = (const ew_state *)ctx->state;
    double fused = ew_bytes_moved(st, EW_FUSED), unfused = ew_bytes_moved(st, EW_UNFUSED);
    double moved = variant == EW_FUSED ? fused : unfused;
    double flops = (double)ew_flops_per_element(st->n_ops) * (double)st->n;
    row->useful_flops = flops;
    row->executed_flops = flops;
    row->min_bytes = fused;
    row->peak_mem_bytes = 3.0 * (double)st->tensor_bytes + (double)st->bias_bytes;
    row->extra[EW_X_BYTES_MOVED] = moved;
    row->extra[EW_X_INTENSITY] = flops / moved;
    row->extra[EW_X_BYTES_RATIO] = unfused / fused;
    return UF_OK;
}

static void ew_teardown(uf_ctx *ctx)
{
    ew_free_state((ew_state *)ctx->state);
    ctx->state = NULL;
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

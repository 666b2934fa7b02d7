/* varlen_attention: attention over a batch of sequences with long-tailed lengths, computed on
 * padding (pad_global, pad_batch), on length buckets (bucketed), or packed without padding
 * (varlen). One fused attention kernel serves all four: a sequence is (offset, computed_len,
 * real_len), so the variants differ only in how much padding they hand the kernel.
 *
 * The kernel (varlen_attention_kernels.cu) is FlashAttention-2 style: tiles of queries per
 * block, keys and values through shared memory, the softmax online in registers, scores never
 * in memory; its head comment says how.
 *
 * Verification: an fp32 reference kernel (one warp per query row and head, two passes over
 * the keys) compared on real tokens, anchored itself by a host fp64 computation of sampled
 * rows. Inputs are a hash of their logical coordinates, exactly representable in bf16, so host
 * and device see the same numbers in every layout. */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "varlen_attention_ref.h"       /* lengths, input generator, fp64 host row (plain C) */
#include "varlen_attention_kernels.h"   /* the attention kernel, the fp32 reference kernel */
#include "varlen_attention_state.h"     /* the state, each variant's plan */
#include "varlen_attention_batch.h"     /* axes, lengths, reference buffers, teardown */
#include "varlen_attention_setup.h"     /* the kernel build, input fill, begin/end_variant */
#include "varlen_attention_verify.h"    /* verify */
#include "varlen_attention_describe.h"  /* FLOPs, bytes, padding extras */

/* ---- constants ----------------------------------------------------------------------------- */

#define VA_BUCKET_SIZE 8            /* sequences per length bucket */
#define VA_LOG2E 1.44269504088896340736

/* ---- host side: layouts, counts --------------------------------------------------------------- */

typedef struct va_item_cost {
    va_item item;
    int cost;                   /* warp-tiles: Σ over the block's warps of their key tiles */
} va_item_cost;

/* Most expensive first, then by sequence and tile: a deterministic longest-first order. */
static int va_item_cmp(const void *pa, const void *pb)
{
    const va_item_cost *a = (const va_item_cost *)pa, *b = (const va_item_cost *)pb;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    if (a->item.seq != b->item.seq)
        return a->item.seq < b->item.seq ? -1 : 1;
    return a->item.q_tile < b->item.q_tile ? -1 : (a->item.q_tile > b->item.q_tile);
}

/* A sequence's length and logical id: sorted by length, ascending (ties by id), they give the
 * bucketing order. */
typedef struct va_len_id {
    int len, id;
} va_len_id;

static int va_len_id_cmp(const void *pa, const void *pb)
{
    const va_len_id *a = (const va_len_id *)pa, *b = (const va_len_id *)pb;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return a->id < b->id ? -1 : (a->id > b->id);
}

/* The sequence layout of a variant: where each sequence's rows live and how many the kernel
 * computes. */
static void va_layout(const va_state *st, int variant, const int *by_length, va_seq *seqs)
{
    const int n = st->n_seqs;
    long long offset = 0;
    if (variant == VA_PAD_GLOBAL || variant == VA_PAD_BATCH) {
        const int pad_to = variant == VA_PAD_GLOBAL ? VA_DATASET_MAX_LEN : st->max_len;
        for (int b = 0; b < n; b++)
            seqs[b] = (va_seq){.offset = b * pad_to, .computed_len = pad_to,
                               .real_len = st->len[b], .logical = b};
    } else if (variant == VA_BUCKETED) {
        for (int first = 0; first < n; first += VA_BUCKET_SIZE) {
            const int last = (first + VA_BUCKET_SIZE < n ? first + VA_BUCKET_SIZE : n) - 1;
            const int pad_to = st->len[by_length[last]];
            for (int s = first; s <= last; s++) {
                seqs[s] = (va_seq){.offset = (int)offset, .computed_len = pad_to,
                                   .real_len = st->len[by_length[s]], .logical = by_length[s]};
                offset += pad_to;
            }
        }
    } else {
        for (int b = 0; b < n; b++)
            seqs[b] = (va_seq){.offset = st->cu_real[b], .computed_len = st->len[b],
                               .real_len = st->len[b], .logical = b};
    }
}

/* Build a variant's plan: layout, the block list sorted longest-first, the executed FLOPs. */
static int va_build_plan(uf_ctx *ctx, va_state *st, int variant, const int *by_length)
{
    va_plan *p = &st->plan[variant];
    p->n_seqs = st->n_seqs;
    p->seqs = (va_seq *)calloc((size_t)p->n_seqs, sizeof *p->seqs);
    if (!p->seqs)
        return uf_fail(ctx, UF_ERR, "out of host memory for the sequence table");
    va_layout(st, variant, by_length, p->seqs);

    long long stored = 0, n_items = 0;
    for (int s = 0; s < p->n_seqs; s++) {
        stored += p->seqs[s].computed_len;
        n_items += (p->seqs[s].computed_len + VA_BLOCK_M(st->rows) - 1) / VA_BLOCK_M(st->rows);
    }
    if (stored > INT32_MAX / 2 || n_items * st->heads > INT32_MAX)
        return uf_fail(ctx, UF_USAGE, "batch too large: %lld stored tokens, %lld blocks", stored,
                       n_items * st->heads);
    p->stored_tokens = stored;
    p->n_items = (int)n_items;

    va_item_cost *costed = (va_item_cost *)calloc((size_t)n_items, sizeof *costed);
    p->items = (va_item *)calloc((size_t)n_items, sizeof *p->items);
    if (!costed || !p->items) {
        free(costed);
        return uf_fail(ctx, UF_ERR, "out of host memory for the block list");
    }
    long long warp_tiles = 0;
    int at = 0;
    for (int s = 0; s < p->n_seqs; s++) {
        const int tiles = (p->seqs[s].computed_len + VA_BLOCK_M(st->rows) - 1) /
                          VA_BLOCK_M(st->rows);
        for (int t = 0; t < tiles; t++) {
            int cost = 0;
            for (int w = 0; w < VA_WARPS; w++)
                cost += va_warp_key_tiles(st->rows, t, w, p->seqs[s].computed_len, st->causal);
            costed[at++] = (va_item_cost){.item = {.seq = s, .q_tile = t}, .cost = cost};
            warp_tiles += cost;
        }
    }
    qsort(costed, (size_t)n_items, sizeof *costed, va_item_cmp);
    for (long long i = 0; i < n_items; i++)
        p->items[i] = costed[i].item;
    free(costed);
    p->executed_flops = (double)warp_tiles * st->heads * VA_FLOPS_PER_WARP_TILE(st->rows);
    return UF_OK;
}

/* ---- axes, variants, extras ------------------------------------------------------------------- */

static const double va_dist_values[] = {VA_DIST_LOGNORMAL, VA_DIST_WIDE, VA_DIST_FIXED};
static const double va_dist_quick[] = {VA_DIST_LOGNORMAL, VA_DIST_FIXED};
static const double va_batch_values[] = {32};
static const double va_batch_quick[] = {32};
static const double va_heads_values[] = {16};
static const double va_heads_quick[] = {16};
static const double va_causal_values[] = {0, 1};
static const double va_causal_quick[] = {0};

/* dist by name; the results hold the code (VA_DIST_*). */
static const uf_axis_choice va_dist_choices[] = {
    {"lognormal", VA_DIST_LOGNORMAL}, {"wide", VA_DIST_WIDE}, {"fixed", VA_DIST_FIXED}};

static const uf_axis_desc va_axes[] = {
    {.name = "dist", .unit = "code",
     .summary = "length distribution: lognormal (median 700, sigma 0.8, clipped 128..4096), "
                "wide (uniform 200..3000), fixed (4096, with batch/2 sequences)",
     UF_AXIS_CHOICES(va_dist_choices),
     .default_value = VA_DIST_LOGNORMAL, .values = va_dist_values, .n_values = 3,
     .quick_values = va_dist_quick, .n_quick_values = 2},
    {.name = "batch", .unit = "sequences",
     .summary = "sequences per step (dist=fixed uses half as many: 32 -> the 16 x 4096 reference)",
     UF_AXIS_INTS(1, 4096),
     .default_value = 32, .values = va_batch_values, .n_values = 1,
     .quick_values = va_batch_quick, .n_quick_values = 1},
    {.name = "heads", .unit = "heads", .summary = "attention heads (head dim 128)",
     UF_AXIS_INTS(1, 256),
     .default_value = 16, .values = va_heads_values, .n_values = 1,
     .quick_values = va_heads_quick, .n_quick_values = 1},
    {.name = "causal", .unit = "bool", .summary = "0 full attention, 1 causal mask",
     UF_AXIS_INTS(0, 1),
     .default_value = 0, .values = va_causal_values, .n_values = 2,
     .quick_values = va_causal_quick, .n_quick_values = 1},
};

static const uf_variant_desc va_variants[VA_N_VARIANTS] = {
    {.name = "pad_global", .role = UF_BROKEN,
     .summary = "every sequence padded to the data set's longest (4096 tokens)"},
    {.name = "pad_batch", .role = UF_BROKEN,
     .summary = "dynamic padding: every sequence padded to the batch's longest"},
    {.name = "bucketed", .role = UF_FIXED,
     .summary = "sorted by length in buckets of 8, each padded to its own longest"},
    {.name = "varlen", .role = UF_FIXED,
     .summary = "packed tokens with cumulative offsets: no padding computed"},
};

static const uf_extra_desc va_extras[VA_N_EXTRAS] = {
    {.name = "padding_pct", .unit = "%",
     .summary = "share of executed attention FLOPs that are not useful (padding, tile remainders)"},
    {.name = "token_padding_pct", .unit = "%", .summary = "share of stored tokens that are padding"},
    {.name = "exec_useful_ratio", .unit = "x", .summary = "executed / useful attention FLOPs"},
    {.name = "tflops_executed", .unit = "TFLOP/s", .summary = "executed FLOPs / step time"},
    {.name = "seqs", .unit = "sequences", .summary = "sequences in the step"},
    {.name = "real_tokens", .unit = "tokens", .summary = "tokens of the sequences"},
    {.name = "stored_tokens", .unit = "tokens", .summary = "tokens the variant stores and computes"},
    {.name = "warp_rows", .unit = "rows",
     .summary = "query rows per warp of the kernel build setup chose (32 where shared memory "
                "allows, else 16)"},
    {.name = "sm_clock_kernel_mhz", .unit = "MHz",
     .summary = "SM clock during the timed steps as the kernel counts it: cycles (clock64) / ns "
                "(%globaltimer) summed over every block of them, weighted by block time"},
};

/* ---- callbacks --------------------------------------------------------------------------------- */

/* The bucketing order: logical ids sorted by length, ascending. */
static int va_order_by_length(uf_ctx *ctx, const va_state *st, int *by_length)
{
    va_len_id *sorted = (va_len_id *)calloc((size_t)st->n_seqs, sizeof *sorted);
    if (!sorted)
        return uf_fail(ctx, UF_ERR, "out of host memory for the bucketing order");
    for (int b = 0; b < st->n_seqs; b++)
        sorted[b] = (va_len_id){.len = st->len[b], .id = b};
    qsort(sorted, (size_t)st->n_seqs, sizeof *sorted, va_len_id_cmp);
    for (int b = 0; b < st->n_seqs; b++)
        by_length[b] = sorted[b].id;
    free(sorted);
    return UF_OK;
}

/* The point's batch, the kernel build, every variant's plan and the reference buffers. */
static int va_setup(uf_ctx *ctx)
{
    int rc = UF_OK;
    int *by_length = NULL;
    va_state *st = (va_state *)calloc(1, sizeof *st);
    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory for the state");
    st->active = -1;
    ctx->state = st;

    UF_STATUS_OR_GOTO(rc, va_prepare_kernel(ctx, st), out_teardown);
    UF_STATUS_OR_GOTO(rc, va_read_axes(ctx, st), out_teardown);
    UF_STATUS_OR_GOTO(rc, va_make_batch(ctx, st), out_teardown);
    st->scale_log2 = (float)(1.0 / sqrt((double)VA_HEAD_DIM) * VA_LOG2E);

    by_length = (int *)calloc((size_t)st->n_seqs, sizeof *by_length);
    if (!by_length) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for the bucketing order");
        goto out_teardown;
    }
    UF_STATUS_OR_GOTO(rc, va_order_by_length(ctx, st, by_length), out_free_order);
    for (int v = 0; v < VA_N_VARIANTS; v++)
        UF_STATUS_OR_GOTO(rc, va_build_plan(ctx, st, v, by_length), out_free_order);
    UF_STATUS_OR_GOTO(rc, va_alloc_reference(ctx, st), out_free_order);
    free(by_length);
    return UF_OK;
out_free_order:
    free(by_length);
out_teardown:
    va_teardown(ctx); /* frees whatever was made; a second teardown by the harness is a no-op */
    return rc;
}

/* One step: the attention forward of the whole batch, one launch; in the timing pass's timed
 * steps, with the clock probe (the SM clock claim 1 divides by, read back by describe). */
static int va_run_step(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    va_state *st = (va_state *)ctx->state;
    const va_plan *p = &st->plan[variant];
    if (st->active != variant)
        return uf_fail(ctx, UF_ERR, "run_step of %s before its begin_variant",
                       va_variants[variant].name);
    const unsigned blocks = (unsigned)p->n_items * (unsigned)st->heads;
    va_launch_attention(st->rows, blocks, ctx->stream, st->d_q, st->d_k, st->d_v, st->d_o,
                        st->d_seqs, st->d_items, st->heads, st->causal, st->scale_log2,
                        ctx->timing ? st->d_probe : NULL);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* ---- the expectation ------------------------------------------------------------------------- */

/* The points the claims name: the default long-tail batch and the fixed-length batch, at the
 * largest batch and head count run (the defaults in a full run, the smaller --quick sizes). */
#define VA_AT_LONGTAIL "dist=1,batch=max,heads=max,causal=0"
#define VA_AT_FIXED "dist=3,batch=max,heads=max,causal=0"

static double va_metric(const uf_report *rep, const char *variant, const char *where,
                        const char *metric)
{
    return uf_value(rep, uf_find(rep, variant, where), metric);
}

/* Claim 1 per SM cycle: each point's useful TFLOP/s over the SM clock its kernel counted in the
 * timed steps (sm_clock_kernel_mhz), so that the clock's wander under the power limit between
 * the two points, timed seconds apart, cancels. The raw TFLOP/s ratio is the README's and
 * ci/gpu-checks/varlen_steady.sh's, not claimed. */
static double va_rate_per_clock(const uf_report *rep, const char *where)
{
    return va_metric(rep, "varlen", where, "tflops_useful") /
           va_metric(rep, "varlen", where, "sm_clock_kernel_mhz");
}

static void va_expect(const uf_report *rep, uf_expectations *ex)
{
    const double longtail_per_clock = va_rate_per_clock(rep, VA_AT_LONGTAIL);
    const double fixed_per_clock = va_rate_per_clock(rep, VA_AT_FIXED);
    uf_expect(ex,
              "varlen's useful TFLOP/s per SM cycle on the long-tail batch is >= 90% of the "
              "kernel's fixed-length rate per SM cycle: packed, it computes only tile remainders "
              "(< one warp's 16 or 32 rows, < 64 keys per sequence) beyond the real work, and "
              "longest-first block order keeps the SMs fed; per cycle of the SM clock the kernel "
              "counts, as at ~700 W the clock wanders (step time +-1.5-2 % within one pass, H200 "
              "2026-12-02) and the two points are timed seconds apart",
              longtail_per_clock / fixed_per_clock, UF_GE, 0.9);

    const double speedup = va_metric(rep, "pad_global", VA_AT_LONGTAIL, "step_ms") /
                           va_metric(rep, "varlen", VA_AT_LONGTAIL, "step_ms");
    const double waste = va_metric(rep, "pad_global", VA_AT_LONGTAIL, "exec_useful_ratio");
    uf_expect(ex,
              "the pad_global -> varlen speed-up is within 25% of pad_global's executed/useful "
              "FLOP ratio (|speed-up / ratio - 1| <= 0.25): attention is compute-bound, so time "
              "follows the FLOPs executed, padding included",
              fabs(speedup / waste - 1.0), UF_LE, 0.25);

    uf_expect_ratio(ex, rep, "pad_batch", "pad_global", VA_AT_LONGTAIL, "step_ms", UF_LE, 1.02,
                    "pad_batch is no slower than pad_global: it pads to the batch's longest, at "
                    "most the data set's (equal work when the batch holds a 4096-token sample; "
                    "2% is the timing-noise allowance for that case)");
    uf_expect_ratio(ex, rep, "pad_batch", "varlen", VA_AT_LONGTAIL, "step_ms", UF_GE, 1.0,
                    "pad_batch is slower than varlen: it still computes every short sequence at "
                    "the batch's longest length");
    uf_expect_ratio(ex, rep, "bucketed", "pad_global", VA_AT_LONGTAIL, "step_ms", UF_LE, 1.02,
                    "bucketed is no slower than pad_global: each bucket pads to its own longest, "
                    "at most the data set's (2% timing-noise allowance)");
    uf_expect_ratio(ex, rep, "bucketed", "varlen", VA_AT_LONGTAIL, "step_ms", UF_GE, 1.0,
                    "bucketed is slower than varlen: the padding inside each bucket is computed");
    /* The kernel's own rate (pct_of_gemm at dist=3) is reported in the results and the
     * README, not claimed: the issue names 40 % of the bf16 GEMM ceiling as an aim for the
     * kernel, not as a property of the padding failure this scenario reproduces. */
}

/* ---- the scenario ------------------------------------------------------------------------------ */

static const uf_scenario va_scenario = {
    .name = "varlen_attention",
    .title = "Padded vs variable-length attention: computing on padding, and the varlen fix",
    .failure = "Sequences of a long-tailed length distribution are padded to a common length; the "
               "attention kernel computes every padded query and key, so the tensor cores are "
               "busy while most of what they compute is thrown away.",
    .fix = "Pack the real tokens back to back with cumulative offsets (cu_seqlens) and let the "
           "kernel walk each sequence at its own length: no padding computed.",
    .variants = va_variants,
    .n_variants = VA_N_VARIANTS,
    .axes = va_axes,
    .n_axes = 4,
    .extras = va_extras,
    .n_extras = VA_N_EXTRAS,
    .min_gpus = 1,
    .repeat = 20,
    .quick_repeat = 5,
    .warmup = 3,
    /* At least 1 s of each variant before its timing: after pad_global (~725 W) the H200's SM
     * clock stays ~50 MHz low for the whole of a quick timing pass, so varlen's long-tail rate
     * (claim 1) depended on what ran before. With 1 s, five quick runs on the H200 held claim 1
     * at 0.909-0.913 (its raw TFLOP/s ratio then; 3 s changed nothing, 2026-12-02: the clock
     * also wanders within a pass, so claim 1 is now per SM cycle); the settling time itself was
     * not measured: see the README, "How steady the first claim is". */
    .warmup_min_ms = 1000,
    .step_stat = UF_STAT_MEDIAN,
    .setup = va_setup,
    .begin_variant = va_begin_variant,
    .end_variant = va_end_variant,
    .run_step = va_run_step,
    .verify = va_verify,
    .describe = va_describe,
    .teardown = va_teardown,
    .expect = va_expect,
};

int main(int argc, char **argv)
{
    return uf_main(&va_scenario, argc, argv);
}

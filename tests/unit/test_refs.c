/* Unit tests of the scenarios' plain-C host references: the properties their verify relies on.
 * elementwise_chain (scenarios/elementwise_chain/elementwise_chain_ref.c): bf16 rounding to
 * nearest even, known outputs of the chain, fp32 rounding after every op changing nothing (why
 * fused and unfused agree bitwise in fp32), bf16 rounding after every op changing something,
 * the dropout keep rate. varlen_attention (scenarios/varlen_attention/varlen_attention_ref.c): the
 * length distributions' ranges, and the fp64 host row on one key (the value row itself) and on
 * many (a convex combination of the value rows). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "elementwise_chain_ref.h"
#include "random.h"
#include "varlen_attention_ref.h"

/* A value of [-amplitude, amplitude) from (key, i), as the scenario's fill kernel draws it. */
static float uniform_at(uint32_t key, uint32_t i, float amplitude)
{
    return amplitude * (2.0f * uf_uniform32_at(key, i) - 1.0f);
}

Test(elementwise_ref, bf16_rounds_to_nearest_even)
{
    cr_assert_eq(ew_host_storage_bits(1.0f, 16), 0x3F80u);
    cr_assert_eq(ew_host_storage_bits(uf_bits_float(0x3F808000u), 16), 0x3F80u);  /* tie, even */
    cr_assert_eq(ew_host_storage_bits(uf_bits_float(0x3F818000u), 16), 0x3F82u);  /* tie, up */
    cr_assert_eq(ew_host_storage_bits(uf_bits_float(0x3F808001u), 16), 0x3F81u);  /* above tie */
    cr_assert_eq(ew_host_storage_bits(-2.5f, 32), uf_float_bits(-2.5f));
    cr_assert_float_eq(ew_host_storage_value(0x3FC0u, 16), 1.5f, 0.0f);
    const uint16_t stored[2] = {0x1234, 0xBEEF};
    cr_assert_eq(ew_host_load_bits(stored, 1, 16), 0xBEEFu);
}

Test(elementwise_ref, known_outputs)
{
    /* op 0 only: x + b */
    cr_assert_eq(ew_host_chain_bits(1.5f, 0.0f, 0.25f, 0, 1, 7u, 0, 32), uf_float_bits(1.75f));
    /* bias then GELU at x = 4: tanh's argument is clamped at 3, where the Pade form is exactly
     * 1, so GELU(4) = 0.5 x 4 x 2 = 4 exactly */
    cr_assert_eq(ew_host_chain_bits(4.0f, 0.0f, 0.0f, 0, 2, 7u, 0, 32), uf_float_bits(4.0f));
    cr_assert_eq(ew_host_chain_bits(-4.0f, 0.0f, 0.0f, 0, 2, 7u, 0, 32), uf_float_bits(-0.0f));
}

/* In fp32, rounding to the storage type after each op is the identity: the unfused and fused
 * models are one function. In bf16 they are not, on some elements. */
Test(elementwise_ref, rounding_each_op_matters_only_in_bf16)
{
    int bf16_differs = 0;
    for (uint32_t e = 0; e < 20000; ++e) {
        float x = uniform_at(0x1111u, e, 2.0f), r = uniform_at(0x2222u, e, 1.0f);
        float b = uniform_at(0x3333u, e % EW_HIDDEN, 0.5f);
        uint32_t once = ew_host_chain_bits(x, r, b, e, EW_MAX_OPS, 99u, 0, 32);
        uint32_t each = ew_host_chain_bits(x, r, b, e, EW_MAX_OPS, 99u, 1, 32);
        cr_assert_eq(once, each, "element %u: fp32 models differ", e);
        float xb = ew_host_storage_value(ew_host_storage_bits(x, 16), 16);
        float rb = ew_host_storage_value(ew_host_storage_bits(r, 16), 16);
        float bb = ew_host_storage_value(ew_host_storage_bits(b, 16), 16);
        bf16_differs += ew_host_chain_bits(xb, rb, bb, e, EW_MAX_OPS, 99u, 0, 16) !=
                        ew_host_chain_bits(xb, rb, bb, e, EW_MAX_OPS, 99u, 1, 16);
    }
    cr_assert_gt(bf16_differs, 100, "bf16 rounding after every op changed only %d elements",
                 bf16_differs);
}

Test(elementwise_ref, dropout_keeps_its_fraction)
{
    const ew_op *drop = &ew_ops[2];
    cr_assert_eq(drop->kind, EW_DROPOUT);
    int kept = 0, n = 1 << 20;
    for (int e = 0; e < n; ++e)
        kept += ew_dropout_keep(12345u, drop->index, (uint32_t)e, drop->a);
    cr_assert_float_eq((double)kept / n, (double)drop->a, 0.002, "kept %d of %d", kept, n);
}

Test(varlen_ref, lengths_stay_in_their_distribution)
{
    int len[256];
    va_draw_lengths(VA_DIST_LOGNORMAL, 11, 256, len);
    int above_median = 0;
    for (int b = 0; b < 256; ++b) {
        cr_assert(len[b] >= VA_MIN_LEN && len[b] <= VA_DATASET_MAX_LEN, "len %d", len[b]);
        above_median += len[b] > VA_LOGNORMAL_MEDIAN;
    }
    cr_assert(above_median > 96 && above_median < 160, "%d of 256 above the median",
              above_median);
    va_draw_lengths(VA_DIST_WIDE, 11, 256, len);
    for (int b = 0; b < 256; ++b)
        cr_assert(len[b] >= VA_WIDE_MIN && len[b] <= VA_WIDE_MAX, "len %d", len[b]);
    va_draw_lengths(VA_DIST_FIXED, 11, 256, len);
    for (int b = 0; b < 256; ++b)
        cr_assert_eq(len[b], VA_DATASET_MAX_LEN);
}

/* The value row of key `pos` of (logical, head), as the generator draws it. */
static void value_row(uint64_t seed, int logical, int pos, int head, float v[VA_HEAD_DIM])
{
    for (int c = 0; c < VA_CHUNKS_PER_ROW; ++c)
        va_chunk_values(seed, VA_TENSOR_V, logical, pos, head, c, v + 8 * c);
}

Test(varlen_ref, host_row_weighs_the_value_rows)
{
    double out[VA_HEAD_DIM];
    float v[VA_HEAD_DIM];
    /* causal, query 0: one key, softmax weight 1, the output is that key's value row */
    va_host_row(3, 2, 500, 1, 0, 5, out);
    value_row(3, 2, 0, 5, v);
    for (int d = 0; d < VA_HEAD_DIM; ++d)
        cr_assert_float_eq(out[d], (double)v[d], 1e-15, "dim %d", d);
    /* 300 keys: each output lies between the smallest and largest value of its dimension */
    va_host_row(3, 2, 300, 0, 17, 5, out);
    for (int d = 0; d < VA_HEAD_DIM; ++d) {
        double lo = INFINITY, hi = -INFINITY;
        for (int j = 0; j < 300; ++j) {
            value_row(3, 2, j, 5, v);
            lo = fmin(lo, v[d]);
            hi = fmax(hi, v[d]);
        }
        cr_assert(out[d] >= lo - 1e-12 && out[d] <= hi + 1e-12, "dim %d: %g not in [%g, %g]", d,
                  out[d], lo, hi);
    }
}

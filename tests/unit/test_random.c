/* Unit tests of common/core/random.h's shared draws: uniform-at-index is the stream's i-th output,
 * the units are exact multiples of 2^-bits, and the host bf16 round trip rounds to nearest
 * even (the kernels' __float2bfloat16_rn), keeps NaN a NaN and overflows to infinity. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "random.h"

Test(random, hash_at_is_the_streams_ith_output)
{
    uint64_t state = 12345;
    for (uint64_t i = 0; i < 1000; ++i)
        cr_assert_eq(uf_hash_at(12345, i), uf_splitmix64(&state), "index %llu",
                     (unsigned long long)i);
}

Test(random, uniform_is_exact_on_its_bits)
{
    double lo = 1.0, hi = 0.0;
    for (uint64_t i = 0; i < 100000; ++i) {
        const double u = uf_uniform_at(7, i, 24);
        cr_assert(u >= 0.0 && u < 1.0);
        cr_assert_eq(u * 16777216.0, floor(u * 16777216.0), "not a multiple of 2^-24");
        cr_assert_eq((double)(float)u, u, "24 bits are exact in float");
        lo = fmin(lo, u);
        hi = fmax(hi, u);
        const float u32 = uf_uniform32_at(0xABCDu, (uint32_t)i);
        cr_assert(u32 >= 0.0f && u32 < 1.0f);
    }
    cr_assert(lo < 1e-3 && hi > 1.0 - 1e-3, "[%g, %g] does not fill [0, 1)", lo, hi);
    cr_assert_eq(uf_unit(~0ull, 53), 1.0 - 0x1p-53);
    cr_assert_eq(uf_unit(0, 16), 0.0);
}

Test(random, bf16_rounds_to_nearest_even)
{
    cr_assert_eq(uf_bf16_bits(1.0f), 0x3F80u);
    cr_assert_eq(uf_bf16_bits(uf_bits_float(0x3F808000u)), 0x3F80u);  /* tie: to even (down) */
    cr_assert_eq(uf_bf16_bits(uf_bits_float(0x3F818000u)), 0x3F82u);  /* tie: to even (up) */
    cr_assert_eq(uf_bf16_bits(uf_bits_float(0x3F808001u)), 0x3F81u);  /* above the tie */
    cr_assert_eq(uf_bf16_bits(uf_bits_float(0xBF807FFFu)), 0xBF80u);  /* below the tie */
    cr_assert_eq(uf_bf16_bits(uf_bits_float(0x7F7FFFFFu)), 0x7F80u);  /* FLT_MAX: to infinity */
    cr_assert(isnan(uf_bf16_round(uf_bits_float(0xFFFFFFFFu))), "the poison stays a NaN");
    cr_assert(isnan(uf_bf16_round(uf_bits_float(0x7F800001u))), "a signalling NaN stays a NaN");
    cr_assert_eq(uf_bf16_value(0x3FC0u), 1.5f);
    cr_assert_eq(uf_bf16_round(-2.5f), -2.5f);
}

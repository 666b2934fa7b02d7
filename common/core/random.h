/* Counter-based random numbers shared by host code and kernels, so that a host reference can
 * regenerate exactly the inputs a kernel drew: splitmix64 and murmur3's 32-bit finalizer, the
 * uniform value for index i under a seed, and the host's bf16 round trip (what a kernel's
 * __float2bfloat16_rn stores, for references that round where the device stores bf16). */
#ifndef UF_RANDOM_H
#define UF_RANDOM_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define UF_HOST_DEVICE __host__ __device__
#else
#define UF_HOST_DEVICE
#endif

#define UF_GOLDEN64 0x9E3779B97F4A7C15ull /* 2^64 / golden ratio: splitmix64's increment */

/* splitmix64's finalizer: a bijection of 64-bit words with full avalanche. */
static inline UF_HOST_DEVICE uint64_t uf_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The next output of a splitmix64 generator whose state is *state. */
static inline UF_HOST_DEVICE uint64_t uf_splitmix64(uint64_t *state)
{
    *state += UF_GOLDEN64;
    return uf_mix64(*state);
}

/* murmur3's 32-bit finalizer: a bijection of 32-bit words with full avalanche. */
static inline UF_HOST_DEVICE uint32_t uf_mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* ---- uniform value for index i under a seed ---------------------------------------------- */

/* The i-th output (i = 0, 1, ...) of a splitmix64 generator seeded with `seed`, reached without
 * walking the stream: the draw a kernel makes for element i and a host reference redraws. */
static inline UF_HOST_DEVICE uint64_t uf_hash_at(uint64_t seed, uint64_t i)
{
    return uf_mix64(seed + (i + 1) * UF_GOLDEN64);
}

/* The top `bits` bits (1..53) of a 64-bit hash as a uniform value of [0, 1): a multiple of
 * 2^-bits, exact in double, and in float when bits <= 24. */
static inline UF_HOST_DEVICE double uf_unit(uint64_t h, int bits)
{
    return (double)(h >> (64 - bits)) * (1.0 / (double)(1ull << bits));
}

/* Uniform value of [0, 1) with `bits` bits (1..53) for index i under seed. */
static inline UF_HOST_DEVICE double uf_uniform_at(uint64_t seed, uint64_t i, int bits)
{
    return uf_unit(uf_hash_at(seed, i), bits);
}

/* The 32-bit form, for kernels that index with 32 bits: uniform of [0, 1) with 24 bits (exact
 * in float) for index i under key, from murmur3's finalizer of i ^ key. */
static inline UF_HOST_DEVICE float uf_uniform32_at(uint32_t key, uint32_t i)
{
    return (float)(uf_mix32(i ^ key) >> 8) * (1.0f / 16777216.0f);
}

/* ---- bf16 on the host ---------------------------------------------------------------------- */

/* A float's bits, and the float of bits (host; the device has __float_as_uint). */
static inline uint32_t uf_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float uf_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The bf16 bits of f rounded to nearest even, as __float2bfloat16_rn stores it; a NaN stays a
 * (quiet) NaN. */
static inline uint16_t uf_bf16_bits(float f)
{
    uint32_t u = uf_float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* The float a bf16 holds (exact: bf16 is fp32's upper half). */
static inline float uf_bf16_value(uint16_t b)
{
    return uf_bits_float((uint32_t)b << 16);
}

/* f rounded to bf16 and back: what a kernel reads after storing f as bf16. */
static inline float uf_bf16_round(float f)
{
    return uf_bf16_value(uf_bf16_bits(f));
}

#endif

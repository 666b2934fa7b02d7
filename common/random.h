/* Counter-based random numbers shared by host code and kernels, so that a host reference can
 * regenerate exactly the inputs a kernel drew: splitmix64 and murmur3's 32-bit finalizer. */
#ifndef UF_RANDOM_H
#define UF_RANDOM_H

#include <stdint.h>

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

#endif

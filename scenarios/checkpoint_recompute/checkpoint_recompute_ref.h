/* checkpoint_recompute's host reference (checkpoint_recompute_ref.c) and the random inputs host
 * and device share. Plain C, usable from C and CUDA. */
#ifndef CR_REF_H
#define CR_REF_H

#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor ids of the counter-based random inputs (host and device draw the same values). */
enum { CR_T_W1 = 1, CR_T_W2, CR_T_GAMMA, CR_T_BETA, CR_T_X0, CR_T_DY };
#define CR_LN_EPS 1e-5f
#define CR_GELU_C 0.7978845608028654f     /* sqrt(2/pi) */
#define CR_GELU_A 0.044715f

/* ---- random inputs, identical on host and device ---------------------------------------- */

static inline UF_HOST_DEVICE uint64_t cr_mix64(uint64_t z)
{
    return uf_mix64(z + UF_GOLDEN64);
}

/* offset + scale·(u − ½), u uniform on 16 bits. With scale a power of two every operation is
 * exact in fp32, so the host reference regenerates bit-identical inputs. */
static inline UF_HOST_DEVICE float cr_random(uint64_t seed, uint64_t tensor, uint64_t i,
                                              float scale, float offset)
{
    const uint64_t h = cr_mix64(cr_mix64(seed * 0x100000001B3ull + tensor) ^ i);
    const float centered = (float)(h >> 48) * (1.0f / 65536.0f) - 0.5f;
    return offset + scale * centered;
}

/* The weights' scales, powers of two so that the random inputs stay exact in fp32. */
float w1_scale(int d);      /* W1: U(±1/√d) */
float w2_scale(int d);      /* W2: U(±1/√(4d)) */

uint16_t host_f2bf(float f);    /* round to nearest even, as __float2bfloat16; NaN stays NaN */
float host_bf2f(uint16_t b);

/* The reference's gradients, in the device's layouts. */
typedef struct cr_ref {
    double *pool;
    double *dw1, *dw2, *dx0, *dgamma, *dbeta;
} cr_ref;

/* The whole step in fp64 on inputs regenerated from the seed, for a stack of L blocks of width
 * d over T tokens: 0, or 1 when out of host memory. out->pool is the caller's to free. */
int host_reference(int d, int T, int L, uint64_t seed, cr_ref *out);

/* max |dev − ref| / max |ref|; infinite when dev holds a non-finite value. */
double normwise_err(const float *dev, const double *ref, size_t n);

#ifdef __cplusplus
}
#endif

#endif

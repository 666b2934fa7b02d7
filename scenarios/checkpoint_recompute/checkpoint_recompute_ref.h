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

/* offset + scale·(u − ½), u uniform on 16 bits. With scale a power of two every operation is
 * exact in fp32, so the host reference regenerates bit-identical inputs. The index enters the
 * hash by XOR with the tensor's key (the first draw of splitmix64 seeded with key ^ i), not as
 * uf_uniform_at's counter: kept so that the inputs, and the committed results, stay the same. */
static inline UF_HOST_DEVICE float cr_random(uint64_t seed, uint64_t tensor, uint64_t i,
                                              float scale, float offset)
{
    const uint64_t key = uf_hash_at(seed * 0x100000001B3ull + tensor, 0);
    const float centered = (float)uf_unit(uf_hash_at(key ^ i, 0), 16) - 0.5f;
    return offset + scale * centered;
}

/* The weights' scales, powers of two so that the random inputs stay exact in fp32. */
float w1_scale(int d);      /* W1: U(±1/√d) */
float w2_scale(int d);      /* W2: U(±1/√(4d)) */

/* The reference's gradients, in the device's layouts. */
typedef struct cr_ref {
    double *pool;
    double *dw1, *dw2, *dx0, *dgamma, *dbeta;
} cr_ref;

/* The whole step in fp64 on inputs regenerated from the seed, for a stack of L blocks of width
 * d over T tokens: 0, or 1 when out of host memory. out->pool is the caller's to free. */
int host_reference(int d, int T, int L, uint64_t seed, cr_ref *out);

#ifdef __cplusplus
}
#endif

#endif

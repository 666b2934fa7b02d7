/* starved_input's host side of the step (starved_input_ref.c) and what host and device share:
 * the GELU and the checksum term. Plain C, usable from C and CUDA. */
#ifndef SI_REF_H
#define SI_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The contribution of id at position i to a batch checksum. A sum of these is independent of
 * the order it is added in (so the GPU can add it with atomics) but not of positions. */
static inline UF_HOST_DEVICE uint64_t si_id_term(int64_t i, int32_t id)
{
    return uf_mix64(((uint64_t)i << 32) ^ (uint32_t)id ^ 0x5851F42D4C957F2DULL);
}

static inline UF_HOST_DEVICE float si_gelu(float v)
{
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

/* The checksum of a batch of n ids: the sum of their si_id_term. */
uint64_t batch_checksum(const int32_t *ids, int64_t n);

/* n bf16 values uniform in [-scale, scale), drawn from *rng (rng_unit), rounded as the GPU rounds (uf_bf16_bits). */
void fill_uniform_bf16(uint16_t *out, size_t n, float scale, uint64_t *rng);

/* The output row y[0..d) of token `id` through embedding emb[vocab_size][d], W1[d][f], GELU and
 * W2[f][d], all bf16 bits, in double, rounded to bf16 wherever the GPU stores bf16. h_acc and
 * h hold f values, y_acc d values (scratch). An id out of range gives a row of NaN. */
void reference_row(const uint16_t *emb, const uint16_t *w1, const uint16_t *w2, int d, int f,
                   int vocab_size, int32_t id, double *h_acc, float *h, double *y_acc,
                   float *y);

#ifdef __cplusplus
}
#endif

#endif

/* varlen_attention's data set and host reference (varlen_attention_ref.c), and the input
 * generator host and device share. Plain C, usable from C and CUDA. */
#ifndef VA_REF_H
#define VA_REF_H

#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VA_HEAD_DIM 128
#define VA_CHUNKS_PER_ROW (VA_HEAD_DIM / 8)         /* 16-byte chunks per row */

/* ---- the data set -------------------------------------------------------------------------- */

#define VA_DATASET_MAX_LEN 4096     /* the longest sample of the data set: pad_global pads to it */
#define VA_MIN_LEN 128
#define VA_LOGNORMAL_MEDIAN 700.0
#define VA_LOGNORMAL_SIGMA 0.8      /* ~10 % of samples above 2000 tokens, ~1.5 % at the clip */
#define VA_WIDE_MIN 200
#define VA_WIDE_MAX 3000
#define VA_PI 3.14159265358979323846

enum { VA_DIST_LOGNORMAL = 1, VA_DIST_WIDE = 2, VA_DIST_FIXED = 3 };
enum { VA_TENSOR_Q = 0, VA_TENSOR_K = 1, VA_TENSOR_V = 2, VA_TENSOR_PAD_SALT = 4 };

/* ---- inputs: a hash of the logical coordinates ------------------------------------------- */

/* The 8 values of dims 8·chunk .. 8·chunk+7 of tensor (Q, K or V; + VA_TENSOR_PAD_SALT for a
 * padding position) at (sequence, position, head). Each is a signed byte over 32 (Q) or 128
 * (K, V): at most 8 significant bits, so exactly a bf16. Q spans [-4, 4) so that softmax rows
 * are peaked enough to exercise the running max; K and V span [-1, 1). */
static inline UF_HOST_DEVICE void va_chunk_values(uint64_t seed, int tensor, int logical,
                                                   int pos, int head, int chunk, float out[8])
{
    uint64_t x = uf_mix64(seed ^ (UF_GOLDEN64 * (uint64_t)(tensor + 1)));
    x = uf_mix64(x ^ (((uint64_t)(uint32_t)logical << 32) | (uint32_t)pos));
    x = uf_mix64(x ^ (((uint64_t)(uint32_t)head << 8) | (uint32_t)chunk));
    const float scale = (tensor % VA_TENSOR_PAD_SALT == VA_TENSOR_Q) ? 1.0f / 32 : 1.0f / 128;
    for (int i = 0; i < 8; i++)
        out[i] = (float)(int8_t)(uint8_t)(x >> (8 * i)) * scale;
}

/* Draw the real lengths of a batch from the seed: dist 1 log-normal (median 700, σ 0.8)
 * clipped to [128, 4096]; 2 uniform 200..3000; 3 all 4096. */
void va_draw_lengths(int dist, uint64_t seed, int n, int *len);

/* Host fp64 attention of one row (sequence `logical` of real_len tokens, query pos, head) from
 * the generator; causal: keys up to pos only. NaN where out of host memory. */
void va_host_row(uint64_t seed, int logical, int real_len, int causal, int pos, int head,
                 double out[VA_HEAD_DIM]);

#ifdef __cplusplus
}
#endif

#endif

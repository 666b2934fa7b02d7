/* varlen_attention's host side: the data set's lengths and the fp64 attention of one row, the
 * anchor of the fp32 reference kernel. Plain C, no CUDA (the kernels are in
 * varlen_attention_kernels.cu). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "random.h"
#include "varlen_attention_ref.h"

/* Uniform in (0, 1]: 53 random bits, never 0 (Box–Muller takes its logarithm). */
static double va_uniform(uint64_t *state)
{
    return uf_unit(uf_splitmix64(state), 53) + 0x1p-53;
}

/* Draw the real lengths of a batch from the seed: dist 1 log-normal (median 700, σ 0.8)
 * clipped to [128, 4096]; 2 uniform 200..3000; 3 all 4096. */
void va_draw_lengths(int dist, uint64_t seed, int n, int *len)
{
    uint64_t rng = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)dist);
    for (int b = 0; b < n; b++) {
        if (dist == VA_DIST_LOGNORMAL) {
            const double u1 = va_uniform(&rng), u2 = va_uniform(&rng);
            const double z = sqrt(-2.0 * log(u1)) * cos(2.0 * VA_PI * u2);
            double x = VA_LOGNORMAL_MEDIAN * exp(VA_LOGNORMAL_SIGMA * z);
            x = x < VA_MIN_LEN ? VA_MIN_LEN : (x > VA_DATASET_MAX_LEN ? VA_DATASET_MAX_LEN : x);
            len[b] = (int)lround(x);
        } else if (dist == VA_DIST_WIDE) {
            len[b] = VA_WIDE_MIN + (int)(uf_splitmix64(&rng) % (VA_WIDE_MAX - VA_WIDE_MIN + 1));
        } else {
            len[b] = VA_DATASET_MAX_LEN;
        }
    }
}

/* Host fp64 attention of one row (sequence `logical`, query pos, head) from the generator. */
void va_host_row(uint64_t seed, int logical, int real_len, int causal, int pos, int head,
                 double out[VA_HEAD_DIM])
{
    float qv[VA_HEAD_DIM], kv[VA_HEAD_DIM], vv[VA_HEAD_DIM];
    const int n_keys = causal ? pos + 1 : real_len;
    const double scale = 1.0 / sqrt((double)VA_HEAD_DIM);
    for (int c = 0; c < VA_CHUNKS_PER_ROW; c++)
        va_chunk_values(seed, VA_TENSOR_Q, logical, pos, head, c, qv + 8 * c);
    double m = -INFINITY, l = 0.0;
    double *scores = (double *)malloc((size_t)n_keys * sizeof(double));
    for (int d = 0; d < VA_HEAD_DIM; d++)
        out[d] = 0.0;
    if (!scores) {
        for (int d = 0; d < VA_HEAD_DIM; d++)
            out[d] = NAN; /* reported as a failed check */
        return;
    }
    for (int j = 0; j < n_keys; j++) {
        for (int c = 0; c < VA_CHUNKS_PER_ROW; c++)
            va_chunk_values(seed, VA_TENSOR_K, logical, j, head, c, kv + 8 * c);
        double dot = 0.0;
        for (int d = 0; d < VA_HEAD_DIM; d++)
            dot += (double)qv[d] * kv[d];
        scores[j] = dot * scale;
        m = scores[j] > m ? scores[j] : m;
    }
    for (int j = 0; j < n_keys; j++) {
        for (int c = 0; c < VA_CHUNKS_PER_ROW; c++)
            va_chunk_values(seed, VA_TENSOR_V, logical, j, head, c, vv + 8 * c);
        const double p = exp(scores[j] - m);
        l += p;
        for (int d = 0; d < VA_HEAD_DIM; d++)
            out[d] += p * vv[d];
    }
    for (int d = 0; d < VA_HEAD_DIM; d++)
        out[d] /= l;
    free(scores);
}

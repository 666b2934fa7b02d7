/* starved_input's host side of the step: the weights drawn on the host, the host reference of
 * one output row, the batch checksum. Plain C, no CUDA (the kernels are in
 * starved_input_kernels.cuh, the corpus and tokenizer in tokenizer.c). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "starved_input_ref.h"
#include "tokenizer.h"

uint64_t batch_checksum(const int32_t *ids, int64_t n)
{
    uint64_t sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += si_id_term(i, ids[i]);
    return sum;
}

uint16_t f32_to_bf16(float f)    /* round to nearest even, as the GPU does */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

void fill_uniform_bf16(uint16_t *out, size_t n, float scale, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        out[i] = f32_to_bf16(scale * (float)(2.0 * rng_unit(rng) - 1.0));
}

/* The output row of one token computed on the host: the same chain in double, rounded to bf16
 * wherever the GPU stores bf16 (the embedding, h after the GEMM, h after GELU, y). */
void reference_row(const uint16_t *emb, const uint16_t *w1, const uint16_t *w2, int d, int f,
                   int vocab_size, int32_t id, double *h_acc, float *h, double *y_acc,
                   float *y)
{
    if (id < 0 || id >= vocab_size) {
        for (int j = 0; j < d; j++)
            y[j] = NAN;
        return;
    }
    for (int j = 0; j < f; j++)
        h_acc[j] = 0.0;
    for (int k = 0; k < d; k++) {
        double xk = bf16_to_f32(emb[(size_t)id * d + k]);
        const uint16_t *w = w1 + (size_t)k * f;
        for (int j = 0; j < f; j++)
            h_acc[j] += xk * bf16_to_f32(w[j]);
    }
    for (int j = 0; j < f; j++) {
        float pre = bf16_to_f32(f32_to_bf16((float)h_acc[j]));
        h[j] = bf16_to_f32(f32_to_bf16(si_gelu(pre)));
    }
    for (int j = 0; j < d; j++)
        y_acc[j] = 0.0;
    for (int k = 0; k < f; k++) {
        double hk = h[k];
        const uint16_t *w = w2 + (size_t)k * d;
        for (int j = 0; j < d; j++)
            y_acc[j] += hk * bf16_to_f32(w[j]);
    }
    for (int j = 0; j < d; j++)
        y[j] = bf16_to_f32(f32_to_bf16((float)y_acc[j]));
}

/* max |gpu - ref| / max |ref| over a row; infinite when either holds a NaN. */
double row_error(const uint16_t *gpu, const float *ref, int n)
{
    double max_ref = 0.0, max_diff = 0.0;
    for (int j = 0; j < n; j++) {
        double g = bf16_to_f32(gpu[j]), r = ref[j];
        if (isnan(g) || isnan(r))
            return INFINITY;
        max_ref = fmax(max_ref, fabs(r));
        max_diff = fmax(max_diff, fabs(g - r));
    }
    return max_diff / (max_ref > 0.0 ? max_ref : 1.0);
}


/* starved_input's host side of the step: the weights drawn on the host, the host reference of
 * one output row, the batch checksum. Plain C, no CUDA (the kernels are in
 * starved_input_kernels.cu, the corpus and tokenizer in tokenizer.c). */
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

void fill_uniform_bf16(uint16_t *out, size_t n, float scale, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        out[i] = uf_bf16_bits(scale * (float)(2.0 * rng_unit(rng) - 1.0));
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
        double xk = uf_bf16_value(emb[(size_t)id * d + k]);
        const uint16_t *w = w1 + (size_t)k * f;
        for (int j = 0; j < f; j++)
            h_acc[j] += xk * uf_bf16_value(w[j]);
    }
    for (int j = 0; j < f; j++) {
        float pre = uf_bf16_round((float)h_acc[j]);
        h[j] = uf_bf16_round(si_gelu(pre));
    }
    for (int j = 0; j < d; j++)
        y_acc[j] = 0.0;
    for (int k = 0; k < f; k++) {
        double hk = h[k];
        const uint16_t *w = w2 + (size_t)k * d;
        for (int j = 0; j < d; j++)
            y_acc[j] += hk * uf_bf16_value(w[j]);
    }
    for (int j = 0; j < d; j++)
        y[j] = uf_bf16_round((float)y_acc[j]);
}


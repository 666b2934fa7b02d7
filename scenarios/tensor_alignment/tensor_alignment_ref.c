/* tensor_alignment's plain-C side: see tensor_alignment_ref.h. */
#include "tensor_alignment_ref.h"

/* Tolerances of max_rel_err (verify.h: max|got − want| / max|want| over the sampled
 * elements) against the fp64 reference on the inputs as stored:
 *  - bf16: the output is stored in bf16 (8 significant bits), a rounding of at most 2^-9 of
 *    an element (2.0e-3 of the largest); fp32 accumulation over k <= 4104 adds ~1e-6;
 *  - TF32: the inputs keep 11 significant bits inside the tensor core; the errors add up like
 *    the products themselves: ~3e-4 of the largest element when rounded to nearest, ~7e-4
 *    when truncated (biased towards zero), on this scenario's inputs;
 *  - fp32: accumulation only, ~sqrt(k)·2^-24 ≈ 4e-6. 1e-4 still fails a GEMM that used TF32
 *    behind the variant's back (3e-4 or more): the fp32 row is really fp32.
 * Wiring faults (a wrong leading dimension, a stale buffer, padding that leaks into the real
 * part) give errors of order 1. */
#define TA_TOL_BF16 1e-2
#define TA_TOL_TF32 5e-3
#define TA_TOL_FP32 1e-4

int ta_pad_up(int x, int multiple)
{
    return (x + multiple - 1) / multiple * multiple;
}

ta_shape ta_shape_make(int m, int n, int k, int pad, int precision)
{
    ta_shape s = {.m = m, .n = n, .k = k, .n_run = n, .k_run = k, .precision = precision,
                  .w_kn = 0};
    if (pad) {
        s.n_run = ta_pad_up(n, TA_PAD);
        s.k_run = ta_pad_up(k, TA_PAD);
    }
    return s;
}

ta_dims ta_w_dims(const ta_shape *s)
{
    if (s->w_kn)
        return (ta_dims){.rows = s->k, .cols = s->n, .rows_alloc = s->k_run, .ld = s->n_run};
    return (ta_dims){.rows = s->n, .cols = s->k, .rows_alloc = s->n_run, .ld = s->k_run};
}

uint32_t ta_w_index(const ta_shape *s, int col, int j)
{
    return s->w_kn ? (uint32_t)j * (uint32_t)s->n + (uint32_t)col
                   : (uint32_t)col * (uint32_t)s->k + (uint32_t)j;
}

size_t ta_elem_bytes(int precision)
{
    return precision == TA_BF16 ? 2 : 4;
}

int ta_ld_aligned(int ld, int precision)
{
    return (size_t)ld * ta_elem_bytes(precision) % TA_ALIGN_BYTES == 0;
}

int ta_shape_aligned(const ta_shape *s)
{
    return ta_ld_aligned(s->k_run, s->precision) && ta_ld_aligned(s->n_run, s->precision);
}

double ta_useful_flops(const ta_shape *s)
{
    return 2.0 * s->m * (double)s->n * s->k;
}

double ta_executed_flops(const ta_shape *s)
{
    return 2.0 * s->m * (double)s->n_run * s->k_run;
}

double ta_min_bytes(const ta_shape *s)
{
    const double elems = (double)s->m * s->k + (double)s->n * s->k + (double)s->m * s->n;
    return elems * (double)ta_elem_bytes(s->precision);
}

size_t ta_device_bytes(const ta_shape *s)
{
    const size_t elems = (size_t)s->m * s->k_run + (size_t)s->n_run * s->k_run +
                         (size_t)s->m * s->n_run;
    return elems * ta_elem_bytes(s->precision);
}

void ta_keys(uint64_t seed, uint32_t *key_x, uint32_t *key_w)
{
    *key_x = (uint32_t)uf_hash_at(seed, 0);
    *key_w = (uint32_t)uf_hash_at(seed, 1);
}

float ta_input(uint32_t key, uint32_t index, int precision)
{
    const float v = ta_uniform(key, index);
    return precision == TA_BF16 ? uf_bf16_round(v) : v;
}

double ta_ref_element(const ta_shape *s, uint32_t key_x, uint32_t key_w, int row, int col)
{
    double sum = 0.0;
    const uint32_t x0 = (uint32_t)row * (uint32_t)s->k;
    for (int j = 0; j < s->k; j++)
        sum += (double)ta_input(key_x, x0 + (uint32_t)j, s->precision) *
               (double)ta_input(key_w, ta_w_index(s, col, j), s->precision);
    return sum;
}

void ta_sample_points(uint64_t seed, int m, int n, int count, int *rows, int *cols)
{
    const int corner_rows[4] = {0, 0, m - 1, m - 1};
    const int corner_cols[4] = {0, n - 1, 0, n - 1};
    for (int i = 0; i < count; i++) {
        if (i < 4) {
            rows[i] = corner_rows[i];
            cols[i] = corner_cols[i];
            continue;
        }
        const uint64_t h = uf_hash_at(seed ^ 0x5A3Bull, (uint64_t)i);
        rows[i] = (int)((h >> 32) % (uint64_t)m);
        cols[i] = (int)((h & 0xFFFFFFFFull) % (uint64_t)n);
    }
}

double ta_tolerance(int precision)
{
    return precision == TA_BF16 ? TA_TOL_BF16 : precision == TA_TF32 ? TA_TOL_TF32 : TA_TOL_FP32;
}

uint32_t ta_name_id(const char *name)
{
    uint32_t h = 2166136261u;
    if (!name || !name[0])
        return 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (h >> 24) ^ (h & 0xFFFFFFu);
}

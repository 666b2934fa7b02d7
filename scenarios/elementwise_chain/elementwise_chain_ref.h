/* elementwise_chain's op table (elementwise_chain_ref.c) and what host and device share: the
 * kinds of op, the table as an X-macro, the dropout mask. Plain C, usable from C and CUDA. */
#ifndef EW_REF_H
#define EW_REF_H

#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    EW_HIDDEN = 4096,           /* columns of the activation = length of the bias; a power of two */
    EW_MAX_OPS = 16             /* rows of the op table */
};

/* ---- the ops: kinds and the chain table ------------------------------------------------ */

typedef enum ew_kind {
    EW_BIAS_ADD,        /* x + bias[column] */
    EW_GELU,            /* tanh-form GELU, tanh by a clamped Pade approximant (see ew_gelu) */
    EW_DROPOUT,         /* keep with probability a (mask from a hash of seed and index), x c */
    EW_SCALE,           /* x a */
    EW_RESIDUAL_ADD,    /* x + residual[i]: a second full tensor read */
    EW_CLAMP,           /* clamp to [-a, a] */
    EW_LEAKY_RELU,      /* x > 0 ? x : a x */
    EW_SHIFT,           /* x + a */
    EW_N_KINDS
} ew_kind;

typedef struct ew_kind_desc {
    const char *name;
    int flops;                  /* per element: add, mul, div, min, max, compare count one each */
    int reads_residual;         /* reads the residual tensor */
    int reads_bias;             /* reads the bias vector */
} ew_kind_desc;

/* The chain, as data: X(index, kind, a, c). A run with ops=N applies rows 0..N-1 in order. The
 * first five are the classic tail (bias, GELU, dropout, scale, residual); the rest are more
 * ops of the same cost class (a second bias and activation, clamps, shifts, residual adds).
 * The host table and the device code are both generated from this one list. */
#define EW_OP_TABLE(X)                                                                     \
    X(0, EW_BIAS_ADD, 0.0f, 0.0f)                                                          \
    X(1, EW_GELU, 0.0f, 0.0f)                                                              \
    X(2, EW_DROPOUT, 0.9f, 1.0f / 0.9f)     /* keep 0.9, kept values scaled by 1/0.9 */    \
    X(3, EW_SCALE, 0.70710678f, 0.0f)       /* 1/sqrt(2) */                                \
    X(4, EW_RESIDUAL_ADD, 0.0f, 0.0f)                                                      \
    X(5, EW_CLAMP, 2.5f, 0.0f)                                                             \
    X(6, EW_BIAS_ADD, 0.0f, 0.0f)                                                          \
    X(7, EW_LEAKY_RELU, 0.01f, 0.0f)                                                       \
    X(8, EW_SCALE, 1.25f, 0.0f)                                                            \
    X(9, EW_RESIDUAL_ADD, 0.0f, 0.0f)                                                      \
    X(10, EW_SHIFT, 0.125f, 0.0f)                                                          \
    X(11, EW_CLAMP, 4.0f, 0.0f)                                                            \
    X(12, EW_SCALE, 0.8f, 0.0f)                                                            \
    X(13, EW_BIAS_ADD, 0.0f, 0.0f)                                                         \
    X(14, EW_SHIFT, -0.0625f, 0.0f)                                                        \
    X(15, EW_RESIDUAL_ADD, 0.0f, 0.0f)

typedef struct ew_op {
    int index;
    ew_kind kind;
    float a, c;
} ew_op;

extern const ew_kind_desc ew_kinds[EW_N_KINDS];     /* in ew_kind order */
extern const ew_op ew_ops[];                        /* EW_OP_TABLE's rows: EW_MAX_OPS */

/* Does any op in [first, end) read the residual (what = 0) or the bias (what = 1)? */
int ew_ops_read(int first, int end, int what);
int ew_flops_per_element(int n_ops);

/* ---- shared by host and device: integer work only (no rounding to disagree on) ---------- */

/* The dropout mask: a counter-based hash of (seed, op, element index), so that any kernel
 * (fused, unfused, the checks) draws the same mask for the same element. Tensors have fewer
 * than 2^32 elements (checked in setup), so the index is 32-bit. An element is kept when the
 * top 24 bits of the hash are below keep x 2^24 (an exact scaling); the test is written as
 * hash < (keep x 2^24) x 2^8, which is the same test without the shift (keep < 1, checked at
 * compile time on the table, so the threshold does not overflow). */
static inline UF_HOST_DEVICE int ew_dropout_keep(uint32_t seed, int op_index, uint32_t e,
                                                 float keep)
{
    uint32_t key = seed ^ (0x9e3779b9u * (uint32_t)(op_index + 1));
    uint32_t threshold = (uint32_t)(keep * 16777216.0f) << 8;
    return uf_mix32(e ^ key) < threshold;
}

/* ---- the host reference ------------------------------------------------------------------ */

/* The storage bits of x: fp32 as is, or bf16 rounded to nearest even (inputs are finite). */
uint32_t ew_host_storage_bits(float x, int bits);
float ew_host_storage_value(uint32_t stored, int bits);
/* Element i of a tensor stored as fp32 (bits 32) or bf16 (bits 16), as its bits. */
uint32_t ew_host_load_bits(const void *p, size_t i, int bits);
/* The variant's result for element e (ew_host_chain_bits in elementwise_chain_ref.c). */
uint32_t ew_host_chain_bits(float x, float r, float b, size_t e, int n_ops, uint32_t seed,
                            int round_each, int bits);

#ifdef __cplusplus
}
#endif

#endif

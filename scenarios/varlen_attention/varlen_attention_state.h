/* varlen_attention: the variant ids, each variant's plan (its sequences as the kernel sees them
 * and its blocks' work list) and the scenario's state, shared by the story, the batch, setup,
 * verification and describe. */
#ifndef VA_STATE_H
#define VA_STATE_H

#include <cuda_bf16.h>

#include "varlen_attention_kernels.h"

enum { VA_PAD_GLOBAL = 0, VA_PAD_BATCH = 1, VA_BUCKETED = 2, VA_VARLEN = 3, VA_N_VARIANTS = 4 };

/* The layout of one variant: its sequences as the kernel sees them and its blocks' work list. */
typedef struct va_plan {
    int n_seqs;
    va_seq *seqs;
    int n_items;
    va_item *items;
    long long stored_tokens;    /* rows of Q/K/V/O the variant allocates */
    double executed_flops;      /* tensor FLOPs the kernel issues, counted tile by tile */
} va_plan;

typedef struct va_state {
    int dist, n_seqs, heads, causal;
    int *len;                   /* [n_seqs] real lengths, in the order drawn (logical) */
    int *cu_real;               /* [n_seqs+1] packed offsets by logical sequence */
    long long real_tokens;
    int max_len;
    double useful_flops;
    float scale_log2;
    int rows;                   /* query rows per warp of the kernel in use: 16 or 32 */
    va_plan plan[VA_N_VARIANTS];
    /* the variant whose buffers are allocated (begin_variant .. end_variant), -1 none */
    int active;
    __nv_bfloat16 *d_q, *d_k, *d_v, *d_o;
    va_seq *d_seqs;
    va_item *d_items;
    /* the clock probe of the timing pass's timed steps (va_clock_probe): zeroed by
     * begin_variant, added to by the kernel while ctx->timing is set, read by describe */
    va_clock_probe *d_probe;
    double variant_bytes;
    /* reference, shared by the variants */
    int *d_cu_real;
    float *d_ref_out;           /* [real_tokens, heads, VA_HEAD_DIM] fp32 */
    double *d_sums;             /* Σ(out−ref)², Σref², non-finite count */
} va_state;

#endif

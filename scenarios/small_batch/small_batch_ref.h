/* small_batch's plain-C parts (small_batch_ref.c): the random inputs host and device share, the
 * shapes and byte counts of the layer stack, its fp64 host reference (optionally emulating the
 * device's bf16 stores), the pointer chase and the spin chain that the two "nvidia-smi lies"
 * kernels run, and the wave arithmetic of a tiled GEMM. Plain C, usable from C and CUDA. */
#ifndef SB_REF_H
#define SB_REF_H

#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The four projections of a transformer layer, in forward order. */
enum { SB_QKV, SB_O, SB_UP, SB_DOWN, SB_N_LINEARS };
/* Tensor ids of the counter-based random inputs; W of layer l, linear j is SB_T_W + 4l + j. */
enum { SB_T_X0 = 1, SB_T_DY = 2, SB_T_WAVE_X = 3, SB_T_WAVE_W = 4, SB_T_W = 16 };
#define SB_REF_MAX_LAYERS 64

/* Tolerances of max_rel_err (verify.h). The anchor: the device's whole step on a tiny stack
 * against the fp64 reference. Every activation and gradient is stored in bf16 (2^-9 relative
 * per store) and a tiny step stores each value through up to 16 GEMMs: the bf16 emulation of
 * the reference (sb_host_reference, emulate_bf16 = 1) stays below half of it on every seed the
 * tests try, and a stack missing one layer is off by far more (tests/unit/test_small_batch.c). The
 * sampled checks: one GEMM's outputs against fp64 dot products of the very bf16 inputs the
 * device read: one bf16 rounding of the output (2^-9 = 0.2 %) plus fp32 accumulation, 1e-2 is
 * five roundings; a wrong operand or layout gives O(1). */
#define SB_TOL_ANCHOR 5e-2
#define SB_TOL_SAMPLED 1e-2

/* Pointer chase: next(i) = (A·i + C) mod 2^k is one cycle through all 2^k slots (Hull-Dobell:
 * C odd, A ≡ 1 mod 4), so a chain never falls into a short loop that the caches would hold. */
#define SB_CHASE_A 1664525u
#define SB_CHASE_C 1013904223u

/* ---- random inputs, identical on host and device ------------------------------------------ */

/* scale·(2u − 1), u uniform on 16 bits: exact in fp32 before the one multiply by scale, which
 * host and device round alike; the device then stores it as bf16 (uf_bf16_round on the host). */
static inline UF_HOST_DEVICE float sb_random(uint64_t seed, uint64_t tensor, uint64_t i,
                                             float scale)
{
    const uint64_t key = uf_mix64(seed * UF_GOLDEN64 + tensor);
    return scale * (float)(2.0 * uf_uniform_at(key, i, 16) - 1.0);
}

/* One slot of the chase table, and where chain c starts (table of mask + 1 slots). */
static inline UF_HOST_DEVICE uint32_t sb_chase_next(uint32_t i, uint32_t mask)
{
    return (SB_CHASE_A * i + SB_CHASE_C) & mask;
}

static inline UF_HOST_DEVICE uint32_t sb_chase_start(uint64_t seed, uint32_t chain, uint32_t mask)
{
    return (uint32_t)uf_hash_at(seed, chain) & mask;
}

/* One round of the spin chain: a dependent integer hash, no memory access. */
static inline UF_HOST_DEVICE uint32_t sb_spin_round(uint32_t h, uint32_t i)
{
    return uf_mix32(h + i);
}

static inline UF_HOST_DEVICE uint32_t sb_spin_start(uint64_t seed, uint32_t thread)
{
    return (uint32_t)uf_hash_at(seed, thread);
}

/* ---- shapes and counts of the layer stack (width d, ffn 4d) -------------------------------- */

int sb_in_features(int linear, int d);     /* d, d, d, 4d */
int sb_out_features(int linear, int d);    /* 3d, d, 4d, d */
/* The weights' scale: U(±√(3/in)) has variance 1/in, so every output keeps its input's. */
float sb_weight_scale(int linear, int d);
/* Parameters of one layer: 12·d². */
double sb_layer_params(int d);
/* GEMM FLOPs of one training step over `tokens` tokens: forward (2 per parameter and token)
 * and backward (input and weight gradients: 4 more), 6·tokens·12d²·L. */
double sb_step_flops(int d, int layers, double tokens);
/* The least the step's GEMMs move, in bytes: per GEMM each operand read once and the result
 * written once (bf16); n_micro micro-batches of `micro` tokens, the weight gradients of every
 * micro-batch after the first read back and accumulated. */
double sb_step_bytes(int d, int layers, double micro, double n_micro);
/* Activations the forward keeps for the backward, per micro-batch of `micro` tokens: each
 * layer's input, QKV, attention output and MLP hidden (9·d values per token and layer). */
double sb_act_bytes(int d, int layers, double micro);

/* ---- the fp64 host reference of the step ---------------------------------------------------- */

/* The stack as the device runs it: layer l maps h to W_down·W_up·W_o·V(W_qkv·h), V the last d
 * rows of QKV (the attention core's stand-in: no weights, negligible FLOPs at short
 * sequences). Backward from the upstream gradient dY; weight gradients summed over all tokens. */
typedef struct sb_ref_shape {
    int d, layers;
    int tokens;             /* tokens of the step: n_micro micro-batches of `micro` */
    int micro;              /* tokens per micro-batch (the bf16 emulation rounds dW after each) */
} sb_ref_shape;

typedef struct sb_ref_out {
    double *pool;                                   /* one allocation; the caller frees it */
    double *y, *dx0;                                /* tokens × d, row-major */
    double *dw[SB_REF_MAX_LAYERS][SB_N_LINEARS];    /* out × in, row-major */
} sb_ref_out;

/* The step on the inputs regenerated from seed. emulate_bf16 = 0: in fp64 throughout (the
 * reference verify compares with); 1: every tensor the device stores in bf16 is rounded the
 * same way (activations, gradients, and the accumulated weight gradients after each
 * micro-batch), the products summed in fp64: a model of the device's error, for the tests of
 * the tolerance. 0, -1 on a bad shape, 1 when out of host memory. */
int sb_host_reference(const sb_ref_shape *s, uint64_t seed, int emulate_bf16, sb_ref_out *out);

/* ---- the two kernels that fool nvidia-smi ---------------------------------------------------- */

/* Where chain `start` is after `hops` hops through the table of mask + 1 slots. */
uint32_t sb_chase_host(uint32_t start, uint32_t mask, long hops);
/* The spin chain's value after iters rounds from h. */
uint32_t sb_spin_host(uint32_t h, long iters);

/* ---- wave quantization of a tiled GEMM -------------------------------------------------------- */

typedef struct sb_waves {
    double tiles;           /* output tiles × split-K slices: the GEMM's thread blocks */
    double waves;           /* tiles / SMs */
    double wave_eff_pct;    /* tiles / (SMs × whole waves): SM slots busy over the waves run */
    double tile_fill_pct;   /* rows·cols / (tiles' area): output computed, not padding */
} sb_waves;

/* The tiles of a rows × cols output in tile_rows × tile_cols tiles, split-K `splitk`, on `sms`
 * SMs with one tile per SM at a time. 0, or -1 when a count is not positive. */
int sb_wave_report(double rows, double cols, int tile_rows, int tile_cols, int splitk, int sms,
                   sb_waves *out);

#ifdef __cplusplus
}
#endif

#endif

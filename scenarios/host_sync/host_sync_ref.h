/* host_sync's plain-C parts (host_sync_ref.c): the random inputs host and device share, the
 * fp64 host reference of the step (a few rows of the 8-layer chain, and the loss), the
 * comparison of the losses a variant reported with item's (at which lag, how many differ),
 * and the host's own work per step (a timed spin). Plain C, usable from C and CUDA, tested by
 * tests/unit/test_host_sync.c. */
#ifndef HS_REF_H
#define HS_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor ids of the counter-based random inputs. */
enum { HS_T_X = 1, HS_T_LABEL = 2, HS_T_W = 16 /* + layer */ };

/* The key of a tensor under a seed: what the device's fill and loss kernels and the host
 * reference hash each element's index with. */
static inline UF_HOST_DEVICE uint32_t hs_key(uint64_t seed, uint32_t tensor)
{
    return (uint32_t)uf_hash_at(seed, tensor);
}

/* Element i of a uniform tensor of [-amplitude, amplitude), before its bf16 rounding: 2u - 1
 * is exact in fp32 (u has 24 bits), so host and device round one product the same way. */
static inline UF_HOST_DEVICE float hs_uniform(uint32_t key, uint32_t i, float amplitude)
{
    return amplitude * (2.0f * uf_uniform32_at(key, i) - 1.0f);
}

/* The weights' amplitude: U(±sqrt(3/d)) keeps an activation's variance through x·W. */
static inline UF_HOST_DEVICE float hs_w_amplitude(int d)
{
    return sqrtf(3.0f / (float)d);
}

/* The label of element i at step `step`: a fresh synthetic target every step, so that the
 * loss differs from step to step and a late report can be told from a current one. */
static inline UF_HOST_DEVICE float hs_label(uint32_t key, uint64_t step, uint32_t i)
{
    return uf_uniform32_at(key ^ (uint32_t)uf_mix64(step + 1), i) - 0.5f;
}

/* Rows `rows[0..n_rows)` of the chain y = bf16(tanh(bf16(x W_l))) over `layers` layers of
 * width d, in fp64 on inputs regenerated from `seed` (x: tokens x d, W_l: d x d row-major,
 * both bf16 as the device stores them). out: n_rows x d, row after row. 0, or 1 when out of
 * host memory or when a row lies outside [0, tokens). */
int hs_ref_rows(uint64_t seed, int tokens, int d, int layers, const int *rows, int n_rows,
                double *out);
/* The same on n_threads threads (clamped to 1..16; hs_ref_rows takes the online CPUs): each layer's
 * columns split between them, every sum over k in order, so the rows are bitwise the same
 * whatever n_threads. At d = 4096 one thread takes ~1.5 s on the H200's host (a weight drawn
 * by hashing, 134 M of them): three anchors were 4 s of a 21 s --quick run (#29). */
int hs_ref_rows_threads(uint64_t seed, int tokens, int d, int layers, const int *rows,
                        int n_rows, double *out, int n_threads);

/* The loss of one step from the device's output y (n bf16 values as floats): the mean over
 * the elements of (y_i - label_i)^2, in fp64. */
double hs_ref_loss(const float *y, size_t n, uint32_t label_key, uint64_t step);

/* ---- the losses a variant reported -------------------------------------------------------- */

/* reported[s] is what the variant reported at step s (NaN: nothing), ref[s] item's loss of
 * step s, both n long. The lag: the smallest l in [0, max_lag] at which every report at a step
 * s >= l equals ref[s - l] bit for bit, there is at least one, and nothing was reported before
 * step l; -1 when no lag explains the reports. */
int hs_loss_lag(const float *reported, const float *ref, int n, int max_lag);

/* At lag `lag`: the steps s >= lag whose report differs bitwise from ref[s - lag] (a missing
 * report counts), plus the steps s < lag with a report (a value before any loss existed). */
int hs_loss_mismatch(const float *reported, const float *ref, int n, int lag);

/* ---- the host's own work ------------------------------------------------------------------- */

/* Keep the CPU busy for `us` microseconds (CLOCK_MONOTONIC): the logging, data preparation or
 * framework overhead of a step. Busy, not asleep: a framework's Python is CPU work, and a
 * sleep's wake-up would add its own latency. Nothing for us <= 0. */
void hs_host_work(double us);

/* Monotonic host time in microseconds. */
double hs_now_us(void);

#ifdef __cplusplus
}
#endif

#endif

/* checkpoint_recompute's model (checkpoint_recompute_model.cu): the activation arena, one
 * block's activations, the gradients, the model, and the operations the policies
 * (checkpoint_recompute.cu) are written in. Every operation is a no-op on a planning arena. */
#ifndef CR_MODEL_H
#define CR_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include "checkpoint_recompute_kernels.h"

/* What alloc_acts allocates for a block. */
enum { ACT_STATS = 1, ACT_XN = 2, ACT_H = 4, ACT_G = 8, ACT_Y = 16 };

/* Bump allocation with free-to-mark (the step's lifetimes are LIFO), peak recorded. While
 * planning (base NULL, unbounded) it hands out fake addresses and only measures. */
typedef struct cr_arena {
    char *base;
    size_t capacity, top, peak;
    int planning;
} cr_arena;

/* One block's activations; NULL where the policy does not hold them. */
typedef struct cr_acts {
    size_t mark;            /* arena top before this block's allocations */
    float *mean, *rstd;     /* LayerNorm statistics [T] */
    bf16 *xn, *h, *g, *y;   /* LN(x) [T·d], W1·LN(x) [T·4d], gelu(h) [T·4d], output [T·d] */
} cr_acts;

/* Gradients: bf16 dW1 [L][4d·d] | dW2 [L][d·4d] | dx0 [T·d]; fp32 dgamma [L][d] | dbeta [L][d].
 * dx0 is also the running activation gradient of the backward pass. */
typedef struct cr_grads {
    bf16 *bf;
    float *f32;
    size_t n_bf, n_f32;
} cr_grads;

/* Activations are row-major [token][feature] = column-major feature × T for cuBLAS. W1 is
 * column-major 4d × d (h = W1·xn), W2 column-major d × 4d (f = W2·g). */
typedef struct cr_model {
    int d, hidden, T, L;
    bf16 *params;           /* W1 [L][4d·d] | W2 [L][d·4d] */
    float *ln_params;       /* gamma [L][d] | beta [L][d] */
    bf16 *x0, *dy_top;      /* model input and loss gradient at the top [T·d] */
    cr_grads grads;
    float *ln_partials;     /* [2][CR_LN_CHUNKS][d] */
    cr_acts *acts;          /* host [L] */
    bf16 **ckpt;            /* host [L+1]: segment inputs (every_k, full) */
    size_t *seg_mark;       /* host [L]: arena top before each segment's checkpoint */
    cr_arena *arena;
    cublasHandle_t blas;
    cudaStream_t stream;
} cr_model;

static inline size_t w_elems(const cr_model *m) { return (size_t)m->hidden * m->d; }
static inline size_t td_elems(const cr_model *m) { return (size_t)m->T * m->d; }
static inline size_t th_elems(const cr_model *m) { return (size_t)m->T * m->hidden; }

/* One training step (forward + backward) of a policy on a model: the story's run_policy. */
typedef int (*cr_policy_fn)(cr_model *m, int policy, int k);

/* `bytes` (rounded up to 256) from the arena; fails, reporting it, when the arena is full. */
int arena_alloc(cr_arena *a, size_t bytes, void **out);

/* Frees everything allocated after `mark` (an earlier top). */
void arena_free_to(cr_arena *a, size_t mark);

/* LayerNorm of block i: xn from x; mean and rstd kept where not NULL. */
int ln_forward(const cr_model *m, int i, const bf16 *x, bf16 *xn, float *mean, float *rstd);

/* An elementwise kernel (8 bf16 per thread and iteration) over `elems` elements: dst from src
 * (gelu forward), or in place on dst (gelu backward, the residual). */
typedef void (*ew_kernel)(const bf16 *src, bf16 *dst, size_t n8);
int ew_launch(const cr_model *m, ew_kernel kernel, const bf16 *src, bf16 *dst,
              size_t elems);

/* The backward pass starts from the loss gradient at the top (drawn from the seed). */
int begin_backward(const cr_model *m);

/* Allocate the activations named in `what` (ACT_*), in a fixed order. */
int alloc_acts(const cr_model *m, cr_acts *a, int what);

/* Block i's forward up to gelu(h) (the recompute of a segment's last block). */
int block_forward_to_g(const cr_model *m, int i, const bf16 *x, const cr_acts *a);

/* Block i's forward: y = x + W2 gelu(W1 LN(x)), keeping what `a` holds. */
int block_forward(const cr_model *m, int i, const bf16 *x, const cr_acts *a, bf16 *y);

/* Block i's backward from the activations in `a`: its weight gradients, and the running
 * input gradient. */
int block_backward(const cr_model *m, int i, const bf16 *x, const cr_acts *a);

/* Frees the model's device buffers and host bookkeeping. */
void model_free(cr_model *m);

/* Dimensions and host bookkeeping only (enough to plan). */
int model_init_host(cr_model *m, int d, int T, int L);

/* A set of gradients on the device, and its release. */
int grads_alloc(cr_grads *g);
void grads_free(cr_grads *g);

/* Device buffers of a model whose host part is set; on failure the caller frees the model. */
int model_alloc_device(cr_model *m);

/* Weights, LayerNorm parameters, input and top gradient from the seed (never zeros). */
int model_fill(const cr_model *m, uint64_t seed);

/* Every gradient byte set to `byte`, on stream s. */
int grads_poison(const cr_grads *g, int byte, cudaStream_t s);

/* Device bytes of the gradients, and of everything but the activations. */
size_t grads_bytes(const cr_model *m);
size_t model_device_bytes(const cr_model *m);

/* The peak activation bytes of a policy: a dry run of `run` on a planning arena. */
int plan_policy(cr_model *m, cr_policy_fn run, int policy, int k, size_t *peak_bytes);

#endif

/* elementwise_chain: the tail of a transformer layer (bias add, GELU, dropout, scale, residual
 * add, and more elementwise ops up to N) applied to an activation tensor many times the size
 * of the L2. `unfused` runs one kernel per op, each reading and writing the whole tensor;
 * `fused` runs the chain in one pass, 16-byte loads and stores, intermediates in registers.
 * Both are memory-bound: fusion wins by moving fewer bytes, and its speed-up follows the ratio
 * of bytes moved. Both variants run the same kernel (ops [first, end) of the table), so the
 * only differences are the bytes moved and where results are rounded to the storage type. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include "random.h"
#include "underfed.h"

#define EW_MIB ((size_t)1 << 20)
#define EW_GIB ((size_t)1 << 30)

enum {
    EW_HIDDEN = 4096,           /* columns of the activation = length of the bias; a power of two */
    EW_MAX_OPS = 16,            /* rows of the op table */
    EW_BLOCK = 256,             /* threads per block */
    EW_SAMPLE_BLOCKS = 16,      /* host check: this many runs of contiguous elements ... */
    EW_SAMPLE_ELEMS = 2048      /* ... of this length (first, last, and spread between) */
};

enum { EW_UNFUSED = 0, EW_FUSED = 1 };

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

/* In ew_kind order. */
static const ew_kind_desc ew_kinds[EW_N_KINDS] = {
    {.name = "bias_add", .flops = 1, .reads_residual = 0, .reads_bias = 1},
    {.name = "gelu", .flops = 16, .reads_residual = 0, .reads_bias = 0},
    {.name = "dropout", .flops = 1, .reads_residual = 0, .reads_bias = 0},
    {.name = "scale", .flops = 1, .reads_residual = 0, .reads_bias = 0},
    {.name = "residual_add", .flops = 1, .reads_residual = 1, .reads_bias = 0},
    {.name = "clamp", .flops = 2, .reads_residual = 0, .reads_bias = 0},
    {.name = "leaky_relu", .flops = 2, .reads_residual = 0, .reads_bias = 0},
    {.name = "shift", .flops = 1, .reads_residual = 0, .reads_bias = 0},
};

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

#define EW_HOST_ROW(i, k, a_, c_) {.index = (i), .kind = (k), .a = (a_), .c = (c_)},
static const ew_op ew_ops[] = {EW_OP_TABLE(EW_HOST_ROW)};
#undef EW_HOST_ROW
static_assert(sizeof ew_ops / sizeof ew_ops[0] == EW_MAX_OPS, "the op table has EW_MAX_OPS rows");

/* Does any op in [first, end) read the residual (what = 0) or the bias (what = 1)? */
static int ew_ops_read(int first, int end, int what)
{
    for (int k = first; k < end; ++k) {
        const ew_kind_desc *d = &ew_kinds[ew_ops[k].kind];
        if (what == 0 ? d->reads_residual : d->reads_bias)
            return 1;
    }
    return 0;
}

static int ew_flops_per_element(int n_ops)
{
    int flops = 0;
    for (int k = 0; k < n_ops; ++k)
        flops += ew_kinds[ew_ops[k].kind].flops;
    return flops;
}

/* ---- shared by host and device: integer work only (no rounding to disagree on) ---------- */

/* The dropout mask: a counter-based hash of (seed, op, element index), so that any kernel
 * (fused, unfused, the checks) draws the same mask for the same element. Tensors have fewer
 * than 2^32 elements (checked in setup), so the index is 32-bit. An element is kept when the
 * top 24 bits of the hash are below keep x 2^24 (an exact scaling); the test is written as
 * hash < (keep x 2^24) x 2^8, which is the same test without the shift (keep < 1, checked at
 * compile time on the table, so the threshold does not overflow). */
__host__ __device__ static inline int ew_dropout_keep(uint32_t seed, int op_index, uint32_t e,
                                                      float keep)
{
    uint32_t key = seed ^ (0x9e3779b9u * (uint32_t)(op_index + 1));
    uint32_t threshold = (uint32_t)(keep * 16777216.0f) << 8;
    return uf_mix32(e ^ key) < threshold;
}

/* Dropout keeps a fraction in (0, 1): the threshold above stays below 2^32. */
#define EW_KEEP_CHECK(i, k, a_, c_)                                                        \
    static_assert((k) != EW_DROPOUT || ((a_) > 0.0f && (a_) < 1.0f),                       \
                  "dropout keep must lie in (0, 1)");
EW_OP_TABLE(EW_KEEP_CHECK)
#undef EW_KEEP_CHECK

/* ---- device: the ops, in fp32 registers, every rounding explicit ------------------------ */
/* __fadd_rn/__fmul_rn/__fmaf_rn are never contracted or re-associated, so an op computes the
 * same bits wherever it is inlined (fused chain, single-op kernel, check kernel), and the host
 * reference, written with the same IEEE operations in the same order, computes them too. */

/* 1/d correctly rounded, for d in [27, 108] (the Pade denominator below, by construction):
 * the hardware's approximate reciprocal, then one Newton step r + r (1 - d r) in two FMAs.
 * This is the sequence ptxas emits for rcp.rn.f32 (__frcp_rn) on every d whose exponent is
 * away from the ends of the range, where it is exact; written out, it has none of
 * __frcp_rn's range test and branch to a slow path, so the lanes of a thread interleave. */
__device__ __forceinline__ static float ew_rcp_rn_27_108(float d)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    return __fmaf_rn(r, __fmaf_rn(-d, r, 1.0f), r);
}

/* tanh(u) ~ u (27 + u^2) / (27 + 9 u^2) on [-3, 3], clamped there (where it reaches +-1 with
 * zero slope): the [3/2] Pade approximant, max error 2.4e-2, monotonic. The quotient is
 * num x (1/den), each correctly rounded: den lies in [27, 108], so the reciprocal needs no
 * branch (ew_rcp_rn_27_108), and the host computes the same num * (1.0f / den). */
__device__ __forceinline__ static float ew_tanh_pade(float u)
{
    float uc = fminf(fmaxf(u, -3.0f), 3.0f);
    float uc2 = __fmul_rn(uc, uc);
    float num = __fmul_rn(uc, __fadd_rn(27.0f, uc2));
    float den = __fadd_rn(27.0f, __fmul_rn(9.0f, uc2));
    return __fmul_rn(num, ew_rcp_rn_27_108(den));
}

/* GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). 16 flops. */
__device__ __forceinline__ static float ew_gelu(float x)
{
    float x3 = __fmul_rn(__fmul_rn(x, x), x);
    float inner = __fadd_rn(x, __fmul_rn(0.044715f, x3));
    float t = ew_tanh_pade(__fmul_rn(0.7978845608f, inner));
    return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, t));
}

/* One op on one element (index e). `kind`, `a`, `c` and `op_index` are constants where the
 * table is expanded, so the switch folds away. */
__device__ __forceinline__ static float ew_apply(ew_kind kind, float a, float c, int op_index,
                                                 float x, float r, float b, uint32_t e,
                                                 uint32_t seed)
{
    switch (kind) {
    case EW_BIAS_ADD: return __fadd_rn(x, b);
    case EW_GELU: return ew_gelu(x);
    case EW_DROPOUT: {
        /* kept ? x c : +0, as a select (no branch): all-ones or zero mask on the product */
        uint32_t kept = 0u - (uint32_t)ew_dropout_keep(seed, op_index, e, a);
        return __uint_as_float(__float_as_uint(__fmul_rn(x, c)) & kept);
    }
    case EW_SCALE: return __fmul_rn(x, a);
    case EW_RESIDUAL_ADD: return __fadd_rn(x, r);
    case EW_CLAMP: return fminf(fmaxf(x, -a), a);
    case EW_LEAKY_RELU: return x > 0.0f ? x : __fmul_rn(x, a);
    case EW_SHIFT: return __fadd_rn(x, a);
    default: return x;
    }
}

/* The ops [first, end) of the table as a mask, bit i for row i. */
__host__ __device__ static inline uint32_t ew_op_mask(int first, int end)
{
    return ((1u << end) - 1u) & ~((1u << first) - 1u);
}

/* The ops in `ops` (ew_op_mask) on `lanes` elements, with indices e[] (x in place; r and b
 * are the residual and bias of each lane). Expanded from the table: one guarded block per
 * row, so no per-op dispatch happens at run time beyond a uniform branch, taken once for all
 * the lanes of a thread. The guard tests a bit of one register: a [first, end) range test
 * per row would need 16 predicates, more than the hardware has, and they would be rebuilt
 * in every iteration. */
__device__ __forceinline__ static void ew_chain(float *x, const float *r, const float *b,
                                                const uint32_t *e, int lanes, uint32_t ops,
                                                uint32_t seed)
{
#define EW_DEVICE_ROW(i, k, a_, c_)                                                        \
    if (ops & (1u << (i))) {                                                               \
        _Pragma("unroll") for (int j = 0; j < lanes; ++j)                                  \
            x[j] = ew_apply((k), (a_), (c_), (i), x[j], r[j], b[j], e[j], seed);           \
    }
    EW_OP_TABLE(EW_DEVICE_ROW)
#undef EW_DEVICE_ROW
}

/* What one launch of the chain kernel does: ops [first, end) from `in` to `out` (which may be
 * the same buffer: each thread reads its elements before it writes them). */
typedef struct ew_launch {
    const void *in;
    void *out;
    const void *residual;       /* read only when load_residual */
    const void *bias;           /* EW_HIDDEN elements, read only when load_bias */
    uint32_t rows;              /* of EW_HIDDEN elements; rows x EW_HIDDEN < 2^32 (setup checks) */
    int first, end;
    int load_residual, load_bias;
    uint32_t seed;              /* of the dropout mask */
} ew_launch;

/* How the chain kernels split the work: a block per row of the activation (EW_HIDDEN
 * elements, one bias vector's worth), grid = rows. Thread t owns vectors t, t + EW_BLOCK, ...
 * of the row (EW_THREAD_ELEMS elements in all):
 * - every vector load or store of a warp covers 512 contiguous bytes (coalesced);
 * - a thread issues all its loads (input, residual, bias) before computing any of them, so
 *   several 16-byte loads per thread are in flight, and many blocks per SM add to them;
 * - the per-op branches are paid once per EW_THREAD_ELEMS elements.
 * A block per row, not a persistent grid-stride loop: measured on an H200 (1 GiB, fp32), a
 * plain copy with one-shot blocks moves 4.0-4.2 TB/s, as cudaMemcpy does, and the same copy
 * as a grid-stride loop over a resident wave 3.76-3.89 TB/s, whether its loads are plain or
 * cp.async into a ring of row buffers; the chain kernels followed suit (1-op fp32 chain 0.525
 * vs 0.561-0.568 ms).
 * Element index of lane j of vector k of a thread: row x EW_HIDDEN + t x W (bits from
 * log2(W) up to log2(EW_BLOCK x W) - 1, and from log2(EW_HIDDEN) up) plus k x EW_BLOCK x W + j
 * (the other bits: j < W, k x EW_BLOCK x W < EW_HIDDEN). The two parts share no bit, so the
 * sum is their xor, which is how it is written: the dropout key's xor then folds into one
 * per row and op. */
enum {
    EW_THREAD_ELEMS = EW_HIDDEN / EW_BLOCK,
    EW_MIN_BLOCKS = 4           /* per SM: caps a chain kernel at 64 registers (no spills) */
};
static_assert(EW_HIDDEN % (EW_BLOCK * 8) == 0 && (EW_BLOCK & (EW_BLOCK - 1)) == 0,
              "a row is a whole number of 8-element vectors per thread; powers of two");

/* Indices of a thread's elements in a row, W elements per vector (see above). */
__device__ __forceinline__ static void ew_lane_indices(uint32_t *e, uint32_t row, uint32_t t,
                                                       int w)
{
    const uint32_t base = row * EW_HIDDEN + t * (uint32_t)w;
#pragma unroll
    for (int k = 0; k < EW_THREAD_ELEMS / w; ++k)
#pragma unroll
        for (int j = 0; j < w; ++j)
            e[k * w + j] = base ^ (uint32_t)(k * EW_BLOCK * w + j);
}

__device__ __forceinline__ static void ew_unpack_f32(uint4 v, float *x)
{
    x[0] = __uint_as_float(v.x);
    x[1] = __uint_as_float(v.y);
    x[2] = __uint_as_float(v.z);
    x[3] = __uint_as_float(v.w);
}

/* 8 bf16 in a uint4, element 2k in the low half of word k: bf16 -> fp32 is exact (shift). */
__device__ __forceinline__ static void ew_unpack_bf16(uint4 v, float *x)
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        x[2 * k] = __uint_as_float(w[k] << 16);
        x[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
}

/* fp32 -> bf16, round to nearest even, two at a time. */
__device__ __forceinline__ static uint32_t ew_pack_bf16x2(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return (uint32_t)__bfloat16_as_ushort(h.x) | ((uint32_t)__bfloat16_as_ushort(h.y) << 16);
}

/* Elements of a 16-byte vector: 4 fp32 (bits 32) or 8 bf16 (bits 16). */
__device__ __forceinline__ static void ew_unpack(uint4 v, float *x, int bits)
{
    if (bits == 32)
        ew_unpack_f32(v, x);
    else
        ew_unpack_bf16(v, x);
}

__device__ __forceinline__ static uint4 ew_pack(const float *y, int bits)
{
    if (bits == 32)
        return make_uint4(__float_as_uint(y[0]), __float_as_uint(y[1]), __float_as_uint(y[2]),
                          __float_as_uint(y[3]));
    return make_uint4(ew_pack_bf16x2(y[0], y[1]), ew_pack_bf16x2(y[2], y[3]),
                      ew_pack_bf16x2(y[4], y[5]), ew_pack_bf16x2(y[6], y[7]));
}

/* `n` vectors of this thread from `src` (its first one), EW_BLOCK apart, as fp32. */
__device__ __forceinline__ static void ew_load_thread(const uint4 *src, float *x, int n, int w,
                                                      int bits)
{
#pragma unroll
    for (int k = 0; k < n; ++k)
        ew_unpack(src[k * EW_BLOCK], x + k * w, bits);
}

/* The chain on row blockIdx.x, storage of `bits` (a constant where it is inlined): math in
 * fp32, rounded to the storage type once, at the store. */
__device__ __forceinline__ static void ew_chain_row(const ew_launch *p, int bits)
{
    const int w = bits == 32 ? 4 : 8, n_vecs = EW_THREAD_ELEMS / w, row_vecs = EW_HIDDEN / w;
    const uint32_t t = threadIdx.x, row = blockIdx.x, ops = ew_op_mask(p->first, p->end);
    const size_t v0 = (size_t)row * row_vecs + t;
    uint4 *out = (uint4 *)p->out + v0;
    float x[EW_THREAD_ELEMS], r[EW_THREAD_ELEMS] = {0.0f}, b[EW_THREAD_ELEMS] = {0.0f};
    uint32_t e[EW_THREAD_ELEMS];
    ew_load_thread((const uint4 *)p->in + v0, x, n_vecs, w, bits);
    if (p->load_residual)
        ew_load_thread((const uint4 *)p->residual + v0, r, n_vecs, w, bits);
    if (p->load_bias)
        ew_load_thread((const uint4 *)p->bias + t, b, n_vecs, w, bits);
    ew_lane_indices(e, row, t, w);
    ew_chain(x, r, b, e, EW_THREAD_ELEMS, ops, p->seed);
#pragma unroll
    for (int k = 0; k < n_vecs; ++k)
        out[k * EW_BLOCK] = ew_pack(x + k * w, bits);
}

/* fp32 storage: 4 vectors (16 elements) per thread. */
__global__ void __launch_bounds__(EW_BLOCK, EW_MIN_BLOCKS) ew_chain_f32(ew_launch p)
{
    ew_chain_row(&p, 32);
}

/* bf16 storage: 2 vectors (16 elements) per thread. */
__global__ void __launch_bounds__(EW_BLOCK, EW_MIN_BLOCKS) ew_chain_bf16(ew_launch p)
{
    ew_chain_row(&p, 16);
}

/* ---- device: inputs and the full-tensor check ------------------------------------------ */

/* Element i of a tensor stored as fp32 (bits 32) or bf16 (bits 16), as fp32. */
__device__ static float ew_load(const void *p, size_t i, int bits)
{
    if (bits == 16)
        return __uint_as_float((uint32_t)((const uint16_t *)p)[i] << 16);
    return ((const float *)p)[i];
}

/* Uniform in [-amplitude, amplitude) from (key, i), rounded to the storage type. */
__global__ void ew_fill_kernel(void *p, size_t n, int bits, uint32_t key, float amplitude)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float u = (float)(uf_mix32((uint32_t)i ^ key) >> 8) * (1.0f / 16777216.0f);
        float v = amplitude * (2.0f * u - 1.0f);
        if (bits == 16)
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
        else
            ((float *)p)[i] = v;
    }
}

typedef struct ew_check_args {
    const void *x, *residual, *bias, *y;
    size_t n;
    int bits;
    int n_ops;
    int round_each;             /* round to storage after every op (unfused) or at the end only */
    uint32_t seed;
    unsigned long long *bad;    /* [0] elements that differ, [1] the smallest such index */
} ew_check_args;

/* Every element, one at a time, the plainest way: ops 0..n_ops-1, rounding to the storage type
 * where the variant does, then a bitwise comparison with y. */
__global__ void ew_check_kernel(ew_check_args p)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < p.n;
         e += (size_t)gridDim.x * blockDim.x) {
        float x = ew_load(p.x, e, p.bits);
        float r = ew_load(p.residual, e, p.bits);
        float b = ew_load(p.bias, e % EW_HIDDEN, p.bits);
        const uint32_t e32 = (uint32_t)e;   /* n < 2^32 (setup checks) */
        for (int k = 0; k < p.n_ops; ++k) {
            ew_chain(&x, &r, &b, &e32, 1, ew_op_mask(k, k + 1), p.seed);
            if (p.round_each && p.bits == 16)
                x = __bfloat162float(__float2bfloat16_rn(x));
        }
        int same = p.bits == 16
                       ? __bfloat16_as_ushort(__float2bfloat16_rn(x)) == ((const uint16_t *)p.y)[e]
                       : __float_as_uint(x) == ((const uint32_t *)p.y)[e];
        if (!same) {
            atomicAdd(&p.bad[0], 1ull);
            atomicMin(&p.bad[1], (unsigned long long)e);
        }
    }
}

/* ew_rcp_rn_27_108 against __frcp_rn (documented correctly rounded) on every float in
 * [27, 108], about 16 M values: the branch-free reciprocal is exact because it is the same
 * instructions as __frcp_rn's fast path; this proves it on the GPU at hand (one count in
 * bad[0] per value that differs). */
__global__ void ew_rcp_check_kernel(unsigned long long *bad)
{
    const uint32_t lo = __float_as_uint(27.0f), hi = __float_as_uint(108.0f);
    for (uint32_t u = lo + blockIdx.x * blockDim.x + threadIdx.x; u <= hi;
         u += gridDim.x * blockDim.x) {
        float d = __uint_as_float(u);
        if (__float_as_uint(ew_rcp_rn_27_108(d)) != __float_as_uint(__frcp_rn(d)))
            atomicAdd(&bad[0], 1ull);
    }
}

/* ---- host reference -------------------------------------------------------------------- */
/* The same IEEE operations in the same order as the device ops. Each is its own non-inlined
 * function so that the host compiler cannot contract a multiply and an add into an FMA
 * (it would on targets with FMA, e.g. aarch64), which would change the rounding. */

__attribute__((noinline)) static float ew_h_add(float a, float b) { return a + b; }
__attribute__((noinline)) static float ew_h_mul(float a, float b) { return a * b; }
__attribute__((noinline)) static float ew_h_div(float a, float b) { return a / b; }

/* num x (1/den), both correctly rounded, as on the device (ew_tanh_pade). */
static float ew_host_tanh_pade(float u)
{
    float uc = fminf(fmaxf(u, -3.0f), 3.0f);
    float uc2 = ew_h_mul(uc, uc);
    float num = ew_h_mul(uc, ew_h_add(27.0f, uc2));
    float den = ew_h_add(27.0f, ew_h_mul(9.0f, uc2));
    return ew_h_mul(num, ew_h_div(1.0f, den));
}

static float ew_host_gelu(float x)
{
    float x3 = ew_h_mul(ew_h_mul(x, x), x);
    float inner = ew_h_add(x, ew_h_mul(0.044715f, x3));
    float t = ew_host_tanh_pade(ew_h_mul(0.7978845608f, inner));
    return ew_h_mul(ew_h_mul(0.5f, x), ew_h_add(1.0f, t));
}

static float ew_host_apply(const ew_op *op, float x, float r, float b, size_t e, uint32_t seed)
{
    switch (op->kind) {
    case EW_BIAS_ADD: return ew_h_add(x, b);
    case EW_GELU: return ew_host_gelu(x);
    case EW_DROPOUT:
        return ew_dropout_keep(seed, op->index, (uint32_t)e, op->a) ? ew_h_mul(x, op->c) : 0.0f;
    case EW_SCALE: return ew_h_mul(x, op->a);
    case EW_RESIDUAL_ADD: return ew_h_add(x, r);
    case EW_CLAMP: return fminf(fmaxf(x, -op->a), op->a);
    case EW_LEAKY_RELU: return x > 0.0f ? x : ew_h_mul(x, op->a);
    case EW_SHIFT: return ew_h_add(x, op->a);
    default: return x;
    }
}

static uint32_t ew_host_float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float ew_host_bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The storage bits of x: fp32 as is, or bf16 rounded to nearest even (inputs are finite). */
static uint32_t ew_host_storage_bits(float x, int bits)
{
    uint32_t u = ew_host_float_bits(x);
    if (bits == 32)
        return u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

static float ew_host_storage_value(uint32_t stored, int bits)
{
    return ew_host_bits_float(bits == 16 ? stored << 16 : stored);
}

static uint32_t ew_host_load_bits(const void *p, size_t i, int bits)
{
    return bits == 16 ? ((const uint16_t *)p)[i] : ((const uint32_t *)p)[i];
}

/* ---- the scenario's state -------------------------------------------------------------- */

typedef struct ew_state {
    int n_ops, bits;
    size_t elem_bytes;
    size_t n;                   /* elements of the activation */
    size_t tensor_bytes, bias_bytes;
    void *x, *residual, *y, *bias;
    unsigned long long *d_bad;  /* the check kernels' two counters */
    uint32_t seed;              /* dropout mask of the current inputs */
    int check_blocks;
} ew_state;

/* Tensor size: far larger than the L2, so that every op really goes to HBM. Full: 1 GiB or
 * 16x the L2; quick: 64 MiB or 4x the L2 (256 MiB on an H200, whose L2 is 50 MiB: a 64 MiB
 * tensor would partly stay in L2 between the unfused kernels and flatter them). */
static size_t ew_tensor_bytes(int quick, int l2_bytes)
{
    size_t floor_bytes = quick ? 64 * EW_MIB : EW_GIB;
    size_t want = (size_t)(l2_bytes > 0 ? l2_bytes : 0) * (quick ? 4 : 16);
    size_t bytes = floor_bytes;
    while (bytes < want)
        bytes *= 2;
    return bytes;
}

static void ew_free_state(ew_state *st)
{
    if (st == NULL)
        return;
    cudaFree(st->d_bad);
    cudaFree(st->bias);
    cudaFree(st->y);
    cudaFree(st->residual);
    cudaFree(st->x);
    free(st);
}

static int ew_fill(uf_ctx *ctx, const ew_state *st, void *p, size_t n, uint32_t key,
                   float amplitude)
{
    int rc = UF_OK;
    ew_fill_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(p, n, st->bits, key, amplitude);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Fresh random inputs (never zeros) and dropout seed from `seed`, enqueued on the stream. */
static int ew_make_inputs(uf_ctx *ctx, ew_state *st, uint64_t seed)
{
    int rc = UF_OK;
    uint32_t base = uf_mix32((uint32_t)seed ^ uf_mix32((uint32_t)(seed >> 32) + 0x51ed27u));
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->x, st->n, uf_mix32(base + 1), 2.0f), out);
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->residual, st->n, uf_mix32(base + 2), 1.0f), out);
    UF_STATUS_OR_GOTO(rc, ew_fill(ctx, st, st->bias, EW_HIDDEN, uf_mix32(base + 3), 0.5f), out);
    st->seed = uf_mix32(base + 4);
out:
    return rc;
}

/* The GELU's reciprocal must be correctly rounded for the device and host results to agree:
 * checked once per setup on every value it can take (ew_rcp_check_kernel). */
static int ew_check_rcp(uf_ctx *ctx, const ew_state *st)
{
    int rc = UF_OK;
    unsigned long long bad = 0;
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->d_bad, 0, sizeof *st->d_bad, ctx->stream), out);
    ew_rcp_check_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(st->d_bad);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(&bad, st->d_bad, sizeof bad, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
    if (bad != 0)
        rc = uf_fail(ctx, UF_ERR, "the branch-free reciprocal of the GELU differs from "
                     "__frcp_rn at %llu values of [27, 108]", bad);
out:
    return rc;
}

/* ---- callbacks ------------------------------------------------------------------------- */

static int ew_setup(uf_ctx *ctx)
{
    int rc = UF_OK, l2_bytes = 0, sms = 0;
    double ops = uf_axis(ctx, "ops"), bits = uf_axis(ctx, "bits");
    ew_state *st = NULL;

    if (!(ops >= 1 && ops <= (double)EW_MAX_OPS && ops == floor(ops)))
        return uf_fail(ctx, UF_USAGE, "ops=%g: an integer from 1 to %d", ops, (int)EW_MAX_OPS);
    if (bits != 32 && bits != 16)
        return uf_fail(ctx, UF_USAGE, "bits=%g: 32 (fp32) or 16 (bf16)", bits);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ctx->device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->device),
                    out);
    st = (ew_state *)calloc(1, sizeof *st);
    if (st == NULL)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    st->n_ops = (int)ops;
    st->bits = (int)bits;
    st->elem_bytes = st->bits / 8;
    st->tensor_bytes = ew_tensor_bytes(ctx->quick, l2_bytes);
    st->n = st->tensor_bytes / st->elem_bytes;
    st->bias_bytes = EW_HIDDEN * st->elem_bytes;
    if (st->n % EW_HIDDEN != 0 || st->n >= ((size_t)1 << 32)) {
        rc = uf_fail(ctx, UF_ERR, "%zu elements: need a multiple of %d below 2^32", st->n,
                     (int)EW_HIDDEN);
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, 3 * st->tensor_bytes + st->bias_bytes + 64,
                                        "input, residual and output tensors"), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->x, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->residual, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->y, st->tensor_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->bias, st->bias_bytes), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->d_bad, 2 * sizeof *st->d_bad), out_free);
    st->check_blocks = 8 * sms;
    UF_STATUS_OR_GOTO(rc, ew_check_rcp(ctx, st), out_free);
    UF_STATUS_OR_GOTO(rc, ew_make_inputs(ctx, st, ctx->seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out_free);
    ctx->state = st;
    return UF_OK;
out_free:
    ew_free_state(st);
out:
    return rc;
}

/* One launch: ops [first, end) from `in` to the output tensor. */
static int ew_launch_ops(uf_ctx *ctx, const ew_state *st, const void *in, int first, int end)
{
    int rc = UF_OK;
    ew_launch p = {
        .in = in,
        .out = st->y,
        .residual = st->residual,
        .bias = st->bias,
        .rows = (uint32_t)(st->n / EW_HIDDEN),
        .first = first,
        .end = end,
        .load_residual = ew_ops_read(first, end, 0),
        .load_bias = ew_ops_read(first, end, 1),
        .seed = st->seed,
    };
    if (st->bits == 32)
        ew_chain_f32<<<p.rows, EW_BLOCK, 0, ctx->stream>>>(p);
    else
        ew_chain_bf16<<<p.rows, EW_BLOCK, 0, ctx->stream>>>(p);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* unfused: op k reads the tensor op k-1 wrote (the input for k = 0) and writes it back, in
 * place, rounding to the storage type each time. fused: all N ops in one pass. */
static int ew_run_step(uf_ctx *ctx, int variant)
{
    const ew_state *st = (const ew_state *)ctx->state;
    if (variant == EW_FUSED)
        return ew_launch_ops(ctx, st, st->x, 0, st->n_ops);
    for (int k = 0; k < st->n_ops; ++k) {
        int rc = ew_launch_ops(ctx, st, k == 0 ? st->x : st->y, k, k + 1);
        if (rc != UF_OK)
            return rc;
    }
    return UF_OK;
}

/* Host copies of a run of elements of each tensor, for the host check. */
typedef struct ew_host_sample {
    void *x, *residual, *y, *bias;
} ew_host_sample;

typedef struct ew_host_result {
    size_t checked, bad;
    size_t first_bad;           /* element index */
    float first_got, first_want;
    double max_rel_err;
} ew_host_result;

/* Copy elements [offset, offset + count) of x, residual and y (and the bias) to the host and
 * compare each, bitwise, with the host reference of the variant. */
static int ew_host_check(uf_ctx *ctx, const ew_state *st, const ew_host_sample *h, size_t offset,
                         size_t count, int round_each, ew_host_result *res)
{
    int rc = UF_OK;
    size_t eb = st->elem_bytes, at = offset * eb, len = count * eb;
    cudaStream_t s = ctx->stream;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->x, (const char *)st->x + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->residual, (const char *)st->residual + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->y, (const char *)st->y + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->bias, st->bias, st->bias_bytes,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(s), out);
    for (size_t j = 0; j < count; ++j) {
        size_t e = offset + j;
        float x = ew_host_storage_value(ew_host_load_bits(h->x, j, st->bits), st->bits);
        float r = ew_host_storage_value(ew_host_load_bits(h->residual, j, st->bits), st->bits);
        float b = ew_host_storage_value(ew_host_load_bits(h->bias, e % EW_HIDDEN, st->bits),
                                        st->bits);
        for (int k = 0; k < st->n_ops; ++k) {
            x = ew_host_apply(&ew_ops[k], x, r, b, e, st->seed);
            if (round_each)
                x = ew_host_storage_value(ew_host_storage_bits(x, st->bits), st->bits);
        }
        uint32_t want = ew_host_storage_bits(x, st->bits);
        uint32_t got = ew_host_load_bits(h->y, j, st->bits);
        res->checked++;
        if (got == want)
            continue;
        float got_f = ew_host_storage_value(got, st->bits);
        float want_f = ew_host_storage_value(want, st->bits);
        double rel = fabs((double)got_f - want_f) / fmax(fabs((double)want_f), FLT_MIN);
        if (!(rel <= res->max_rel_err))  /* NaN (poison left in place) counts as the worst */
            res->max_rel_err = isnan(rel) ? INFINITY : rel;
        if (res->bad++ == 0) {
            res->first_bad = e;
            res->first_got = got_f;
            res->first_want = want_f;
        }
    }
out:
    return rc;
}

/* Where host-check run s starts: the first and last elements, and runs spread by the seed. */
static size_t ew_sample_offset(const ew_state *st, uint64_t seed, int s)
{
    size_t span = st->n - EW_SAMPLE_ELEMS;
    if (s == 0)
        return 0;
    if (s == EW_SAMPLE_BLOCKS - 1)
        return span;
    uint64_t h = ((uint64_t)uf_mix32((uint32_t)seed + (uint32_t)s) << 32) |
                 uf_mix32((uint32_t)(seed >> 32) ^ (0x85ebca6bu * (uint32_t)s));
    return (size_t)(h % (span + 1));
}

/* The device check of every element against the variant's rounding model. */
static int ew_device_check(uf_ctx *ctx, const ew_state *st, int round_each,
                           unsigned long long *bad)
{
    int rc = UF_OK;
    ew_check_args a = {
        .x = st->x,
        .residual = st->residual,
        .bias = st->bias,
        .y = st->y,
        .n = st->n,
        .bits = st->bits,
        .n_ops = st->n_ops,
        .round_each = round_each,
        .seed = st->seed,
        .bad = st->d_bad,
    };
    bad[0] = 0;
    bad[1] = ~0ull;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_bad, bad, 2 * sizeof *bad, cudaMemcpyHostToDevice,
                                        ctx->stream), out);
    ew_check_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(a);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(bad, st->d_bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* Fresh inputs, poisoned output (0xff bytes: NaN in fp32 and bf16), one step of the variant;
 * then every element is compared bitwise with a plain per-element device reference, and runs
 * of elements with the host reference. Both model the variant's rounding: unfused rounds to
 * the storage type after every op, fused once at the end. In fp32 the two models are the same
 * function, so fused and unfused outputs are bitwise identical; in bf16 they differ by design,
 * and each is exact against its own model. Tolerance: none (bitwise). */
static int ew_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    ew_state *st = (ew_state *)ctx->state;
    int round_each = variant == EW_UNFUSED;
    const char *name = variant == EW_UNFUSED ? "unfused" : "fused";
    unsigned long long bad[2];
    ew_host_result res;
    ew_host_sample h;
    memset(&res, 0, sizeof res);
    memset(&h, 0, sizeof h);
    *max_rel_err = NAN;

    h.x = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.residual = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.y = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.bias = malloc(st->bias_bytes);
    if (!h.x || !h.residual || !h.y || !h.bias) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, ew_make_inputs(ctx, st, seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->y, 0xff, st->tensor_bytes, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, ew_run_step(ctx, variant), out_free);
    UF_STATUS_OR_GOTO(rc, ew_device_check(ctx, st, round_each, bad), out_free);
    for (int s = 0; s < EW_SAMPLE_BLOCKS; ++s)
        UF_STATUS_OR_GOTO(rc, ew_host_check(ctx, st, &h, ew_sample_offset(st, seed, s),
                                            EW_SAMPLE_ELEMS, round_each, &res), out_free);
    if (bad[0] > 0 && res.bad == 0)  /* the host sample missed it: look at the first one */
        UF_STATUS_OR_GOTO(rc, ew_host_check(ctx, st, &h, (size_t)bad[1], 1, round_each, &res),
                          out_free);
    *max_rel_err = res.max_rel_err;
    if (res.bad > 0)
        rc = uf_fail(ctx, UF_ERR,
                     "%s: %llu of %zu elements differ from the per-element reference, %zu of %zu "
                     "checked from the host reference (element %zu: got %.9g, expected %.9g)",
                     name, bad[0], st->n, res.bad, res.checked, res.first_bad,
                     (double)res.first_got, (double)res.first_want);
    else if (bad[0] > 0)
        rc = uf_fail(ctx, UF_ERR,
                     "%s: %llu of %zu elements differ from the per-element device reference, "
                     "though element %llu agrees with the host reference: a reference is wrong",
                     name, bad[0], st->n, bad[1]);
out_free:
    free(h.bias);
    free(h.y);
    free(h.residual);
    free(h.x);
    return rc;
}

/* Bytes through DRAM per step. fused: input, residual (if any op needs it) and bias read once,
 * output written once: the minimum the chain must move. unfused: per op, the whole tensor
 * read and written, plus the residual or bias that op reads. */
static double ew_bytes_moved(const ew_state *st, int variant)
{
    double t = (double)st->tensor_bytes, bias = (double)st->bias_bytes;
    if (variant == EW_FUSED)
        return 2.0 * t + (ew_ops_read(0, st->n_ops, 0) ? t : 0.0) +
               (ew_ops_read(0, st->n_ops, 1) ? bias : 0.0);
    double bytes = 0.0;
    for (int k = 0; k < st->n_ops; ++k)
        bytes += 2.0 * t + (ew_ops_read(k, k + 1, 0) ? t : 0.0) +
                 (ew_ops_read(k, k + 1, 1) ? bias : 0.0);
    return bytes;
}

/* Extras, in ew_extras order. */
enum { EW_X_BYTES_MOVED, EW_X_INTENSITY, EW_X_BYTES_RATIO };

static int ew_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const ew_state *st = (const ew_state *)ctx->state;
    double fused = ew_bytes_moved(st, EW_FUSED), unfused = ew_bytes_moved(st, EW_UNFUSED);
    double moved = variant == EW_FUSED ? fused : unfused;
    double flops = (double)ew_flops_per_element(st->n_ops) * (double)st->n;
    row->useful_flops = flops;
    row->executed_flops = flops;
    row->min_bytes = fused;
    row->peak_mem_bytes = 3.0 * (double)st->tensor_bytes + (double)st->bias_bytes;
    row->extra[EW_X_BYTES_MOVED] = moved;
    row->extra[EW_X_INTENSITY] = flops / moved;
    row->extra[EW_X_BYTES_RATIO] = unfused / fused;
    return UF_OK;
}

static void ew_teardown(uf_ctx *ctx)
{
    ew_free_state((ew_state *)ctx->state);
    ctx->state = NULL;
}

/* The claims. Each names its physical reason. */
static void ew_expect(const uf_report *rep, uf_expectations *ex)
{
    const double *ops_run = NULL;
    const int n_ops_run = uf_axis_values(rep, "ops", &ops_run);
    for (int k = 0; k < n_ops_run; ++k) {
        char at_ops[32];
        snprintf(at_ops, sizeof at_ops, "ops=%.17g", ops_run[k]);
        uf_expect_metric(ex, rep, "fused", at_ops, "pct_of_copy", UF_GE, 90.0,
                         "one pass moves only the bytes the chain needs, with 16-byte "
                         "accesses and a block per row on every SM, and its few flops per byte "
                         "hide under the memory time: it streams like a copy");
    }

    const uf_row *u_max = uf_find(rep, "unfused", "ops=max");
    const uf_row *f_max = uf_find(rep, "fused", "ops=max");
    double speedup_vs_bytes = uf_value(rep, u_max, "step_ms") / uf_value(rep, f_max, "step_ms") /
                              uf_value(rep, f_max, "bytes_ratio");
    uf_expect(ex,
              "at the largest N, the fusion speed-up (unfused/fused step_ms) is >= 0.8x the "
              "ratio of bytes moved: both stream at about the copy rate, so time follows bytes",
              speedup_vs_bytes, UF_GE, 0.8);
    uf_expect(ex,
              "at the largest N, the fusion speed-up is <= 1.2x the ratio of bytes moved: "
              "fusion saves bytes, not flops; it cannot beat the bandwidth saved",
              speedup_vs_bytes, UF_LE, 1.2);

    const uf_row *u_min = uf_find(rep, "unfused", "ops=min");
    if (uf_value(rep, u_max, "ops") > uf_value(rep, u_min, "ops")) {
        double growth_vs_bytes =
            uf_value(rep, u_max, "step_ms") / uf_value(rep, u_min, "step_ms") /
            (uf_value(rep, u_max, "bytes_moved") / uf_value(rep, u_min, "bytes_moved"));
        uf_expect(ex,
                  "unfused step time grows with N like its bytes (step_ms(max N)/step_ms(min N) "
                  ">= 0.75x the bytes_moved ratio): each op is one more full round trip to HBM",
                  growth_vs_bytes, UF_GE, 0.75);
        uf_expect(ex,
                  "unfused step time grows no faster than its bytes (<= 1.25x the bytes_moved "
                  "ratio): every op kernel is bandwidth-bound, none adds compute time",
                  growth_vs_bytes, UF_LE, 1.25);
    }

    const char *why_dram = "a few flops per byte: the kernels wait on HBM, whichever the variant";
    const char *why_tensor = "elementwise math runs on the FP32 pipes; no tensor core has "
                             "anything to do, fused or not";
    uf_expect_metric(ex, rep, "unfused", NULL, "dram_pct", UF_GE, 60.0, why_dram);
    uf_expect_metric(ex, rep, "fused", NULL, "dram_pct", UF_GE, 60.0, why_dram);
    uf_expect_metric(ex, rep, "unfused", NULL, "tensor_active_pct", UF_LE, 1.0, why_tensor);
    uf_expect_metric(ex, rep, "fused", NULL, "tensor_active_pct", UF_LE, 1.0, why_tensor);
}

/* ---- the table of the scenario --------------------------------------------------------- */

static const uf_variant_desc ew_variants[] = {
    {.name = "unfused", .role = UF_BROKEN,
     .summary = "one kernel per op: each reads and writes the whole tensor (N round trips)"},
    {.name = "fused", .role = UF_FIXED,
     .summary = "one kernel for the chain: 16-byte loads, intermediates in registers, one pass"},
};

static const double ew_ops_values[] = {1, 2, 3, 4, 5, 6, 8, 12, 16};
static const double ew_ops_quick[] = {1, 5, 16};
static const double ew_bits_values[] = {32, 16};

static const uf_axis_desc ew_axes[] = {
    {.name = "ops", .unit = "ops",
     .summary = "ops of the chain applied: the first N rows of the op table (1..16)",
     .default_value = 5, .values = ew_ops_values,
     .n_values = (int)(sizeof ew_ops_values / sizeof ew_ops_values[0]),
     .quick_values = ew_ops_quick,
     .n_quick_values = (int)(sizeof ew_ops_quick / sizeof ew_ops_quick[0])},
    {.name = "bits", .unit = "bits",
     .summary = "storage type: 32 = fp32, 16 = bf16 (math in fp32 registers either way)",
     .default_value = 32, .values = ew_bits_values,
     .n_values = (int)(sizeof ew_bits_values / sizeof ew_bits_values[0]),
     .quick_values = ew_bits_values,
     .n_quick_values = (int)(sizeof ew_bits_values / sizeof ew_bits_values[0])},
};

static const uf_extra_desc ew_extras[] = {
    {.name = "bytes_moved", .unit = "bytes",
     .summary = "bytes through DRAM per step, counted from the op table"},
    {.name = "intensity_flop_per_byte", .unit = "flop/B",
     .summary = "flops per step / bytes_moved: where the variant sits on the roofline"},
    {.name = "bytes_ratio", .unit = "x",
     .summary = "unfused bytes_moved / fused bytes_moved at this point"},
};

static const uf_scenario ew_scenario = {
    .name = "elementwise_chain",
    .title = "Elementwise chain (bias, GELU, dropout, scale, residual, ...): a kernel per op "
             "vs one fused pass",
    .failure = "Each elementwise op of the layer's tail runs as its own kernel, reading and "
               "writing the whole activation tensor: N ops move it through HBM N times. Every "
               "kernel keeps the GPU busy at near-peak bandwidth, yet most bytes are intermediates.",
    .fix = "Fuse the chain into one kernel: read the input (and residual) once with 16-byte "
           "loads, keep intermediates in registers, write once. Time falls by the bytes saved.",
    .variants = ew_variants,
    .n_variants = (int)(sizeof ew_variants / sizeof ew_variants[0]),
    .axes = ew_axes,
    .n_axes = (int)(sizeof ew_axes / sizeof ew_axes[0]),
    .extras = ew_extras,
    .n_extras = (int)(sizeof ew_extras / sizeof ew_extras[0]),
    .min_gpus = 1,
    .repeat = 20,
    .quick_repeat = 10,
    .warmup = 3,
    .step_stat = UF_STAT_MEDIAN,
    .setup = ew_setup,
    .begin_variant = NULL,
    .end_variant = NULL,
    .run_step = ew_run_step,
    .verify = ew_verify,
    .describe = ew_describe,
    .teardown = ew_teardown,
    .expect = ew_expect,
};

int main(int argc, char **argv)
{
    return uf_main(&ew_scenario, argc, argv);
}

/* elementwise_chain's kernels: the ops in fp32 registers, the chain kernel both variants run
 * (ops [first, end) of the table, a block per row), the input fill and the full-tensor check.
 * What the host launches, and with what, is declared in elementwise_chain_kernels.h; the device
 * functions here are this unit's own. */
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "random.h"
#include "elementwise_chain_ref.h"
#include "elementwise_chain_kernels.h"

/* Dropout keeps a fraction in (0, 1): ew_dropout_keep's threshold stays below 2^32. Checked
 * here, where a float comparison is a constant expression (in C it is not). */
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
 * per row and op. (EW_BLOCK, EW_THREAD_ELEMS, EW_MIN_BLOCKS: elementwise_chain_kernels.h.) */
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
        float v = amplitude * (2.0f * uf_uniform32_at(key, (uint32_t)i) - 1.0f);
        if (bits == 16)
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
        else
            ((float *)p)[i] = v;
    }
}

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

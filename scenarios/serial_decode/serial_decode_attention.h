/* serial_decode's attention and argmax on the device: the arithmetic of an attention chunk,
 * its combine and a block's share of a KV head (attn_block), and the two-stage argmax
 * (argmax_block), written once for the per-op kernels (serial_decode_attention.cu) and the
 * persistent kernel (serial_decode_kernels.cu), so that every variant of batch 1 computes the
 * same bits. Device functions, defined here (the scenario builds without relocatable device
 * code): inline ones, and one not inlined per unit (argmax_block). For CUDA translation
 * units. */
#ifndef SD_ATTENTION_H
#define SD_ATTENTION_H

#include <limits.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "serial_decode_device.h"
#include "serial_decode_kernels.h"

/* ---- attention ------------------------------------------------------------------------------
 * Per (sequence b, KV head g, chunk c of SD_CHUNK positions), one warp: the scores of the
 * group's heads at the chunk's positions, their max, the sum of exponentials and the weighted
 * values (the chunk's partial, SD_PART_FLOATS floats); then the chunks' partials combined in
 * chunk order. Which block computes a chunk, and whether its partial reaches the combine
 * through shared or global memory, changes no bit: the `splits` blocks a KV head is spread
 * over are a scheduling choice, and every variant of batch 1 gives the same bits. */

#define SD_VROW_LANES (SD_HEAD_DIM / 8)     /* lanes per value row: 16 bytes each */
#define SD_VGROUPS (32 / SD_VROW_LANES)     /* rows a warp's value load covers */
#define SD_Q4 (SD_GROUP * SD_HEAD_DIM / 4)  /* the group's queries, in float4s */
#define SD_ATTN_COPY ((SD_MAX_CHUNKS * SD_PART_FLOATS / 4 + 31) / 32)  /* a lane's float4s of
                                                                      * the partials' copy */
static_assert(SD_GROUP == SD_VGROUPS, "a lane group per head: the combine's and the writes' map");
static_assert(SD_CHUNK == 32 && SD_Q4 <= 64, "a lane per position; 2 query float4s per lane");
static_assert(SD_PART_FLOATS % 4 == 0 && SD_GROUP % 2 == 0, "16-byte aligned partials");

/* What attention reads and writes, by value: a call that takes it needs no copy of the
 * kernel's parameters in local memory (a reference to them would). */
typedef struct attn_view {
    const bf16 *cache;
    const float *q;
    float *part;
    bf16 *a;
    unsigned *count;
    int d, layers, positions, kv_dim, kv_heads;
} attn_view;

__device__ __forceinline__ attn_view attn_view_of(const sd_model &m)
{
    attn_view v = {m.cache, m.q, m.part, m.a, m.attn_count, m.s.d, m.s.layers, m.s.cache,
                   m.s.kv_dim, m.s.kv_heads};
    return v;
}

/* sd_cache_index of the view's cache. */
__device__ __forceinline__ size_t cache_at(const attn_view &v, int b, int l, int kv, int p, int f)
{
    return ((((size_t)b * v.layers + l) * 2 + kv) * v.positions + p) * v.kv_dim + f;
}

/* Chunk c's partial of KV head g, sequence b, in global memory: each head's (max, sum), then
 * each head's SD_HEAD_DIM weighted values. */
__device__ __forceinline__ float *partial(const attn_view &v, int b, int g, int c)
{
    const int chunks = v.positions / SD_CHUNK;
    return v.part + (((size_t)b * v.kv_heads + g) * chunks + c) * SD_PART_FLOATS;
}

/* The lane's share of chunk c of layer l's cache, every load issued at once: its position's
 * key row (SD_HEAD_DIM / 8 loads of 16 bytes) and SD_CHUNK / SD_VGROUPS value loads of 16
 * bytes (features 8 (lane % 8) .. + 7 of positions lane / 8 + SD_VGROUPS i). */
__device__ __forceinline__ void attn_load(const attn_view &av, int b, int l, int g, int c,
                                          uint4 *k, uint4 *v)
{
    const int lane = threadIdx.x & 31, fb = lane % SD_VROW_LANES, pg = lane / SD_VROW_LANES;
    const uint4 *krow = (const uint4 *)(av.cache + cache_at(av, b, l, 0, c * SD_CHUNK + lane,
                                                            g * SD_HEAD_DIM));
    const uint4 *vrow = (const uint4 *)(av.cache + cache_at(av, b, l, 1, c * SD_CHUNK + pg,
                                                            g * SD_HEAD_DIM)) + fb;
    const size_t vstride = (size_t)SD_VGROUPS * av.kv_dim / 8;     /* SD_VGROUPS rows, uint4s */
#pragma unroll
    for (int i = 0; i < SD_HEAD_DIM / 8; i++)
        k[i] = __ldcg(krow + i);
#pragma unroll
    for (int i = 0; i < SD_CHUNK / SD_VGROUPS; i++)
        v[i] = __ldcg(vrow + i * vstride);
}

/* The lane's loads of chunk c again where they hold position pos (written by the kernel
 * before: loaded before it had finished). */
__device__ __forceinline__ void attn_reload(const attn_view &av, int b, int l, int g, int c,
                                            int pos, uint4 *k, uint4 *v)
{
    const int lane = threadIdx.x & 31, fb = lane % SD_VROW_LANES, pg = lane / SD_VROW_LANES;
    const int p = pos - c * SD_CHUNK;
    if (p < 0 || p >= SD_CHUNK)
        return;
    if (lane == p) {
        const uint4 *krow = (const uint4 *)(av.cache + cache_at(av, b, l, 0, pos,
                                                                g * SD_HEAD_DIM));
#pragma unroll
        for (int i = 0; i < SD_HEAD_DIM / 8; i++)
            k[i] = __ldcg(krow + i);
    }
    if (pg == p % SD_VGROUPS) {     /* all the lane's value loads (one indexed by p would put
                                     * v in local memory) */
        const uint4 *vrow = (const uint4 *)(av.cache + cache_at(av, b, l, 1, c * SD_CHUNK + pg,
                                                                g * SD_HEAD_DIM)) + fb;
        const size_t vstride = (size_t)SD_VGROUPS * av.kv_dim / 8;
#pragma unroll
        for (int i = 0; i < SD_CHUNK / SD_VGROUPS; i++)
            v[i] = __ldcg(vrow + i * vstride);
    }
}

/* One warp: a chunk's partial from its loaded cache (k, v) and the group's queries qs (shared
 * memory) into dst (SD_PART_FLOATS floats, shared or global memory). Scores: lane p's key row
 * against each head's query in element order (dot8f), times 1 / sqrt(SD_HEAD_DIM); each
 * head's max and sum of exponentials by butterfly. Values: lane (fb, pg) sums w v over the
 * positions pg, pg + SD_VGROUPS, ... in order for its 8 features of every head, then the
 * position groups by butterfly (xor 8, then 16: every lane of a feature block the same bits). */
__device__ __forceinline__ void attn_chunk(const uint4 *k, const uint4 *v, const float *qs,
                                           float *dst)
{
    const int lane = threadIdx.x & 31, fb = lane % SD_VROW_LANES, pg = lane / SD_VROW_LANES;
    const float4 *q4 = (const float4 *)qs;
    float e[SD_GROUP], o[SD_GROUP][8];
#pragma unroll
    for (int hh = 0; hh < SD_GROUP; hh++)
        e[hh] = 0.0f;
#pragma unroll
    for (int i = 0; i < SD_HEAD_DIM / 8; i++)   /* k[i] done with after its round */
#pragma unroll
        for (int hh = 0; hh < SD_GROUP; hh++)
            e[hh] = dot8f(k[i], q4[hh * SD_HEAD_DIM / 4 + 2 * i],
                          q4[hh * SD_HEAD_DIM / 4 + 2 * i + 1], e[hh]);
#pragma unroll
    for (int hh = 0; hh < SD_GROUP; hh += 2) {
        /* times 1 / sqrt(SD_HEAD_DIM); _rn: never contracted with the subtraction below, so
         * that every kernel that inlines this computes the same bits */
        const float s0 = __fmul_rn(e[hh], 0.125f), s1 = __fmul_rn(e[hh + 1], 0.125f);
        const float m0 = warp_max(s0), m1 = warp_max(s1);
        e[hh] = expf(s0 - m0);
        e[hh + 1] = expf(s1 - m1);
        const float l0 = warp_sum(e[hh]), l1 = warp_sum(e[hh + 1]);
        if (lane == 0)      /* each head's max and sum */
            *(float4 *)(dst + 2 * hh) = make_float4(m0, l0, m1, l1);
#pragma unroll
        for (int j = 0; j < 8; j++)
            o[hh][j] = o[hh + 1][j] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < SD_CHUNK / SD_VGROUPS; i++) {
        const unsigned vv[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
        for (int hh = 0; hh < SD_GROUP; hh++) {
            const float w = __shfl_sync(FULL, e[hh], pg + SD_VGROUPS * i);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                o[hh][2 * j] = __fmaf_rn(w, lo_bf16(vv[j]), o[hh][2 * j]);
                o[hh][2 * j + 1] = __fmaf_rn(w, hi_bf16(vv[j]), o[hh][2 * j + 1]);
            }
        }
    }
#pragma unroll
    for (int hh = 0; hh < SD_GROUP; hh++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int off = SD_VROW_LANES; off < 32; off <<= 1)
                o[hh][j] += __shfl_xor_sync(FULL, o[hh][j], off);
    /* lane (fb, pg) writes head pg's 8 features */
#pragma unroll
    for (int hh = 0; hh < SD_GROUP; hh++)
        if (hh == pg) {
            float4 *out = (float4 *)(dst + 2 * SD_GROUP + hh * SD_HEAD_DIM + 8 * fb);
            out[0] = make_float4(o[hh][0], o[hh][1], o[hh][2], o[hh][3]);
            out[1] = make_float4(o[hh][4], o[hh][5], o[hh][6], o[hh][7]);
        }
}

/* One warp: KV head g's `chunks` partials (in shared memory) into a, bf16. Lane (fb, hh)
 * takes head hh's features 8 fb .. + 7: the max over the chunks, then each chunk's weight
 * exp(max_c - max), the sums of sum_c w_c and of the values w_c in chunk order. */
__device__ __forceinline__ void attn_combine(const attn_view &av, const float *scratch, int b,
                                             int g, int chunks)
{
    const int lane = threadIdx.x & 31, fb = lane % SD_VROW_LANES, hh = lane / SD_VROW_LANES;
    float mx = -INFINITY, sum = 0.0f, r[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        r[j] = 0.0f;
    for (int c = 0; c < chunks; c++)
        mx = fmaxf(mx, scratch[c * SD_PART_FLOATS + 2 * hh]);
    for (int c = 0; c < chunks; c++) {
        const float *pc = scratch + c * SD_PART_FLOATS;
        const float w = expf(pc[2 * hh] - mx);
        const float4 *o = (const float4 *)(pc + 2 * SD_GROUP + hh * SD_HEAD_DIM + 8 * fb);
        const float4 o0 = o[0], o1 = o[1];
        sum = __fmaf_rn(pc[2 * hh + 1], w, sum);
        r[0] = __fmaf_rn(o0.x, w, r[0]);
        r[1] = __fmaf_rn(o0.y, w, r[1]);
        r[2] = __fmaf_rn(o0.z, w, r[2]);
        r[3] = __fmaf_rn(o0.w, w, r[3]);
        r[4] = __fmaf_rn(o1.x, w, r[4]);
        r[5] = __fmaf_rn(o1.y, w, r[5]);
        r[6] = __fmaf_rn(o1.z, w, r[6]);
        r[7] = __fmaf_rn(o1.w, w, r[7]);
    }
    bf16 *out = av.a + (size_t)b * av.d + (g * SD_GROUP + hh) * SD_HEAD_DIM + 8 * fb;
    *(uint4 *)out = make_uint4(pack_bf16(r[0] / sum, r[1] / sum),
                               pack_bf16(r[2] / sum, r[3] / sum),
                               pack_bf16(r[4] / sum, r[5] / sum),
                               pack_bf16(r[6] / sum, r[7] / sum));
}

/* Block `split` of the `splits` over which KV head g of sequence b is spread; every thread of
 * the block calls it. Its warps take its share's chunks (warp w: chunks w, w + warps, ... of
 * the share), each into its partial. One split: the partials stay in scratch (shared memory,
 * SD_ATTN_SCRATCH_BYTES) and warp 0 combines them. Several: they go to global memory, and the
 * last of the KV head's blocks to finish (a counter) copies all of them into its scratch and
 * combines. The cache and query loads of a warp's first chunk all go out before the first is
 * used: the block costs one memory latency, the split one more for the counter and one for the
 * copy. pos >= 0 (the per-op kernel, launched before its predecessor has finished): the cache
 * loads go out first, then the block waits for the predecessor (the QKV kernel, which writes
 * q and the cache's position pos) and loads position pos again; pos < 0: no wait. */
__device__ __forceinline__ void attn_block(const attn_view &av, float *scratch, int b, int l,
                                           int g, int split, int splits, int pos)
{
    __shared__ unsigned last;
    const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int chunks = av.positions / SD_CHUNK, per = chunks / splits, first = split * per;
    float *qs = scratch + SD_MAX_CHUNKS * SD_PART_FLOATS;
    const float4 *q4 = (const float4 *)(av.q + (size_t)b * av.d + g * SD_GROUP * SD_HEAD_DIM);
    uint4 k[SD_HEAD_DIM / 8], v[SD_CHUNK / SD_VGROUPS];
    float4 qv[2];
    if (warp < per)
        attn_load(av, b, l, g, first + warp, k, v);
    if (pos >= 0) {
        wait_predecessor();
        launch_successor();
        if (warp < per)
            attn_reload(av, b, l, g, first + warp, pos, k, v);
    }
#pragma unroll
    for (int j = 0; j < 2; j++)
        if (threadIdx.x + j * blockDim.x < SD_Q4)
            qv[j] = __ldcg(q4 + threadIdx.x + j * blockDim.x);
#pragma unroll
    for (int j = 0; j < 2; j++)
        if (threadIdx.x + j * blockDim.x < SD_Q4)
            ((float4 *)qs)[threadIdx.x + j * blockDim.x] = qv[j];
    __syncthreads();
    for (int c = warp; c < per; c += nw) {
        if (c != warp)
            attn_load(av, b, l, g, first + c, k, v);
        attn_chunk(k, v, qs, splits == 1 ? scratch + c * SD_PART_FLOATS
                                         : partial(av, b, g, first + c));
    }
    if (splits > 1) {
        unsigned *count = av.count + (size_t)b * av.kv_heads + g;
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();    /* the block's partials before its count (as grid_barrier) */
            last = atomicAdd(count, 1u) == (unsigned)splits - 1;
            if (last)
                __threadfence();    /* the other blocks' partials after their counts */
        }
        __syncthreads();
        if (!last)
            return;
        const float4 *src = (const float4 *)partial(av, b, g, 0);
        const int n4 = chunks * SD_PART_FLOATS / 4;
        for (int i0 = threadIdx.x; i0 < n4; i0 += SD_ATTN_COPY * blockDim.x) {
            float4 t[SD_ATTN_COPY];
#pragma unroll
            for (int j = 0; j < SD_ATTN_COPY; j++)
                if (i0 + j * (int)blockDim.x < n4)
                    t[j] = __ldcg(src + i0 + j * blockDim.x);
#pragma unroll
            for (int j = 0; j < SD_ATTN_COPY; j++)
                if (i0 + j * (int)blockDim.x < n4)
                    ((float4 *)scratch)[i0 + j * blockDim.x] = t[j];
        }
        if (threadIdx.x == 0)
            atomicExch(count, 0u);  /* for the next layer: read after a kernel boundary */
    }
    __syncthreads();
    if (warp == 0)
        attn_combine(av, scratch, b, g, chunks);
    __syncthreads();            /* scratch free again (the persistent kernel's next KV head) */
}

/* ---- argmax -----------------------------------------------------------------------------------
 * Grid-wide, in two stages: block blk of a sequence reduces logits [blk SD_ARGMAX_SLICE, + the
 * slice) to a pair (largest value, its lowest index); the last of the sequence's blocks to
 * finish (a counter) reduces their pairs. NaN never wins and ties go to the lowest index, so
 * the answer does not depend on the order of the comparisons. */

typedef struct argmax_view {
    const float *logits;
    int2 *part;                 /* per sequence, per block: (value's bits, index) */
    unsigned *count;
    int *tok;
    int vocab, blocks, slice;   /* blocks of slice logits (the last may hold fewer) */
} argmax_view;

/* Slices of SD_ARGMAX_SLICE logits, or, where that makes more slices than max_blocks, as
 * many larger slices (the persistent kernel: a slice per block of its grid). */
__device__ __forceinline__ argmax_view argmax_view_of(const sd_model &m, int max_blocks)
{
    const int blocks = sd_argmax_blocks(&m.s) < max_blocks ? sd_argmax_blocks(&m.s) : max_blocks;
    argmax_view v = {m.logits, m.amax_part, m.amax_count, m.tok, m.s.vocab, blocks,
                     (m.s.vocab + blocks - 1) / blocks};
    return v;
}

/* (v, i) over (best, idx): larger, or as large at a lower index (no index yet: INT_MAX). */
__device__ __forceinline__ int beats(float v, int i, float best, int idx)
{
    return v > best || (v == best && i < idx);
}

/* The block's best pair, in thread 0; every thread calls it. */
__device__ __forceinline__ void block_best(float &best, int &idx)
{
    __shared__ float best_v[32];
    __shared__ int best_i[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int round = 0; round < 2; round++) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const float ob = __shfl_xor_sync(FULL, best, off);
            const int oi = __shfl_xor_sync(FULL, idx, off);
            if (beats(ob, oi, best, idx)) {
                best = ob;
                idx = oi;
            }
        }
        if (round == 1)
            break;
        if (lane == 0) {
            best_v[warp] = best;
            best_i[warp] = idx;
        }
        __syncthreads();
        best = lane < nw ? best_v[lane] : -INFINITY;
        idx = lane < nw ? best_i[lane] : INT_MAX;
        __syncthreads();        /* read before a next call writes */
    }
}

/* Block blk of sequence b: its slice's pair into the partials, 4 loads of a thread out at
 * once (SD_ARGMAX_SLICE logits: one round for blocks of 256 threads); the last block of the
 * sequence reduces the pairs into tok[b]. 1 in thread 0 of the block that did, else 0. Every
 * thread of the block calls it. */
static __device__ __noinline__ int argmax_block(argmax_view av, int b, int blk)
{
    __shared__ unsigned last;
    const float *v = av.logits + (size_t)b * av.vocab;
    const int lo = blk * av.slice, hi = av.vocab - lo < av.slice ? av.vocab : lo + av.slice;
    int2 *part = av.part + (size_t)b * av.blocks;
    float best = -INFINITY;
    int idx = INT_MAX;
    for (int i0 = lo + threadIdx.x; i0 < hi; i0 += 4 * blockDim.x) {
        float x[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (i0 + j * (int)blockDim.x < hi)
                x[j] = __ldcg(v + i0 + j * blockDim.x);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int i = i0 + j * (int)blockDim.x;
            if (i < hi && beats(x[j], i, best, idx)) {
                best = x[j];
                idx = i;
            }
        }
    }
    block_best(best, idx);
    if (threadIdx.x == 0) {
        part[blk] = make_int2(__float_as_int(best), idx);
        __threadfence();        /* the pair before the count */
        last = atomicAdd(av.count + b, 1u) == (unsigned)av.blocks - 1;
        if (last)
            __threadfence();    /* the other blocks' pairs after their counts */
    }
    __syncthreads();
    if (!last)
        return 0;
    best = -INFINITY;
    idx = INT_MAX;
    for (int i0 = threadIdx.x; i0 < av.blocks; i0 += 4 * blockDim.x) {
        int2 p[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (i0 + j * (int)blockDim.x < av.blocks)
                p[j] = __ldcg(part + i0 + j * blockDim.x);
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (i0 + j * (int)blockDim.x < av.blocks &&
                beats(__int_as_float(p[j].x), p[j].y, best, idx)) {
                best = __int_as_float(p[j].x);
                idx = p[j].y;
            }
    }
    block_best(best, idx);
    if (threadIdx.x != 0)
        return 0;
    av.tok[b] = idx < av.vocab ? idx : 0;      /* no number at all: token 0 */
    atomicExch(av.count + b, 0u);               /* for the next step: after a kernel boundary */
    return 1;
}

#endif

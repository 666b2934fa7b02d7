/* serial_decode's kernels (serial_decode_kernels.h says what each launch does): the fills, the
 * per-op GEMV and small kernels, the persistent kernel, the model's allocation; attention's
 * and the argmax's per-op kernels are serial_decode_attention.cu's, their arithmetic
 * serial_decode_attention.h's (the persistent kernel calls it too).
 *
 * The arithmetic, written once:
 *   a matrix row   one warp; lane l takes the 16-byte chunks l, l + 32, ... of the row (8 bf16
 *                  each), accumulates w * x in fp32 in chunk order, 8 fmaf per chunk in element
 *                  order; then a butterfly sum over the warp (sd_row_dot's pieces);
 *   RMSNorm        warp 0 sums x*x over float4s l, l + 32, ... in order, butterfly; every
 *                  thread scales and rounds its elements to bf16 (sd_stage_input);
 *   attention      one warp per (KV head, SD_CHUNK positions): lane p's position's scores for
 *                  the group's heads, a softmax partial, the weighted values of 8 features of
 *                  every fourth position per lane (16-byte loads); one warp combines the
 *                  chunks in chunk order, whichever blocks computed them (attn_block);
 *   argmax         a block per slice of the vocabulary, then the last block over the slices.
 * The per-op kernels and the persistent kernel call the same functions, so batch 1 gives the
 * same bits whichever runs it; only how the weights reach the lanes differs (registers, or a
 * shared-memory ring of cp.async copies). */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "serial_decode_attention.h"
#include "serial_decode_device.h"
#include "serial_decode_kernels.h"
#include "underfed.h"

#define SD_GEMV_WARPS 8         /* per-op GEMV: warps per block */
#define SD_GEMV_BPS 2           /* blocks per SM: the grid is one wave of this many */
#define SD_GEMV_UNIT 8          /* chunks per lane held per row segment (double-buffered) */
#define SD_STAGE 4              /* persistent: chunks per lane per ring stage */
#define SD_SMALL_BLOCK 256      /* embed, norm, scatter, gelu */
#define SD_FILL_BLOCKS 4096

/* ---- a phase: its matrix, its input, its epilogue ---------------------------------------- */

__device__ __forceinline__ int phase_rows(const sd_shape &s, int ph)
{
    return ph == 4 * s.layers ? s.vocab : sd_mat_rows(&s, ph % 4);
}

__device__ __forceinline__ int phase_cols(const sd_shape &s, int ph)
{
    return ph == 4 * s.layers ? s.d : sd_mat_cols(&s, ph % 4);
}

__device__ __forceinline__ const bf16 *phase_weights(const sd_model &m, int ph)
{
    if (ph == 4 * m.s.layers)
        return m.head;
    return m.layers + (size_t)(ph / 4) * sd_layer_elems(&m.s) + sd_mat_offset(&m.s, ph % 4);
}

/* Phases whose input is RMSNorm(x): QKV, MLP up, the head; the others read a vector. */
__device__ __forceinline__ int phase_normed(const sd_shape &s, int ph)
{
    return ph == 4 * s.layers || ph % 4 == SD_QKV || ph % 4 == SD_UP;
}

/* One warp's sum of squares of v[0..n4) float4s, the canonical order: lane l adds float4s
 * l, l + 32, ... in turn, then the butterfly; every lane gets it. v is in shared memory (or
 * memory this kernel may read with plain loads). */
__device__ __forceinline__ float sumsq_warp(const float4 *v, int n4)
{
    const int lane = threadIdx.x & 31;
    float s = 0.0f;
    for (int i = lane; i < n4; i += 32) {
        const float4 x = v[i];
        s = __fmaf_rn(x.x, x.x, s);
        s = __fmaf_rn(x.y, x.y, s);
        s = __fmaf_rn(x.z, x.z, s);
        s = __fmaf_rn(x.w, x.w, s);
    }
    return warp_sum(s);
}

/* The residual of sequence b (or an embedding row, the same floats) into raw[0..d) in shared
 * memory, every load of a thread out before its stores (one L2 latency, not one per float4). */
__device__ __forceinline__ void stage_raw(const sd_model &m, int b, const bf16 *embed_row,
                                          float4 *raw)
{
    const int n4 = m.s.d / 4;
    const float4 *x4 = (const float4 *)(m.x + (size_t)b * m.s.d);
    const uint2 *e2 = (const uint2 *)embed_row;
    for (int i0 = threadIdx.x; i0 < n4; i0 += 4 * blockDim.x) {
        float4 v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int i = i0 + j * blockDim.x;
            v[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);     /* defined: kept in registers */
            if (i >= n4)
                continue;
            if (embed_row) {
                const uint2 e = __ldcg(e2 + i);
                v[j] = make_float4(lo_bf16(e.x), hi_bf16(e.x), lo_bf16(e.y), hi_bf16(e.y));
            } else {
                v[j] = __ldcg(x4 + i);
            }
        }
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (i0 + j * (int)blockDim.x < n4)
                raw[i0 + j * blockDim.x] = v[j];
    }
}

/* RMSNorm, the whole block: raw (d floats in shared memory, staged) into out[0..d/8) as bf16
 * chunks of x / rms(x) (out in shared or global memory; not overlapping raw). */
__device__ void normalize(const float4 *raw, int d, uint4 *out, float *inv)
{
    __syncthreads();                    /* raw is staged */
    if (threadIdx.x < 32) {
        const float s = sumsq_warp(raw, d / 4);
        if (threadIdx.x == 0)
            *inv = rsqrtf(s / (float)d + SD_RMS_EPS);
    }
    __syncthreads();
    const float scale = *inv;
    for (int i = threadIdx.x; i < d / 8; i += blockDim.x) {
        const float4 p = raw[2 * i], q = raw[2 * i + 1];
        out[i] = make_uint4(pack_bf16(p.x * scale, p.y * scale), pack_bf16(p.z * scale, p.w * scale),
                            pack_bf16(q.x * scale, q.y * scale), pack_bf16(q.z * scale, q.w * scale));
    }
}

/* Phase ph's input vector of sequence 0 into shared memory act (cols / 8 chunks); the whole
 * block takes part. A normed input stages x's floats at act's bytes 2d .. 6d first, above the
 * 2d bytes of its normed bf16 (act holds 6d bytes at least). embed_row: layer 0's QKV reads
 * the embedding row itself (the persistent kernel; the per-op kernels have it in x). */
__device__ void stage_input(const sd_model &m, int ph, const bf16 *embed_row, uint4 *act,
                            float *inv)
{
    const int n = phase_cols(m.s, ph) / 8;
    if (phase_normed(m.s, ph)) {
        float4 *raw = (float4 *)(act + m.s.d / 8);    /* d / 8 chunks of 16 bytes: 2d */
        stage_raw(m, 0, embed_row, raw);
        normalize(raw, m.s.d, act, inv);
    } else {            /* every load of the thread's chunks out before the first store */
        const uint4 *src = (const uint4 *)(ph % 4 == SD_O ? m.a : m.u);
        for (int i0 = threadIdx.x; i0 < n; i0 += 4 * blockDim.x) {
            uint4 v[4];
#pragma unroll
            for (int j = 0; j < 4; j++)
                v[j] = i0 + j * (int)blockDim.x < n ? __ldcg(src + i0 + j * blockDim.x)
                                                    : make_uint4(0, 0, 0, 0);
#pragma unroll
            for (int j = 0; j < 4; j++)
                if (i0 + j * (int)blockDim.x < n)
                    act[i0 + j * blockDim.x] = v[j];
        }
    }
    __syncthreads();
}

/* Lane 0's result of row `row` of phase ph, sequence 0, at cache position pos. */
__device__ void epilogue(const sd_model &m, int ph, int row, float acc, int pos)
{
    const sd_shape &s = m.s;
    if (ph == 4 * s.layers) {
        m.logits[row] = acc;
        return;
    }
    switch (ph % 4) {
    case SD_QKV:
        if (row < s.d) {
            m.q[row] = acc;
        } else {
            const int f = row - s.d, kv = f >= s.kv_dim;
            m.cache[sd_cache_index(&s, 0, ph / 4, kv, pos, f - kv * s.kv_dim)] =
                __float2bfloat16_rn(acc);
        }
        break;
    case SD_UP:
        m.u[row] = __float2bfloat16_rn(sd_gelu(acc));
        break;
    default:    /* O, DOWN: the residual */
        m.x[row] = __ldcg(m.x + row) + acc;
        break;
    }
}

/* ---- the per-op kernels ------------------------------------------------------------------- */

__global__ void sd_embed_kernel(sd_model m)
{
    wait_predecessor();
    launch_successor();
    const int b = blockIdx.y, d = m.s.d;
    const int tok = __ldcg(m.tok + b);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d; i += gridDim.x * blockDim.x)
        m.x[(size_t)b * d + i] = __bfloat162float(m.embed[(size_t)tok * d + i]);
}

/* A warp's row segment of SD_GEMV_UNIT chunks per lane into registers. */
__device__ __forceinline__ void load_unit(uint4 *buf, const bf16 *w, int cols, int row, int seg,
                                          int cpl, int lane)
{
    const bf16 *r = w + (size_t)row * cols;
#pragma unroll
    for (int j = 0; j < SD_GEMV_UNIT; j++) {
        const int jj = seg * SD_GEMV_UNIT + j;
        if (jj < cpl)
            buf[j] = ld_stream(r + (size_t)(lane + 32 * jj) * 8);
    }
}

/* A warp's place in a phase's rows: row gw + GW i, segment seg of SD_GEMV_UNIT chunks a lane. */
typedef struct unit {
    int row, seg;
} unit;

__device__ __forceinline__ unit unit_after(unit u, int nseg, int GW)
{
    if (++u.seg == nseg) {
        u.seg = 0;
        u.row += GW;
    }
    return u;
}

/* acc + the segment's chunks (buf) against the staged input. */
__device__ __forceinline__ float dot_unit(const uint4 *buf, const uint4 *act, int seg, int cpl,
                                          int lane, float acc)
{
#pragma unroll
    for (int j = 0; j < SD_GEMV_UNIT; j++) {
        const int jj = seg * SD_GEMV_UNIT + j;
        if (jj < cpl)
            acc = dot8(buf[j], act[lane + 32 * jj], acc);
    }
    return acc;
}

/* Batch 1, one phase: rows gw, gw + GW, ... of its matrix, one warp each. Two segments of
 * weights in flight, in two register buffers taken in turn (a copy from one to the other
 * would wait for its loads): the warp sums one while the other lands. Both are issued before
 * the kernel waits for its predecessor: the weights do not depend on it. */
__global__ void __launch_bounds__(SD_GEMV_WARPS * 32, SD_GEMV_BPS) sd_gemv_kernel(sd_model m, int ph)
{
    extern __shared__ uint4 act[];
    __shared__ float inv;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gw = blockIdx.x * SD_GEMV_WARPS + warp, GW = gridDim.x * SD_GEMV_WARPS;
    const int rows = phase_rows(m.s, ph), cols = phase_cols(m.s, ph), cpl = cols / 256;
    const int nseg = (cpl + SD_GEMV_UNIT - 1) / SD_GEMV_UNIT;
    const bf16 *w = phase_weights(m, ph);
    uint4 a[SD_GEMV_UNIT], b[SD_GEMV_UNIT];
    unit ua = {gw, 0}, ub = unit_after(ua, nseg, GW);
    if (ua.row < rows)
        load_unit(a, w, cols, ua.row, ua.seg, cpl, lane);
    if (ub.row < rows)
        load_unit(b, w, cols, ub.row, ub.seg, cpl, lane);
    wait_predecessor();
    launch_successor();
    const int pos = step_pos(m, __ldcg(m.step));
    stage_input(m, ph, NULL, act, &inv);
    float acc = 0.0f;
    while (ua.row < rows) {
        acc = dot_unit(a, act, ua.seg, cpl, lane, acc);
        if (ua.seg == nseg - 1) {
            acc = warp_sum(acc);
            if (lane == 0)
                epilogue(m, ph, ua.row, acc, pos);
            acc = 0.0f;
        }
        ua = unit_after(ub, nseg, GW);
        if (ua.row < rows)
            load_unit(a, w, cols, ua.row, ua.seg, cpl, lane);
        if (ub.row >= rows)
            break;
        acc = dot_unit(b, act, ub.seg, cpl, lane, acc);
        if (ub.seg == nseg - 1) {
            acc = warp_sum(acc);
            if (lane == 0)
                epilogue(m, ph, ub.row, acc, pos);
            acc = 0.0f;
        }
        ub = unit_after(ua, nseg, GW);
        if (ub.row < rows)
            load_unit(b, w, cols, ub.row, ub.seg, cpl, lane);
    }
}

/* Batched: sequence blockIdx.x's RMSNorm into h, as the GEMV stages it (raw x in dynamic
 * shared memory: 4d bytes). */
__global__ void sd_rmsnorm_kernel(sd_model m)
{
    extern __shared__ float4 raw[];
    __shared__ float inv;
    const int b = blockIdx.x;
    stage_raw(m, b, NULL, raw);
    normalize(raw, m.s.d, (uint4 *)(m.h + (size_t)b * m.s.d), &inv);
}

__global__ void sd_scatter_kernel(sd_model m, int l)
{
    const sd_shape &s = m.s;
    const int b = blockIdx.y, r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= s.qkv_rows)
        return;
    const float v = m.qkv[(size_t)b * s.qkv_rows + r];
    if (r < s.d) {
        m.q[(size_t)b * s.d + r] = v;
        return;
    }
    const int f = r - s.d, kv = f >= s.kv_dim;
    m.cache[sd_cache_index(&s, b, l, kv, step_pos(m, *m.step), f - kv * s.kv_dim)] =
        __float2bfloat16_rn(v);
}

__global__ void sd_gelu_kernel(sd_model m)
{
    const size_t n = (size_t)m.s.batch * m.s.ffn;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        m.u[i] = __float2bfloat16_rn(sd_gelu(m.upf[i]));
}

/* ---- the persistent kernel ------------------------------------------------------------------- */

/* The persistent kernel's attention phase of layer l, sequence 0: a block per KV head (the
 * block's KV heads blockIdx.x, + gridDim.x, ...), one split. Not inlined, so that its
 * registers are its own (they would crowd the weight loop's); the view by value, no copy of
 * the kernel's parameters; the loop inside it, so that the caller keeps less across it. */
__device__ __noinline__ void attn_phase(attn_view av, float *scratch, int l)
{
    for (int g = blockIdx.x; g < av.kv_heads; g += gridDim.x)
        attn_block(av, scratch, 0, l, g, 0, 1, -1);
}


/* Where a warp's stream of weights stands: phase, row (of the warp's rows gw, gw + GW, ...)
 * and segment of SD_STAGE chunks per lane. ph past the last phase: the stream is done. */
typedef struct cursor {
    int ph, row, seg;
} cursor;

__device__ __forceinline__ void cursor_settle(const sd_shape &s, cursor &c, int gw)
{
    while (c.ph < sd_phases(&s) && c.row >= phase_rows(s, c.ph)) {
        c.ph++;
        c.row = gw;
        c.seg = 0;
    }
}

__device__ __forceinline__ int cursor_segs(const sd_shape &s, int ph)
{
    return (phase_cols(s, ph) / 256 + SD_STAGE - 1) / SD_STAGE;
}

__device__ __forceinline__ void cursor_next(const sd_shape &s, cursor &c, int gw, int GW)
{
    if (++c.seg == cursor_segs(s, c.ph)) {
        c.seg = 0;
        c.row += GW;
        cursor_settle(s, c, gw);
    }
}

/* The lane's chunks of the cursor's segment into a ring stage, one cp.async group (empty when
 * the stream is done: every unit consumed is one group). */
__device__ __forceinline__ void issue_stage(const sd_model &m, const cursor &c, uint4 *stage, int lane)
{
    if (c.ph < sd_phases(&m.s)) {
        const int cols = phase_cols(m.s, c.ph), cpl = cols / 256;
        const bf16 *r = phase_weights(m, c.ph) + (size_t)c.row * cols;
#pragma unroll
        for (int j = 0; j < SD_STAGE; j++) {
            const int jj = c.seg * SD_STAGE + j;
            if (jj < cpl) {
                const unsigned dst = (unsigned)__cvta_generic_to_shared(stage + j * 32 + lane);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst),
                             "l"(r + (size_t)(lane + 32 * jj) * 8)
                             : "memory");
            }
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* The bulk copy (sm_90's TMA): the cursor's segment, contiguous in global memory (chunks
 * 128 seg .. 128 seg + 127 of the row: the stage's [j][lane] order), as one copy by lane 0 that
 * completes on the stage's mbarrier. Nothing when the stream is done: no one waits for it. */
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void issue_stage_bulk(const sd_model &m, const cursor &c, uint4 *stage,
                                                 unsigned long long *bar, int lane)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (lane != 0 || c.ph >= sd_phases(&m.s))
        return;
    const int cols = phase_cols(m.s, c.ph), cpl = cols / 256;
    const int chunks = cpl - c.seg * SD_STAGE < SD_STAGE ? cpl - c.seg * SD_STAGE : SD_STAGE;
    const unsigned bytes = (unsigned)chunks * 32 * 16;
    const bf16 *src = phase_weights(m, c.ph) + (size_t)c.row * cols + (size_t)c.seg * SD_STAGE * 32 * 8;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   /* the lanes' reads, before */
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
                 "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];" ::"r"(smem_addr(stage)), "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
#endif
}

/* The warp's stage mbarriers, one arrival (lane 0's) per filling. */
__device__ __forceinline__ void init_bulk(unsigned long long *bars, int stages)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    for (int k = 0; k < stages; k++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bars + k))
                     : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* Until the bulk copy of the stage's `use`-th filling has landed (its mbarrier's phase). */
__device__ __forceinline__ void wait_bulk(unsigned long long *bar, int use)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n.reg .pred done;\nSD_WAIT_BULK:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra SD_WAIT_BULK;\n}" ::"r"(smem_addr(bar)), "r"((unsigned)use & 1u)
                 : "memory");
#endif
}

/* Until the oldest of `stages` groups in flight has landed (wait_group takes a constant). */
__device__ __forceinline__ void wait_oldest(int stages)
{
#define SD_WAIT(n) case n + 1: asm volatile("cp.async.wait_group " #n ";" ::: "memory"); break
    switch (stages) {
        SD_WAIT(0); SD_WAIT(1); SD_WAIT(2); SD_WAIT(3); SD_WAIT(4); SD_WAIT(5); SD_WAIT(6);
        SD_WAIT(7); SD_WAIT(8); SD_WAIT(9); SD_WAIT(10); SD_WAIT(11); SD_WAIT(12);
        SD_WAIT(13); SD_WAIT(14); SD_WAIT(15);
    default:
        asm volatile("cp.async.wait_all;" ::: "memory");
    }
#undef SD_WAIT
}

/* Every block arrives, then waits until all of this barrier's arrivals are in: the count only
 * grows (target = arrivals up to and including this barrier). */
__device__ __forceinline__ void grid_barrier(unsigned long long *bar, unsigned long long target)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(bar, 1ull);
        unsigned long long seen;
        do {
            asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(bar) : "memory");
        } while (seen < target);
    }
    __syncthreads();
}

/* Batch 1, a whole decode step. Per layer: QKV | attention (a block per KV head, its partials
 * combined in shared memory) | O | MLP up | MLP down, '|' a grid barrier; then the head | the
 * argmax (a block per slice, the last to finish reducing the slices). Each warp's weights
 * (its rows of every phase, in phase order) stream through its ring of `stages` stages: after
 * a stage is summed, the lane's next 16-byte copies go into it, so the ring holds the next
 * phase's first weights while the warp waits at a barrier, and HBM keeps streaming through
 * it. */
__global__ void __launch_bounds__(SD_P_MAX_WARPS * 32, 1)
    sd_decode_gemv_persistent_kernel(sd_model m, int stages, int bulk)
{
    extern __shared__ uint4 smem[];
    __shared__ float inv;
    const sd_shape &s = m.s;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int gw = blockIdx.x * nw + warp, GW = gridDim.x * nw, last = sd_phases(&s) - 1;
    uint4 *act = smem;          /* the phase's input, or attention's scratch */
    uint4 *ring = smem + sd_p_act_chunks(&s) + (size_t)warp * stages * SD_STAGE * 32;
    /* bulk: an mbarrier per stage, after every warp's ring */
    unsigned long long *bars = (unsigned long long *)(smem + sd_p_act_chunks(&s) +
                                                      (size_t)nw * stages * SD_STAGE * 32) +
                               warp * stages;
    const unsigned long long epoch = __ldcg(m.pstep), step = __ldcg(m.step);
    const int pos = step_pos(m, step), tok = __ldcg(m.tok);
    const bf16 *embed_row = m.embed + (size_t)tok * s.d;
    unsigned long long target = epoch * (unsigned long long)(5 * s.layers + 1) * gridDim.x;

    cursor prod = {0, gw, 0}, cons = {0, gw, 0};
    cursor_settle(s, prod, gw);
    cursor_settle(s, cons, gw);
    if (bulk && lane == 0)
        init_bulk(bars, stages);
    __syncwarp();
    for (int k = 0; k < stages; k++) {
        if (bulk)
            issue_stage_bulk(m, prod, ring + k * SD_STAGE * 32, bars + k, lane);
        else
            issue_stage(m, prod, ring + k * SD_STAGE * 32, lane);
        if (prod.ph <= last)
            cursor_next(s, prod, gw, GW);
    }
    /* the residual starts as the embedding, a slice per block (first read after 2 barriers) */
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < s.d; i += gridDim.x * blockDim.x)
        m.x[i] = __bfloat162float(embed_row[i]);

    int k = 0;      /* units consumed: the ring stage of the next is k % stages */
    for (int ph = 0; ph <= last; ph++) {
        stage_input(m, ph, ph == 0 ? embed_row : NULL, act, &inv);
        const int cpl = phase_cols(s, ph) / 256, nseg = cursor_segs(s, ph);
        float acc = 0.0f;
        while (cons.ph == ph) {
            uint4 *stage = ring + (k % stages) * SD_STAGE * 32;
            if (bulk)
                wait_bulk(bars + k % stages, k / stages);
            else
                wait_oldest(stages);
#pragma unroll
            for (int j = 0; j < SD_STAGE; j++) {
                const int jj = cons.seg * SD_STAGE + j;
                if (jj < cpl)
                    acc = dot8(stage[j * 32 + lane], act[lane + 32 * jj], acc);
            }
            if (cons.seg == nseg - 1) {
                acc = warp_sum(acc);
                if (lane == 0)
                    epilogue(m, ph, cons.row, acc, pos);
                acc = 0.0f;
            }
            if (bulk) {
                __syncwarp();       /* every lane has read the stage before it is refilled */
                issue_stage_bulk(m, prod, stage, bars + k % stages, lane);
            } else {
                issue_stage(m, prod, stage, lane);
            }
            if (prod.ph <= last)
                cursor_next(s, prod, gw, GW);
            cursor_next(s, cons, gw, GW);
            k++;
        }
        target += gridDim.x;
        grid_barrier(m.bar, target);
        if (ph % 4 == SD_QKV && ph < last) {     /* a block per KV head, act its scratch */
            if (blockIdx.x < s.kv_heads)
                attn_phase(attn_view_of(m), (float *)act, ph / 4);
            target += gridDim.x;
            grid_barrier(m.bar, target);
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    /* the argmax: a slice per block, as many slices as blocks at most */
    const argmax_view amv = argmax_view_of(m, gridDim.x);
    if (blockIdx.x < amv.blocks && argmax_block(amv, 0, blockIdx.x)) {  /* the last: tok is in */
        *m.step = step + 1;
        *m.pstep = epoch + 1;
    }
}

/* ---- fills -------------------------------------------------------------------------------- */

/* dst[i] = bf16(uniform at (key, first + i)), as the host reference redraws it. */
__global__ void sd_fill_kernel(bf16 *dst, size_t n, uint32_t key, float amplitude, size_t first)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(sd_uniform(key, (uint32_t)(first + i), amplitude));
}

__global__ void sd_start_kernel(sd_model m, uint64_t seed)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m.s.batch)
        m.tok[i] = sd_start_token(seed, i, m.s.vocab);
    if (i < m.s.batch * m.s.kv_heads)
        m.attn_count[i] = 0;
    if (i < m.s.batch)
        m.amax_count[i] = 0;
    if (i == 0)
        *m.step = *m.bar = *m.pstep = 0;
}

/* ---- host side ------------------------------------------------------------------------------ */

int sd_launch_kernel(const void *kernel, dim3 grid, dim3 block, size_t smem, int pdl,
                     void **args, cudaStream_t stream)
{
    int rc = UF_OK;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    UF_CUDA_OR_GOTO(rc, cudaLaunchKernelExC(&cfg, kernel, args), out);
out:
    return rc;
}

size_t sd_model_bytes(const sd_shape *s)
{
    const size_t B = (size_t)s->batch, d = (size_t)s->d;
    const size_t bf = 2 * ((size_t)s->layers * sd_layer_elems(s) + 2 * (size_t)s->vocab * d +
                           sd_cache_elems(s) + B * (2 * d + s->ffn));
    const size_t f4 = 4 * (B * (2 * d + s->vocab + s->qkv_rows + s->ffn) +
                           B * s->kv_heads * (s->cache / SD_CHUNK) * SD_PART_FLOATS);
    return bf + f4 + 8 * B * sd_argmax_blocks(s) + 4 * B * (2 + s->kv_heads) + 3 * 8;
}

#define SD_ALLOC(rc, ptr, n, label) \
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&(ptr), (size_t)(n) * sizeof *(ptr)), label)

int sd_model_alloc(sd_model *m, const sd_shape *s, int device)
{
    int rc = UF_OK, major = 0, optin = 0;
    const size_t B = (size_t)s->batch, d = (size_t)s->d;
    memset(m, 0, sizeof *m);
    m->s = *s;
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&m->sms, cudaDevAttrMultiProcessorCount, device),
                    out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                    out);
    m->pdl = major >= 9;
    m->attn_splits = 1;
    SD_ALLOC(rc, m->layers, (size_t)s->layers * sd_layer_elems(s), out);
    SD_ALLOC(rc, m->embed, (size_t)s->vocab * d, out);
    SD_ALLOC(rc, m->head, (size_t)s->vocab * d, out);
    SD_ALLOC(rc, m->cache, sd_cache_elems(s), out);
    SD_ALLOC(rc, m->x, B * d, out);
    SD_ALLOC(rc, m->q, B * d, out);
    SD_ALLOC(rc, m->logits, B * s->vocab, out);
    SD_ALLOC(rc, m->part, B * s->kv_heads * (s->cache / SD_CHUNK) * SD_PART_FLOATS, out);
    SD_ALLOC(rc, m->a, B * d, out);
    SD_ALLOC(rc, m->u, B * s->ffn, out);
    SD_ALLOC(rc, m->qkv, B * s->qkv_rows, out);
    SD_ALLOC(rc, m->upf, B * s->ffn, out);
    SD_ALLOC(rc, m->h, B * d, out);
    SD_ALLOC(rc, m->tok, B, out);
    SD_ALLOC(rc, m->attn_count, B * s->kv_heads, out);
    SD_ALLOC(rc, m->amax_part, B * sd_argmax_blocks(s), out);
    SD_ALLOC(rc, m->amax_count, B, out);
    SD_ALLOC(rc, m->step, 1, out);
    SD_ALLOC(rc, m->bar, 1, out);
    SD_ALLOC(rc, m->pstep, 1, out);
    /* the GEMV's input vector: up to 4d bf16 of shared memory. One limit for every model of
     * the process (the attribute is the kernel's, not a launch's): the widest d allows. */
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                               device), out);
    UF_CUDA_OR_GOTO(rc, cudaFuncSetAttribute((const void *)sd_gemv_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             optin < 8 * 16384 ? optin : 8 * 16384), out);
    UF_CUDA_OR_GOTO(rc, cudaFuncSetAttribute((const void *)sd_rmsnorm_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             optin < 4 * 16384 ? optin : 4 * 16384), out);
    if ((size_t)optin < 8 * d) {
        uf_report_failure(__FILE__, __LINE__, "sd_model_alloc",
                          "the GEMV's 4d-wide input does not fit in the GPU's shared memory");
        rc = UF_USAGE;
    }
out:
    return rc;
}

void sd_model_free(sd_model *m)
{
    void *ptrs[] = {m->layers, m->embed, m->head, m->cache, m->x, m->q, m->logits, m->part,
                    m->a, m->u, m->qkv, m->upf, m->h, m->tok, m->attn_count,
                    m->amax_part, m->amax_count, m->step, m->bar, m->pstep};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        cudaFree(ptrs[i]);
    memset(m, 0, sizeof *m);
}

static int fill(bf16 *dst, size_t n, uint32_t key, float amp, cudaStream_t stream)
{
    int rc = UF_OK;
    sd_fill_kernel<<<SD_FILL_BLOCKS, SD_SMALL_BLOCK, 0, stream>>>(dst, n, key, amp, 0);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

int sd_model_fill(sd_model *m, uint64_t seed, cudaStream_t stream)
{
    int rc = UF_OK;
    const sd_shape *s = &m->s;
    const size_t le = sd_layer_elems(s), vd = (size_t)s->vocab * s->d;
    for (int l = 0; l < s->layers; l++)
        for (int j = 0; j < SD_N_MATS; j++)
            UF_STATUS_OR_GOTO(rc, fill(m->layers + (size_t)l * le + sd_mat_offset(s, j),
                                       (size_t)sd_mat_rows(s, j) * sd_mat_cols(s, j),
                                       sd_mat_key(seed, l, j), sd_amplitude(sd_mat_cols(s, j)),
                                       stream), out);
    UF_STATUS_OR_GOTO(rc, fill(m->embed, vd, sd_key(seed, SD_T_EMBED), 1.0f, stream), out);
    UF_STATUS_OR_GOTO(rc, fill(m->head, vd, sd_key(seed, SD_T_HEAD), sd_amplitude(s->d), stream),
                      out);
    UF_STATUS_OR_GOTO(rc, sd_model_restart(m, seed, stream), out);
out:
    return rc;
}

int sd_model_restart(sd_model *m, uint64_t seed, cudaStream_t stream)
{
    int rc = UF_OK;
    const int n = m->s.batch * (m->s.kv_heads > 1 ? m->s.kv_heads : 1);
    UF_STATUS_OR_GOTO(rc, fill(m->cache, sd_cache_elems(&m->s), sd_key(seed, SD_T_CACHE), 1.0f,
                               stream), out);
    sd_start_kernel<<<(n + SD_SMALL_BLOCK - 1) / SD_SMALL_BLOCK, SD_SMALL_BLOCK, 0, stream>>>(*m,
                                                                                       seed);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Sequence b's view of a model: the same weights, its own slices of every per-sequence
 * buffer, batch 1 (the batch-1 kernels decode sequence 0 of what they are given). */
sd_model sd_sequence_view(const sd_model *m, int b)
{
    sd_model v = *m;
    const sd_shape *s = &m->s;
    v.s.batch = 1;
    v.cache = m->cache + sd_cache_index(s, b, 0, 0, 0, 0);
    v.x = m->x + (size_t)b * s->d;
    v.q = m->q + (size_t)b * s->d;
    v.a = m->a + (size_t)b * s->d;
    v.u = m->u + (size_t)b * s->ffn;
    v.logits = m->logits + (size_t)b * s->vocab;
    v.part = m->part + (size_t)b * s->kv_heads * (s->cache / SD_CHUNK) * SD_PART_FLOATS;
    v.tok = m->tok + b;
    v.attn_count = m->attn_count + (size_t)b * s->kv_heads;
    v.amax_part = m->amax_part + (size_t)b * sd_argmax_blocks(s);
    v.amax_count = m->amax_count + b;
    return v;
}

int sd_launch_embed(const sd_model *m, cudaStream_t stream)
{
    void *args[] = {(void *)m};
    return sd_launch_kernel((const void *)sd_embed_kernel,
                            dim3((m->s.d + SD_SMALL_BLOCK - 1) / SD_SMALL_BLOCK, m->s.batch),
                            dim3(SD_SMALL_BLOCK), 0, 0, args, stream);
}

/* One wave of SD_GEMV_BPS blocks per SM, or fewer where the matrix has fewer rows than that
 * many warps (a small model's: fewer blocks to start and to drain). */
int sd_launch_gemv(const sd_model *m, int ph, int pdl, cudaStream_t stream)
{
    const int head = ph == 4 * m->s.layers;
    const int cols = head ? m->s.d : sd_mat_cols(&m->s, ph % 4);
    const int rows = head ? m->s.vocab : sd_mat_rows(&m->s, ph % 4);
    const int wave = SD_GEMV_BPS * m->sms, need = (rows + SD_GEMV_WARPS - 1) / SD_GEMV_WARPS;
    const int normed = head || ph % 4 == SD_QKV || ph % 4 == SD_UP;
    /* the input vector (cols bf16); a normed one stages x's floats above it (6d bytes) */
    const size_t smem = normed ? (size_t)m->s.d * 6 : (size_t)cols * 2;
    void *args[] = {(void *)m, &ph};
    return sd_launch_kernel((const void *)sd_gemv_kernel, dim3(need < wave ? need : wave),
                            dim3(SD_GEMV_WARPS * 32), smem, pdl && m->pdl, args, stream);
}

int sd_launch_rmsnorm(const sd_model *m, cudaStream_t stream)
{
    void *args[] = {(void *)m};
    return sd_launch_kernel((const void *)sd_rmsnorm_kernel, dim3(m->s.batch),
                            dim3(SD_SMALL_BLOCK), (size_t)m->s.d * 4, 0, args, stream);
}

int sd_launch_scatter(const sd_model *m, int l, cudaStream_t stream)
{
    void *args[] = {(void *)m, &l};
    return sd_launch_kernel((const void *)sd_scatter_kernel,
                            dim3((m->s.qkv_rows + SD_SMALL_BLOCK - 1) / SD_SMALL_BLOCK, m->s.batch),
                            dim3(SD_SMALL_BLOCK), 0, 0, args, stream);
}

int sd_launch_gelu(const sd_model *m, cudaStream_t stream)
{
    void *args[] = {(void *)m};
    return sd_launch_kernel((const void *)sd_gelu_kernel, dim3(2 * m->sms), dim3(SD_SMALL_BLOCK),
                            0, 0, args, stream);
}

int sd_persistent_plan(const sd_model *m, int bps, int warps, int ring_kib, int bulk,
                       sd_pconfig *p, char *why, size_t len)
{
    int rc = UF_OK, device = 0, coop = 0, optin = 0, fit = 0, major = 0;
    memset(p, 0, sizeof *p);
    const int per_block = bps > 0 ? ring_kib * 1024 / bps : 0;
    p->bps = bps;
    p->warps = warps;
    p->bulk = bulk;
    p->stages = warps > 0 ? per_block / (warps * SD_P_STAGE_BYTES) : 0;
    p->grid = bps * m->sms;
    p->smem_bytes = (size_t)sd_p_act_chunks(&m->s) * 16 +
                    (size_t)warps * p->stages * SD_P_STAGE_BYTES +
                    (bulk ? (size_t)warps * p->stages * 8 : 0);    /* the stages' mbarriers */
    if (warps < 1 || warps > SD_P_MAX_WARPS || bps < 1 || p->stages < 1 ||
        p->stages > SD_P_MAX_STAGES) {
        snprintf(why, len, "persistent: p_bps=%d, p_warps=%d, p_ring_kib=%d make %d ring stages "
                 "of %d bytes per warp (1..%d; warps 1..%d)", bps, warps, ring_kib, p->stages,
                 SD_P_STAGE_BYTES, SD_P_MAX_STAGES, SD_P_MAX_WARPS);
        return -1;
    }
    UF_CUDA_OR_GOTO(rc, cudaGetDevice(&device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                               device), out);
    UF_CUDA_OR_GOTO(rc, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                    out);
    if (!coop) {
        snprintf(why, len, "persistent: the GPU has no cooperative launch");
        return -1;
    }
    if (bulk && major < 9) {
        snprintf(why, len, "persistent: bulk copies (cp.async.bulk) need compute capability 9.0, "
                 "the GPU has %d.x", major);
        return -1;
    }
    if (p->smem_bytes > (size_t)optin) {
        snprintf(why, len, "persistent: %zu bytes of shared memory per block (%d of input or "
                 "attention scratch and %d warps x %d stages of %d bytes), the GPU allows %d",
                 p->smem_bytes, sd_p_act_chunks(&m->s) * 16, warps, p->stages, SD_P_STAGE_BYTES,
                 optin);
        return -1;
    }
    UF_CUDA_OR_GOTO(rc, cudaFuncSetAttribute((const void *)sd_decode_gemv_persistent_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)p->smem_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                            &fit, sd_decode_gemv_persistent_kernel, warps * 32, p->smem_bytes),
                    out);
    if (fit < bps) {
        snprintf(why, len, "persistent: %d blocks per SM of %d warps and %zu bytes of shared "
                 "memory do not fit together (%d do)", bps, warps, p->smem_bytes, fit);
        return -1;
    }
out:
    if (rc != UF_OK)
        snprintf(why, len, "persistent: a CUDA call failed while planning (see above)");
    return rc == UF_OK ? 0 : -1;
}

int sd_launch_persistent(const sd_model *m, const sd_pconfig *p, cudaStream_t stream)
{
    int rc = UF_OK;
    int stages = p->stages, bulk = p->bulk;
    void *args[] = {(void *)m, &stages, &bulk};
    UF_CUDA_OR_GOTO(rc, cudaLaunchCooperativeKernel((const void *)sd_decode_gemv_persistent_kernel,
                                                    dim3(p->grid), dim3(p->warps * 32), args,
                                                    p->smem_bytes, stream), out);
out:
    return rc;
}

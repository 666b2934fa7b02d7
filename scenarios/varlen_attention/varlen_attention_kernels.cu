/* varlen_attention's kernels: the fused attention kernel every variant runs, the fp32
 * reference kernel, the input fill; what the host launches them with, the shapes and the tile
 * count host and device share are in varlen_attention_kernels.h.
 *
 * The kernel is FlashAttention-2 style: a block owns VA_BLOCK_M(R) query rows of one
 * (sequence, head), each warp R of them (16, or 32 as two m16 tiles that share
 * every K and V fragment); it walks the key/value tiles of VA_BLOCK_N keys (double-buffered
 * in shared memory with cp.async, one barrier per tile), computes S = Q·Kᵀ with mma.sync
 * m16n8k16 (bf16 in, fp32 accumulate), keeps the softmax online in registers (running max and
 * sum per row, exp2 of log2e-scaled scores, the max moved only when it grows by more than 2^8),
 * reuses P directly as the A operand of O += P·V and writes O as bf16 once at the end, in whole
 * 16-byte chunks through shared memory. Scores never touch memory. In a sequence's last,
 * partly filled query tile the warps that would have no rows share the keys of those that do.
 * Only sm_80+ instructions (mma.sync, ldmatrix, cp.async): it builds for sm_89 and sm_90 alike.
 * It is compiled for 16 and for 32 rows per warp; setup picks 32 where a block may have its
 * shared memory (sm_90's opt-in), else 16 (sm_89).
 *
 * What each of those choices was worth on the H200 is in README.md ("The kernel, measured"). */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "random.h"
#include "varlen_attention_ref.h"
#include "varlen_attention_kernels.h"


static_assert(VA_HEAD_DIM % 16 == 0, "head dim is walked in k-steps of 16");
static_assert(VA_BLOCK_N % 16 == 0, "keys are walked in pairs of 8-key n-tiles");
static_assert(VA_STEPS >= 1 && VA_BLOCK_N % VA_STEPS == 0 && VA_STEP_N % 16 == 0,
              "a softmax step is a whole number of pairs of 8-key n-tiles");
static_assert(VA_BLOCK_N % 32 == 0,
              "a warp's rows lie within one key tile (the causal tile count relies on it)");
static_assert((VA_SMEM_STRIDE * 2) % 16 == 0, "shared rows must stay 16-byte aligned (cp.async, ldmatrix)");
static_assert((VA_SMEM_STRIDE * 2 / 4) % 32 == 4,
              "a row stride of 4 banks (mod 32) puts the 8 rows of one ldmatrix matrix on distinct banks");
static_assert((VA_BLOCK_M(16) * VA_CHUNKS_PER_ROW) % VA_THREADS == 0, "Q tile chunks split evenly");
static_assert((VA_BLOCK_N * VA_CHUNKS_PER_ROW) % VA_THREADS == 0, "K/V tile chunks split evenly");
static_assert(VA_SMEM_BYTES(16) <= 99 * 1024, "16 rows fit the opt-in shared memory of sm_89");
static_assert(2 * (VA_SMEM_BYTES(32) + 1024) <= 228 * 1024,
              "32 rows: two blocks per SM on sm_90 (228 KB per SM, 1 KB reserved per block)");


/* Fill the stored rows of every sequence: real positions from the logical coordinates, padding
 * positions with other random values (so that a missing mask shows as a wrong answer). One
 * thread writes one 16-byte chunk of Q, K and V. grid.y = sequence. */
__global__ void va_fill_kernel(__nv_bfloat16 *q, __nv_bfloat16 *k, __nv_bfloat16 *v,
                               const va_seq *seqs, int heads, uint64_t seed)
{
    const va_seq seq = seqs[blockIdx.y];
    const long long chunks_per_token = (long long)heads * VA_CHUNKS_PER_ROW;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)seq.computed_len * chunks_per_token)
        return;
    const int pos = (int)(idx / chunks_per_token);
    const int head = (int)((idx % chunks_per_token) / VA_CHUNKS_PER_ROW);
    const int chunk = (int)(idx % VA_CHUNKS_PER_ROW);
    const int salt = pos >= seq.real_len ? VA_TENSOR_PAD_SALT : 0;
    const size_t at = ((size_t)(seq.offset + pos) * heads + head) * VA_HEAD_DIM + chunk * 8;
    __nv_bfloat16 *dst[3] = {q + at, k + at, v + at};
    for (int t = 0; t < 3; t++) {
        float val[8];
        va_chunk_values(seed, t + salt, seq.logical, pos, head, chunk, val);
        __nv_bfloat162 packed[4];
        for (int i = 0; i < 4; i++)
            packed[i] = __floats2bfloat162_rn(val[2 * i], val[2 * i + 1]);
        uint4 word;
        memcpy(&word, packed, sizeof word);
        *(uint4 *)dst[t] = word;
    }
}

/* ---- fragment layouts (PTX ISA, mma.m16n8k16 with .bf16, and ldmatrix) --------------------
 *
 * lane = 0..31, g = lane / 4 (groupID), t = lane % 4 (threadID_in_group). A 32-bit register
 * holds two bf16: the lower column (or k) index in the low 16 bits.
 *
 *   A (16×16, row-major), 4 registers: a0 = (row g,   cols 2t, 2t+1)    a1 = (row g+8, cols 2t, 2t+1)
 *                                      a2 = (row g,   cols 2t+8, 2t+9)  a3 = (row g+8, cols 2t+8, 2t+9)
 *   B (16×8, k×n, "col"), 2 registers: b0 = (k 2t, 2t+1; n g)          b1 = (k 2t+8, 2t+9; n g)
 *   C/D (16×8, fp32), 4 floats:        c0 = (g, 2t)  c1 = (g, 2t+1)  c2 = (g+8, 2t)  c3 = (g+8, 2t+1)
 *
 *   ldmatrix.x4: lanes 8i..8i+7 give the addresses of rows 0..7 of matrix i (16 bytes each);
 *   register i of lane receives matrix i's (row g, cols 2t, 2t+1); with .trans it receives
 *   (rows 2t, 2t+1; col g), i.e. the transposed matrix's fragment.
 *
 * Derivations used below:
 *  - Q (A of S = Q·Kᵀ), 16 rows × 16 dims at (row r0, dim k0): a0..a3 are the 8×8 blocks
 *    (rows 0-7, dims 0-7), (rows 8-15, dims 0-7), (rows 0-7, dims 8-15), (rows 8-15, dims 8-15),
 *    so lane l points at row r0 + l%8 + 8·((l/8)%2), dim k0 + 8·(l/16).
 *  - K (B of S: B[k=dim][n=key] = K[key][dim]): for fixed n a lane needs 2 consecutive dims of
 *    one key = one K row in shared memory, so no transpose. Matrices (keys 0-7, dims 0-7),
 *    (keys 0-7, dims 8-15), (keys 8-15, dims 0-7), (keys 8-15, dims 8-15) give b0,b1 of n-tile
 *    j and b0,b1 of n-tile j+1: lane l points at key n0 + l%8 + 8·(l/16), dim k0 + 8·((l/8)%2).
 *  - V (B of O += P·V: B[k=key][n=dim] = V[key][dim]): a lane needs 2 consecutive keys of one
 *    dim, so .trans over V rows. Matrices (keys 0-7, dims 0-7), (keys 8-15, dims 0-7),
 *    (keys 0-7, dims 8-15), (keys 8-15, dims 8-15) give b0,b1 of dim-tile n and b0,b1 of
 *    dim-tile n+1: lane l points at key k0 + l%8 + 8·((l/8)%2), dim n0 + 8·(l/16).
 *  - P as A: the C fragments of the S n-tiles 2kk and 2kk+1 (keys 16kk..16kk+7 and
 *    16kk+8..16kk+15) hold (g, 2t..2t+1), (g+8, 2t..2t+1) of each; A's a0..a3 for k-step kk are
 *    (g, 2t..), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..): so a0 = {c0,c1} of n-tile 2kk,
 *    a1 = {c2,c3} of 2kk, a2 = {c0,c1} of 2kk+1, a3 = {c2,c3} of 2kk+1, with no data movement.
 */

/* Row and column of element e (0..3) of a lane's C fragment. */
__host__ __device__ static inline int va_c_row(int lane, int e) { return (lane >> 2) + 8 * (e >> 1); }
__host__ __device__ static inline int va_c_col(int lane, int e) { return 2 * (lane & 3) + (e & 1); }
/* The row (of the 16) and the column offset (0 or 8) a lane points ldmatrix.x4 at. */
__host__ __device__ static inline int va_ldsm_q_row(int lane) { return (lane & 7) + 8 * ((lane >> 3) & 1); }
__host__ __device__ static inline int va_ldsm_q_col(int lane) { return 8 * (lane >> 4); }
__host__ __device__ static inline int va_ldsm_k_key(int lane) { return (lane & 7) + 8 * (lane >> 4); }
__host__ __device__ static inline int va_ldsm_k_col(int lane) { return 8 * ((lane >> 3) & 1); }
__host__ __device__ static inline int va_ldsm_v_key(int lane) { return (lane & 7) + 8 * ((lane >> 3) & 1); }
__host__ __device__ static inline int va_ldsm_v_col(int lane) { return 8 * (lane >> 4); }

/* ---- the instructions ---------------------------------------------------------------------- */

__device__ __forceinline__ uint32_t va_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16 bytes global → shared, asynchronously; src_bytes = 0 writes 16 zero bytes (src unread). */
__device__ __forceinline__ void va_cp_async_16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(va_smem_addr(smem_dst)),
                 "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void va_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until every committed group of this thread has landed. */
__device__ __forceinline__ void va_cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void va_ldmatrix_x4(uint32_t r[4], const __nv_bfloat16 *smem_row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(va_smem_addr(smem_row))
                 : "memory");
}

__device__ __forceinline__ void va_ldmatrix_x4_trans(uint32_t r[4], const __nv_bfloat16 *smem_row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(va_smem_addr(smem_row))
                 : "memory");
}

/* c += A·B, m16n8k16, bf16 inputs, fp32 accumulators. */
__device__ __forceinline__ void va_mma_bf16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* 2^x, one MUFU instruction; inputs below −126 flush to 0 (a probability < 2^-126 is 0 to
 * softmax), −inf gives 0. exp2f would add denormal handling around every call. */
__device__ __forceinline__ float va_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Two floats → bf16x2, `lo` in the low 16 bits (the lower column index). */
__device__ __forceinline__ uint32_t va_pack_bf16(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* ---- the fused attention kernel ------------------------------------------------------------ */

/* Staging rows of Q, K or V into shared memory: thread t copies 16-byte chunk t % 16 of rows
 * t / 16, t / 16 + VA_STAGE_ROWS, ... of each tile, so its addresses are fixed but for one
 * row stride per pass (the loops unroll into a few instructions per cp.async). */
#define VA_STAGE_ROWS (VA_THREADS / VA_CHUNKS_PER_ROW)      /* rows one pass of the block copies */
static_assert(VA_THREADS % VA_CHUNKS_PER_ROW == 0 && VA_BLOCK_N % VA_STAGE_ROWS == 0 &&
                  VA_BLOCK_M(16) % VA_STAGE_ROWS == 0,
              "every thread copies the same number of chunks of a tile");

/* One thread's part of staging a tensor of one (sequence, head): its chunk of row `row` (its
 * first row, t / 16) is element first_row · row_stride + col of the tensor, first_row =
 * offset + row. */
typedef struct va_stager {
    int first_row;
    int col;                        /* head · VA_HEAD_DIM + 8 · chunk */
    int row;
    int dst_off;                    /* the same chunk in a shared tile */
} va_stager;

__device__ __forceinline__ va_stager va_make_stager(int offset, int head)
{
    const int row = (int)threadIdx.x / VA_CHUNKS_PER_ROW, chunk = (int)threadIdx.x % VA_CHUNKS_PER_ROW;
    va_stager g;
    g.first_row = offset + row;
    g.col = head * VA_HEAD_DIM + chunk * 8;
    g.row = row;
    g.dst_off = row * VA_SMEM_STRIDE + chunk * 8;
    return g;
}

/* Stage rows row_begin .. row_begin+N_ROWS-1 of `tensor` into the tile at dst (row stride
 * VA_SMEM_STRIDE); rows at or beyond computed_len are zero-filled from a valid address, never
 * read. One address computation per call, then a pointer step per pass. */
template <int N_ROWS>
__device__ __forceinline__ void va_stage(__nv_bfloat16 *dst, const __nv_bfloat16 *tensor,
                                         const va_stager &g, int row_begin, int computed_len,
                                         int row_stride)
{
    const __nv_bfloat16 *src =
        tensor + (size_t)(unsigned)(g.first_row + row_begin) * (unsigned)row_stride + g.col;
    const int rows_left = computed_len - row_begin - g.row;
#pragma unroll
    for (int i = 0; i < N_ROWS / VA_STAGE_ROWS; i++) {
        const bool inside = i * VA_STAGE_ROWS < rows_left;
        va_cp_async_16(dst + g.dst_off + i * VA_STAGE_ROWS * VA_SMEM_STRIDE,
                       inside ? src : tensor, inside ? 16 : 0);
        src += (size_t)VA_STAGE_ROWS * (unsigned)row_stride;
    }
}

/* The A fragment of m-tile mt, head-dim k-step kk. Where a warp's Q fragments come from: with
 * one m-tile (R = 16), registers loaded once (q_regs[kk]); with two, the warp's rows of the Q
 * tile in shared memory (q_smem), re-read each key tile (the O accumulators of two m-tiles leave
 * no room for 64 more registers of Q). */
template <int R>
__device__ __forceinline__ void va_q_fragment(uint32_t a[4], const uint32_t (*q_regs)[4],
                                              const __nv_bfloat16 *q_smem, int mt, int kk,
                                              int lane)
{
    if constexpr (VA_M_TILES(R) == 1) {
#pragma unroll
        for (int i = 0; i < 4; i++)
            a[i] = q_regs[kk][i];
    } else {
        va_ldmatrix_x4(a, q_smem + (16 * mt + va_ldsm_q_row(lane)) * VA_SMEM_STRIDE + 16 * kk +
                              va_ldsm_q_col(lane));
    }
}

/* The scores of one softmax step: S = Q·Kᵀ for the warp's R rows (VA_M_TILES(R) m16 tiles) ×
 * VA_STEP_N keys from s_k (the step's first key row): k-steps over the head dim, key n-tiles in
 * pairs, each K fragment to every m-tile. */
template <int R>
__device__ __forceinline__ void va_scores(float (*s)[VA_STEP_N / 8][4], const __nv_bfloat16 *s_k,
                                          const uint32_t (*q_regs)[4],
                                          const __nv_bfloat16 *q_smem, int lane)
{
#pragma unroll
    for (int mt = 0; mt < VA_M_TILES(R); mt++)
#pragma unroll
        for (int j = 0; j < VA_STEP_N / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[mt][j][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < VA_HEAD_DIM / 16; kk++) {
        uint32_t a[VA_M_TILES(R)][4];
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++)
            va_q_fragment<R>(a[mt], q_regs, q_smem, mt, kk, lane);
#pragma unroll
        for (int jp = 0; jp < VA_STEP_N / 16; jp++) {
            uint32_t b[4];
            va_ldmatrix_x4(b, s_k + (16 * jp + va_ldsm_k_key(lane)) * VA_SMEM_STRIDE + 16 * kk +
                                  va_ldsm_k_col(lane));
#pragma unroll
            for (int mt = 0; mt < VA_M_TILES(R); mt++) {
                va_mma_bf16(s[mt][2 * jp], a[mt], b[0], b[1]);
                va_mma_bf16(s[mt][2 * jp + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

/* Mask keys beyond the real length (padding) and, causal, keys after the query: key0 is the
 * step's first key, row0 the warp's first row. Element (mt, j, e) of a lane is key col0 + dc,
 * dc = 8j + (e & 1), of row row_g + 16·mt + 8·(e >> 1), with col0 and row_g the lane's own: so
 * each test is one compare of a per-lane number against a constant. */
template <int R>
__device__ __forceinline__ void va_mask(float (*s)[VA_STEP_N / 8][4], int lane, int row0, int key0,
                                        int real_len, int causal)
{
    const int col0 = key0 + va_c_col(lane, 0);
    const int pad_from = real_len - col0;                  /* masked: dc >= pad_from */
    const int diag = row0 + va_c_row(lane, 0) - col0;      /* causal, masked: dc − dr > diag */
    if (causal) {
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++)
#pragma unroll
            for (int j = 0; j < VA_STEP_N / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int dc = 8 * j + (e & 1), dr = 16 * mt + 8 * (e >> 1);
                    if (dc >= pad_from || dc - dr > diag)
                        s[mt][j][e] = -INFINITY;
                }
    } else {
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++)
#pragma unroll
            for (int j = 0; j < VA_STEP_N / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (8 * j + (e & 1) >= pad_from)
                        s[mt][j][e] = -INFINITY;
    }
}

/* The online softmax of one step, per m-tile: the step's max per row (over the 4 lanes of the
 * group); where it moves the running max (with lazy rescaling: by more than the slack, in any
 * row of the warp), rescale what was accumulated by 2^(m_old − m_new); then P = 2^(s·scale_log2
 * − m) in place of S. In m-tile mt, r = 0 is the lane's row g, r = 1 its row g+8. m_run is in the
 * log2 domain (score · scale_log2); l_run is the lane's partial sum over its own columns (the 4
 * lanes of a group are summed once, at the end). */
template <int R>
__device__ __forceinline__ void va_softmax(float (*s)[VA_STEP_N / 8][4],
                                           float (*o_acc)[VA_HEAD_DIM / 8][4], float (*m_run)[2],
                                           float (*l_run)[2], float scale_log2)
{
    float m_new[VA_M_TILES(R)][2];
    bool grows = false;
#pragma unroll
    for (int mt = 0; mt < VA_M_TILES(R); mt++) {
        float step_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int j = 0; j < VA_STEP_N / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                step_max[e >> 1] = fmaxf(step_max[e >> 1], s[mt][j][e]);
#pragma unroll
        for (int r = 0; r < 2; r++) {
            step_max[r] = fmaxf(step_max[r], __shfl_xor_sync(0xffffffffu, step_max[r], 1));
            step_max[r] = fmaxf(step_max[r], __shfl_xor_sync(0xffffffffu, step_max[r], 2));
            m_new[mt][r] = fmaxf(m_run[mt][r], step_max[r] * scale_log2);
            /* −inf + slack is −inf: the first unmasked key always sets the max. */
            grows |= m_new[mt][r] > m_run[mt][r] + VA_RESCALE_SLACK;
        }
    }
    if (!VA_LAZY_RESCALE || __any_sync(0xffffffffu, grows)) {
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                /* A row with every key masked so far keeps m = −inf: exponentiate against 0
                 * instead, so that −inf − (−inf) never makes a NaN (every p and alpha is 0). */
                const float m_use = (m_new[mt][r] == -INFINITY) ? 0.0f : m_new[mt][r];
                const float alpha = va_exp2(m_run[mt][r] - m_use);
                m_run[mt][r] = m_new[mt][r];
                l_run[mt][r] *= alpha;
#pragma unroll
                for (int n = 0; n < VA_HEAD_DIM / 8; n++) {
                    o_acc[mt][n][2 * r] *= alpha;
                    o_acc[mt][n][2 * r + 1] *= alpha;
                }
            }
    }
#pragma unroll
    for (int mt = 0; mt < VA_M_TILES(R); mt++) {
        float m_use[2];
#pragma unroll
        for (int r = 0; r < 2; r++)
            m_use[r] = (m_run[mt][r] == -INFINITY) ? 0.0f : m_run[mt][r];
#pragma unroll
        for (int j = 0; j < VA_STEP_N / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float p = va_exp2(fmaf(s[mt][j][e], scale_log2, -m_use[e >> 1]));
                l_run[mt][e >> 1] += p;
                s[mt][j][e] = p;
            }
    }
}

/* O += P·V for one step: P's C fragments of n-tiles 2kk, 2kk+1 are the A fragment of k-step kk;
 * each V fragment (from s_v, the step's first key row) goes to every m-tile. */
template <int R>
__device__ __forceinline__ void va_pv(float (*o_acc)[VA_HEAD_DIM / 8][4],
                                      float (*p)[VA_STEP_N / 8][4], const __nv_bfloat16 *s_v,
                                      int lane)
{
#pragma unroll
    for (int kk = 0; kk < VA_STEP_N / 16; kk++) {
        uint32_t p_frag[VA_M_TILES(R)][4];
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++) {
            p_frag[mt][0] = va_pack_bf16(p[mt][2 * kk][0], p[mt][2 * kk][1]);
            p_frag[mt][1] = va_pack_bf16(p[mt][2 * kk][2], p[mt][2 * kk][3]);
            p_frag[mt][2] = va_pack_bf16(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
            p_frag[mt][3] = va_pack_bf16(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < VA_HEAD_DIM / 16; dp++) {
            uint32_t b[4];
            va_ldmatrix_x4_trans(b, s_v + (16 * kk + va_ldsm_v_key(lane)) * VA_SMEM_STRIDE +
                                        16 * dp + va_ldsm_v_col(lane));
#pragma unroll
            for (int mt = 0; mt < VA_M_TILES(R); mt++) {
                va_mma_bf16(o_acc[mt][2 * dp], p_frag[mt], b[0], b[1]);
                va_mma_bf16(o_acc[mt][2 * dp + 1], p_frag[mt], b[2], b[3]);
            }
        }
    }
}

/* One warp, one key tile of VA_BLOCK_N keys from key0 (s_k, s_v: the tile's first row): the
 * scores of every step first, then per step mask (MASK: the tile holds padding or, causal, keys
 * after a row of the warp), softmax and P·V. Every K and V fragment loaded is used by each
 * m-tile. */
template <int R, bool MASK>
__device__ __forceinline__ void va_warp_tile(const __nv_bfloat16 *s_k, const __nv_bfloat16 *s_v,
                                             const uint32_t (*q_regs)[4],
                                             const __nv_bfloat16 *q_smem,
                                             float (*o_acc)[VA_HEAD_DIM / 8][4],
                                             float (*m_run)[2], float (*l_run)[2], int lane,
                                             int row0, int key0, int real_len, int causal,
                                             float scale_log2)
{
    float s[VA_STEPS][VA_M_TILES(R)][VA_STEP_N / 8][4];
#pragma unroll
    for (int st = 0; st < VA_STEPS; st++)
        va_scores<R>(s[st], s_k + st * VA_STEP_N * VA_SMEM_STRIDE, q_regs, q_smem, lane);
#pragma unroll
    for (int st = 0; st < VA_STEPS; st++) {
        if (MASK)
            va_mask<R>(s[st], lane, row0, key0 + st * VA_STEP_N, real_len, causal);
        va_softmax<R>(s[st], o_acc, m_run, l_run, scale_log2);
        va_pv<R>(o_acc, s[st], s_v + st * VA_STEP_N * VA_SMEM_STRIDE, lane);
    }
}

/* Normalize the warp's rows and write those below computed_len as bf16, through `stage` (the
 * warp's R rows of the Q tile, which only it reads, and no longer): fragments into shared
 * memory, then whole 16-byte chunks of rows to global memory, 16 lanes per row. */
template <int R>
__device__ __forceinline__ void va_warp_store(__nv_bfloat16 *o, __nv_bfloat16 *stage, int offset,
                                              int computed_len, int heads, int head,
                                              float (*o_acc)[VA_HEAD_DIM / 8][4],
                                              float (*l_run)[2], int lane, int row0)
{
#pragma unroll
    for (int mt = 0; mt < VA_M_TILES(R); mt++) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            float l = l_run[mt][r];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
            __nv_bfloat16 *row = stage + (16 * mt + va_c_row(lane, 2 * r)) * VA_SMEM_STRIDE;
#pragma unroll
            for (int n = 0; n < VA_HEAD_DIM / 8; n++)
                *(__nv_bfloat162 *)(row + 8 * n + va_c_col(lane, 2 * r)) = __floats2bfloat162_rn(
                    o_acc[mt][n][2 * r] * inv_l, o_acc[mt][n][2 * r + 1] * inv_l);
        }
    }
    __syncwarp();
    const int chunk = lane % VA_CHUNKS_PER_ROW, first = lane / VA_CHUNKS_PER_ROW;
    constexpr int rows_per_pass = 32 / VA_CHUNKS_PER_ROW;
#pragma unroll
    for (int i = first; i < R; i += rows_per_pass) {
        if (row0 + i >= computed_len)
            break;
        *(uint4 *)(o + ((size_t)(offset + row0 + i) * heads + head) * VA_HEAD_DIM + 8 * chunk) =
            *(const uint4 *)(stage + i * VA_SMEM_STRIDE + 8 * chunk);
    }
}

/* Merge the parts of a row group whose key tiles were split between warps (ways of them, the
 * group's warps w, w+1, ..: part 0 keeps the result). Partial results go through shared memory
 * (`scratch`, free once every warp is past the last key tile), lane by lane: the lanes of two
 * warps hold the same rows and columns of O, each with its own running max m and partial sum
 * l, so O = Σ O_p · 2^(m_p − m) and l = Σ l_p · 2^(m_p − m) with m = max m_p. */
#define VA_PART_FLOATS(r) (VA_M_TILES(r) * (VA_HEAD_DIM / 2 + 4))    /* per lane: O, m, l */
static_assert(VA_WARPS * VA_PART_FLOATS(16) * 32 * 4 <= 4 * VA_BLOCK_N * VA_SMEM_STRIDE * 2 &&
                  VA_WARPS * VA_PART_FLOATS(32) * 32 * 4 <= 4 * VA_BLOCK_N * VA_SMEM_STRIDE * 2,
              "every warp's partial result fits where the key and value tiles were");
template <int R>
__device__ __forceinline__ void va_merge_parts(float *scratch, float (*o_acc)[VA_HEAD_DIM / 8][4],
                                               float (*m_run)[2], float (*l_run)[2], int warp,
                                               int part, int ways, int lane)
{
    __syncthreads(); /* every warp is done with the key and value tiles */
    if (part > 0) {
        float *mine = scratch + (size_t)warp * VA_PART_FLOATS(R) * 32 + lane;
        int i = 0;
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++) {
#pragma unroll
            for (int n = 0; n < VA_HEAD_DIM / 8; n++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    mine[32 * i++] = o_acc[mt][n][e];
#pragma unroll
            for (int r = 0; r < 2; r++) {
                mine[32 * i++] = m_run[mt][r];
                mine[32 * i++] = l_run[mt][r];
            }
        }
    }
    __syncthreads();
    if (part > 0)
        return;
    for (int p = 1; p < ways; p++) {
        const float *theirs = scratch + (size_t)(warp + p) * VA_PART_FLOATS(R) * 32 + lane;
#pragma unroll
        for (int mt = 0; mt < VA_M_TILES(R); mt++) {
            const int at = mt * (VA_HEAD_DIM / 2 + 4);   /* this m-tile's first float */
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const float m_p = theirs[32 * (at + VA_HEAD_DIM / 2 + 2 * r)];
                const float l_p = theirs[32 * (at + VA_HEAD_DIM / 2 + 2 * r + 1)];
                const float m = fmaxf(m_run[mt][r], m_p);
                const float m_use = (m == -INFINITY) ? 0.0f : m; /* both parts saw no key */
                const float f_mine = va_exp2(m_run[mt][r] - m_use);
                const float f_p = va_exp2(m_p - m_use);
                m_run[mt][r] = m;
                l_run[mt][r] = l_run[mt][r] * f_mine + l_p * f_p;
#pragma unroll
                for (int n = 0; n < VA_HEAD_DIM / 8; n++)
#pragma unroll
                    for (int c = 0; c < 2; c++)
                        o_acc[mt][n][2 * r + c] = o_acc[mt][n][2 * r + c] * f_mine +
                                                  theirs[32 * (at + 4 * n + 2 * r + c)] * f_p;
            }
        }
    }
}

/* ---- the clock probe (va_clock_probe) -------------------------------------------------------- */

/* The GPU's nanosecond timer, the same on every SM. */
__device__ __forceinline__ unsigned long long va_globaltimer_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* At the block's start, by thread 0 where there is a probe: the SM's cycle counter and the
 * timer, kept in shared memory (16 bytes) rather than in registers across the kernel, which has
 * none to spare. One predicated PTX block, no branch: written in C (a branch on thread 0, the
 * same reads and store), it changed ptxas's register allocation of the 32-row kernel from 32 to
 * 72 bytes of spill stores and 16 to 92 of spill loads, some inside the key-tile loop; this way
 * its spills are the unprobed kernel's (nvcc 13.0, -Xptxas -v, sm_90). */
__device__ __forceinline__ void va_probe_start(const va_clock_probe *probe,
                                               volatile unsigned long long *s_start)
{
    const unsigned addr = (unsigned)__cvta_generic_to_shared((const void *)s_start);
    asm volatile("{\n\t.reg .pred p;\n\t.reg .u32 t;\n\t.reg .u64 c, g;\n\t"
                 "mov.u32 t, %%tid.x;\n\tsetp.eq.u32 p, t, 0;\n\t"
                 "setp.ne.and.u64 p, %1, 0, p;\n\t"
                 "@p mov.u64 c, %%clock64;\n\t@p mov.u64 g, %%globaltimer;\n\t"
                 "@p st.shared.v2.u64 [%0], {c, g};\n\t}" :: "r"(addr), "l"(probe));
}

/* At the block's end, once every warp is done (the barrier: uniform, as probe is): the block's
 * spans added to the probe. With the start's, four special-register reads, a shared store and
 * two atomics per block of ~70-200 us. */
__device__ __forceinline__ void va_probe_end(va_clock_probe *probe,
                                             const volatile unsigned long long *s_start)
{
    if (!probe)
        return;
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned long long cycles = (unsigned long long)clock64();
        const unsigned long long ns = va_globaltimer_ns();
        atomicAdd(&probe->cycles, cycles - s_start[0]);
        atomicAdd(&probe->ns, ns - s_start[1]);
    }
}

/* Block = one item (sequence, query tile) × one head; blockIdx.x = item · heads + head, items
 * sorted by cost, most expensive first. Q, K, V, O: [token, head, VA_HEAD_DIM] bf16. probe:
 * NULL, or the clock probe this launch's blocks add to. */
template <int R>
__global__ void __launch_bounds__(VA_THREADS, VA_MIN_BLOCKS_PER_SM)
va_attention_kernel(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
                    const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ o,
                    const va_seq *__restrict__ seqs, const va_item *__restrict__ items, int heads,
                    int causal, float scale_log2, va_clock_probe *probe)
{
    __shared__ volatile unsigned long long s_probe_start[2];
    va_probe_start(probe, s_probe_start);
    extern __shared__ __align__(16) unsigned char va_smem[];
    __nv_bfloat16 *s_q = (__nv_bfloat16 *)va_smem;                  /* [BLOCK_M][STRIDE] */
    __nv_bfloat16 *s_k = s_q + VA_BLOCK_M(R) * VA_SMEM_STRIDE;         /* [2][BLOCK_N][STRIDE] */
    __nv_bfloat16 *s_v = s_k + 2 * VA_BLOCK_N * VA_SMEM_STRIDE;     /* [2][BLOCK_N][STRIDE] */

    const int head = (int)(blockIdx.x % (unsigned)heads);
    const va_item item = items[blockIdx.x / (unsigned)heads];
    const va_seq seq = seqs[item.seq];
    const int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31);
    const int q_begin = item.q_tile * VA_BLOCK_M(R);
    const int block_tiles = va_block_key_tiles(R, item.q_tile, seq.computed_len, causal);
    /* The warp's rows and keys: row group `group` (R rows from row0), key tiles [tile_begin,
     * tile_end) of its n_tiles. In a full query tile each warp has its own group and all its
     * keys; in a sequence's last, partly filled one, the groups that hold rows are shared by
     * VA_WARPS / groups warps each, which split the keys and merge at the end, instead of
     * leaving warps idle. */
    const int groups = va_row_groups(R, q_begin, seq.computed_len);
    const int ways = VA_WARPS / groups;
    const int group = warp / ways, part = warp % ways;
    const int row0 = q_begin + R * group;
    const int n_tiles = va_warp_key_tiles(R, item.q_tile, group, seq.computed_len, causal);
    const int tile_begin = part * n_tiles / ways, tile_end = (part + 1) * n_tiles / ways;

    /* One group: the Q tile and key/value tile 0 (buffer 0). */
    const va_stager stage = va_make_stager(seq.offset, head);
    const int row_stride = heads * VA_HEAD_DIM;
    va_stage<VA_BLOCK_M(R)>(s_q, q, stage, q_begin, seq.computed_len, row_stride);
    va_stage<VA_BLOCK_N>(s_k, k, stage, 0, seq.computed_len, row_stride);
    va_stage<VA_BLOCK_N>(s_v, v, stage, 0, seq.computed_len, row_stride);
    va_cp_async_commit();
    va_cp_async_wait_all();
    __syncthreads();

    /* The warp's Q rows. It reads only its own rows of s_q, which nothing writes again: with
     * one m-tile their fragments (all head-dim k-steps) are loaded into registers here; with
     * two, va_warp_tile re-reads them from s_q. */
    const __nv_bfloat16 *s_q_warp = s_q + R * group * VA_SMEM_STRIDE;
    uint32_t q_frag[VA_M_TILES(R) == 1 ? VA_HEAD_DIM / 16 : 1][4];
    if constexpr (VA_M_TILES(R) == 1) {
#pragma unroll
        for (int kk = 0; kk < VA_HEAD_DIM / 16; kk++)
            va_ldmatrix_x4(q_frag[kk], s_q_warp + va_ldsm_q_row(lane) * VA_SMEM_STRIDE +
                                           16 * kk + va_ldsm_q_col(lane));
    }

    float o_acc[VA_M_TILES(R)][VA_HEAD_DIM / 8][4];
    float m_run[VA_M_TILES(R)][2], l_run[VA_M_TILES(R)][2];
#pragma unroll
    for (int mt = 0; mt < VA_M_TILES(R); mt++) {
#pragma unroll
        for (int n = 0; n < VA_HEAD_DIM / 8; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                o_acc[mt][n][e] = 0.0f;
#pragma unroll
        for (int r = 0; r < 2; r++) {
            m_run[mt][r] = -INFINITY;
            l_run[mt][r] = 0.0f;
        }
    }

    /* One barrier per key tile. Tile kt's copies were issued one iteration earlier (or before
     * the loop); once every thread has waited for its own and passed the barrier, tile kt is
     * in shared memory and every warp is done with tile kt-1, whose buffer then takes tile
     * kt+1 while the warps compute tile kt. */
    for (int kt = 0; kt < block_tiles; kt++) {
        const int buf = kt & 1;
        if (kt > 0) {
            va_cp_async_wait_all();
            __syncthreads();
        }
        if (kt + 1 < block_tiles) {
            va_stage<VA_BLOCK_N>(s_k + (buf ^ 1) * VA_BLOCK_N * VA_SMEM_STRIDE, k, stage,
                                 (kt + 1) * VA_BLOCK_N, seq.computed_len, row_stride);
            va_stage<VA_BLOCK_N>(s_v + (buf ^ 1) * VA_BLOCK_N * VA_SMEM_STRIDE, v, stage,
                                 (kt + 1) * VA_BLOCK_N, seq.computed_len, row_stride);
            va_cp_async_commit();
        }
        if (kt >= tile_begin && kt < tile_end) {
            /* Only the tiles that can hold a masked key pay for the mask; the test is uniform
             * across the warp (row0 is its first row: conservative for its later rows). */
            const int key0 = kt * VA_BLOCK_N;
            const __nv_bfloat16 *tile_k = s_k + buf * VA_BLOCK_N * VA_SMEM_STRIDE;
            const __nv_bfloat16 *tile_v = s_v + buf * VA_BLOCK_N * VA_SMEM_STRIDE;
            if (key0 + VA_BLOCK_N > seq.real_len || (causal && key0 + VA_BLOCK_N - 1 > row0))
                va_warp_tile<R, true>(tile_k, tile_v, q_frag, s_q_warp, o_acc, m_run, l_run, lane,
                                      row0, key0, seq.real_len, causal, scale_log2);
            else
                va_warp_tile<R, false>(tile_k, tile_v, q_frag, s_q_warp, o_acc, m_run, l_run,
                                       lane, row0, key0, seq.real_len, causal, scale_log2);
        }
    }

    if (ways > 1) /* uniform across the block */
        va_merge_parts<R>((float *)s_k, o_acc, m_run, l_run, warp, part, ways, lane);
    if (n_tiles > 0 && part == 0)
        va_warp_store<R>(o, s_q + R * group * VA_SMEM_STRIDE, seq.offset, seq.computed_len, heads,
                         head, o_acc, l_run, lane, row0);
    va_probe_end(probe, s_probe_start);
}

/* ---- the fp32 reference --------------------------------------------------------------------- */

/* Four consecutive bf16 (8 bytes, aligned) as floats. */
__device__ __forceinline__ void va_load4(const __nv_bfloat16 *p, float out[4])
{
    const uint2 raw = *(const uint2 *)p;
    __nv_bfloat162 pair[2];
    memcpy(pair, &raw, sizeof raw);
    out[0] = __low2float(pair[0]);
    out[1] = __high2float(pair[0]);
    out[2] = __low2float(pair[1]);
    out[3] = __high2float(pair[1]);
}

/* q·k over the warp: each lane's 4 dims, then a butterfly sum (every lane gets the total). */
__device__ __forceinline__ float va_warp_dot(const float qv[4], const __nv_bfloat16 *k_row)
{
    float kv[4], dot = 0.0f;
    va_load4(k_row, kv);
    for (int d = 0; d < 4; d++)
        dot = fmaf(qv[d], kv[d], dot);
    for (int off = 16; off > 0; off >>= 1)
        dot += __shfl_xor_sync(0xffffffffu, dot, off);
    return dot;
}

/* max(*at, v) for v >= 0: non-negative doubles order as their bit patterns do. */
__device__ __forceinline__ void va_atomic_max_nonneg(double *at, double v)
{
    atomicMax((unsigned long long *)at, (unsigned long long)__double_as_longlong(v));
}

/* One warp per (sequence, real query row i, head); lane owns dims 4·lane .. 4·lane+3. Two
 * passes over the keys (max, then sum and P·V), fp32 throughout, from the same bf16 inputs.
 * Writes the reference row (packed by logical sequence, for the host check) and folds
 * max |out−ref|, max |ref| (over finite outputs: max_rel_err's maxima, verify.h) and the count
 * of non-finite outputs of the tiled kernel into sums[0..2]. */
__global__ void __launch_bounds__(VA_REF_WARPS * 32)
va_reference_kernel(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
                    const __nv_bfloat16 *o, const va_seq *seqs, const int *cu_real, int heads,
                    int causal, float scale, float *ref_out, double *sums)
{
    const int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31);
    const va_seq seq = seqs[blockIdx.z];
    const int head = (int)blockIdx.y;
    const int i = (int)blockIdx.x * VA_REF_WARPS + warp;
    if (i >= seq.real_len)
        return; /* the whole warp */
    const int d0 = 4 * lane;
    /* Dim d0 of this head: in query row i, and in key/value row 0 (row j is + j·row_stride). */
    const __nv_bfloat16 *q_row = q + ((size_t)(seq.offset + i) * heads + head) * VA_HEAD_DIM + d0;
    const __nv_bfloat16 *k_col = k + (size_t)seq.offset * heads * VA_HEAD_DIM +
                                 (size_t)head * VA_HEAD_DIM + d0;
    const __nv_bfloat16 *v_col = v + (size_t)seq.offset * heads * VA_HEAD_DIM +
                                 (size_t)head * VA_HEAD_DIM + d0;
    const size_t row_stride = (size_t)heads * VA_HEAD_DIM;
    const int n_keys = causal ? i + 1 : seq.real_len;

    float qv[4];
    va_load4(q_row, qv);
    float m = -INFINITY;
    for (int j = 0; j < n_keys; j++)
        m = fmaxf(m, va_warp_dot(qv, k_col + j * row_stride) * scale);
    float l = 0.0f, acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < n_keys; j++) {
        const float p = expf(va_warp_dot(qv, k_col + j * row_stride) * scale - m);
        float vv[4];
        va_load4(v_col + j * row_stride, vv);
        l += p;
        for (int d = 0; d < 4; d++)
            acc[d] = fmaf(p, vv[d], acc[d]);
    }

    float out[4];
    va_load4(o + ((size_t)(seq.offset + i) * heads + head) * VA_HEAD_DIM + d0, out);
    float *ref_row = ref_out + ((size_t)(cu_real[seq.logical] + i) * heads + head) * VA_HEAD_DIM + d0;
    double max_diff = 0.0, max_ref = 0.0, nonfinite = 0.0;
    for (int d = 0; d < 4; d++) {
        const float ref = acc[d] / l;
        ref_row[d] = ref;
        if (isfinite(out[d]) && isfinite(ref))
            max_diff = fmax(max_diff, fabs((double)out[d] - ref));
        else
            nonfinite += 1.0;
        max_ref = fmax(max_ref, fabs((double)ref));
    }
    for (int off = 16; off > 0; off >>= 1) {
        max_diff = fmax(max_diff, __shfl_xor_sync(0xffffffffu, max_diff, off));
        max_ref = fmax(max_ref, __shfl_xor_sync(0xffffffffu, max_ref, off));
        nonfinite += __shfl_xor_sync(0xffffffffu, nonfinite, off);
    }
    if (lane == 0) {
        va_atomic_max_nonneg(&sums[0], max_diff);
        va_atomic_max_nonneg(&sums[1], max_ref);
        atomicAdd(&sums[2], nonfinite);
    }
}

/* Shared memory and carve-out of the kernel of R rows per warp. */
template <int R>
static cudaError_t va_kernel_attributes(void)
{
    cudaError_t e = cudaFuncSetAttribute(va_attention_kernel<R>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         VA_SMEM_BYTES(R));
    if (e != cudaSuccess)
        return e;
    /* Ask for the largest shared-memory carve-out, so that two blocks fit on an SM. */
    return cudaFuncSetAttribute(va_attention_kernel<R>,
                                cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared);
}

/* A template kernel's launch stub is private to the unit that instantiates it (whole-program
 * builds, no -rdc): the host sets the attributes of, and launches, the kernel of R rows per warp
 * through these two. */
cudaError_t va_kernel_attributes(int rows)
{
    return rows == 32 ? va_kernel_attributes<32>() : va_kernel_attributes<16>();
}

void va_launch_attention(int rows, unsigned blocks, cudaStream_t stream, const __nv_bfloat16 *q,
                         const __nv_bfloat16 *k, const __nv_bfloat16 *v, __nv_bfloat16 *o,
                         const va_seq *seqs, const va_item *items, int heads, int causal,
                         float scale_log2, va_clock_probe *probe)
{
    if (rows == 32)
        va_attention_kernel<32><<<blocks, VA_THREADS, VA_SMEM_BYTES(32), stream>>>(
            q, k, v, o, seqs, items, heads, causal, scale_log2, probe);
    else
        va_attention_kernel<16><<<blocks, VA_THREADS, VA_SMEM_BYTES(16), stream>>>(
            q, k, v, o, seqs, items, heads, causal, scale_log2, probe);
}

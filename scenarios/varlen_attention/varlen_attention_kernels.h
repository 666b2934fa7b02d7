/* varlen_attention's kernels (varlen_attention_kernels.cu) as the host sees them: the shapes
 * the attention kernel is built for, a sequence and a block's work as the kernel reads them,
 * the tile count host and device share (one function for the kernel's loop bounds and the FLOP
 * count), and the three kernels: the input fill, the attention kernel (16 or 32 query rows per
 * warp), the fp32 reference. */
#ifndef VA_KERNELS_H
#define VA_KERNELS_H

#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "varlen_attention_ref.h"

/* ---- the shapes the kernel is built for -------------------------------------------------- */

/* Query rows per warp, R: 16 (one m16 tile; the warp keeps its Q fragments in registers) or 32
 * (two m16 tiles that share every K and V fragment the warp loads from shared memory, so each
 * ldmatrix feeds twice the mma's; the O accumulators double, so Q fragments are re-read from
 * shared memory each key tile instead of living in registers). The kernel is a template on R;
 * setup takes 32 where the GPU gives a block its shared memory (measured on an H200: 20 %
 * faster than 16), else 16. */
#define VA_WARPS 4                                  /* warps per block, R rows each */
#define VA_THREADS (VA_WARPS * 32)
#define VA_BLOCK_N 64                               /* keys per tile (staged in shared memory) */
#define VA_SMEM_STRIDE (VA_HEAD_DIM + 8)            /* bf16 per shared row: 16 bytes of pad */
/* m16 tiles per warp; query rows per block. */
#define VA_M_TILES(r) ((r) / 16)
#define VA_BLOCK_M(r) ((r) * VA_WARPS)
/* How a warp walks one key tile. VA_STEPS softmax steps of VA_STEP_N keys each; the scores of
 * every step are issued first, so that the tensor cores compute step 2's Q·Kᵀ while the warp
 * does step 1's softmax, and step 1's P·V while it does step 2's (VA_STEPS = 1: the whole tile
 * in one step, scores then softmax then P·V, nothing to overlap inside the warp).
 * VA_LAZY_RESCALE: the running max moves (and O and l are rescaled) only when a row's max grows
 * by more than 2^VA_RESCALE_SLACK; otherwise P is taken against the old max, P <= 2^8, still
 * exact in fp32 and bf16's relative precision (FlashAttention-4's conditional rescaling).
 * Both are compile-time switches so that the variants can be timed against each other; the
 * defaults are the fastest measured on an H200 (README.md, "The kernel, measured"). */
#ifndef VA_STEPS
#define VA_STEPS 1
#endif
#ifndef VA_LAZY_RESCALE
#define VA_LAZY_RESCALE 1
#endif
#define VA_STEP_N (VA_BLOCK_N / VA_STEPS)           /* keys per softmax step */
#define VA_RESCALE_SLACK 8.0f                       /* log2 of the largest P lazy rescaling allows */
/* Q tile, then K and V tiles, two buffers each: 87 KB with 16 rows (one block per SM on sm_89's
 * 99 KB opt-in, two on sm_90), 102 KB with 32 (two blocks per SM on sm_90 only). */
#define VA_SMEM_BYTES(r) ((VA_BLOCK_M(r) + 4 * VA_BLOCK_N) * VA_SMEM_STRIDE * 2)
/* Two blocks (8 warps) per SM. With 32 rows per warp that caps a thread at 255 registers
 * (65536 / 256): O (128) + S (64) + 2 Q and 1 K fragments (12) + softmax state (8) fit, with
 * a few bytes of loop-invariant scalars spilled (nvcc -Xptxas -v). */
#define VA_MIN_BLOCKS_PER_SM 2
/* Tensor FLOPs of one warp on one key tile: S (rows×BLOCK_N×d) and P·V (rows×d×BLOCK_N), 2
 * each, rows = R (every m-tile of the warp is issued, in range or not). */
#define VA_FLOPS_PER_WARP_TILE(r) (4.0 * (r) * VA_BLOCK_N * VA_HEAD_DIM)
#define VA_REF_WARPS 8    /* warps per block of the reference kernel */

/* One sequence as the kernel sees it: its tokens are rows offset .. offset+computed_len-1 of
 * the [token, head, VA_HEAD_DIM] tensors; keys at positions >= real_len are masked. */
typedef struct va_seq {
    int offset;
    int computed_len;
    int real_len;
    int logical;            /* index in the batch as drawn: names the inputs, and the reference row */
} va_seq;

/* One block's work: query tile q_tile of sequence seq (an index into the va_seq array). */
typedef struct va_item {
    int seq;
    int q_tile;
} va_item;

/* The clock probe: the SM clock as the attention kernel's own blocks count it. Where the launch
 * passes one, thread 0 of each block reads the SM's cycle counter (clock64) and the GPU's
 * nanosecond timer (%globaltimer) at the block's start and, after a barrier, at its end, and adds
 * the two spans here: cycles / ns is the SM clock in GHz, weighted by block time, over the
 * launches that passed it. Zero it before; NULL: no probe (no barrier, no atomics). */
typedef struct va_clock_probe {
    unsigned long long cycles;
    unsigned long long ns;
} va_clock_probe;

/* ---- the tile count: one function for the kernel's loop bounds and the FLOP count --------- */

/* Key tiles warp `warp` (of `rows` rows) of query tile `q_tile` computes: none when all its rows
 * lie beyond computed_len; every tile up to computed_len without a causal mask; with it, the tiles that
 * hold a key <= the warp's last computed row. */
__host__ __device__ static inline int va_warp_key_tiles(int rows, int q_tile, int warp,
                                                        int computed_len, int causal)
{
    const int row0 = q_tile * VA_BLOCK_M(rows) + warp * rows;
    if (row0 >= computed_len)
        return 0;
    if (!causal)
        return (computed_len + VA_BLOCK_N - 1) / VA_BLOCK_N;
    const int row_end = row0 + rows - 1;
    const int row_last = (row_end < computed_len) ? row_end : computed_len - 1;
    return row_last / VA_BLOCK_N + 1;
}

/* Row groups (R rows each) of the query tile from q_begin that hold rows below computed_len:
 * VA_WARPS but in a sequence's last query tile. */
__host__ __device__ static inline int va_row_groups(int rows, int q_begin, int computed_len)
{
    const int g = (computed_len - q_begin + rows - 1) / rows;
    return g < VA_WARPS ? g : VA_WARPS;
}

/* Key tiles the block walks: the most any of its warps needs (loads are cooperative). */
__host__ __device__ static inline int va_block_key_tiles(int rows, int q_tile, int computed_len,
                                                         int causal)
{
    int n = 0;
    for (int w = 0; w < VA_WARPS; w++) {
        const int t = va_warp_key_tiles(rows, q_tile, w, computed_len, causal);
        n = t > n ? t : n;
    }
    return n;
}

/* Fill the stored rows of every sequence (real positions from the logical coordinates, padding
 * with other values). One thread per 16-byte chunk of Q, K and V; grid.y = sequence. */
__global__ void va_fill_kernel(__nv_bfloat16 *q, __nv_bfloat16 *k, __nv_bfloat16 *v,
                               const va_seq *seqs, int heads, uint64_t seed);

/* The kernel of `rows` (16 or 32) query rows per warp: its shared memory (VA_SMEM_BYTES(rows))
 * and the largest shared-memory carve-out, so that two blocks fit on an SM. */
cudaError_t va_kernel_attributes(int rows);

/* Enqueues the fused attention forward of `rows` (16 or 32) query rows per warp on `stream`:
 * `blocks` = items x heads blocks of VA_THREADS threads, VA_SMEM_BYTES(rows) of dynamic shared
 * memory. Q, K, V, O: [token, head, VA_HEAD_DIM] bf16. `probe`: the clock probe to add to
 * (va_clock_probe), or NULL. The launch's status is cudaGetLastError's. */
void va_launch_attention(int rows, unsigned blocks, cudaStream_t stream, const __nv_bfloat16 *q,
                         const __nv_bfloat16 *k, const __nv_bfloat16 *v, __nv_bfloat16 *o,
                         const va_seq *seqs, const va_item *items, int heads, int causal,
                         float scale_log2, va_clock_probe *probe);

/* The fp32 reference: one warp per (sequence, real query row, head), VA_REF_WARPS warps per
 * block; writes ref_out and folds max |out-ref|, max |ref| and the non-finite count of o into
 * sums[0..2]. */
__global__ void __launch_bounds__(VA_REF_WARPS * 32)
va_reference_kernel(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
                    const __nv_bfloat16 *o, const va_seq *seqs, const int *cu_real, int heads,
                    int causal, float scale, float *ref_out, double *sums);

#endif

/* elementwise_chain's kernels (elementwise_chain_kernels.cu) as the host launches them: the
 * chain kernel both variants run and its launch record, the input fill, the full-tensor check
 * and its arguments, the check of the GELU's reciprocal. */
#ifndef EW_KERNELS_H
#define EW_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>

#include "elementwise_chain_ref.h"

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

/* The chain kernels' geometry: a block of EW_BLOCK threads per row of EW_HIDDEN elements
 * (elementwise_chain_kernels.cu says why). */
enum {
    EW_BLOCK = 256,             /* threads per block */
    EW_THREAD_ELEMS = EW_HIDDEN / EW_BLOCK,
    EW_MIN_BLOCKS = 4           /* per SM: caps a chain kernel at 64 registers (no spills) */
};

/* The full-tensor check's arguments (ew_check_kernel). */
typedef struct ew_check_args {
    const void *x, *residual, *bias, *y;
    size_t n;
    int bits;
    int n_ops;
    int round_each;             /* round to storage after every op (unfused) or at the end only */
    uint32_t seed;
    unsigned long long *bad;    /* [0] elements that differ, [1] the smallest such index */
} ew_check_args;

/* ops [first, end) on row blockIdx.x, fp32 storage (grid = rows, block = EW_BLOCK). */
__global__ void __launch_bounds__(EW_BLOCK, EW_MIN_BLOCKS) ew_chain_f32(ew_launch p);
/* the same, bf16 storage */
__global__ void __launch_bounds__(EW_BLOCK, EW_MIN_BLOCKS) ew_chain_bf16(ew_launch p);

/* n elements uniform in [-amplitude, amplitude) from (key, i), rounded to `bits` storage. */
__global__ void ew_fill_kernel(void *p, size_t n, int bits, uint32_t key, float amplitude);

/* Every element against the per-element device reference: counts in p.bad. */
__global__ void ew_check_kernel(ew_check_args p);

/* The GELU's branch-free reciprocal against __frcp_rn on every float of [27, 108]: one count
 * in bad[0] per value that differs. */
__global__ void ew_rcp_check_kernel(unsigned long long *bad);

#endif

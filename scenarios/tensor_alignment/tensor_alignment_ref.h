/* tensor_alignment's plain-C side: the shapes (padding, alignment, FLOP and byte counts), the
 * random inputs host and device share, the fp64 host reference of one output element, the
 * sample of elements verify checks, and a numeric id of a kernel name. Plain C, usable from C
 * and CUDA, unit-tested in tests/unit/test_tensor_alignment.c. */
#ifndef TA_REF_H
#define TA_REF_H

#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a GEMM stores and multiplies: bf16 storage with fp32 accumulation, fp32 storage with
 * TF32 tensor-core math, fp32 storage with fp32 (CUDA-core FFMA) math. */
enum { TA_BF16 = 0, TA_TF32 = 1, TA_FP32 = 2 };

#define TA_PAD 64           /* the fix pads a dimension up to a multiple of this (Megatron, nanoGPT) */
#define TA_ALIGN_BYTES 16   /* a row the tensor-core fast path loads whole: 16 B (cp.async, TMA) */

/* One GEMM of a linear layer, row-major as PyTorch holds it: Y[m, n] = X[m, k] · W[n, k]ᵀ
 * (nn.Linear's weight, the default), or Y = X · W[k, n] (`x @ w`, w_kn). m, n, k are the
 * real sizes; n_run, k_run what the GEMM runs (padded): X is m × k_run, W n_run × k_run (or
 * k_run × n_run), Y m × n_run, the pads zero. */
typedef struct ta_shape {
    int m, n, k;
    int n_run, k_run;
    int precision;
    int w_kn;           /* 0: W is n × k (nn.Linear); 1: W is k × n (x @ w) */
} ta_shape;

/* W as a row-major matrix: its real rows × cols, the rows allocated and its leading dimension. */
typedef struct ta_dims {
    int rows, cols, rows_alloc, ld;
} ta_dims;

/* x rounded up to a multiple of `multiple` (>= 1); x itself when it is one already. */
int ta_pad_up(int x, int multiple);

/* The shape of Y = X·Wᵀ for m tokens, n outputs and k inputs; pad: n and k rounded up to
 * TA_PAD (the fix), else run as they are. */
ta_shape ta_shape_make(int m, int n, int k, int pad, int precision);

/* W's dimensions as stored (the fill draws element (r, c) of its real part as index r·cols + c). */
ta_dims ta_w_dims(const ta_shape *s);

/* The index of W's element for output column `col` and reduction index j: col·k + j for W
 * n × k, j·n + col for W k × n (what ta_w_dims's fill draws there). */
uint32_t ta_w_index(const ta_shape *s, int col, int j);

size_t ta_elem_bytes(int precision);     /* bytes of one stored element: 2 (bf16) or 4 */

/* 1 when a leading dimension of ld elements keeps every row on a TA_ALIGN_BYTES boundary. */
int ta_ld_aligned(int ld, int precision);

/* 1 when every leading dimension the GEMM runs with (k_run for X, n_run for Y, either for W)
 * is aligned: the tensor-core kernels that load whole 16-byte rows apply. */
int ta_shape_aligned(const ta_shape *s);

double ta_useful_flops(const ta_shape *s);      /* 2·m·n·k: the real layer */
double ta_executed_flops(const ta_shape *s);    /* 2·m·n_run·k_run: what runs, pads included */
double ta_min_bytes(const ta_shape *s);         /* X, W read and Y written once, real sizes */
size_t ta_device_bytes(const ta_shape *s);      /* X, W and Y as allocated (pads included) */

/* The keys of X's and W's random values under a seed (two different draws). */
void ta_keys(uint64_t seed, uint32_t *key_x, uint32_t *key_w);

/* The random value of element `index` (row · k + col of the real matrix: the same index
 * whatever the padding) under key: uniform of [-1, 1), 24 bits, exact in fp32. The device
 * stores it as is (fp32) or rounded to bf16. */
static inline UF_HOST_DEVICE float ta_uniform(uint32_t key, uint32_t index)
{
    return 2.0f * uf_uniform32_at(key, index) - 1.0f;
}

/* The value the device holds for element `index`: ta_uniform, rounded to bf16 for TA_BF16. */
float ta_input(uint32_t key, uint32_t index, int precision);

/* Y[row, col] in fp64 over the real k, on the inputs as the device holds them. */
double ta_ref_element(const ta_shape *s, uint32_t key_x, uint32_t key_w, int row, int col);

/* `count` (>= 4) points of the real m × n output to check: the four corners first (the last
 * real column borders the padding), the rest drawn from seed. */
void ta_sample_points(uint64_t seed, int m, int n, int count, int *rows, int *cols);

/* max_rel_err tolerance of a precision (verify.h's max norm) against the fp64 reference. */
double ta_tolerance(int precision);

/* A 24-bit id of a kernel name (FNV-1a, folded), exact in a results column: equal names give
 * equal ids, so a change of kernel along a sweep shows in the numbers. 0 for NULL or "". */
uint32_t ta_name_id(const char *name);

#ifdef __cplusplus
}
#endif

#endif

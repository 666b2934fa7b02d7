/* tensor_alignment's kernels (tensor_alignment_kernels.cu) as the host launches them. */
#ifndef TA_KERNELS_H
#define TA_KERNELS_H

#include <stdint.h>
#include <cuda_runtime.h>

#define TA_BLOCK 256
#define TA_GRID 1024

/* A rows_alloc × ld row-major matrix whose real part is rows × cols: element (r, c) of the real
 * part gets ta_uniform(key, r·cols + c) (rounded to bf16 for TA_BF16), the pads zero. The
 * value depends on (r, c), not on ld: a padded and an unpadded copy hold the same matrix. */
__global__ void ta_fill_kernel(void *dst, int precision, int rows, int cols, int rows_alloc,
                               int ld, uint32_t key);

/* out[s] = Y[rows[s], cols[s]] for the count sampled points. */
__global__ void ta_gather_kernel(const void *y, int precision, int ld, const int *rows,
                                 const int *cols, int count, float *out);

/* What ta_compare_kernel reduces: max |a − b| and max |b| as float bits (non-negative floats
 * order like their bits), and the count of elements where a or b is not finite. */
typedef struct ta_diff {
    unsigned long long nonfinite;
    unsigned int max_diff_bits, max_ref_bits;
} ta_diff;

/* a and b over the real rows × cols of two row-major matrices with their own leading
 * dimensions, reduced into *out. */
__global__ void ta_compare_kernel(const void *a, int lda, const void *b, int ldb, int precision,
                                  int rows, int cols, ta_diff *out);

#endif

/* elementwise_chain: the scenario's state (sizes, the device tensors, the check counters, the
 * dropout seed of the current inputs) and the variant ids, shared by the story, setup,
 * verification and describe. */
#ifndef EW_STATE_H
#define EW_STATE_H

#include <stddef.h>
#include <stdint.h>

enum { EW_UNFUSED = 0, EW_FUSED = 1 };

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

#endif

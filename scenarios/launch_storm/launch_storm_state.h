/* launch_storm: the scenario's state (variant ids, device buffers, the captured graph), shared
 * by the story (launch_storm.cu), setup and verification; the launch geometry and the axes'
 * limits. */
#ifndef LS_STATE_H
#define LS_STATE_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#include "launch_storm_ref.h"

#define LS_BLOCK 256                 /* threads per block, one element per thread */
#define LS_MAX_OPS 100000            /* beyond this one step is most of a second of launches */
#define LS_MAX_ELEMS 68719476736.0   /* 2^36: keeps the grid within 2^31 blocks */

enum { V_EAGER, V_GRAPH, V_FUSED };

typedef struct ls_state {
    size_t n;                   /* tensor elements */
    int n_ops;                  /* K: ops (kernels) per step */
    float *x_in, *x_out;        /* device: the step's input (never written by a step), output */
    ls_op *ops_dev;             /* device: the op table, read by the fused kernel */
    ls_op *ops;                 /* host: the same table, read by eager launches and the reference */
    cudaGraphExec_t graph_exec; /* graph variant, between begin_variant and end_variant */
    size_t device_bytes;        /* everything allocated on the device */
} ls_state;

static inline unsigned grid_blocks(size_t n)
{
    return (unsigned)((n + LS_BLOCK - 1) / LS_BLOCK);
}

#endif

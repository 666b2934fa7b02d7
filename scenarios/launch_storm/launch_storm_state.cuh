/* launch_storm: the scenario's state (variant ids, device buffers, the captured graph) and the
 * grid size. Included once by launch_storm.cu, at this point of its text (before the enqueue
 * code). */

/* ---- the scenario's state ----------------------------------------------------------------- */

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

static unsigned grid_blocks(size_t n)
{
    return (unsigned)((n + LS_BLOCK - 1) / LS_BLOCK);
}

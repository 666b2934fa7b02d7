/* allreduce_overlap: describe and teardown (allreduce_overlap_describe.cu), and the extras
 * describe fills. */
#ifndef AR_DESCRIBE_H
#define AR_DESCRIBE_H

#include "underfed.h"

/* The extras, in ar_extras order. */
enum {
    EX_GRAD_BYTES, EX_COMPUTE_MS, EX_COMM_MS, EX_BUSBW_GBS, EX_BUSBW_PCT, EX_BUCKETS, EX_RANKS,
    EX_COMPUTE_IN_STEP_MS, EX_COMPUTE_SLOWDOWN_PCT, EX_NCCL_CTAS, EX_GEMM_SM_TARGET, EX_COUNT
};

/* The scenario's describe: the row's setup figures on the variant's own communicator and
 * cuBLAS handle, and on stderr the settings it ran with. */
int ar_describe(uf_ctx *ctx, int variant, uf_row *row);

/* The scenario's teardown: the ranks, the runner, the state. */
void ar_teardown(uf_ctx *ctx);

#endif

/* host_sync: describe (host_sync_describe.cu) and the extras it fills. */
#ifndef HS_DESCRIBE_H
#define HS_DESCRIBE_H

#include "underfed.h"

/* The extras, in hs_extras order. */
enum { X_HOST_US, X_GPU_STEP_MS, X_SLOWDOWN, X_LOSS_LAG, X_LOSS_MISMATCH, X_QUEUE_US,
       X_FINISH_US, X_HOST_PERIOD_US, HS_N_EXTRAS };

/* The scenario's describe: useful (= executed) FLOPs, the device memory held, the host's work
 * and the calibrated GPU step, the loss lag and mismatches verify found, and the medians of
 * the host's queue, finish and period over the logged steps. */
int hs_describe(uf_ctx *ctx, int variant, uf_row *row);

#endif

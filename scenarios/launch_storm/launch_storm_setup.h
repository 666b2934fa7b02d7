/* launch_storm: setup (the point's axes, the op table and inputs on the device) and what the
 * story and verification share with it (launch_storm_setup.cu). */
#ifndef LS_SETUP_H
#define LS_SETUP_H

#include <stdint.h>

#include "underfed.h"
#include "launch_storm_state.h"

/* The scenario's setup: allocates the ls_state (ctx->state), the tensors and op table on the
 * device, and uploads the op table and the inputs of ctx->seed. */
int ls_setup(uf_ctx *ctx);

/* Inputs from `seed` into host_in (st->n floats) and st->x_in; waits for the copy. */
int ls_upload_inputs(uf_ctx *ctx, ls_state *st, uint64_t seed, float *host_in);

/* cudaFree(p) for teardown, which cannot return a status: a failed release is reported
 * (naming `what`) and teardown carries on. */
void ls_free_device(void *p, const char *what);

#endif

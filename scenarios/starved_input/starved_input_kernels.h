/* starved_input: the model step every variant enqueues (starved_input_kernels.cu). */
#ifndef SI_KERNELS_H
#define SI_KERNELS_H

#include <stdint.h>
#include <cuda_runtime.h>

#include "starved_input_state.h"

/* One step on `stream`: x = embed(ids); h = gelu(x W1); y = h W2 (bf16, fp32 accumulation).
 * d_checksum (verify only): also add the checksum of the ids the step read. */
int enqueue_step(si_state *st, cudaStream_t stream, const int32_t *d_ids,
                 unsigned long long *d_checksum);

#endif

/* starved_input: the prefetching pipeline (starved_input_pipeline.cu): N tokenizer threads fill
 * pinned staging slots ahead of the step, a bounded queue hands them over in order. */
#ifndef SI_PIPELINE_H
#define SI_PIPELINE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>

#include "starved_input_source.h"

/* A bounded queue of batches in pinned staging buffers. Producers claim batch numbers in
 * order (one per free slot) and fill slots concurrently, so batches complete out of order;
 * the consumer always takes batch next_consume, so steps see the corpus in order. A slot's
 * buffer is rewritten only after the copy out of it has completed (its event). */
enum { SI_SLOT_FREE, SI_SLOT_FILLING, SI_SLOT_READY, SI_SLOT_HELD };

typedef struct si_slot {
    int32_t *ids;               /* rows * seq_len ids: pinned (page-locked) host memory */
    cudaEvent_t copied;         /* recorded on the copy stream after the copy out of ids */
    int copy_pending;           /* `copied` was recorded and no producer has waited on it */
    int state;
    int64_t batch;              /* which batch ids holds (READY, HELD) */
} si_slot;

typedef struct si_pipeline si_pipeline;

/* A pipeline of n_workers (>= 1) producers over src, staging buffers and events on `device`. */
int pipeline_create(const si_source *src, int device, int n_workers, si_pipeline **out,
                    char *err, size_t errlen);

/* The consumer's side: the slot holding the next batch, waiting until a producer has filled
 * it; and giving it back once its copy is enqueued (copy_recorded: its event marks the end). */
int pipeline_take(si_pipeline *p, si_slot **out, char *err, size_t errlen);
void pipeline_release(si_pipeline *p, si_slot *slot, int copy_recorded);

/* The producers' CPU time and the batches they produced. */
void pipeline_stats(si_pipeline *p, int64_t *cpu_ns, int64_t *batches);

/* Stop and join the workers, wait for the copies out of the staging buffers, free it all. */
void pipeline_destroy(si_pipeline *p);

#endif

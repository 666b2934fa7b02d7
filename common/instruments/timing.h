/* underfed: CUDA-event timing. A set of timing marks: n events made with the default flags
 * (timing on), each recorded on a stream where a measured span begins or ends, and the
 * milliseconds between two of them once both are complete. The one way the harness's passes,
 * the ceilings bench and a scenario that times a sub-step measure device time. Events used only
 * for ordering (cudaEventDisableTiming) are not marks. CUDA runtime only, plain C. */
#ifndef UF_TIMING_H
#define UF_TIMING_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uf_marks {
    cudaEvent_t *events;        /* n, created on the device current at uf_marks_create */
    int n;                      /* created so far; a zeroed uf_marks holds none */
} uf_marks;

/* Create n marks (cudaEventCreate, in index order) on the current device into m, which holds
 * none yet. On failure those made are destroyed and m holds none. UF_OK, or UF_ERR after
 * reporting why. */
int uf_marks_create(uf_marks *m, int n);

/* Record mark i on stream (cudaEventRecord). UF_OK, or UF_ERR after reporting why. */
int uf_marks_record(const uf_marks *m, int i, cudaStream_t stream);

/* Block the host until mark i is complete (cudaEventSynchronize). Where a wait must be watched
 * (the harness, a multi-GPU run), wait on uf_marks_event with uf_wait_event instead. */
int uf_marks_sync(const uf_marks *m, int i);

/* *ms = device milliseconds from mark `from` to mark `to`, both complete
 * (cudaEventElapsedTime). UF_OK, or UF_ERR after reporting why. */
int uf_marks_ms(const uf_marks *m, int from, int to, float *ms);

/* Mark i's event (for a watched wait); NULL when i is not a mark of m. */
cudaEvent_t uf_marks_event(const uf_marks *m, int i);

/* Destroy every mark (on the device that is current: the one they were made on) and leave m
 * empty; a zeroed or already freed uf_marks is fine. */
void uf_marks_free(uf_marks *m);

#ifdef __cplusplus
}
#endif
#endif

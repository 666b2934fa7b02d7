/* The doctor's recorder's counters (libunderfed_inject.so, recorder/inject_counters.c): CUPTI PM
 * sampling (SM active, occupancy, tensor active, DRAM) through the harness's own sampler
 * (instruments.h: uf_pm_open/start/stop), and NVML's utilization, SM clock and board power
 * (nvml.c), on the device of the process's first CUDA context, from its creation until it is
 * destroyed or the process exits. Whatever cannot start (another profiler holds the counters,
 * no privileges, no NVML...) leaves its series empty and says why in the counters note; the
 * rest of the recording goes on. */
#ifndef UF_INJECT_COUNTERS_H
#define UF_INJECT_COUNTERS_H

#include <cuda.h>
#include "doctor.h"

/* A context was created: start on its device if nothing runs yet (later contexts: ignored). */
void inj_counters_start(CUcontext ctx);
/* Stop sampling (the context is going away, or the process exits); once, later calls do
 * nothing. */
void inj_counters_stop(CUcontext ctx_or_null);
/* Say why there will be no counters at all (--light, no subscription). */
void inj_counters_off(const char *why);
/* The series and their run means into t (pointers into the recorder's arrays, valid until
 * exit), and the counters note. Call after inj_counters_stop. */
void inj_counters_take(uf_dtrace *t);

#endif

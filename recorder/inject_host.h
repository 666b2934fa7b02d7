/* The doctor's recorder's host sampler (libunderfed_inject.so, recorder/inject_host.c): a thread
 * that, every period, reads for each thread of the process that has made a CUDA call the CPU
 * time it has run so far and its scheduler state, stamped on CUPTI's timebase (trace format 4's
 * H records): whether the host thread that submits the device's next work was running (it
 * prepares the data itself) or sleeping (it waits for workers, I/O, the device) while the
 * device idled. */
#ifndef UF_INJECT_HOST_H
#define UF_INJECT_HOST_H

#include <stdint.h>

#include "doctor_trace.h"

/* Threads followed at most; more CUDA-calling threads are counted, not followed. */
#define INJ_HOST_MAX_THREADS 32
/* The default period (UNDERFED_DOCTOR_HOST_US overrides it; 0 switches the sampler off). */
#define INJ_HOST_DEFAULT_US 1000u

/* Start the sampler thread: every period_us, up to max_samples samples in all (more are
 * counted as left out). period_us 0: off (the trace says so). 1 when it runs, 0 when off or
 * it could not start (then off too). */
int inj_host_start(uint32_t period_us, uint64_t max_samples);
/* A thread that made a CUDA call (its OS id): followed from the next round on. Idempotent;
 * takes a lock, so a caller on a hot path calls it once per thread (a thread-local flag). */
void inj_host_register(uint32_t tid);
/* Stop and join the sampler (once; later calls, and calls in a forked child, do nothing). */
void inj_host_stop(void);
/* The CPU time the sampler thread used, in ns (its cost to the program; 0 before it stops). */
uint64_t inj_host_cpu_ns(void);
/* The samples into t (pointers into the sampler's array, valid until exit) and the sampler's
 * header figures into info. Call after inj_host_stop. */
void inj_host_take(uf_dtrace *t, uf_trace_info *info);

#endif

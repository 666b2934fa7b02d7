/* The host's clocks (clock_gettime), read one way everywhere: the harness's deadlines and pass
 * times, the multi-GPU runner's and the launcher's waits, the samplers' periods, the recorder's
 * timebase, the scenarios' host timings. Plain C. */
#ifndef UF_CLOCK_H
#define UF_CLOCK_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC, in ns and in seconds: elapsed times, deadlines. */
uint64_t uf_mono_ns(void);
double uf_mono_s(void);
/* CLOCK_REALTIME in ns: the wall-clock time NVML stamps its samples with. */
uint64_t uf_realtime_ns(void);
/* CLOCK_THREAD_CPUTIME_ID in ns: the CPU time the calling thread has used. */
uint64_t uf_thread_cpu_ns(void);

/* A timespec read from any clock (another thread's CPU clock, say) in ns. */
uint64_t uf_timespec_ns(const struct timespec *t);

/* *t moved ns later, tv_nsec kept within 0..999999999: the next deadline of a timed wait
 * (pthread_cond_timedwait) on the clock *t was read from. */
void uf_timespec_add_ns(struct timespec *t, uint64_t ns);

#ifdef __cplusplus
}
#endif
#endif

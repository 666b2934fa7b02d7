/* The instruments on the GPU side, which the harness's passes and the doctor's recorder run:
 * CUPTI Activity tracing and CUPTI PM sampling (libcupti opened with dlopen), NVML (opened with
 * dlopen). Each degrades to a recorded reason, never a crash: when a feature is unavailable the
 * call returns UF_SKIP (status.h) and writes why into `reason`. On the core alone: nothing
 * here knows the harness (common/instruments/, underfed_instruments). */
#ifndef UF_INSTRUMENTS_H
#define UF_INSTRUMENTS_H

#include <stddef.h>
#include <stdint.h>
#include "timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- libcupti (cupti_dl.c) ------------------------------------------------------------ */

/* Load libcupti and resolve every function the trace and counters passes call; once per
 * process, never unloaded. The harness calls it only when a CUPTI pass is about to run, after
 * every timing pass: before it, and in a run without those passes, the process has no CUPTI.
 * UF_OK, or UF_SKIP with the reason (library not found, a function missing). Every other CUPTI
 * entry point below answers UF_SKIP (or 0) with "not loaded" until this succeeded. */
int uf_cupti_load(char *reason, size_t reason_len);
/* The loaded CUPTI's API version (cuptiGetVersion); 0 when not loaded. */
uint32_t uf_cupti_version(void);

/* ---- CUPTI Activity (trace pass) ------------------------------------------------------ */

/* The current CUPTI timestamp (ns, the timebase of every record); 0 when not loaded. */
uint64_t uf_cupti_now_ns(void);

/* Enable CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER, SYNCHRONIZATION (buffers are
 * registered once per process). UF_OK, or UF_SKIP/UF_ERR with the reason. */
int uf_trace_begin(char *reason, size_t reason_len);
/* Flush all records, disable the kinds. Records stay readable until the next begin. */
int uf_trace_end(char *reason, size_t reason_len);
/* The records collected between begin and end (device activities, API calls, the host's
 * synchronizations); names stay valid until uf_trace_release. `dropped` gets the number of
 * records CUPTI dropped. */
void uf_trace_records(const uf_activity **acts, size_t *n_acts, const uf_api_call **apis,
                      size_t *n_apis, const uf_sync_record **syncs, size_t *n_syncs,
                      size_t *dropped);
/* Free all records and interned names (call at exit). */
void uf_trace_release(void);

/* Shared by the CUPTI modules (defined in cupti_status.c): turn a failed CUptiResult into a
 * status and a reason. A result that means "not available here" (no privileges, another
 * profiler attached, vGPU, MIG, confidential computing, no driver...) gives UF_SKIP and
 * "<what> unavailable: <enum name> (<meaning>)"; any other result is reported on stderr with
 * the expression, file and line, and gives UF_ERR. */
int uf_cupti_status(int cupti_result, const char *what, const char *expr, const char *file,
                    int line, char *reason, size_t reason_len);

/* ---- CUPTI PM sampling (counters pass) ------------------------------------------------- */

typedef struct uf_pm uf_pm;

/* Initialize the profiler for the device and build the one-pass config of the four metrics
 * (SM active, occupancy, tensor active, DRAM %). UF_OK, or UF_SKIP with the reason
 * (insufficient privileges, MIG, vGPU, another profiler attached, unsupported GPU...). */
int uf_pm_open(int device, uf_pm **out, char *reason, size_t reason_len);
/* Start sampling every interval_us µs (a decode thread drains the hardware buffer). */
int uf_pm_start(uf_pm *pm, uint32_t interval_us, char *reason, size_t reason_len);
/* Stop, decode what is left, and return the samples (the first, which spans the time before
 * start, is dropped). The array stays valid until the next start or close. UF_OK with a
 * reason: samples were lost (the hardware buffer overflowed), the series has holes. */
int uf_pm_stop(uf_pm *pm, const uf_pm_sample **samples, size_t *n, char *reason,
               size_t reason_len);
void uf_pm_close(uf_pm *pm);

/* ---- NVML (dlopen of libnvidia-ml.so.1) ------------------------------------------------ */

typedef struct uf_nvml uf_nvml;

/* Open NVML and find the CUDA device by PCI bus id (nvml_cuda.c: the runtime's bus id). UF_OK
 * or UF_SKIP with the reason. */
int uf_nvml_open(int cuda_device, uf_nvml **out, char *reason, size_t reason_len);
/* The same for a PCI bus id ("0000:19:00.0", as cudaDeviceGetPCIBusId or cuDeviceGetPCIBusId
 * write it): nvml.c itself needs no CUDA runtime (the doctor's recorder links none). */
int uf_nvml_open_bus_id(const char *bus_id, uf_nvml **out, char *reason, size_t reason_len);
void uf_nvml_close(uf_nvml *nv);
/* What the sampler saw between start and stop. Each quantity has its own count: a read that
 * failed (or a call the driver's NVML lacks) is skipped; a quantity never read is NaN. */
typedef struct uf_nvml_sampled {
    double sm_clock_mhz;        /* mean nvmlDeviceGetClockInfo(NVML_CLOCK_SM) */
    double sm_clock_min_mhz;    /* the lowest of those reads */
    int clock_samples;
    double power_w;             /* mean board power, mW / 1000: the instant field
                                 * (NVML_FI_DEV_POWER_INSTANT), else nvmlDeviceGetPowerUsage */
    int power_samples;
    int power_instant;          /* 1: power_w is from the instant field; 0: the power usage, on
                                 * Ampere and later a trailing 1 s average */
} uf_nvml_sampled;

/* Every period_ms on a thread until stop, read the SM clock and the board power; stop returns
 * their means (and the minimum clock) in *out. UF_ERR when not running (then *out is all NaN
 * and zero counts). */
int uf_nvml_sampler_start(uf_nvml *nv, unsigned period_ms);
int uf_nvml_sampler_stop(uf_nvml *nv, uf_nvml_sampled *out);
/* One read of the SM clock (MHz) and the board power (W), NaN where a read failed; returns 1
 * when the power is the instant field, 0 when it is the averaged power usage (or not read).
 * The sampler makes these reads; the doctor's recorder keeps them as a series. */
int uf_nvml_read_clock_power(uf_nvml *nv, double *sm_clock_mhz, double *power_w);
/* The utilization samples NVML buffered since since_us (realtime clock, µs), as
 * nvmlDeviceGetSamples lists them: *ts_us and *pct malloc'ed (caller frees), *n of them (0
 * and UF_OK when there is none). UF_SKIP/UF_ERR with the reason. */
int uf_nvml_util_samples(uf_nvml *nv, uint64_t since_us, uint64_t **ts_us, double **pct,
                         size_t *n, char *reason, size_t reason_len);
/* The utilization nvidia-smi shows, over a window on the realtime clock (µs): the samples
 * NVML buffered (nvmlDeviceGetSamples; one every 200 ms on the H200, each the busy share of the
 * interval before it) whose whole interval lies inside (uf_util_window). The rates read during
 * a pass lag it by 0.2-0.4 s, so their mean carries the time before it. UF_SKIP with the reason
 * where NVML lacks the call or the window holds no whole sample interval. */
int uf_nvml_util_over(uf_nvml *nv, uint64_t t0_us, uint64_t t1_us, double *pct, int *n_used,
                      char *reason, size_t reason_len);
/* GPM (Hopper and later): a thread watches the refreshing snapshots from t0_ns (the steps
 * begin) until end, which is called at t1_ns (the steps ended); the reading covers the
 * snapshots that describe moments inside the window, out->start_ns..end_ns on the now_ns clock, and
 * evaluates SM_UTIL, SM_OCCUPANCY, ANY_TENSOR_UTIL, DRAM_BW_UTIL. UF_SKIP with the reason where
 * GPM is unsupported or the window holds no whole refresh interval (it needs ~310 ms). */
int uf_gpm_watch_start(uf_nvml *nv, uint64_t t0_ns, uint64_t (*now_ns)(void), char *reason,
                       size_t reason_len);
int uf_gpm_watch_end(uf_nvml *nv, uint64_t t1_ns, uf_pm_sample *out, char *reason,
                     size_t reason_len);
/* Facts for the metadata: driver version, current SM and memory clocks (MHz), power limit (W).
 * Empty string / NaN where unavailable. */
void uf_nvml_facts(uf_nvml *nv, char *driver, size_t driver_len, double *sm_clock_mhz,
                   double *mem_clock_mhz, double *power_limit_w);

#ifdef __cplusplus
}
#endif
#endif

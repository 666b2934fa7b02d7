/* Timeline analysis over plain records: interval union, idle gaps and their host-wait
 * classification, launch latency by correlation id, communication/compute overlap, the SM
 * share held during communication, per-step grouping, and the PM-sample window mean. Plain C:
 * no CUDA here, unit-tested on hand-made timelines. The metric definitions are those of
 * docs/metrics.md; each function's comment restates its own. */
#ifndef UF_TIMELINE_H
#define UF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { UF_ACT_KERNEL = 0, UF_ACT_MEMCPY = 1, UF_ACT_MEMSET = 2 } uf_act_kind;

/* Where a copy's source or destination lives: the values of CUpti_ActivityMemoryKind. */
typedef enum {
    UF_MEM_UNKNOWN = 0, UF_MEM_PAGEABLE = 1, UF_MEM_PINNED = 2, UF_MEM_DEVICE = 3,
    UF_MEM_ARRAY = 4, UF_MEM_MANAGED = 5, UF_MEM_DEVICE_STATIC = 6, UF_MEM_MANAGED_STATIC = 7
} uf_mem_kind;

/* A memcpy's direction, derived from its memory kinds (uf_copy_direction). */
typedef enum {
    UF_COPY_OTHER = 0, UF_COPY_HTOD = 1, UF_COPY_DTOH = 2, UF_COPY_DTOD = 3
} uf_copy_kind;

/* What a host thread waited for: the values of CUpti_ActivitySynchronizationType (OTHER: a
 * type CUPTI added later, or unknown). EVENT, STREAM and CONTEXT block the host; STREAM_WAIT
 * (cudaStreamWaitEvent) makes a stream wait, not the host. */
typedef enum {
    UF_SYNC_OTHER = 0, UF_SYNC_EVENT = 1, UF_SYNC_STREAM_WAIT = 2, UF_SYNC_STREAM = 3,
    UF_SYNC_CONTEXT = 4
} uf_sync_kind;

/* One CUPTI SYNCHRONIZATION record: the host call's wait, CUPTI timestamps in ns. */
typedef struct uf_sync_record {
    uint64_t start_ns, end_ns;
    uint32_t correlation_id, stream_id;
    uint8_t kind;               /* uf_sync_kind */
} uf_sync_record;

/* One interval of device work (kernel, memcpy or memset), CUPTI timestamps in ns. */
typedef struct uf_activity {
    uint64_t start_ns, end_ns;
    uint32_t correlation_id;    /* equals the launching API record's correlationId */
    uint32_t device_id, stream_id;
    uint32_t graph_id;          /* != 0 for a kernel node of a replayed graph */
    uint8_t kind;               /* uf_act_kind */
    uint8_t is_comm;            /* a communication kernel (NCCL) */
    uint32_t blocks;            /* kernel: thread blocks in its grid (gridX·gridY·gridZ,
                                 * saturated at UINT32_MAX); 0 unknown, and 0 for memcpy/memset */
    uint8_t src_mem, dst_mem;   /* memcpy: uf_mem_kind of source and destination; 0 otherwise */
    const char *name;           /* kernel name (owned by the trace session), may be NULL */
    uint64_t bytes;             /* memcpy/memset: bytes moved; 0 unknown */
} uf_activity;

/* Is a kernel of this name communication (NCCL's ncclDevKernel_*, ncclSymkDevKernel_*)? What
 * uf_activity.is_comm records, for the trace pass and the doctor's recorder alike. */
int uf_is_comm_kernel(const char *name);
/* Thread blocks of a grid (uf_activity.blocks), saturated at UINT32_MAX; 0 (unknown) when a
 * dimension is not positive. */
uint32_t uf_grid_blocks(int32_t x, int32_t y, int32_t z);

/* A memcpy from or to pageable host memory (staged by the driver, synchronous for the host). */
static inline int uf_copy_pageable(const uf_activity *a)
{
    return a->kind == UF_ACT_MEMCPY &&
           (a->src_mem == UF_MEM_PAGEABLE || a->dst_mem == UF_MEM_PAGEABLE);
}

/* Host memory (pageable or pinned), and device memory (device, array, static device). */
static inline int uf_mem_is_host(uint8_t m) { return m == UF_MEM_PAGEABLE || m == UF_MEM_PINNED; }
static inline int uf_mem_is_device(uint8_t m)
{
    return m == UF_MEM_DEVICE || m == UF_MEM_ARRAY || m == UF_MEM_DEVICE_STATIC;
}

/* A memcpy's direction from its memory kinds; managed or unknown memory on either side is
 * UF_COPY_OTHER, as is any activity that is not a memcpy. */
static inline uf_copy_kind uf_copy_direction(const uf_activity *a)
{
    if (a->kind != UF_ACT_MEMCPY)
        return UF_COPY_OTHER;
    if (uf_mem_is_host(a->src_mem) && uf_mem_is_device(a->dst_mem))
        return UF_COPY_HTOD;
    if (uf_mem_is_device(a->src_mem) && uf_mem_is_host(a->dst_mem))
        return UF_COPY_DTOH;
    if (uf_mem_is_device(a->src_mem) && uf_mem_is_device(a->dst_mem))
        return UF_COPY_DTOD;
    return UF_COPY_OTHER;
}

/* One NVTX range on the host (push/pop or start/end), CUPTI timestamps in ns. */
typedef struct uf_range {
    uint64_t start_ns, end_ns;
    const char *name;           /* owned by whoever owns the records; may be NULL */
} uf_range;

/* An idle gap of the device between merged busy intervals (uf_timeline_idle_gaps). */
typedef struct uf_gap {
    uint64_t start_ns, end_ns;
    uint64_t next_launch_ns;    /* launch call start of the activity that ends the gap; 0 none */
    uint8_t host_wait;          /* that call had not returned when the gap began */
} uf_gap;

/* One host API call (runtime or driver), CUPTI timestamps in ns. */
typedef struct uf_api_call {
    uint64_t start_ns, end_ns;
    uint32_t correlation_id;
    uint8_t is_runtime;         /* 1 runtime API, 0 driver API */
    uint32_t thread_id;         /* the OS thread that made the call (gettid); 0 unknown (the
                                 * harness's own records, doctor traces before format 4) */
    const char *name;           /* e.g. "cudaLaunchKernel_v7000", may be NULL */
} uf_api_call;

typedef struct uf_interval {
    uint64_t start_ns, end_ns;
} uf_interval;

/* Length of the union of the intervals, in ns. Sorts iv in place; empty or inverted intervals
 * count zero. */
uint64_t uf_interval_union_ns(uf_interval *iv, size_t n);

/* Length of union(a) ∩ union(b), in ns. Sorts both arrays in place. */
uint64_t uf_interval_overlap_ns(uf_interval *a, size_t na, uf_interval *b, size_t nb);

/* The trace of one measured run: activities, API calls and synchronizations (any order), the
 * host timestamps that bracket the measured steps, and which device to analyse. */
typedef struct uf_timeline {
    const uf_activity *acts;
    size_t n_acts;
    const uf_api_call *apis;
    size_t n_apis;
    uint64_t measure_begin_ns;  /* host time taken just before the first measured step */
    uint64_t measure_end_ns;    /* host time taken after the last measured step completed */
    const uint64_t *step_begin_ns; /* host time before each measured step, n_steps entries, or NULL */
    int n_steps;                /* measured steps (>= 1) */
    int device_id;              /* analyse this device only; -1 for all devices */
    int sm_count;               /* SMs of the analysed device (multiProcessorCount); 0 unknown */
    const uf_sync_record *syncs;
    size_t n_syncs;
    uint64_t steps_enqueued_ns; /* host time right after the last measured step returned, before
                                 * the caller's own closing wait; 0 unknown (then the host-call
                                 * metrics below are NaN) */
} uf_timeline;

typedef struct uf_timeline_metrics {
    double window_ms;           /* first device activity of the first measured step → end of last */
    double busy_pct;            /* |union(kernel, memcpy, memset)| / window */
    double kernels_per_step;    /* kernel records in the window / n_steps */
    double kernel_us_mean;      /* mean kernel duration in the window */
    double launch_us;           /* median over correlation ids of (first kernel start − launch API start) */
    double idle_host_pct;       /* gaps whose next activity's launch API started after the gap began */
    double idle_other_pct;      /* the remaining idle share: 100 − busy − idle_host */
    double comm_ms_per_step;    /* |union(comm kernels)| / n_steps */
    double comm_overlap_pct;    /* |union(comm) ∩ union(compute kernels)| / |union(comm)|; NaN without comm */
    double comm_exposed_ms;     /* (|union(comm)| − overlap) / n_steps; NaN without comm */
    double comm_sm_pct;         /* over union(comm), the time-weighted mean of
                                 * min(sm_count, Σ blocks of the kernels running then) / sm_count:
                                 * the share of SMs holding a block while communication runs (an
                                 * upper bound of SM activity, from grid sizes, not sampled). NaN
                                 * without comm, with sm_count unknown, or when a kernel running
                                 * during comm has unknown blocks */
    double copy_ms_per_step;    /* |union(memcpy)| / n_steps */
    double copy_overlap_pct;    /* |union(memcpy) ∩ union(kernels)| / |union(memcpy)|; NaN
                                 * without copies: how much copying hid under compute */
    /* Host calls in the step window [step_begin_ns[0] (measure_begin_ns without steps),
     * steps_enqueued_ns), per step; NaN when steps_enqueued_ns is 0: */
    double syncs_per_step;      /* SYNCHRONIZATION records of kind EVENT, STREAM or CONTEXT (the
                                 * host-blocking ones) starting in the step window */
    double stream_syncs_per_step, context_syncs_per_step, event_syncs_per_step; /* by kind */
    double pageable_copies_per_step; /* counted memcpys with a pageable source or destination */
    double drains_per_step;     /* runtime API calls C starting in the step window, other than
                                 * launches and error queries, with C.start < t_last(C) <= C.end,
                                 * t_last(C) = the latest end of the device's activities whose
                                 * launching call started before C.start: C was in flight when
                                 * the device ran out of the work queued before it, and returned
                                 * only after */
    double sync_gap_us;         /* mean over the drains followed by device work of (first
                                 * activity start >= C.end) - (last activity end <= C.end): the
                                 * device idle gap around each drain's return, the exposed host
                                 * time after it; NaN without one */
    size_t n_activities;        /* activities counted as measured */
} uf_timeline_metrics;

/* Which activities count: those of device_id (all with -1) whose launching API call (same
 * correlation id, runtime or driver) started at or after measure_begin_ns (and not after
 * measure_end_ns when that is set after it); an activity with no matching API call counts by
 * its own start. The window is [earliest start, latest end] of the counted activities; each
 * metric is as its field's comment defines it over the counted activities. comm_sm_pct sums
 * blocks per device: with device_id -1 each device is swept on its own, and the comm time of
 * every device weighs in. The host-call metrics (syncs, pageable copies, drains, sync_gap_us)
 * count host calls in the step window, which ends at steps_enqueued_ns so that the caller's
 * closing wait is never a step's sync; t_last and the gap look at every activity of the
 * device, measured or not. Returns 0, or -1 when no activity counts (the metrics are then
 * NaN). */
int uf_timeline_analyze(const uf_timeline *tl, uf_timeline_metrics *out);

/* Does an API call's name start with one of the prefixes (a NULL-ended list)? 0 for NULL. */
int uf_api_name_has_prefix(const char *name, const char *const *prefixes);

/* Does this runtime API call never wait for the device (a launch, an error query, an event
 * record, a stream's wait on an event)? Such calls are not drains even when the device happens
 * to run dry while one is in flight (in a launch-bound loop it often does). */
int uf_api_never_waits(const char *name);

/* Is this call a query (cudaEventQuery, cudaStreamQuery, cuEventQuery, cuStreamQuery)? It
 * returns at once, done or not; yet CUPTI gives each cudaEventQuery a SYNCHRONIZATION record
 * of the event kind (the H200, 2026-12-03: host_sync's deferred traced 1.97 event syncs a step
 * for 0.96 cudaEventSynchronize and 0.99 cudaEventQuery calls a step, its pageable_copy 0.99 for
 * its one query a step and no cudaEventSynchronize). Such a record is no sync. */
int uf_api_is_query(const char *name);

/* One drain (uf_timeline_metrics.drains_per_step): a runtime call of the step window that was
 * in flight when the device ran out of the work queued before it. */
typedef struct uf_drain {
    uint64_t start_ns, end_ns;  /* the call */
    uint64_t gap_ns;            /* the device idle gap around its return (sync_gap_us's term) */
    uint8_t has_gap;            /* device work followed it, so gap_ns was measured */
    size_t api;                 /* the call's index in tl->apis */
} uf_drain;

/* The drains uf_timeline_analyze counts in drains_per_step and sync_gap_us (same window, same
 * rule), in the order of tl->apis, into *drains (malloc'ed, caller frees; NULL when none or
 * when steps_enqueued_ns is 0). Returns 0, or -1 when out of memory. */
int uf_timeline_drains(const uf_timeline *tl, uf_drain **drains, size_t *n_drains);

/* The same rule over the calls `weighs` picks (uf_timeline_drains: runtime calls that may
 * wait, those drains_per_step counts; the doctor adds the driver's syncs, which programs that
 * call the driver API, such as JAX, make). */
int uf_timeline_drains_where(const uf_timeline *tl, int (*weighs)(const uf_api_call *),
                             uf_drain **drains, size_t *n_drains);

/* uf_timeline_analyze, also handing over the drains it counted (as uf_timeline_drains lists
 * them) into *drains (malloc'ed, caller frees; NULL when none): one pass where a caller needs
 * both. On -1 *drains is NULL. */
int uf_timeline_analyze_drains(const uf_timeline *tl, uf_timeline_metrics *out,
                               uf_drain **drains, size_t *n_drains);

/* The idle gaps of the activities uf_timeline_analyze counts (same selection, same host-wait
 * rule: see timeline.c), in time order, into *gaps (malloc'ed, caller frees; NULL when none).
 * Returns 0, or -1 when out of memory. */
int uf_timeline_idle_gaps(const uf_timeline *tl, uf_gap **gaps, size_t *n_gaps);

/* For each activity of tl->acts (in its order), the start and end of its launching call
 * (runtime record preferred, as everywhere here) into launch_start_ns[i] / launch_end_ns[i];
 * an activity with no matching call gets its own start and end 0; launch_end_ns may be NULL.
 * Returns 0, or -1 when out of memory. */
int uf_timeline_launch_calls(const uf_timeline *tl, uint64_t *launch_start_ns,
                             uint64_t *launch_end_ns);

/* The launching call of each activity of tl->acts (the match uf_timeline_launch_calls makes:
 * same correlation id, runtime record preferred) as its index in tl->apis into act_api[i],
 * SIZE_MAX where no call matches; with sync_api, the same for each of tl->syncs (the call that
 * waited). Returns 0, or -1 when out of memory. */
int uf_timeline_launch_apis(const uf_timeline *tl, size_t *act_api, size_t *sync_api);

/* Index of the step whose begin time is the last one <= t_ns (step_begin_ns ascending), or -1
 * when t_ns is before the first step. */
int uf_timeline_step_index(const uint64_t *step_begin_ns, int n_steps, uint64_t t_ns);

/* Mean of each PM metric over [t0_ns, t1_ns], each sample weighted by its overlap with the
 * window. Returns the number of samples that overlapped (0: outputs NaN). */
size_t uf_pm_window_mean(const uf_pm_sample *s, size_t n, uint64_t t0_ns, uint64_t t1_ns,
                         uf_pm_sample *mean);

/* NVML GPM checked against PM sampling over one window: the largest |gpm - pm| in points over
 * the four metrics (SM active, occupancy, tensor active, DRAM) where both have a value, with
 * its index in *worst; NaN (and *worst -1) when no metric has both. Beyond UF_GPM_AGREE_PTS
 * the GPM values are doubtful (Nsight Compute sides with PM sampling: #15). */
#define UF_GPM_AGREE_PTS 5.0
double uf_gpm_disagreement(const uf_pm_sample *pm, const uf_pm_sample *gpm, int *worst);
/* The four counters of a sample in that order, and their names. */
void uf_pm_counters(const uf_pm_sample *s, double v[4]);
extern const char *const uf_counter_names[4];

/* NVML's utilization over a window: samples as nvmlDeviceGetSamples(GPU_UTILIZATION) lists
 * them (ts_us ascending, each value the busy share of the interval since the sample before it;
 * 200 ms apart on the H200), the window t0_us..t1_us on the same clock. The mean over the
 * samples whose whole interval lies inside the window, weighted by interval length; NaN when
 * none does (the window is shorter than about two sample periods). *n_used: how many. */
double uf_util_window(const uint64_t *ts_us, const double *value, size_t n, uint64_t t0_us,
                      uint64_t t1_us, int *n_used);

#ifdef __cplusplus
}
#endif
#endif

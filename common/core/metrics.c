/* The metric table (see metrics.h). The ranges follow the definitions in docs/metrics.md's
 * table and the bounds of bounds.h (one place for every reader), not the values
 * measured so far:
 *   - step times and their ratio are > 0 (a step takes time), other times >= 0; at most a day;
 *   - a share of a window or of a union of intervals, and NVML's utilization, is a percent in
 *     [0, 100];
 *   - a PM-sampled counter (pct_of_peak_sustained_elapsed, CUPTI or NVML GPM) is in [0, 1000]:
 *     each sample divides the counter's increments by the cycles of a sampling interval that
 *     is not aligned with them, so a sample may read above 100 (the committed H200 series
 *     have 1 ms samples at 101-181 % SM active), and a mean over a short window may too;
 *   - spread_pct (interquartile range / median) is in [0, 10000], the shares of a measured
 *     ceiling (pct_of_gemm, pct_of_copy: a kernel may beat the bench) in [0, 1000];
 *   - counts, bytes and flops are in [0, 2^53 - 1] (steps_timed >= 1, whole); rates, clocks
 *     and power within bounds.h's; errors >= 0;
 *   - verified is 0 or 1.
 * Empty (NaN) is the only way to say "not measured"; infinities are never valid. */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "results.h"

/* range shapes: min, max, min_open */
#define STEP_MS 0.0, UF_BOUND_MS, 1
#define MS 0.0, UF_BOUND_MS, 0
#define US 0.0, UF_BOUND_US, 0
#define PERCENT 0.0, UF_BOUND_PCT, 0
#define COUNTER_PCT 0.0, UF_BOUND_COUNTER_PCT, 0
#define SHARE_PCT 0.0, UF_BOUND_SHARE_PCT, 0
#define SPREAD_PCT 0.0, UF_BOUND_SPREAD_PCT, 0
#define RATIO 0.0, UF_BOUND_RATIO, 1
#define COUNT 0.0, UF_BOUND_COUNT, 0
#define STEPS 1.0, UF_BOUND_COUNT, 0
#define TFLOPS 0.0, UF_BOUND_TFLOPS, 0
#define GBS 0.0, UF_BOUND_GBS, 0
#define MHZ 0.0, UF_BOUND_MHZ, 0
#define WATTS 0.0, UF_BOUND_WATTS, 0
#define ERROR 0.0, INFINITY, 0
#define ZERO_OR_ONE 0.0, 1.0, 0

/* M: a figure of the whole run; D: measured on each GPU of a run (kept per rank). */
#define M(field, label, unit, dir, range, integral, since, hint) \
    {#field, label, unit, dir, range, integral, hint, offsetof(uf_row, field), since, 0}
#define D(field, label, unit, dir, range, integral, since, hint) \
    {#field, label, unit, dir, range, integral, hint, offsetof(uf_row, field), since, 1}

const uf_metric_desc uf_metrics[] = {
    /* timing pass */
    M(step_ms, "step", "ms", UF_DIR_LOWER, STEP_MS, 0, 1,
      "median time per step, CUDA events, before CUPTI is loaded"),
    M(step_ms_min, "fastest step", "ms", UF_DIR_LOWER, STEP_MS, 0, 1,
      "shortest step of the timing pass"),
    M(step_ms_max, "slowest step", "ms", UF_DIR_LOWER, STEP_MS, 0, 1,
      "longest step of the timing pass"),
    M(step_ms_mean, "mean step", "ms", UF_DIR_LOWER, STEP_MS, 0, 3,
      "mean time per step of the timing pass (the step of derived figures when step_stat is mean)"),
    M(spread_pct, "spread", "%", UF_DIR_LOWER, SPREAD_PCT, 0, 1,
      "interquartile range / median of the step times (may exceed 100)"),
    M(steps_timed, "steps timed", "count", UF_DIR_NONE, STEPS, 1, 1,
      "steps in the timing pass"),
    /* trace pass */
    M(trace_step_ms, "traced step", "ms", UF_DIR_LOWER, STEP_MS, 0, 1,
      "step time under CUPTI Activity"),
    M(trace_overhead, "trace overhead", "ratio", UF_DIR_NONE, RATIO, 0, 1,
      "trace_step_ms / step_ms: a ratio, not a percent (below 1 when the traced run was faster)"),
    D(busy_pct, "busy", "%", UF_DIR_HIGHER, PERCENT, 0, 1,
      "union of kernel, memcpy and memset time / window"),
    D(kernels_per_step, "kernels per step", "count", UF_DIR_NONE, COUNT, 0, 1,
      "kernel records in the window / steps"),
    D(kernel_us_mean, "mean kernel", "us", UF_DIR_NONE, US, 0, 1,
      "mean kernel duration in the window"),
    D(launch_us, "launch latency", "us", UF_DIR_LOWER, US, 0, 1,
      "median of kernel start - launch API start (same correlation id)"),
    D(idle_host_pct, "host-wait idle", "%", UF_DIR_LOWER, PERCENT, 0, 1,
      "share of the window idle while the next launch call had not returned"),
    D(idle_other_pct, "other idle", "%", UF_DIR_LOWER, PERCENT, 0, 1,
      "100 - busy - host-wait idle"),
    D(comm_overlap_pct, "comm overlap", "%", UF_DIR_HIGHER, PERCENT, 0, 1,
      "share of NCCL kernel time overlapped by compute kernels"),
    D(comm_exposed_ms, "exposed comm", "ms", UF_DIR_LOWER, MS, 0, 1,
      "NCCL time per step not overlapped by compute"),
    D(comm_sm_pct, "comm SMs", "%", UF_DIR_NONE, PERCENT, 0, 2,
      "share of SMs holding a block while communication runs (upper bound, from grid sizes)"),
    D(copy_overlap_pct, "copy overlap", "%", UF_DIR_HIGHER, PERCENT, 0, 2,
      "share of memcpy time hidden under kernels"),
    D(syncs_per_step, "syncs per step", "count", UF_DIR_LOWER, COUNT, 0, 5,
      "CUPTI SYNCHRONIZATION records per step starting during the steps (the harness's closing "
      "wait excluded) of kind stream, context or event synchronize: the host blocked"),
    D(stream_syncs_per_step, "stream syncs per step", "count", UF_DIR_LOWER, COUNT, 0, 5,
      "syncs_per_step of kind stream synchronize (cudaStreamSynchronize)"),
    D(context_syncs_per_step, "context syncs per step", "count", UF_DIR_LOWER, COUNT, 0, 5,
      "syncs_per_step of kind context synchronize (cudaDeviceSynchronize)"),
    D(event_syncs_per_step, "event syncs per step", "count", UF_DIR_LOWER, COUNT, 0, 5,
      "syncs_per_step of kind event synchronize (cudaEventSynchronize)"),
    D(pageable_copies_per_step, "pageable copies per step", "count", UF_DIR_LOWER, COUNT, 0, 5,
      "memcpys per step whose host source or destination is pageable memory"),
    D(drains_per_step, "drains per step", "count", UF_DIR_LOWER, COUNT, 0, 5,
      "runtime calls per step (launches and error queries aside) in flight when the device ran "
      "out of the work queued before them, returning after"),
    D(sync_gap_us, "gap after sync", "us", UF_DIR_LOWER, US, 0, 5,
      "mean device idle gap around the return of each drain followed by device work: the host "
      "time it exposes"),
    /* counters pass (CUPTI PM sampling) and the NVML GPM cross-check: pct of peak */
    D(sm_active_pct, "SM active", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "sm__cycles_active pct of peak sustained elapsed (DCGM SM_ACTIVE)"),
    D(occupancy_pct, "occupancy", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "sm__warps_active pct of peak sustained elapsed (DCGM SM_OCCUPANCY)"),
    D(tensor_active_pct, "tensor", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "sm__pipe_tensor_cycles_active pct of peak sustained elapsed (DCGM PIPE_TENSOR_ACTIVE)"),
    D(dram_pct, "DRAM", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "dram__throughput pct of peak sustained elapsed (DCGM DRAM_ACTIVE)"),
    D(gpm_sm_active_pct, "GPM SM active", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "NVML GPM view of sm_active_pct over the same window"),
    D(gpm_occupancy_pct, "GPM occupancy", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "NVML GPM view of occupancy_pct over the same window"),
    D(gpm_tensor_active_pct, "GPM tensor", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "NVML GPM view of tensor_active_pct over the same window"),
    D(gpm_dram_pct, "GPM DRAM", "%", UF_DIR_NONE, COUNTER_PCT, 0, 1,
      "NVML GPM view of dram_pct over the same window"),
    D(gpm_agree_pts, "GPM vs PM", "pts", UF_DIR_NONE, PERCENT, 0, 4,
      "largest |GPM - PM sampling| of the four counters over the window the GPM snapshots "
      "describe; above 5 the GPM values are left empty"),
    /* NVML view of the timing pass: explains a change, is not judged */
    D(nvml_util_pct, "NVML util", "%", UF_DIR_NONE, PERCENT, 0, 1,
      "NVML's utilization samples (200 ms each on the H200) whose whole period lies inside the "
      "timing pass, weighted mean"),
    D(sm_clock_mhz, "SM clock", "MHz", UF_DIR_NONE, MHZ, 0, 2,
      "mean SM clock sampled during the timing pass"),
    D(sm_clock_min_mhz, "lowest SM clock", "MHz", UF_DIR_NONE, MHZ, 0, 2,
      "lowest SM clock sampled during the timing pass"),
    D(power_w, "board power", "W", UF_DIR_NONE, WATTS, 0, 2,
      "mean board power sampled during the timing pass (power_source says which reading)"),
    /* counted by the scenario, derived by the harness */
    M(useful_flops, "useful flops", "flop", UF_DIR_NONE, COUNT, 0, 1,
      "flops per step the work needs (no padding, no recompute)"),
    M(executed_flops, "executed flops", "flop", UF_DIR_NONE, COUNT, 0, 1,
      "flops per step the kernels executed"),
    M(tflops_useful, "useful TFLOP/s", "TFLOP/s", UF_DIR_HIGHER, TFLOPS, 0, 1,
      "useful_flops / step time"),
    M(pct_of_gemm, "% of GEMM", "%", UF_DIR_HIGHER, SHARE_PCT, 0, 1,
      "tflops_useful against the measured bf16 GEMM ceiling (may exceed 100)"),
    M(min_bytes, "minimum bytes", "bytes", UF_DIR_NONE, COUNT, 0, 1,
      "bytes the step must move at least"),
    M(gbs, "GB/s", "GB/s", UF_DIR_HIGHER, GBS, 0, 1,
      "min_bytes / step time"),
    M(pct_of_copy, "% of copy", "%", UF_DIR_HIGHER, SHARE_PCT, 0, 1,
      "gbs against the measured device-to-device copy ceiling (may exceed 100)"),
    M(peak_mem_bytes, "peak memory", "bytes", UF_DIR_LOWER, COUNT, 0, 1,
      "device memory the variant held at its peak"),
    M(verified, "verified", "1", UF_DIR_HIGHER, ZERO_OR_ONE, 1, 1,
      "1 when the output matched the reference, 0 when not"),
    M(max_rel_err, "max relative error", "1", UF_DIR_LOWER, ERROR, 0, 1,
      "max |out - ref| / max |ref| of a checked tensor, the largest (common/core/verify.h)"),
};
#undef M
#undef D
const int uf_n_metrics = (int)(sizeof uf_metrics / sizeof uf_metrics[0]);

int uf_metric_index(const char *name)
{
    for (int i = 0; name != NULL && i < uf_n_metrics; i++)
        if (strcmp(uf_metrics[i].name, name) == 0)
            return i;
    return -1;
}

const uf_metric_desc *uf_metric_find(const char *name)
{
    int i = uf_metric_index(name);
    return i >= 0 ? &uf_metrics[i] : NULL;
}

int uf_metric_valid(const uf_metric_desc *m, double v)
{
    if (isnan(v))
        return 1;
    if (!isfinite(v) || v < m->min || v > m->max || (m->min_open && v == m->min))
        return 0;
    return !m->integral || v == floor(v);
}

const char *uf_metric_unit_shown(const uf_metric_desc *m)
{
    static const char *const no_dimension[] = {"1", "count", "ratio"};
    for (size_t i = 0; i < sizeof no_dimension / sizeof no_dimension[0]; i++)
        if (strcmp(m->unit, no_dimension[i]) == 0)
            return "";
    return strstr(m->label, m->unit) != NULL ? "" : m->unit;
}

void uf_metric_heading(const uf_metric_desc *m, char *out, size_t outlen)
{
    const char *unit = uf_metric_unit_shown(m);
    snprintf(out, outlen, "%s%s%s", m->label, unit[0] ? " " : "", unit);
}

void uf_metric_range_text(const uf_metric_desc *m, char *out, size_t outlen)
{
    if (m->integral && m->min == 0.0 && m->max == 1.0)
        snprintf(out, outlen, "0 or 1");
    else if (isinf(m->max))
        snprintf(out, outlen, "%s %.10g%s", m->min_open ? ">" : ">=", m->min,
                 m->integral ? ", a whole number" : "");
    else
        snprintf(out, outlen, "%s%.10g, %.16g]%s", m->min_open ? "(" : "[", m->min, m->max,
                 m->integral ? ", a whole number" : "");
}

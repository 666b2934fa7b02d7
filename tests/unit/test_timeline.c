/* Unit tests of timeline.c on hand-made timelines (ns timestamps). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "timeline.h"

#define EPS 1e-9

static uf_activity kernel(uint64_t start, uint64_t end, uint32_t corr)
{
    uf_activity a = {.start_ns = start, .end_ns = end, .correlation_id = corr,
                     .kind = UF_ACT_KERNEL};
    return a;
}

static uf_activity copy_act(uint64_t start, uint64_t end, uint32_t corr)
{
    uf_activity a = kernel(start, end, corr);
    a.kind = UF_ACT_MEMCPY;
    return a;
}

static uf_api_call api(uint64_t start, uint32_t corr)
{
    uf_api_call c = {.start_ns = start, .end_ns = start + 50, .correlation_id = corr,
                     .is_runtime = 1, .name = "cudaLaunchKernel_v7000"};
    return c;
}

static uf_timeline make_tl(const uf_activity *acts, size_t n_acts, const uf_api_call *apis,
                           size_t n_apis, uint64_t begin_ns, int n_steps)
{
    uf_timeline tl = {.acts = acts, .n_acts = n_acts, .apis = apis, .n_apis = n_apis,
                      .measure_begin_ns = begin_ns, .measure_end_ns = 0,
                      .step_begin_ns = NULL, .n_steps = n_steps, .device_id = -1};
    return tl;
}

/* ---- intervals ------------------------------------------------------------------------- */

Test(interval, union_overlapping)
{
    uf_interval iv[] = {{5, 15}, {0, 10}};
    cr_assert_eq(uf_interval_union_ns(iv, 2), 15);
    cr_assert_eq(iv[0].start_ns, 0, "sorted in place");
}

Test(interval, union_nested)
{
    uf_interval iv[] = {{10, 20}, {0, 100}, {30, 40}};
    cr_assert_eq(uf_interval_union_ns(iv, 3), 100);
}

Test(interval, union_disjoint_and_touching)
{
    uf_interval iv[] = {{20, 30}, {0, 10}, {10, 12}};
    cr_assert_eq(uf_interval_union_ns(iv, 3), 22);
}

Test(interval, union_empty_and_inverted)
{
    uf_interval iv[] = {{5, 5}, {10, 3}};
    cr_assert_eq(uf_interval_union_ns(iv, 2), 0);
    cr_assert_eq(uf_interval_union_ns(NULL, 0), 0);
    uf_interval mixed[] = {{10, 3}, {0, 4}, {2, 2}};
    cr_assert_eq(uf_interval_union_ns(mixed, 3), 4);
}

Test(interval, overlap)
{
    uf_interval a[] = {{20, 30}, {0, 10}};
    uf_interval b[] = {{5, 25}};
    cr_assert_eq(uf_interval_overlap_ns(a, 2, b, 1), 10);

    /* overlapping members of one side are merged first: no double counting */
    uf_interval a2[] = {{0, 10}, {5, 15}};
    uf_interval b2[] = {{12, 20}, {0, 20}};
    cr_assert_eq(uf_interval_overlap_ns(a2, 2, b2, 2), 15);

    uf_interval a3[] = {{0, 10}};
    cr_assert_eq(uf_interval_overlap_ns(a3, 1, NULL, 0), 0);
    uf_interval b3[] = {{10, 20}};
    cr_assert_eq(uf_interval_overlap_ns(a3, 1, b3, 1), 0, "touching is not overlapping");
}

/* ---- busy and idle --------------------------------------------------------------------- */

Test(timeline, busy_pct_of_known_timeline)
{
    /* kernels 1000-2000 and 3000-4000, a copy 3500-5000: window 4000 ns, busy 3000 ns */
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(3000, 4000, 2),
                          copy_act(3500, 5000, 3)};
    uf_api_call apis[] = {api(100, 1), api(200, 2), api(300, 3)};
    uf_timeline tl = make_tl(acts, 3, apis, 3, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.window_ms, 4000e-6, EPS);
    cr_assert_float_eq(m.busy_pct, 75.0, EPS);
    cr_assert_eq(m.n_activities, 3);
    cr_assert_float_eq(m.kernels_per_step, 2.0, EPS);
    cr_assert_float_eq(m.kernel_us_mean, 1.0, EPS);
    /* every launch was queued long before the gap: not host wait */
    cr_assert_float_eq(m.idle_host_pct, 0.0, EPS);
    cr_assert_float_eq(m.idle_other_pct, 25.0, EPS);
    cr_assert(isnan(m.comm_overlap_pct) && isnan(m.comm_exposed_ms));
    cr_assert_float_eq(m.comm_ms_per_step, 0.0, EPS);
    /* the copy 3500-5000 runs under kernel 3000-4000 for 500 of its 1500 ns */
    cr_assert_float_eq(m.copy_ms_per_step, 1500e-6, EPS);
    cr_assert_float_eq(m.copy_overlap_pct, 100.0 / 3.0, EPS);
}

/* Copies hidden under a long kernel overlap fully; a timeline without copies has no share. */
Test(timeline, copy_compute_overlap)
{
    uf_activity acts[] = {kernel(1000, 9000, 1), copy_act(2000, 3000, 2), copy_act(2500, 4000, 3)};
    uf_api_call apis[] = {api(100, 1), api(200, 2), api(300, 3)};
    uf_timeline tl = make_tl(acts, 3, apis, 3, 0, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.copy_ms_per_step, 2000e-6 / 2, EPS);
    cr_assert_float_eq(m.copy_overlap_pct, 100.0, EPS);

    uf_activity only_kernels[] = {kernel(1000, 2000, 1)};
    uf_timeline tk = make_tl(only_kernels, 1, apis, 1, 0, 1);
    cr_assert_eq(uf_timeline_analyze(&tk, &m), 0);
    cr_assert(isnan(m.copy_overlap_pct));
    cr_assert_float_eq(m.copy_ms_per_step, 0.0, EPS);
}

/* The host asks for kernel B after kernel A has finished: the gap is host wait. */
Test(timeline, launch_bound_gap_is_host_wait)
{
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(5000, 6000, 2)};
    uf_api_call apis[] = {api(500, 1), api(3000, 2)};
    uf_timeline tl = make_tl(acts, 2, apis, 2, 0, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.busy_pct, 40.0, EPS);
    cr_assert_float_eq(m.idle_host_pct, 60.0, EPS);
    cr_assert_float_eq(m.idle_other_pct, 0.0, EPS);
}

/* The launch call of B started while A still ran but returned only after A had finished (a
 * launch storm: the call outlasts the tiny kernel): the device waited for the host. */
Test(timeline, launch_call_in_flight_is_host_wait)
{
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(5000, 6000, 2)};
    uf_api_call apis[] = {api(500, 1), api(1500, 2)};
    apis[1].end_ns = 4000;
    uf_timeline tl = make_tl(acts, 2, apis, 2, 0, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.idle_host_pct, 60.0, EPS);
    cr_assert_float_eq(m.idle_other_pct, 0.0, EPS);
}

/* Kernel B's launch call returned while A still ran (queued ahead): the gap is something else. */
Test(timeline, queued_ahead_gap_is_other)
{
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(5000, 6000, 2)};
    uf_api_call apis[] = {api(500, 1), api(600, 2)};
    uf_timeline tl = make_tl(acts, 2, apis, 2, 0, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.busy_pct, 40.0, EPS);
    cr_assert_float_eq(m.idle_host_pct, 0.0, EPS);
    cr_assert_float_eq(m.idle_other_pct, 60.0, EPS);
}

/* A gap whose next activity has no API record counts as other idle time. */
Test(timeline, gap_without_api_is_other)
{
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(5000, 6000, 99)};
    uf_api_call apis[] = {api(500, 1)};
    uf_timeline tl = make_tl(acts, 2, apis, 1, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.idle_host_pct, 0.0, EPS);
    cr_assert_float_eq(m.idle_other_pct, 60.0, EPS);
}

/* Graph nodes share the correlation id of their one cudaGraphLaunch: the gaps between nodes
 * are not host wait (the launch came before); the gap before a graph launched late is. */
Test(timeline, graph_kernels_share_correlation_id)
{
    uf_activity acts[] = {kernel(1000, 2000, 7), kernel(3000, 4000, 7), kernel(5000, 6000, 7),
                          kernel(8000, 9000, 8)};
    for (int i = 0; i < 4; i++)
        acts[i].graph_id = 3;
    uf_api_call apis[] = {api(100, 7), api(7000, 8)};
    apis[0].name = apis[1].name = "cudaGraphLaunch_v10000";
    uf_timeline tl = make_tl(acts, 4, apis, 2, 0, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.busy_pct, 50.0, EPS);
    cr_assert_float_eq(m.idle_host_pct, 25.0, EPS);     /* 6000-8000 of 8000 ns */
    cr_assert_float_eq(m.idle_other_pct, 25.0, EPS);    /* the two gaps inside graph 7 */
    cr_assert_float_eq(m.kernels_per_step, 2.0, EPS);
    /* launch latency per correlation id, from its earliest kernel: 0.9 µs and 1.0 µs */
    cr_assert_float_eq(m.launch_us, 0.95, EPS);
}

Test(timeline, launch_latency_median_prefers_runtime_record)
{
    /* latencies 2 µs, 5 µs, 100 µs: median 5 */
    uf_activity acts[] = {kernel(12000, 13000, 1), kernel(25000, 26000, 2),
                          kernel(130000, 131000, 3)};
    uf_api_call apis[] = {api(10000, 1), api(20000, 2), api(30000, 3),
                          /* a driver record of id 2 that started later: not used */
                          {.start_ns = 24000, .end_ns = 24100, .correlation_id = 2,
                           .is_runtime = 0, .name = "cuLaunchKernel"}};
    uf_timeline tl = make_tl(acts, 3, apis, 4, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.launch_us, 5.0, EPS);
}

Test(timeline, launch_latency_driver_record_alone)
{
    uf_activity acts[] = {kernel(12000, 13000, 1)};
    uf_api_call apis[] = {{.start_ns = 9000, .end_ns = 9100, .correlation_id = 1,
                           .is_runtime = 0, .name = "cuLaunchKernel"}};
    uf_timeline tl = make_tl(acts, 1, apis, 1, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.launch_us, 3.0, EPS);
}

Test(timeline, launch_latency_nan_without_api)
{
    uf_activity acts[] = {kernel(12000, 13000, 1)};
    uf_timeline tl = make_tl(acts, 1, NULL, 0, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert(isnan(m.launch_us));
    cr_assert_float_eq(m.busy_pct, 100.0, EPS);
}

/* ---- communication ---------------------------------------------------------------------- */

Test(timeline, comm_compute_overlap_and_exposed)
{
    /* compute 0-10000, comm 5000-15000, a copy 10000-15000 (neither comm nor compute) */
    uf_activity acts[] = {kernel(0, 10000, 1), kernel(5000, 15000, 2), copy_act(10000, 15000, 3)};
    acts[1].is_comm = 1;
    acts[1].stream_id = 2;
    uf_api_call apis[] = {api(0, 1), api(0, 2), api(0, 3)};
    uf_timeline tl = make_tl(acts, 3, apis, 3, 0, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_ms_per_step, 10000e-6 / 2, EPS);
    cr_assert_float_eq(m.comm_overlap_pct, 50.0, EPS);
    cr_assert_float_eq(m.comm_exposed_ms, 5000e-6 / 2, EPS);
    cr_assert_float_eq(m.busy_pct, 100.0, EPS);
}

Test(timeline, comm_fully_hidden)
{
    uf_activity acts[] = {kernel(0, 10000, 1), kernel(2000, 4000, 2), kernel(6000, 8000, 3)};
    acts[1].is_comm = acts[2].is_comm = 1;
    uf_timeline tl = make_tl(acts, 3, NULL, 0, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_overlap_pct, 100.0, EPS);
    cr_assert_float_eq(m.comm_exposed_ms, 0.0, EPS);
}

/* ---- SM share during communication ------------------------------------------------------ */

static uf_activity comm_kernel(uint64_t start, uint64_t end, uint32_t corr, uint32_t blocks)
{
    uf_activity a = kernel(start, end, corr);
    a.is_comm = 1;
    a.blocks = blocks;
    return a;
}

static uf_activity sized_kernel(uint64_t start, uint64_t end, uint32_t corr, uint32_t blocks)
{
    uf_activity a = kernel(start, end, corr);
    a.blocks = blocks;
    return a;
}

/* NCCL alone (32 CTAs on 132 SMs) after the compute: the other SMs idle. */
Test(timeline, comm_sm_share_alone)
{
    uf_activity acts[] = {sized_kernel(0, 10000, 1, 5000), comm_kernel(10000, 20000, 2, 32)};
    uf_timeline tl = make_tl(acts, 2, NULL, 0, 0, 1);
    tl.sm_count = 132;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, 32.0 / 132.0 * 100.0, EPS);   /* 24.24 % */
    cr_assert_float_eq(m.comm_overlap_pct, 0.0, EPS);
}

/* A 1000-block GEMM under the first half of the comm kernel: 100 % then 24.24 %. */
Test(timeline, comm_sm_share_half_overlapped)
{
    uf_activity acts[] = {comm_kernel(10000, 20000, 2, 32), sized_kernel(5000, 15000, 1, 1000)};
    uf_timeline tl = make_tl(acts, 2, NULL, 0, 0, 1);
    tl.sm_count = 132;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, (100.0 + 32.0 / 132.0 * 100.0) / 2.0, EPS);  /* 62.12 % */
    cr_assert_float_eq(m.comm_overlap_pct, 50.0, EPS);
}

/* Blocks of concurrent small kernels add up; overlapping comm kernels count their union once;
 * comm time with nothing but comm counts too. */
Test(timeline, comm_sm_share_sums_blocks)
{
    /* comm A 0-4000 (16 blocks), comm B 2000-6000 (16 blocks), compute 0-2000 (50 blocks)
     * and 1000-3000 (50 blocks); sm_count 100.
     *   0-1000: 16+50 = 66 %   1000-2000: 16+50+50 = 100 % (116 capped)
     *   2000-3000: 16+16+50 = 82 %   3000-4000: 32 %   4000-6000: 16 % */
    uf_activity acts[] = {comm_kernel(0, 4000, 1, 16), comm_kernel(2000, 6000, 2, 16),
                          sized_kernel(0, 2000, 3, 50), sized_kernel(1000, 3000, 4, 50)};
    uf_timeline tl = make_tl(acts, 4, NULL, 0, 0, 1);
    tl.sm_count = 100;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    double expect = (66.0 * 1000 + 100.0 * 1000 + 82.0 * 1000 + 32.0 * 1000 + 16.0 * 2000) / 6000;
    cr_assert_float_eq(m.comm_sm_pct, expect, EPS);
}

/* Copies hold no SMs; without comm kernels, or when zero-length, there is no share. */
Test(timeline, comm_sm_share_nan_without_comm)
{
    uf_activity acts[] = {sized_kernel(0, 10000, 1, 1000), copy_act(0, 5000, 2)};
    uf_timeline tl = make_tl(acts, 2, NULL, 0, 0, 1);
    tl.sm_count = 132;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert(isnan(m.comm_sm_pct));

    uf_activity zero[] = {sized_kernel(0, 10000, 1, 1000), comm_kernel(5000, 5000, 2, 32)};
    uf_timeline tz = make_tl(zero, 2, NULL, 0, 0, 1);
    tz.sm_count = 132;
    cr_assert_eq(uf_timeline_analyze(&tz, &m), 0);
    cr_assert(isnan(m.comm_sm_pct));

    uf_activity with_copy[] = {comm_kernel(0, 1000, 1, 66), copy_act(0, 1000, 2)};
    uf_timeline tc = make_tl(with_copy, 2, NULL, 0, 0, 1);
    tc.sm_count = 132;
    cr_assert_eq(uf_timeline_analyze(&tc, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, 50.0, EPS, "a copy adds no blocks");
}

/* Unknown grid sizes (of a kernel running during comm) or an unknown SM count: NaN. A kernel
 * of unknown size outside the comm time does not matter. */
Test(timeline, comm_sm_share_nan_when_unknown)
{
    uf_activity acts[] = {comm_kernel(0, 1000, 1, 32)};
    uf_timeline tl = make_tl(acts, 1, NULL, 0, 0, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert(isnan(m.comm_sm_pct), "sm_count unknown");
    cr_assert_float_eq(m.comm_overlap_pct, 0.0, EPS);

    tl.sm_count = 132;
    acts[0].blocks = 0;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert(isnan(m.comm_sm_pct), "comm kernel of unknown size");

    uf_activity mixed[] = {comm_kernel(0, 1000, 1, 32), kernel(500, 1500, 2)};
    uf_timeline tm = make_tl(mixed, 2, NULL, 0, 0, 1);
    tm.sm_count = 132;
    cr_assert_eq(uf_timeline_analyze(&tm, &m), 0);
    cr_assert(isnan(m.comm_sm_pct), "compute kernel of unknown size during comm");

    mixed[1] = kernel(2000, 3000, 2);
    cr_assert_eq(uf_timeline_analyze(&tm, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, 32.0 / 132.0 * 100.0, EPS);
}

/* Blocks on another device do not occupy this device's SMs; with all devices, each is swept
 * on its own and every device's comm time weighs in. */
Test(timeline, comm_sm_share_device_filter)
{
    uf_activity acts[] = {comm_kernel(0, 1000, 1, 33), sized_kernel(0, 1000, 2, 1000),
                          comm_kernel(0, 1000, 3, 66)};
    acts[1].device_id = 1;
    acts[2].device_id = 1;
    uf_timeline tl = make_tl(acts, 3, NULL, 0, 0, 1);
    tl.sm_count = 132;
    uf_timeline_metrics m;

    tl.device_id = 0;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, 25.0, EPS);

    tl.device_id = 1;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, 100.0, EPS);

    tl.device_id = -1;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, (25.0 + 100.0) / 2.0, EPS);
}

/* Only measured launches count: a warm-up kernel still running during comm adds nothing. */
Test(timeline, comm_sm_share_measured_only)
{
    uf_activity acts[] = {sized_kernel(12000, 20000, 1, 1000), comm_kernel(12000, 14000, 2, 66)};
    uf_api_call apis[] = {api(5000, 1), api(10000, 2)};
    uf_timeline tl = make_tl(acts, 2, apis, 2, 10000, 1);
    tl.sm_count = 132;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.comm_sm_pct, 50.0, EPS);
}

/* ---- which activities count ------------------------------------------------------------- */

Test(timeline, warmup_before_measure_begin_excluded)
{
    uf_activity acts[] = {
        kernel(6000, 7000, 1),      /* warm-up: launched at 5000 */
        kernel(11000, 11500, 2),    /* launched at 9000 (warm-up), ran after measure_begin */
        kernel(12000, 13000, 3),    /* measured */
        kernel(14000, 15000, 4),    /* measured */
        copy_act(9500, 9800, 50),   /* no API record, started before measure_begin */
        copy_act(16000, 16500, 51), /* no API record, started after: counts */
    };
    uf_api_call apis[] = {api(5000, 1), api(9000, 2), api(10000, 3), api(10100, 4)};
    uf_timeline tl = make_tl(acts, 6, apis, 4, 10000, 2);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_eq(m.n_activities, 3);
    cr_assert_float_eq(m.window_ms, 4500e-6, EPS);      /* 12000 → 16500 */
    cr_assert_float_eq(m.busy_pct, 2500.0 / 4500.0 * 100.0, EPS);
    cr_assert_float_eq(m.kernels_per_step, 1.0, EPS);
}

Test(timeline, launched_after_measure_end_excluded)
{
    uf_activity acts[] = {kernel(12000, 13000, 3), kernel(30000, 31000, 4)};
    uf_api_call apis[] = {api(10000, 3), api(25000, 4)};
    uf_timeline tl = make_tl(acts, 2, apis, 2, 10000, 1);
    tl.measure_end_ns = 20000;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_eq(m.n_activities, 1);
    cr_assert_float_eq(m.busy_pct, 100.0, EPS);
}

Test(timeline, nothing_counted_is_an_error)
{
    uf_activity acts[] = {kernel(1000, 2000, 1)};
    uf_api_call apis[] = {api(500, 1)};
    uf_timeline tl = make_tl(acts, 1, apis, 1, 10000, 1);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), -1);
    cr_assert(isnan(m.busy_pct) && isnan(m.window_ms) && isnan(m.launch_us) &&
              isnan(m.comm_sm_pct));
    cr_assert_eq(m.n_activities, 0);
    uf_timeline empty = make_tl(NULL, 0, NULL, 0, 0, 1);
    cr_assert_eq(uf_timeline_analyze(&empty, &m), -1);
}

Test(timeline, device_filter)
{
    uf_activity acts[] = {kernel(0, 1000, 1), kernel(5000, 6000, 2), kernel(2000, 2500, 3)};
    acts[2].device_id = 1;
    uf_timeline tl = make_tl(acts, 3, NULL, 0, 0, 1);
    uf_timeline_metrics m;

    tl.device_id = 1;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_eq(m.n_activities, 1);
    cr_assert_float_eq(m.window_ms, 500e-6, EPS);

    tl.device_id = 0;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_eq(m.n_activities, 2);
    cr_assert_float_eq(m.busy_pct, 2000.0 / 6000.0 * 100.0, EPS);

    tl.device_id = -1;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_eq(m.n_activities, 3);
    cr_assert_float_eq(m.busy_pct, 2500.0 / 6000.0 * 100.0, EPS);

    tl.device_id = 5;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), -1);
}

/* 200k kernels with their launches, shuffled: must finish in well under the timeout. */
Test(timeline, large_trace_is_fast, .timeout = 20)
{
    const size_t n = 200000;
    uf_activity *acts = malloc(n * sizeof *acts);
    uf_api_call *apis = malloc(n * sizeof *apis);
    cr_assert_not_null(acts);
    cr_assert_not_null(apis);
    for (size_t i = 0; i < n; i++) {
        acts[i] = kernel(10000 + i * 2000, 10000 + i * 2000 + 1000, (uint32_t)i + 1);
        acts[i].is_comm = i % 10 == 0;
        acts[i].blocks = acts[i].is_comm ? 33 : 1000;
        apis[n - 1 - i] = api(10000 + i * 2000 - 500, (uint32_t)i + 1);
    }
    uf_timeline tl = make_tl(acts, n, apis, n, 0, 100);
    tl.sm_count = 132;
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_eq(m.n_activities, n);
    cr_assert_float_eq(m.comm_sm_pct, 25.0, EPS);
    cr_assert_float_eq(m.launch_us, 0.5, EPS);
    cr_assert_float_eq(m.kernels_per_step, 2000.0, EPS);
    /* every gap follows a launch that came 500 ns after the previous kernel ended */
    cr_assert_float_eq(m.busy_pct + m.idle_host_pct, 100.0, 1e-6);
    free(acts);
    free(apis);
}

/* ---- steps and PM samples --------------------------------------------------------------- */

Test(timeline, step_index)
{
    const uint64_t steps[] = {100, 200, 300};
    cr_assert_eq(uf_timeline_step_index(steps, 3, 50), -1);
    cr_assert_eq(uf_timeline_step_index(steps, 3, 100), 0);
    cr_assert_eq(uf_timeline_step_index(steps, 3, 199), 0);
    cr_assert_eq(uf_timeline_step_index(steps, 3, 250), 1);
    cr_assert_eq(uf_timeline_step_index(steps, 3, 300), 2);
    cr_assert_eq(uf_timeline_step_index(steps, 3, 100000), 2);
    cr_assert_eq(uf_timeline_step_index(NULL, 0, 100), -1);
    cr_assert_eq(uf_timeline_step_index(steps, 1, 250), 0);
}

static uf_pm_sample pm(uint64_t start, uint64_t end, double sm)
{
    uf_pm_sample s = {.start_ns = start, .end_ns = end, .sm_active_pct = sm,
                      .occupancy_pct = sm / 2, .tensor_active_pct = 0.0, .dram_pct = sm * 2};
    return s;
}

Test(timeline, pm_window_mean_partial_overlap)
{
    uf_pm_sample s[] = {pm(0, 100, 10.0), pm(100, 200, 20.0), pm(200, 300, 40.0),
                        pm(400, 500, 99.0)};
    uf_pm_sample mean;
    /* window 50-250: weights 50, 100, 50 */
    cr_assert_eq(uf_pm_window_mean(s, 4, 50, 250, &mean), 3);
    cr_assert_float_eq(mean.sm_active_pct, (10.0 * 50 + 20.0 * 100 + 40.0 * 50) / 200, EPS);
    cr_assert_float_eq(mean.occupancy_pct, 22.5 / 2, EPS);
    cr_assert_float_eq(mean.dram_pct, 45.0, EPS);
    cr_assert_float_eq(mean.tensor_active_pct, 0.0, EPS);
}

Test(timeline, pm_window_mean_skips_nan_and_empty_window)
{
    uf_pm_sample s[] = {pm(0, 100, 10.0), pm(100, 200, 30.0)};
    s[1].dram_pct = NAN;
    uf_pm_sample mean;
    cr_assert_eq(uf_pm_window_mean(s, 2, 0, 200, &mean), 2);
    cr_assert_float_eq(mean.sm_active_pct, 20.0, EPS);
    cr_assert_float_eq(mean.dram_pct, 20.0, EPS, "the NaN sample carries no weight");
    cr_assert_eq(uf_pm_window_mean(s, 2, 1000, 2000, &mean), 0);
    cr_assert(isnan(mean.sm_active_pct) && isnan(mean.dram_pct));
    cr_assert_eq(uf_pm_window_mean(NULL, 0, 0, 100, &mean), 0);
}

/* GPM against PM: the largest difference of the metrics both have, and which one. */
Test(gpm, disagreement_is_the_largest_difference)
{
    uf_pm_sample pm = {0, 0, 97.5, 40.0, 0.0, 82.0};
    uf_pm_sample gpm = {0, 0, 54.3, 41.0, NAN, 46.7};
    int worst = 7;
    cr_assert_float_eq(uf_gpm_disagreement(&pm, &gpm, &worst), 43.2, 1e-9);
    cr_assert_eq(worst, 0);
    cr_assert_str_eq(uf_counter_names[worst], "SM active");
    gpm.sm_active_pct = 97.0;   /* now DRAM is the worst; tensor (NaN on one side) is skipped */
    cr_assert_float_eq(uf_gpm_disagreement(&pm, &gpm, &worst), 35.3, 1e-9);
    cr_assert_eq(worst, 3);
    gpm = (uf_pm_sample){0, 0, 97.0, 41.5, 0.5, 80.0};
    cr_assert(uf_gpm_disagreement(&pm, &gpm, &worst) <= UF_GPM_AGREE_PTS);
    uf_pm_sample none = {0, 0, NAN, NAN, NAN, NAN};
    cr_assert(isnan(uf_gpm_disagreement(&pm, &none, &worst)));
    cr_assert_eq(worst, -1);
}

/* ---- the doctor's views: the gaps themselves, and each activity's launch call ---------------- */

/* The gaps uf_timeline_analyze sums, one by one: the host-wait one (B's call returned after A
 * ended) and the queued one (C's call returned long before), with the next launch's start. */
Test(timeline, idle_gaps_one_by_one)
{
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(5000, 6000, 2), kernel(8000, 9000, 3)};
    uf_api_call apis[] = {api(500, 1), api(3000, 2), api(600, 3)};
    uf_timeline tl = make_tl(acts, 3, apis, 3, 0, 1);
    uf_gap *gaps;
    size_t n;
    cr_assert_eq(uf_timeline_idle_gaps(&tl, &gaps, &n), 0);
    cr_assert_eq(n, 2);
    cr_expect(gaps[0].start_ns == 2000 && gaps[0].end_ns == 5000 && gaps[0].host_wait == 1);
    cr_expect_eq(gaps[0].next_launch_ns, 3000);
    cr_expect(gaps[1].start_ns == 6000 && gaps[1].end_ns == 8000 && gaps[1].host_wait == 0);
    cr_expect_eq(gaps[1].next_launch_ns, 600);
    free(gaps);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_expect_float_eq(m.idle_host_pct, 3000.0 / 8000.0 * 100.0, EPS, "the same gap, summed");
}

Test(timeline, idle_gaps_none_without_a_hole)
{
    uf_activity acts[] = {kernel(1000, 2000, 1), kernel(1500, 3000, 2)};
    uf_timeline tl = make_tl(acts, 2, NULL, 0, 0, 1);
    uf_gap *gaps;
    size_t n;
    cr_assert_eq(uf_timeline_idle_gaps(&tl, &gaps, &n), 0);
    cr_expect_eq(n, 0);
    cr_expect_null(gaps);
}

/* The runtime record is the launch call when both exist; an activity without one launches
 * itself (its own start, end 0). */
Test(timeline, launch_calls_prefer_runtime)
{
    uf_activity acts[] = {kernel(1000, 2000, 7), kernel(5000, 6000, 99)};
    uf_api_call apis[] = {api(700, 7), api(400, 7)};
    apis[1].is_runtime = 0;     /* the driver call under it, earlier */
    uf_timeline tl = make_tl(acts, 2, apis, 2, 0, 1);
    uint64_t start[2], end[2];
    cr_assert_eq(uf_timeline_launch_calls(&tl, start, end), 0);
    cr_expect_eq(start[0], 700);
    cr_expect_eq(end[0], 750);
    cr_expect_eq(start[1], 5000);
    cr_expect_eq(end[1], 0);
}

/* NVML utilization over a window: only the samples whose whole interval lies inside count, as
 * the H200 probe (benches/probes/nvml_util_period.cu) lists them: 200 ms apart, each the busy
 * share of the interval before it. A 1 s pass after idle: the sample that straddles its start
 * (79 %) must not pull the mean down. */
Test(nvml, util_window_whole_intervals_only)
{
    const uint64_t ts[] = {0, 200000, 400000, 600000, 800000, 1000000, 1200000, 1400000};
    const double v[] = {0, 0, 79, 100, 100, 99, 100, 70};
    int used = -1;
    /* the pass: 240 ms .. 1300 ms: whole intervals 400-600, 600-800, 800-1000, 1000-1200 */
    cr_assert_float_eq(uf_util_window(ts, v, 8, 240000, 1300000, &used), 99.75, 1e-9);
    cr_assert_eq(used, 4);
    /* the window edges on sample times count those intervals */
    cr_assert_float_eq(uf_util_window(ts, v, 8, 200000, 600000, &used), 89.5, 1e-9);
    cr_assert_eq(used, 2);
    /* shorter than two periods: no whole interval */
    cr_assert(isnan(uf_util_window(ts, v, 8, 250000, 550000, &used)));
    cr_assert_eq(used, 0);
    /* unequal intervals weigh by length; a repeated or backward timestamp is skipped */
    const uint64_t ts2[] = {0, 100000, 100000, 400000, 300000};
    const double v2[] = {0, 50, 7, 100, 3};
    cr_assert_float_eq(uf_util_window(ts2, v2, 5, 0, 500000, &used), 87.5, 1e-9);
    cr_assert_eq(used, 2);
    cr_assert(isnan(uf_util_window(ts, v, 0, 0, 1000000, &used)));
    cr_assert(isnan(uf_util_window(ts, v, 1, 0, 1000000, &used)));
}

/* ---- host calls: syncs, pageable copies, drains, the gap after a drain ------------------ */

#define US 1000u    /* these timelines are written in µs */

static uf_api_call call(uint64_t start_us, uint64_t end_us, uint32_t corr, const char *name)
{
    uf_api_call c = {.start_ns = start_us * US, .end_ns = end_us * US, .correlation_id = corr,
                     .is_runtime = 1, .name = name};
    return c;
}

static uf_activity act_us(uint64_t start_us, uint64_t end_us, uint32_t corr, uint8_t kind)
{
    uf_activity a = kernel(start_us * US, end_us * US, corr);
    a.kind = kind;
    return a;
}

static uf_sync_record sync_rec(uint64_t start_us, uint64_t end_us, uint8_t kind)
{
    uf_sync_record s = {.start_ns = start_us * US, .end_ns = end_us * US, .kind = kind};
    return s;
}

static uf_timeline host_tl(const uf_activity *acts, size_t n_acts, const uf_api_call *apis,
                           size_t n_apis, const uf_sync_record *syncs, size_t n_syncs,
                           const uint64_t *step_begin, int n_steps, uint64_t enqueued_us)
{
    uf_timeline tl = make_tl(acts, n_acts, apis, n_apis, step_begin[0], n_steps);
    tl.step_begin_ns = step_begin;
    tl.syncs = syncs;
    tl.n_syncs = n_syncs;
    tl.steps_enqueued_ns = enqueued_us * US;
    return tl;
}

/* loss.item(): 3 kernels, a stream synchronize that returns when the last one ends, the next
 * step's kernel launched 100 µs later. Then the caller's own closing event wait, after
 * steps_enqueued_ns, which also spans the end of the device's work: not a step's sync. */
Test(host_calls, stream_sync_drains_and_its_gap)
{
    const uint64_t step_begin[] = {5 * US};
    const uf_activity acts[] = {
        act_us(100, 200, 1, UF_ACT_KERNEL), act_us(200, 300, 2, UF_ACT_KERNEL),
        act_us(300, 400, 3, UF_ACT_KERNEL), act_us(510, 800, 5, UF_ACT_KERNEL)};
    const uf_api_call apis[] = {
        call(10, 12, 1, "cudaLaunchKernel_v7000"), call(20, 22, 2, "cudaLaunchKernel_v7000"),
        call(30, 32, 3, "cudaLaunchKernel_v7000"), call(40, 405, 4, "cudaStreamSynchronize_v3020"),
        call(420, 430, 8, "cudaMalloc_v3020"),  /* the device ran dry before it: no drain */
        call(505, 507, 5, "cudaLaunchKernel_v7000"),
        /* the harness's closing mark and wait */
        call(700, 701, 6, "cudaEventRecord_v3020"), call(710, 805, 7, "cudaEventSynchronize_v3020")};
    const uf_sync_record syncs[] = {sync_rec(41, 404, UF_SYNC_STREAM),
                                    sync_rec(711, 804, UF_SYNC_EVENT)};
    uf_timeline tl = host_tl(acts, 4, apis, 8, syncs, 2, step_begin, 1, 700);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.syncs_per_step, 1.0, EPS);
    cr_assert_float_eq(m.stream_syncs_per_step, 1.0, EPS);
    cr_assert_float_eq(m.event_syncs_per_step, 0.0, EPS, "the closing wait is not a step's");
    cr_assert_float_eq(m.context_syncs_per_step, 0.0, EPS);
    cr_assert_float_eq(m.drains_per_step, 1.0, EPS, "the closing wait is not a drain");
    cr_assert_float_eq(m.sync_gap_us, 110.0, EPS, "last end 400 µs, next start 510 µs");
    cr_assert_float_eq(m.pageable_copies_per_step, 0.0, EPS);

    /* Without steps_enqueued_ns the window is unknown: not measured, never guessed. */
    tl.steps_enqueued_ns = 0;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert(isnan(m.syncs_per_step) && isnan(m.drains_per_step) && isnan(m.sync_gap_us));
    cr_assert(!isnan(m.busy_pct));
    /* A window ending after the closing wait counts it: the bound is what excludes it. */
    tl.steps_enqueued_ns = 900 * US;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.syncs_per_step, 2.0, EPS);
    cr_assert_float_eq(m.drains_per_step, 2.0, EPS);
    /* Calls before the first step do not count either. */
    const uint64_t late_begin[] = {35 * US};
    tl = host_tl(acts, 4, apis, 8, syncs, 2, late_begin, 1, 700);
    tl.measure_begin_ns = 0;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.drains_per_step, 1.0, EPS);
    const uint64_t after_sync[] = {45 * US};
    tl = host_tl(acts, 4, apis, 8, syncs, 2, after_sync, 1, 700);
    tl.measure_begin_ns = 0;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.drains_per_step, 0.0, EPS);
    cr_assert_float_eq(m.syncs_per_step, 0.0, EPS);
}

/* The drains one by one (what the doctor reads): the same window and rule as drains_per_step
 * and the gaps sync_gap_us averages; none without steps_enqueued_ns. */
Test(host_calls, drains_listed_as_analyze_counts_them)
{
    const uint64_t step_begin[] = {5 * US};
    const uf_activity acts[] = {
        act_us(100, 200, 1, UF_ACT_KERNEL), act_us(200, 400, 2, UF_ACT_KERNEL),
        act_us(510, 800, 5, UF_ACT_KERNEL)};
    const uf_api_call apis[] = {
        call(10, 12, 1, "cudaLaunchKernel_v7000"), call(20, 22, 2, "cudaLaunchKernel_v7000"),
        call(40, 405, 4, "cudaStreamSynchronize_v3020"),
        call(505, 507, 5, "cudaLaunchKernel_v7000"),
        call(510, 801, 6, "cudaDeviceSynchronize_v3020")};  /* drains, nothing follows */
    uf_timeline tl = host_tl(acts, 3, apis, 5, NULL, 0, step_begin, 1, 900);
    uf_drain *dr;
    size_t n;
    cr_assert_eq(uf_timeline_drains(&tl, &dr, &n), 0);
    cr_assert_eq(n, 2);
    cr_expect(dr[0].start_ns == 40 * US && dr[0].end_ns == 405 * US);
    cr_expect(dr[0].has_gap && dr[0].gap_ns == 110 * US, "last end 400 µs, next start 510 µs");
    cr_expect(dr[1].start_ns == 510 * US && !dr[1].has_gap, "no device work after it");
    free(dr);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_expect_float_eq(m.drains_per_step, 2.0, EPS);
    cr_expect_float_eq(m.sync_gap_us, 110.0, EPS, "the mean over the drains with a gap");
    /* analyze_drains: the same metrics and the same drains from one pass */
    uf_timeline_metrics m2;
    cr_assert_eq(uf_timeline_analyze_drains(&tl, &m2, &dr, &n), 0);
    cr_expect_float_eq(m2.drains_per_step, m.drains_per_step, EPS);
    cr_expect_float_eq(m2.sync_gap_us, m.sync_gap_us, EPS);
    cr_assert_eq(n, 2);
    cr_expect(dr[0].start_ns == 40 * US && dr[0].has_gap && dr[0].gap_ns == 110 * US);
    cr_expect(dr[1].start_ns == 510 * US && !dr[1].has_gap);
    free(dr);
    tl.steps_enqueued_ns = 0;
    cr_assert_eq(uf_timeline_drains(&tl, &dr, &n), 0);
    cr_expect(n == 0 && dr == NULL);
    cr_assert_eq(uf_timeline_analyze_drains(&tl, &m2, &dr, &n), 0);
    cr_expect(n == 0 && dr == NULL);
}

/* A copy's direction and pageable flag come from its memory kinds. */
Test(host_calls, copy_direction_and_pageable_from_memory_kinds)
{
    static const struct {
        uint8_t src, dst;
        uf_copy_kind direction;
        int pageable;
    } rows[] = {
        {UF_MEM_PAGEABLE, UF_MEM_DEVICE, UF_COPY_HTOD, 1},
        {UF_MEM_PINNED, UF_MEM_DEVICE, UF_COPY_HTOD, 0},
        {UF_MEM_DEVICE, UF_MEM_PAGEABLE, UF_COPY_DTOH, 1},
        {UF_MEM_DEVICE, UF_MEM_ARRAY, UF_COPY_DTOD, 0},
        {UF_MEM_DEVICE, UF_MEM_MANAGED, UF_COPY_OTHER, 0},  /* managed: no one side */
        {UF_MEM_PAGEABLE, UF_MEM_PAGEABLE, UF_COPY_OTHER, 1}, /* host to host */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uf_activity c = act_us(0, 1, 1, UF_ACT_MEMCPY);
        c.src_mem = rows[i].src;
        c.dst_mem = rows[i].dst;
        cr_expect_eq(uf_copy_direction(&c), rows[i].direction, "row %zu", i);
        cr_expect_eq(uf_copy_pageable(&c), rows[i].pageable, "row %zu", i);
        c.kind = UF_ACT_KERNEL;
        cr_expect(uf_copy_direction(&c) == UF_COPY_OTHER && !uf_copy_pageable(&c),
                  "a kernel is no copy");
    }
}

/* deferred: an event wait on a copy three steps old while later kernels run through it: a
 * sync (the host blocked), but no drain (the device still had queued work). */
Test(host_calls, event_wait_on_old_work_is_no_drain)
{
    const uint64_t step_begin[] = {5 * US, 45 * US};
    const uf_activity acts[] = {act_us(100, 300, 1, UF_ACT_KERNEL),
                                act_us(300, 500, 2, UF_ACT_KERNEL),
                                act_us(500, 700, 3, UF_ACT_KERNEL)};
    const uf_api_call apis[] = {
        call(10, 12, 1, "cudaLaunchKernel_v7000"), call(20, 22, 2, "cudaLaunchKernel_v7000"),
        call(30, 32, 3, "cudaLaunchKernel_v7000"), call(40, 250, 4, "cudaEventSynchronize_v3020")};
    const uf_sync_record syncs[] = {sync_rec(41, 249, UF_SYNC_EVENT),
                                    sync_rec(50, 51, UF_SYNC_STREAM_WAIT)};
    uf_timeline tl = host_tl(acts, 3, apis, 4, syncs, 2, step_begin, 2, 800);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.event_syncs_per_step, 0.5, EPS, "one event sync in two steps");
    cr_assert_float_eq(m.syncs_per_step, 0.5, EPS, "a stream wait does not block the host");
    cr_assert_float_eq(m.drains_per_step, 0.0, EPS, "t_last 700 µs is after the call's end");
    cr_assert(isnan(m.sync_gap_us));
}

/* deferred's look before its wait: cudaEventQuery returns at once, done or not, though CUPTI
 * gives it an event SYNCHRONIZATION record; the cudaEventSynchronize after it is the one sync. */
Test(host_calls, an_event_query_is_no_sync)
{
    const uint64_t step_begin[] = {5 * US};
    const uf_activity acts[] = {act_us(100, 300, 1, UF_ACT_KERNEL)};
    const uf_api_call apis[] = {call(10, 12, 1, "cudaLaunchKernel_v7000"),
                                call(20, 21, 2, "cudaEventQuery_v3020"),
                                call(22, 200, 3, "cudaEventSynchronize_v3020")};
    uf_sync_record syncs[] = {sync_rec(20, 21, UF_SYNC_EVENT), sync_rec(22, 200, UF_SYNC_EVENT)};
    syncs[0].correlation_id = 2;
    syncs[1].correlation_id = 3;
    uf_timeline tl = host_tl(acts, 1, apis, 3, syncs, 2, step_begin, 1, 400);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.event_syncs_per_step, 1.0, EPS, "the synchronize, not the query");
    cr_assert_float_eq(m.syncs_per_step, 1.0, EPS);
    cr_assert(uf_api_is_query("cuStreamQuery") && !uf_api_is_query("cudaEventSynchronize_v3020"));
}

/* A copy to pageable memory whose call returns after the previous kernel ended and the copy
 * ran: a pageable copy and a drain. The same into pinned memory returns at once: neither. */
Test(host_calls, pageable_copy_drains_pinned_does_not)
{
    const uint64_t step_begin[] = {5 * US};
    uf_activity acts[] = {act_us(100, 300, 1, UF_ACT_KERNEL), act_us(305, 315, 2, UF_ACT_MEMCPY),
                          act_us(410, 500, 3, UF_ACT_KERNEL)};
    acts[1].src_mem = UF_MEM_DEVICE;
    acts[1].dst_mem = UF_MEM_PAGEABLE;
    uf_api_call apis[] = {call(10, 12, 1, "cudaLaunchKernel_v7000"),
                          call(20, 320, 2, "cudaMemcpyAsync_v3020"),
                          call(400, 402, 3, "cudaLaunchKernel_v7000")};
    uf_timeline tl = host_tl(acts, 3, apis, 3, NULL, 0, step_begin, 1, 600);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.pageable_copies_per_step, 1.0, EPS);
    cr_assert_float_eq(m.drains_per_step, 1.0, EPS);
    cr_assert_float_eq(m.sync_gap_us, 95.0, EPS, "the copy ended at 315 µs, next kernel 410");
    cr_assert_float_eq(m.syncs_per_step, 0.0, EPS, "no SYNCHRONIZATION record here");

    acts[1].dst_mem = UF_MEM_PINNED;
    apis[1].end_ns = 25 * US;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.pageable_copies_per_step, 0.0, EPS);
    cr_assert_float_eq(m.drains_per_step, 0.0, EPS);
    /* A source in pageable memory counts too. */
    acts[1].src_mem = UF_MEM_PAGEABLE;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.pageable_copies_per_step, 1.0, EPS);
}

/* A launch (or an error query) in flight while the device runs dry is no drain: the host was
 * busy launching, not waiting. A cudaFree over the same instant is one. */
Test(host_calls, launches_are_not_drains)
{
    const uint64_t step_begin[] = {5 * US};
    const uf_activity acts[] = {act_us(100, 200, 1, UF_ACT_KERNEL),
                                act_us(260, 300, 2, UF_ACT_KERNEL)};
    uf_api_call apis[] = {call(10, 12, 1, "cudaLaunchKernel_v7000"),
                          call(150, 250, 2, "cudaLaunchKernel_v7000")};
    uf_timeline tl = host_tl(acts, 2, apis, 2, NULL, 0, step_begin, 1, 400);
    uf_timeline_metrics m;
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.drains_per_step, 0.0, EPS);
    apis[1].name = "cudaGetLastError_v3020";
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.drains_per_step, 0.0, EPS);
    apis[1].name = "cudaFree_v3020";
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.drains_per_step, 1.0, EPS);
    cr_assert_float_eq(m.sync_gap_us, 60.0, EPS);
    apis[1].is_runtime = 0;     /* a driver call inside a runtime one would count it twice */
    cr_assert_eq(uf_timeline_analyze(&tl, &m), 0);
    cr_assert_float_eq(m.drains_per_step, 0.0, EPS);
    cr_assert(uf_api_never_waits("cudaGraphLaunch_v10000"));
    cr_assert(uf_api_never_waits("cudaEventRecordWithFlags_v11010"));
    cr_assert(uf_api_never_waits("cudaStreamWaitEvent_v3020"));
    cr_assert(!uf_api_never_waits("cudaStreamSynchronize_v3020"));
    cr_assert(!uf_api_never_waits("cudaEventSynchronize_v3020"));
    cr_assert(!uf_api_never_waits(NULL));
}

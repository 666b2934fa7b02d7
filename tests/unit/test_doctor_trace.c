/* The doctor's trace file, format 4 and the older ones it still reads (common/doctor/doctor_trace.h),
 * and the recorder's decisions that are plain C: which API calls it keeps, the state letter of
 * a /proc stat line, a thread's CPU clock. Hand-written traces; no CUDA. */
#define _GNU_SOURCE     /* syscall(SYS_gettid) */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "doctor_trace.h"
#include "trace_edit.h"

/* ---- a small trace of every record kind --------------------------------------------------- */

typedef struct every_kind {
    uf_activity acts[3];
    uf_api_call apis[3];
    uf_sync_record syncs[1];
    uf_range ranges[1];
    uf_pm_sample pm[1];
    uf_util_sample util[1];
    uf_clock_sample clocks[1];
    uf_host_sample host[4];
    uf_dtrace t;
} every_kind;

static void make_every_kind(every_kind *e)
{
    memset(e, 0, sizeof *e);
    e->acts[0] = (uf_activity){.start_ns = 2000, .end_ns = 3000, .correlation_id = 1,
                               .stream_id = 7, .kind = UF_ACT_KERNEL, .blocks = 132,
                               .name = "void at::vectorized_elementwise_kernel<4, (lambda)>"};
    e->acts[1] = (uf_activity){.start_ns = 3500, .end_ns = 4000, .correlation_id = 2,
                               .stream_id = 7, .kind = UF_ACT_MEMCPY, .src_mem = UF_MEM_PINNED,
                               .dst_mem = UF_MEM_DEVICE, .bytes = 4096};
    e->acts[2] = (uf_activity){.start_ns = 4100, .end_ns = 4200, .correlation_id = 3,
                               .stream_id = 7, .kind = UF_ACT_MEMSET, .bytes = 64};
    e->apis[0] = (uf_api_call){.start_ns = 1000, .end_ns = 1900, .correlation_id = 1,
                               .is_runtime = 1, .thread_id = 4242,
                               .name = "cudaLaunchKernel_v7000"};
    e->apis[1] = (uf_api_call){.start_ns = 1100, .end_ns = 1800, .correlation_id = 1,
                               .is_runtime = 0, .thread_id = 4242, .name = "cuLaunchKernel"};
    e->apis[2] = (uf_api_call){.start_ns = 3000, .end_ns = 4500, .correlation_id = 4,
                               .is_runtime = 1, .thread_id = 4343,
                               .name = "cudaStreamSynchronize_v3020"};
    e->syncs[0] = (uf_sync_record){.start_ns = 3000, .end_ns = 4500, .correlation_id = 4,
                                   .stream_id = 7, .kind = UF_SYNC_STREAM};
    e->ranges[0] = (uf_range){500, 5000, "a step"};
    e->pm[0] = (uf_pm_sample){.start_ns = 1000, .end_ns = 2000, .sm_active_pct = 50.0,
                              .occupancy_pct = 20.0, .tensor_active_pct = NAN, .dram_pct = 5.0};
    e->util[0] = (uf_util_sample){2000, 90.0};
    e->clocks[0] = (uf_clock_sample){2000, 1980.0, NAN};
    /* written out of time order: the reader sorts them by time, then thread */
    e->host[0] = (uf_host_sample){.t_ns = 3000, .run_ns = 900, .tid = 4343, .state = 'S'};
    e->host[1] = (uf_host_sample){.t_ns = 2000, .run_ns = 700, .tid = 4343, .state = 'R'};
    e->host[2] = (uf_host_sample){.t_ns = 2000, .run_ns = 800, .tid = 4242, .state = 'R'};
    e->host[3] = (uf_host_sample){.t_ns = 3000, .run_ns = 1600, .tid = 4242, .state = 'D'};
    e->t = (uf_dtrace){.acts = e->acts, .n_acts = 3, .apis = e->apis, .n_apis = 3,
                       .syncs = e->syncs, .n_syncs = 1, .ranges = e->ranges, .n_ranges = 1,
                       .pm = e->pm, .n_pm = 1, .util = e->util, .n_util = 1,
                       .clocks = e->clocks, .n_clocks = 1, .host = e->host, .n_host = 4,
                       .pid = 4242, .sm_count = 132, .sm_active_pct = NAN,
                       .tensor_active_pct = NAN, .dram_pct = NAN, .nvml_util_pct = 97.5,
                       .dropped = 3};
    uf_copy_str(e->t.note, sizeof e->t.note, "a note; another");
    uf_copy_str(e->t.counters_note, sizeof e->t.counters_note, "PM sampling: off");
}

static const uf_trace_info every_info = {
    .span_start_ns = 100, .span_end_ns = 9000, .api_min_ns = 1000, .api_left_out = 12,
    .api_left_out_ns = 3456, .host_period_us = 1000, .host_threads = 2,
    .host_threads_over_cap = 1, .host_left_out = 5, .record_cap = 5000000,
    .records_left_out = 0};

static char *format_every_kind(const uf_trace_info *info)
{
    every_kind e;
    make_every_kind(&e);
    uf_strbuf b = {0};
    uf_trace_format_info(&b, &e.t, info);
    cr_assert(!b.failed);
    return b.data;
}

/* ---- round trip ----------------------------------------------------------------------------- */

Test(doctor_trace4, round_trip_of_every_kind)
{
    every_kind e;
    make_every_kind(&e);
    char *text = format_every_kind(&every_info);
    cr_expect(strncmp(text, "underfed-doctor-trace 4\n", 24) == 0, "%s", text);
    uf_trace_file f;
    char err[256];
    cr_assert_eq(uf_trace_parse(text, "mem", &f, err, sizeof err), 0, "%s", err);
    const uf_dtrace *t = &f.t;
    cr_expect_eq(f.info.version, 4);
    cr_expect_eq(f.info.has_span, 1);
    cr_expect(f.info.span_start_ns == 100 && f.info.span_end_ns == 9000);
    cr_expect(f.info.api_min_ns == 1000 && f.info.api_left_out == 12 &&
              f.info.api_left_out_ns == 3456);
    cr_expect(f.info.host_period_us == 1000 && f.info.host_threads == 2 &&
              f.info.host_threads_over_cap == 1 && f.info.host_left_out == 5);
    cr_expect(f.info.record_cap == 5000000 && f.info.records_left_out == 0);
    cr_expect(t->pid == 4242 && t->sm_count == 132 && t->dropped == 3);
    cr_expect(t->nvml_util_pct == 97.5 && isnan(t->sm_active_pct));
    cr_expect_str_eq(t->note, "a note; another");
    cr_expect_str_eq(t->counters_note, "PM sampling: off");
    cr_assert(t->n_acts == 3 && t->n_apis == 3 && t->n_syncs == 1 && t->n_ranges == 1 &&
              t->n_pm == 1 && t->n_util == 1 && t->n_clocks == 1 && t->n_host == 4);
    cr_expect_str_eq(t->acts[0].name, e.acts[0].name);
    cr_expect(t->acts[1].src_mem == UF_MEM_PINNED && t->acts[1].bytes == 4096);
    cr_expect(t->acts[2].kind == UF_ACT_MEMSET && t->acts[2].bytes == 64);
    for (int i = 0; i < 3; i++) {
        cr_expect(t->apis[i].start_ns == e.apis[i].start_ns &&
                  t->apis[i].end_ns == e.apis[i].end_ns &&
                  t->apis[i].correlation_id == e.apis[i].correlation_id &&
                  t->apis[i].is_runtime == e.apis[i].is_runtime, "api %d", i);
        cr_expect_eq(t->apis[i].thread_id, e.apis[i].thread_id, "api %d", i);
        cr_expect_str_eq(t->apis[i].name, e.apis[i].name);
    }
    cr_expect(t->syncs[0].kind == UF_SYNC_STREAM && t->syncs[0].stream_id == 7);
    cr_expect_str_eq(t->ranges[0].name, "a step");
    cr_expect(isnan(t->pm[0].tensor_active_pct) && t->pm[0].sm_active_pct == 50.0);
    cr_expect(t->util[0].util_pct == 90.0 && isnan(t->clocks[0].power_w));
    /* by time, then thread */
    const uint64_t when[] = {2000, 2000, 3000, 3000};
    const uint32_t tid[] = {4242, 4343, 4242, 4343};
    const uint64_t run[] = {800, 700, 1600, 900};
    const char state[] = "RRDS";
    for (int i = 0; i < 4; i++)
        cr_expect(t->host[i].t_ns == when[i] && t->host[i].tid == tid[i] &&
                  t->host[i].run_ns == run[i] && t->host[i].state == state[i],
                  "host %d: %llu %u %llu %c", i, (unsigned long long)t->host[i].t_ns,
                  t->host[i].tid, (unsigned long long)t->host[i].run_ns, t->host[i].state);
    uf_trace_free(&f);
}

/* Without info the span is the records' own, and nothing is said left out. */
Test(doctor_trace4, default_span_is_the_records)
{
    every_kind e;
    make_every_kind(&e);
    uint64_t first, last;
    uf_trace_records_span(&e.t, &first, &last);
    cr_expect(first == 500 && last == 5000, "%llu %llu", (unsigned long long)first,
              (unsigned long long)last);
    char *text = format_every_kind(NULL);
    cr_expect(strstr(text, "\nspan 500 5000\napi_filter 0 0 0\nhost_sampler 0 0 0 0\n"
                           "record_cap 0 0\n") != NULL, "%s", text);
    free(text);
    uf_dtrace empty = {0};
    uf_trace_records_span(&empty, &first, &last);
    cr_expect(first == 0 && last == 0);
}

/* A state the kernel would not write is written "?", and read back as such. */
Test(doctor_trace4, unknown_state_is_a_question_mark)
{
    uf_host_sample h = {.t_ns = 10, .run_ns = 5, .tid = 9, .state = '\n'};
    uf_dtrace t = {.host = &h, .n_host = 1, .pid = 1, .sm_active_pct = NAN,
                   .tensor_active_pct = NAN, .dram_pct = NAN, .nvml_util_pct = NAN};
    uf_strbuf b = {0};
    uf_trace_format(&b, &t);
    cr_expect(strstr(b.data, "\nH 10 5 9 ?\nend 1\n") != NULL, "%s", b.data);
    uf_trace_file f;
    char err[256];
    cr_assert_eq(uf_trace_parse(b.data, "mem", &f, err, sizeof err), 0, "%s", err);
    cr_expect_eq(f.t.host[0].state, '?');
    uf_trace_free(&f);
}

/* ---- older formats -------------------------------------------------------------------------- */

static const char v3_text[] =
    "underfed-doctor-trace 3\npid 7\nsm_count 132\ncounters nan nan nan nan\ndropped 0\n"
    "note \ncounters_note \n"
    "K 100 200 1 0 7 132 0 0 k\n"
    "A 50 90 1 1 cudaLaunchKernel_v7000\n"
    "U 150 99\n"
    "end 3\n";

Test(doctor_trace4, version_3_has_no_threads_nor_span_line)
{
    uf_trace_file f;
    char err[256];
    cr_assert_eq(uf_trace_parse(strdup(v3_text), "v3", &f, err, sizeof err), 0, "%s", err);
    cr_expect_eq(f.info.version, 3);
    cr_expect_eq(f.info.has_span, 0);
    /* no span line: the span is the records' own (the A record's start to the K record's end) */
    cr_expect(f.info.span_start_ns == 50 && f.info.span_end_ns == 200, "%llu %llu",
              (unsigned long long)f.info.span_start_ns, (unsigned long long)f.info.span_end_ns);
    cr_assert_eq(f.t.n_apis, 1);
    cr_expect_eq(f.t.apis[0].thread_id, 0);
    cr_expect_str_eq(f.t.apis[0].name, "cudaLaunchKernel_v7000");
    cr_expect(f.t.n_host == 0 && f.t.n_util == 1);
    uf_trace_free(&f);
}

/* An H record in a version 3 file is unknown there, as a P record in a version 2 file. */
Test(doctor_trace4, version_3_has_no_host_records)
{
    char text[512];
    snprintf(text, sizeof text, "%s", v3_text);
    strcpy(strstr(text, "end 3"), "H 150 10 7 R\nend 4\n");
    uf_trace_file f;
    char err[256];
    cr_expect_eq(uf_trace_parse(strdup(text), "v3", &f, err, sizeof err), -1);
    cr_expect(strstr(err, "v3:11: unknown record") == err, "%s", err);
}

Test(doctor_trace4, versions_1_and_2_read_as_unknown_threads)
{
    const char *v2 = "underfed-doctor-trace 2\npid 7\nsm_count 132\ncounters 40 nan nan 95\n"
                     "dropped 0\nnote n\nA 10 20 1 1 cudaMemcpy_v3020\nend 1\n";
    uf_trace_file f;
    char err[256];
    cr_assert_eq(uf_trace_parse(strdup(v2), "v2", &f, err, sizeof err), 0, "%s", err);
    cr_expect(f.info.version == 2 && f.t.apis[0].thread_id == 0 && !f.info.has_span);
    uf_trace_free(&f);
}

/* ---- strict reading of format 4 ---------------------------------------------------------- */

/* Replace the first `from` in the every-kind file with `to`; the parse must fail on `line`
 * with `what` in the message. */
static void expect_bad4(const char *from, const char *to, int line, const char *what)
{
    expect_edit_refused(format_every_kind(&every_info), from, to, line, what);
}

Test(doctor_trace4, strict_errors_name_file_and_line)
{
    expect_bad4("\nspan 100 9000\n", "\nspan 9000 100\n", 8, "end before start");
    expect_bad4("\nspan 100 9000\n", "\nspan 100\n", 8, "start: expected a space");
    expect_bad4("\nspan 100 9000\n", "\nspan 100 9000 7\n", 8, "end: trailing characters");
    expect_bad4("\nspan ", "\nspam ", 8, "expected the header line \"span");
    expect_bad4("\nspan 100 9000\n", "\n", 8, "expected the header line \"span");
    expect_bad4("\napi_filter 1000 12 3456\n", "\napi_filter 1000 12\n", 9, "calls left out");
    expect_bad4("\napi_filter 1000 12 3456\n", "\napi_filter x 12 3456\n", 9, "threshold");
    expect_bad4("\nhost_sampler 1000 2 1 5\n", "\nhost_sampler 1000 2 1\n", 10,
                "threads over its cap");
    expect_bad4("\nhost_sampler 1000 2 1 5\n", "\nhost_sampler 99999999999 2 1 5\n", 10,
                "period: out of range");
    expect_bad4("\nrecord_cap 5000000 0\n", "\nrecord_cap 5000000\n", 11, "the cap");
    expect_bad4("\nrecord_cap ", "\nrecords_cap ", 11, "expected the header line \"record_cap");
    /* an API record without its thread (format 3's layout in a format 4 file) */
    expect_bad4("\nA 1000 1900 1 1 4242 ", "\nA 1000 1900 1 1 ", 15, "thread: expected");
    expect_bad4("\nA 1000 1900 1 1 4242 ", "\nA 1000 1900 1 1 4294967296 ", 15,
                "thread: out of range");
    /* H records: the first written is on line 23 */
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 900 4343\n", 23, "thread: expected a space");
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 900 4343 SR\n", 23, "state: expected one");
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 900 4343 7\n", 23, "state: expected one");
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 900 4343 \n", 23, "state: expected one");
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 -900 4343 S\n", 23,
                "run time: expected a decimal");
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 900 S\n", 23, "thread: expected a decimal");
    expect_bad4("\nH 3000 900 4343 S\n", "\nH 3000 900 4343 S\nH 1 2 3 R\n", 28,
                "record count");
}

/* ---- the recorder's API filter -------------------------------------------------------------- */

Test(doctor_trace4, calls_kept_whatever_their_duration)
{
    static const char *const kept[] = {
        "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000", "cudaLaunchKernelExC_v11060",
        "cudaGraphLaunch_v10000", "cudaLaunchHostFunc_v10000", "cudaMemcpyAsync_v3020",
        "cudaMemcpy_v3020", "cudaMemsetAsync_v3020", "cudaMemset_v3020",
        "cudaStreamSynchronize_v3020", "cudaDeviceSynchronize_v3020",
        "cudaEventSynchronize_v3020", "cudaEventRecord_v3020", "cudaEventRecordWithFlags_v11010",
        "cudaStreamWaitEvent_v3020", "cudaFree_v3020", "cudaFreeHost_v3020",
        "cudaStreamDestroy_v5050", "cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch",
        "cuMemcpyHtoDAsync_v2", "cuMemcpyAsync", "cuMemsetD32Async", "cuStreamSynchronize",
        "cuCtxSynchronize", "cuEventSynchronize", "cuEventRecord", "cuStreamWaitEvent",
        "cuMemFree_v2", "cuMemFreeHost", "cuMemFreeAsync", NULL};
    static const char *const short_ones[] = {
        "cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaStreamIsCapturing_v10000",
        "cudaSetDevice_v3020", "cudaPeekAtLastError_v3020", "cudaEventQuery_v3020",
        "cudaStreamQuery_v3020", "cudaMalloc_v3020", "cudaFreeAsync_v11020",
        "cuCtxGetCurrent", "cuDeviceGet", "cuStreamQuery", "cuPointerGetAttribute", "",
        NULL};
    const uint64_t min = UF_TRACE_API_MIN_NS;
    for (int i = 0; kept[i] != NULL; i++) {
        int always = uf_trace_api_always_kept(kept[i]);
        cr_expect(always, "%s", kept[i]);
        cr_expect(uf_trace_api_kept(always, 1000, 1001, min), "%s", kept[i]);
    }
    for (int i = 0; short_ones[i] != NULL; i++) {
        int always = uf_trace_api_always_kept(short_ones[i]);
        cr_expect(!always, "%s", short_ones[i]);
        cr_expect(!uf_trace_api_kept(always, 1000, 1000 + min - 1, min), "%s", short_ones[i]);
        cr_expect(uf_trace_api_kept(always, 1000, 1000 + min, min), "%s", short_ones[i]);
        cr_expect(uf_trace_api_kept(always, 1000, 1000, 0), "threshold 0: %s", short_ones[i]);
    }
    cr_expect(!uf_trace_api_always_kept(NULL));
    cr_expect(uf_trace_api_kept(uf_trace_api_always_kept(NULL), 1000, 5000, min));
}

Test(doctor_trace4, calls_that_submit_device_work)
{
    static const char *const submit[] = {"cudaLaunchKernel_v7000", "cudaGraphLaunch_v10000",
                                         "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
                                         "cuLaunchKernelEx", "cuMemcpyHtoDAsync_v2",
                                         "cuMemsetD32Async", "cuGraphLaunch", NULL};
    static const char *const not_submit[] = {"cuModuleGetLoadingMode", "cudaGetDeviceCount_v3020",
                                             "cudaStreamSynchronize_v3020", "cudaMalloc_v3020",
                                             "cudaEventRecord_v3020", "cuCtxGetCurrent", "",
                                             NULL};
    for (int i = 0; submit[i] != NULL; i++)
        cr_expect(uf_trace_api_submits(submit[i]), "%s", submit[i]);
    for (int i = 0; not_submit[i] != NULL; i++)
        cr_expect(!uf_trace_api_submits(not_submit[i]), "%s", not_submit[i]);
    cr_expect(!uf_trace_api_submits(NULL));
}

/* CUPTI writes 0 and 0 where it could not time a call: not kept, whatever it is. */
Test(doctor_trace4, calls_without_timestamps_are_left_out)
{
    cr_expect(!uf_trace_api_kept(1, 0, 0, UF_TRACE_API_MIN_NS));
    cr_expect(!uf_trace_api_kept(0, 0, 5000, 0));
    cr_expect(!uf_trace_api_kept(1, 5000, 4000, 0));
}

/* ---- /proc/PID/task/TID/stat ------------------------------------------------------------------- */

static int state_of(const char *text, char *state)
{
    *state = 0;
    return uf_proc_stat_state(text, strlen(text), state);
}

Test(doctor_trace4, stat_state_letter)
{
    char s;
    cr_expect(state_of("1234 (python3) R 1 1234 1234 0 -1 4194560\n", &s) == 0 && s == 'R');
    cr_expect(state_of("1234 (pt_main_thread) S 1 2 3\n", &s) == 0 && s == 'S');
    /* a comm with spaces and parentheses of its own: the last ')' ends it */
    cr_expect(state_of("77 (a) (b) c)) D 1 2\n", &s) == 0 && s == 'D', "%c", s);
    cr_expect(state_of("77 (x) R) S 5\n", &s) == 0 && s == 'S', "%c", s);
    cr_expect(state_of("5 () t 1", &s) == 0 && s == 't');
    cr_expect(state_of("5 (x) Z", &s) == 0 && s == 'Z');
    /* not a stat line */
    cr_expect_eq(state_of("", &s), -1);
    cr_expect_eq(state_of("1234 python3 R 1", &s), -1);
    cr_expect_eq(state_of("1234 (python3)", &s), -1);
    cr_expect_eq(state_of("1234 (python3) ", &s), -1);
    cr_expect_eq(state_of("1234 (python3)R 1", &s), -1);
    cr_expect_eq(state_of("1234 (python3) RS 1", &s), -1);
    cr_expect_eq(state_of("1234 (python3) 7 1", &s), -1);
    cr_expect_eq(state_of("1234 python3) R 1", &s), -1);
}

/* The running test itself reads as running (R) in its own stat file. */
Test(doctor_trace4, stat_state_of_this_process)
{
    char text[1024], s = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cr_expect_eq(uf_proc_stat_state(text, n, &s), 0, "%s", text);
    cr_expect_eq(s, 'R', "%s", text);
}

/* ---- a thread's CPU clock by its id ----------------------------------------------------------- */

Test(doctor_trace4, thread_cpu_clock_is_glibcs)
{
    clockid_t mine;
    cr_assert_eq(pthread_getcpuclockid(pthread_self(), &mine), 0);
    cr_expect_eq(uf_thread_cpu_clock((uint32_t)syscall(SYS_gettid)), mine);
}

typedef struct spinner {
    _Atomic uint32_t tid;
    _Atomic int stop, want, have;
    uint64_t own_ns;            /* its own CPU clock, read when asked */
} spinner;

static uint64_t ns_of(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static void *spin(void *arg)
{
    spinner *s = arg;
    s->tid = (uint32_t)syscall(SYS_gettid);
    while (!s->stop) {
        if (s->want && !s->have) {
            struct timespec t;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            s->own_ns = ns_of(&t);
            s->have = 1;
        }
    }
    return NULL;
}

/* Another thread's clock, read by its id, is the one that thread reads as its own, and grows
 * as it runs (on a loaded machine too: it waits until the thread has run 2 ms). */
Test(doctor_trace4, thread_cpu_clock_of_another_thread, .timeout = 30)
{
    spinner s = {0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, spin, &s), 0);
    while (s.tid == 0) {
    }
    struct timespec t;
    cr_assert_eq(clock_gettime(uf_thread_cpu_clock(s.tid), &t), 0);
    uint64_t before = ns_of(&t), now = before;
    while (now - before < 2000000) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        cr_assert_eq(clock_gettime(uf_thread_cpu_clock(s.tid), &t), 0);
        now = ns_of(&t);
    }
    s.want = 1;
    while (!s.have) {
    }
    cr_assert_eq(clock_gettime(uf_thread_cpu_clock(s.tid), &t), 0);
    uint64_t after = ns_of(&t);
    s.stop = 1;
    pthread_join(th, NULL);
    cr_expect(before <= s.own_ns && s.own_ns <= after, "%llu <= %llu <= %llu",
              (unsigned long long)before, (unsigned long long)s.own_ns,
              (unsigned long long)after);
    /* gone: the clock of a thread that has exited cannot be read, once the kernel has released
     * the task, which can come a little after pthread_join returns (seen on a loaded CI
     * machine: 1 run in 5 still read it right after the join): wait up to a second for it */
    int readable = 1;
    for (int i = 0; i < 1000 && readable; i++) {
        readable = clock_gettime(uf_thread_cpu_clock(s.tid), &t) == 0;
        if (readable) {
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
    cr_expect(!readable, "the exited thread's clock is still read after a second");
}

/* ---- hostile files: what no line alone can tell (#32) ------------------------------------------ */

/* Parse text; expect an error that starts "t.txt:LINE: " and holds what. */
static void expect_refused(const char *text, int line, const char *what)
{
    uf_trace_file f;
    char err[512], where[64];
    cr_expect_eq(uf_trace_parse(strdup(text), "t.txt", &f, err, sizeof err), -1, "%s", text);
    snprintf(where, sizeof where, "t.txt:%d: ", line);
    cr_expect(strstr(err, where) == err, "%s: expected %s", err, where);
    cr_expect(strstr(err, what) != NULL, "%s: expected \"%s\"", err, what);
}

static const char head4[] =
    "underfed-doctor-trace 4\npid 7\nsm_count 132\ncounters nan nan nan nan\ndropped 0\nnote \n"
    "counters_note \nspan 1000 9000\napi_filter 1000 0 0\nhost_sampler 1000 1 0 0\n"
    "record_cap 5000000 0\n";

static void expect_refused4(const char *records, int line, const char *what)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", head4, records);
    expect_refused(text, line, what);
}

Test(doctor_trace4, records_outside_the_span_are_refused)
{
    expect_refused4("K 2000 3000 1 0 7 132 0 0 k\nK 500 3000 2 0 7 132 0 0 k\n"
                    "A 1000 18446744073709551615 2 1 9 cudaLaunchKernel\nend 3\n", 13,
                    "outside the run's span, 1000..9000 ns (its span line); 2 records");
    expect_refused4("U 9001 50\nend 1\n", 12, "1 record outside");
    expect_refused4("H 999 10 9 R\nend 1\n", 12, "outside the run's span");
    /* at the span's edges: inside */
    char text[512];
    snprintf(text, sizeof text, "%sK 1000 9000 1 0 7 132 0 0 k\nH 9000 1 9 S\nend 2\n", head4);
    uf_trace_file f;
    char err[256];
    cr_expect_eq(uf_trace_parse(strdup(text), "t.txt", &f, err, sizeof err), 0, "%s", err);
    uf_trace_free(&f);
}

Test(doctor_trace4, a_span_longer_than_a_week_is_refused)
{
    char text[1024];
    snprintf(text, sizeof text, "%s", head4);
    char *span = strstr(text, "span 1000 9000");
    const char *longer = "span 0 18446744073709551615\napi_filter 1000 0 0\nhost_sampler 1000 1 0 0\n"
                         "record_cap 5000000 0\nend 0\n";
    strcpy(span, longer);
    expect_refused(text, 8, "span: longer than 7 days");
    snprintf(span, 200, "span 5 %llu\napi_filter 1000 0 0\nhost_sampler 1000 1 0 0\n"
             "record_cap 5000000 0\nend 0\n", 5ull + UF_TRACE_MAX_SPAN_NS);
    uf_trace_file f;
    char err[256];
    cr_expect_eq(uf_trace_parse(strdup(text), "t.txt", &f, err, sizeof err), 0, "%s", err);
    uf_trace_free(&f);
}

/* Older files have no span: a record more than a week from the median record's start is
 * refused, and the span is the rest's. */
Test(doctor_trace4, older_files_are_bound_by_their_median_record)
{
    const char *v3 = "underfed-doctor-trace 3\npid 7\nsm_count 132\ncounters nan nan nan nan\n"
                     "dropped 0\nnote \ncounters_note \n";
    char text[1024];
    snprintf(text, sizeof text, "%sK 1796000000000000000 1796000000000500000 1 0 7 132 0 0 k\n"
             "K 1796000000001000000 1796000000001500000 2 0 7 132 0 0 k\n"
             "K 2796000000001000000 2796000000001500000 3 0 7 132 0 0 k\nend 3\n", v3);
    expect_refused(text, 10, "within 7 days of the median record's start); 1 record");
    snprintf(text, sizeof text, "%sK 1796000000000000000 1796000000000500000 1 0 7 132 0 0 k\n"
             "K 1796000000001000000 18446744073709551615 2 0 7 132 0 0 k\n"
             "A 1796000000000000100 1796000000000000200 1 1 cudaLaunchKernel\nend 3\n", v3);
    expect_refused(text, 9, "1 record outside");
}

Test(doctor_trace4, duplicated_records_are_refused)
{
    expect_refused4("K 2000 3000 1 0 7 132 0 0 k\nK 3000 4000 2 0 7 132 0 0 k\n"
                    "K 2000 3000 1 0 7 132 0 0 k\nend 3\n", 14, "the same record as line 12");
    expect_refused4("A 2000 3000 1 1 9 cudaLaunchKernel\nA 2000 3000 1 1 9 cudaLaunchKernel\n"
                    "end 2\n", 13, "the same record as line 12");
    expect_refused4("H 2000 10 9 R\nH 3000 20 9 R\nH 3000 20 9 R\nend 3\n", 14,
                    "the same record as line 13");
    expect_refused4("U 2000 50\nU 2000 50\nend 2\n", 13, "duplicated");
    /* the same times, another name or thread: two records */
    char text[1024];
    snprintf(text, sizeof text, "%sK 2000 3000 1 0 7 132 0 0 k\nK 2000 3000 1 0 7 132 0 0 j\n"
             "A 2000 3000 1 1 9 cudaLaunchKernel\nA 2000 3000 1 1 10 cudaLaunchKernel\nend 4\n",
             head4);
    uf_trace_file f;
    char err[256];
    cr_expect_eq(uf_trace_parse(strdup(text), "t.txt", &f, err, sizeof err), 0, "%s", err);
    uf_trace_free(&f);
}

Test(doctor_trace4, a_threads_samples_go_forward)
{
    expect_refused4("H 2000 500 9 R\nH 3000 400 9 R\nend 2\n", 13,
                    "thread 9's CPU time went back (500 ns at line 12");
    expect_refused4("H 2000 500 9 R\nH 2000 600 9 S\nend 2\n", 13,
                    "thread 9 sampled twice at one time");
    /* another thread's clock is its own */
    char text[1024];
    snprintf(text, sizeof text, "%sH 2000 500 9 R\nH 3000 400 10 R\nH 4000 500 9 S\nend 3\n",
             head4);
    uf_trace_file f;
    char err[256];
    cr_expect_eq(uf_trace_parse(strdup(text), "t.txt", &f, err, sizeof err), 0, "%s", err);
    uf_trace_free(&f);
}

/* Names and notes reach a terminal: escape sequences (ESC, CSI as C1 in UTF-8), DEL and bytes
 * that are not UTF-8 are read as '?'; UTF-8 text stays. */
Test(doctor_trace4, names_and_notes_are_sanitized)
{
    char text[1024];
    snprintf(text, sizeof text,
             "underfed-doctor-trace 4\npid 7\nsm_count 132\ncounters nan nan nan nan\n"
             "dropped 0\nnote \x1b]0;owned\x07 said \xc2\x9b" "31m red\n"
             "counters_note bad \xff\xfe bytes \xc3\xa9t\xc3\xa9\n"
             "span 1000 9000\napi_filter 1000 0 0\nhost_sampler 1000 1 0 0\n"
             "record_cap 5000000 0\n"
             "K 2000 3000 1 0 7 132 0 0 k\x1b[2J\x7f \xe2\x82\xac \xed\xa0\x80 \xc0\xaf\n"
             "A 2000 3000 1 1 9 cuda\x1b[1mLaunch\n"
             "R 2000 3000 step \xf0\x9f\x9a\x80 \xf4\x90\x80\x80\n"
             "end 3\n");
    uf_trace_file f;
    char err[256];
    cr_assert_eq(uf_trace_parse(strdup(text), "t.txt", &f, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(f.t.note, "?]0;owned? said ?31m red");
    cr_expect_str_eq(f.t.counters_note, "bad ?? bytes \xc3\xa9t\xc3\xa9");
    cr_expect_str_eq(f.t.acts[0].name, "k?[2J? \xe2\x82\xac ??? ??");
    cr_expect_str_eq(f.t.apis[0].name, "cuda?[1mLaunch");
    cr_expect_str_eq(f.t.ranges[0].name, "step \xf0\x9f\x9a\x80 ????");
    uf_trace_free(&f);
}

/* The JSON string writer (common/core/strbuf.c) writes valid UTF-8 whatever it is given: a byte that
 * begins no valid sequence is \ufffd; valid sequences stay; controls are escaped. */
Test(doctor_trace4, json_strings_are_valid_utf8)
{
    const char *const cases[][2] = {
        {"plain", "\"plain\""},
        {"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80", "\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\""},
        {"a\xff" "b", "\"a\\ufffdb\""},
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                 /* overlong '/' */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},      /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},  /* past U+10FFFF */
        {"cut \xe2\x82", "\"cut \\ufffd\\ufffd\""},
        {"\x1b[2J\"\\\n", "\"\\u001b[2J\\\"\\\\\\n\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uf_strbuf b = {0};
        uf_sb_json_string(&b, cases[i][0]);
        cr_expect_str_eq(b.data, cases[i][1], "case %zu", i);
        free(b.data);
    }
    cr_expect_eq(uf_utf8_len("\xe2\x82\xac"), 3);
    cr_expect_eq(uf_utf8_len("\xe2\x82"), 0);
    cr_expect_eq(uf_utf8_len("\x80"), 0);
    cr_expect_eq(uf_utf8_len("a"), 1);
}

/* ---- files and folders ------------------------------------------------------------------------- */

#include <fcntl.h>
#include <sys/stat.h>

static const char small4[] =
    "underfed-doctor-trace 4\npid 42\nsm_count 132\ncounters nan nan nan nan\ndropped 0\nnote \n"
    "counters_note \nspan 1000 9000\napi_filter 1000 0 0\nhost_sampler 0 0 0 0\n"
    "record_cap 5000000 0\nK 2000 3000 1 0 7 132 0 0 k\nend 1\n";

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* The folder's read error, which must hold what. */
static void expect_dir_refused(const char *dir, const char *what)
{
    uf_trace_file *files = NULL;
    int n = 0;
    char err[512];
    cr_expect_eq(uf_trace_read_dir(dir, &files, &n, err, sizeof err), -1, "%s", what);
    cr_expect(strstr(err, what) != NULL, "%s: expected \"%s\"", err, what);
}

static void clear_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(doctor_trace4, only_regular_files_are_read, .timeout = 10)
{
    char dir[] = "/tmp/uf_trace4_XXXXXX", path[512];
    cr_assert_not_null(mkdtemp(dir));
    /* a FIFO: refused at once, not waited on */
    snprintf(path, sizeof path, "%s/underfed-trace.1.txt", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_dir_refused(dir, "underfed-trace.1.txt: not a regular file (a FIFO)");
    clear_dir(dir);
    /* a symlink to a device that never ends */
    cr_assert_eq(symlink("/dev/zero", path), 0);
    expect_dir_refused(dir, "underfed-trace.1.txt: not a regular file (a device)");
    clear_dir(dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    expect_dir_refused(dir, "underfed-trace.1.txt: not a regular file (a folder)");
    clear_dir(dir);
    /* larger than the cap (a sparse file: nothing read) */
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    cr_assert(fd >= 0);
    cr_assert_eq(ftruncate(fd, (off_t)UF_TRACE_MAX_BYTES + 1), 0);
    close(fd);
    expect_dir_refused(dir, "bytes, more than the reader's cap of 2 GiB");
    clear_dir(dir);
    /* a symlink to a regular trace is read */
    put_file(dir, "real.txt", small4);
    snprintf(path, sizeof path, "%s/underfed-trace.42.txt", dir);
    cr_assert_eq(symlink("real.txt", path), 0);
    uf_trace_file *files;
    int n;
    char err[512];
    cr_expect_eq(uf_trace_read_dir(dir, &files, &n, err, sizeof err), 0, "%s", err);
    uf_trace_free_all(files, n);
    clear_dir(dir);
    rmdir(dir);
}

Test(doctor_trace4, a_file_is_named_for_its_process)
{
    char dir[] = "/tmp/uf_trace4_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    put_file(dir, "underfed-trace.7.txt", small4);     /* says pid 42 */
    expect_dir_refused(dir, "underfed-trace.7.txt:2: pid 42, but the file is named for pid 7");
    clear_dir(dir);
    put_file(dir, "underfed-trace.x42.txt", small4);
    expect_dir_refused(dir, "underfed-trace.x42.txt: not named for a process");
    clear_dir(dir);
    /* a name anyone chose reaches the message sanitized */
    put_file(dir, "underfed-trace.\x1b[2J.txt", small4);
    expect_dir_refused(dir, "underfed-trace.?[2J.txt: not named for a process");
    clear_dir(dir);
    put_file(dir, "underfed-trace.42.txt", small4);
    put_file(dir, "underfed-trace.042.txt", small4);
    expect_dir_refused(dir, "two files for pid 42");
    clear_dir(dir);
    rmdir(dir);
}

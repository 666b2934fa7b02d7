/* The file libunderfed_inject.so writes for the doctor: one process's records, one file per
 * pid (DIR/underfed-trace.PID.txt), written atomically at exit (temporary name, rename), read
 * strictly: a malformed line is an error naming file and line. Plain C, no CUDA.
 *
 * Text, one record a line, fields separated by one space, integers in decimal, times in ns
 * (CUPTI's timebase). The header lines come first, each once, in this order; the last line
 * counts the records, so that a truncated file is an error, not a shorter run:
 *
 *   underfed-doctor-trace 4           (versions 1 to 3, read too: see below)
 *   pid PID
 *   sm_count N                        SMs of the device (0 unknown)
 *   counters SM TENSOR DRAM NVML      run means in %, "nan" where not measured
 *   dropped N                         records CUPTI dropped
 *   note TEXT                         what the recorder could not see (may be empty)
 *   counters_note TEXT                why a counter series is empty or partial (may be empty)
 *   span START END                    the recorder's first and last timestamps: from its start
 *                                     (InitializeInjection; earlier where a record is, such as
 *                                     NVML's buffered samples) to the writing of the records
 *                                     (later where a record ends later): every record lies
 *                                     within
 *   api_filter MIN_NS LEFT_OUT LEFT_OUT_NS   API calls shorter than MIN_NS that neither launch,
 *                                     copy, set memory, synchronize, record an event nor may
 *                                     drain (uf_trace_api_always_kept) were left out: LEFT_OUT
 *                                     of them, LEFT_OUT_NS ns in all (their time reads as the
 *                                     host's own work); calls without timestamps count there
 *                                     too; MIN_NS 0: none left out
 *   host_sampler PERIOD_US THREADS OVER_CAP LEFT_OUT   the host sampler (H records): its period
 *                                     (0: off), the threads it followed, the CUDA-calling
 *                                     threads it did not (beyond its cap), samples left out
 *                                     beyond the record cap
 *   record_cap MAX LEFT_OUT           the recorder kept at most MAX records (and their lines
 *                                     within UF_TRACE_RECORD_BYTES); LEFT_OUT more arrived and
 *                                     were left out (the diagnosis covers the run's first part)
 *   K START END CORR DEVICE STREAM BLOCKS GRAPH COMM NAME   kernel (COMM 1: NCCL)
 *   C START END CORR DEVICE STREAM SRC DST BYTES           memcpy (SRC, DST uf_mem_kind)
 *   M START END CORR DEVICE STREAM BYTES                   memset
 *   A START END CORR RUNTIME TID NAME                      API call (RUNTIME 1, driver 0; TID
 *                                                          the OS thread, gettid(); 0 unknown)
 *   S START END CORR STREAM KIND                           sync (KIND uf_sync_kind)
 *   R START END NAME                                       NVTX range
 *   P START END SM OCC TENSOR DRAM    PM sample (uf_pm_sample): SM active, occupancy, tensor
 *                                     active, DRAM throughput, % of peak ("nan" not read)
 *   U T UTIL                          NVML utilization (%) of the interval ending at T
 *   W T SM_CLOCK_MHZ POWER_W          one read of the SM clock and the board power ("nan")
 *   H T RUN_NS TID STATE              a CUDA-calling thread at T (uf_host_sample): the CPU time
 *                                     it had run so far (its thread CPU clock, the first field
 *                                     of /proc/self/task/TID/schedstat kept up to date), its
 *                                     state letter (/proc/self/task/TID/stat: R running, S
 *                                     sleeping, D waiting on I/O, ...)
 *   end N                                                  N = records above
 *
 * NAME is the rest of the line (kernel names have spaces); the writer turns control
 * characters into spaces and writes "?" for a missing name.
 *
 * The reader (a file anyone can send: `underfed doctor --from DIR`) also refuses, naming file
 * and line: a record outside the run's span (format 4: the span line; older files, which have
 * none: more than UF_TRACE_MAX_SPAN_NS from their median record's start, then their span is
 * their records'; the message counts the records outside), a span longer than
 * UF_TRACE_MAX_SPAN_NS, a record twice, a thread sampled twice at one time or its CPU time going
 * back; and, naming the file: anything but a regular file (a FIFO, a device, a folder), a file
 * over UF_TRACE_MAX_BYTES, a NUL byte, a file named for another pid than its pid line says (or
 * not for a decimal pid), two files of one folder for one pid. Names and notes are read with
 * control characters (C0, DEL, C1) and bytes that are not UTF-8 as '?': nothing raw reaches a
 * terminal. Two samples of one thread give the share of the time between them that it ran;
 * the reads of its CPU clock and of the timestamp are not simultaneous, so that share may pass
 * 100 % by the sampler's skew: clamp it.
 *
 * Version 3 (before the calling threads) has no span, api_filter, host_sampler and record_cap
 * lines, no H records, and its API records no TID (read as 0: unknown); its recorder kept
 * only the calls that launched a recorded activity or made a sync, event records and the
 * calls that may drain.
 *
 * Version 2 (doctor before the counters) has no counters_note line and no P, U, W records;
 * its counters line was the only source of counters (the recorder wrote nan there).
 *
 * Version 1 (doctor before the merge of the harness's memory kinds) differs in two lines:
 *   C START END CORR DEVICE STREAM KIND PAGEABLE BYTES (KIND uf_copy_kind, PAGEABLE 0/1),
 *     read as the memory kinds that give the same direction and pageable flag;
 *   S START END CORR KIND (no stream: read as stream 0). */
#ifndef UF_DOCTOR_TRACE_H
#define UF_DOCTOR_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "doctor.h"
#include "strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UF_TRACE_VERSION 4
#define UF_TRACE_MAGIC "underfed-doctor-trace 4"
#define UF_TRACE_MAGIC_V3 "underfed-doctor-trace 3"
#define UF_TRACE_MAGIC_V2 "underfed-doctor-trace 2"
#define UF_TRACE_MAGIC_V1 "underfed-doctor-trace 1"
/* A sampled percentage (P records) may read a little above 100: a counter's peak is nominal. */
#define UF_TRACE_SAMPLE_PCT_MAX 200.0
/* The longest run a trace may span (format 4's span line; older files: a record's distance
 * from their median record's start): a week, far beyond what the recorder's record cap holds
 * of any program, and short of the years by which a damaged timestamp is off. */
#define UF_TRACE_MAX_SPAN_NS (7ull * 24 * 3600 * 1000000000ull)
#define UF_TRACE_MAX_SPAN_TEXT "7 days"
/* The largest file the reader reads. The recorder keeps its device, API, sync and NVTX records
 * within half of it (UF_TRACE_RECORD_BYTES, by each line's widest fields and its name) and its
 * host samples within its record cap (5M of ~50 bytes by default), so that what it writes is
 * read: a launch storm's records average ~100 bytes, so 5M of them take ~0.5 GB. */
#define UF_TRACE_MAX_BYTES ((size_t)2 << 30)
#define UF_TRACE_MAX_BYTES_TEXT "2 GiB"
#define UF_TRACE_RECORD_BYTES ((uint64_t)UF_TRACE_MAX_BYTES / 2)
#define UF_TRACE_PREFIX "underfed-trace."
#define UF_TRACE_SUFFIX ".txt"

/* What format 4's header lines say beyond the records themselves (zero in older files, but
 * version). */
typedef struct uf_trace_info {
    int version;                /* the file's format, 1..UF_TRACE_VERSION */
    int has_span;               /* a span line (format 4) */
    uint64_t span_start_ns, span_end_ns;
    uint64_t api_min_ns;        /* API calls shorter than this, of no kept kind, left out */
    uint64_t api_left_out;      /* ... how many */
    uint64_t api_left_out_ns;   /* ... their time in all */
    uint32_t host_period_us;    /* the host sampler's period; 0 off */
    uint32_t host_threads;      /* threads it followed */
    uint32_t host_threads_over_cap; /* CUDA-calling threads it did not (beyond its cap) */
    uint64_t host_left_out;     /* samples left out beyond the record cap */
    uint64_t record_cap;        /* records the recorder kept at most (0: not said) */
    uint64_t records_left_out;  /* records beyond it, left out */
} uf_trace_info;

/* A trace read from a file: the records point into `text`, which the file owns. */
typedef struct uf_trace_file {
    uf_dtrace t;
    uf_trace_info info;
    char *text;
    char path[512];
} uf_trace_file;

/* The first start and the last end of t's records of every kind ([0, 0] with none). */
void uf_trace_records_span(const uf_dtrace *t, uint64_t *first_ns, uint64_t *last_ns);
/* The trace as the file's text (format 4), into b; info NULL: the span of the records, nothing
 * left out, no sampler. */
void uf_trace_format_info(uf_strbuf *b, const uf_dtrace *t, const uf_trace_info *info);
void uf_trace_format(uf_strbuf *b, const uf_dtrace *t);
/* DIR/underfed-trace.PID.txt, atomically (info as uf_trace_format_info's). 0, or -1 with err. */
int uf_trace_write_info(const char *dir, const uf_dtrace *t, const uf_trace_info *info,
                        char *err, size_t errlen);
int uf_trace_write(const char *dir, const uf_dtrace *t, char *err, size_t errlen);
/* Read and check one file. 0, or -1 with err "PATH:LINE: what is wrong". */
int uf_trace_read(const char *path, uf_trace_file *f, char *err, size_t errlen);
/* Parse text (the file's content, modified in place and then owned by f). Same errors. */
int uf_trace_parse(char *text, const char *path, uf_trace_file *f, char *err, size_t errlen);
void uf_trace_free(uf_trace_file *f);

/* ---- the recorder's decisions (plain C, so that they are tested) ------------------------- */

/* API calls shorter than this are left out unless uf_trace_api_always_kept (format 4's
 * api_filter; UNDERFED_DOCTOR_API_MIN_NS overrides it). 1 us: the calls PyTorch makes around
 * each launch (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing, ...) take a few hundred
 * ns each and outnumber the launches several times; left out, the time inside them (written in
 * the header, LEFT_OUT_NS) reads as the host's own work, off by at most 1 us per call. */
#define UF_TRACE_API_MIN_NS 1000u

/* Is an API call (runtime or driver name, CUPTI's, with or without its version suffix) kept
 * whatever its duration: a launch (kernels, graphs, host functions), a copy or a memset (their
 * activity records correlate with it), a synchronization or a stream's wait for an event (a
 * sync record does), an event record (steps of identical kernels are found by them), or a call
 * that may wait for the device (uf_doctor_may_drain's; the driver's frees)? */
int uf_trace_api_always_kept(const char *name);
/* Does an API call (runtime or driver name) submit work to the device: a launch (kernels,
 * graphs), a copy, a memset? A process whose records hold API calls but none of these ran
 * nothing on the device (it only initialized CUDA: torch.compile's workers, a launcher). */
int uf_trace_api_submits(const char *name);
/* Is a call from start_ns to end_ns kept, with threshold min_ns, when always_kept is
 * uf_trace_api_always_kept of its name (the recorder looks that up once per callback id)? A call
 * without timestamps (CUPTI writes 0 and 0) never is: it could lie anywhere. */
int uf_trace_api_kept(int always_kept, uint64_t start_ns, uint64_t end_ns, uint64_t min_ns);
/* The state letter of a /proc/PID/task/TID/stat text ("TID (COMM) S ..."): the field after
 * the last ')' (COMM may hold spaces and parentheses of its own). 0, or -1 when the text is
 * not such a line. */
int uf_proc_stat_state(const char *text, size_t len, char *state);
/* The CPU-time clock of thread tid of this process (clock_gettime on it gives the ns it has run,
 * the first field of /proc/self/task/TID/schedstat, but up to date for a thread running at that
 * moment, which schedstat is only at the next tick): Linux's encoding of a thread CPU clock, the
 * value glibc's pthread_getcpuclockid gives, made from a thread id where no pthread_t is at
 * hand (threads seen only in CUPTI's records). */
clockid_t uf_thread_cpu_clock(uint32_t tid);

/* What a file says of its recording, for the report: one line (indented, ending in a newline)
 * with the format, the span, CUPTI's dropped records, the API filter, the host sampler and the
 * record cap. */
void uf_trace_describe(uf_strbuf *b, const uf_trace_file *f);
/* The same as a JSON object: pid, path, format, span_start_ns, span_end_ns, span_ms, dropped,
 * api_calls, api_min_ns, api_left_out, api_left_out_ns, host_period_us, host_threads,
 * host_threads_over_cap, host_samples, host_left_out, record_cap, records_left_out; then
 * "diagnosed" and, when not, "reason" (why_not: NULL when diagnosed). */
void uf_trace_describe_json(uf_strbuf *b, const uf_trace_file *f, const char *why_not);

/* Is a file name a trace's (UF_TRACE_PREFIX, something, UF_TRACE_SUFFIX)? */
int uf_trace_is_name(const char *name);
/* Every DIR/underfed-trace.*.txt, sorted by name, into *files (malloc'ed, *n of them).
 * 0, or -1 with err (a bad file, or none at all). */
int uf_trace_read_dir(const char *dir, uf_trace_file **files, int *n, char *err, size_t errlen);
void uf_trace_free_all(uf_trace_file *files, int n);

#ifdef __cplusplus
}
#endif
#endif

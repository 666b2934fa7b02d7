/* The file libunderfed_inject.so writes for the doctor: one process's records, one file per
 * pid (DIR/underfed-trace.PID.txt), written atomically at exit (temporary name, rename), read
 * strictly: a malformed line is an error naming file and line. Plain C, no CUDA.
 *
 * Text, one record a line, fields separated by one space, integers in decimal, times in ns
 * (CUPTI's timebase). The header lines come first, each at most once, in this order; the last
 * line counts the records, so that a truncated file is an error, not a shorter run:
 *
 *   underfed-doctor-trace 3           (versions 1 and 2, read too: see below)
 *   pid PID
 *   sm_count N                        SMs of the device (0 unknown)
 *   counters SM TENSOR DRAM NVML      run means in %, "nan" where not measured
 *   dropped N                         records CUPTI dropped
 *   note TEXT                         what the recorder could not see (may be empty)
 *   counters_note TEXT                why a counter series is empty or partial (may be empty)
 *   K START END CORR DEVICE STREAM BLOCKS GRAPH COMM NAME   kernel (COMM 1: NCCL)
 *   C START END CORR DEVICE STREAM SRC DST BYTES           memcpy (SRC, DST uf_mem_kind)
 *   M START END CORR DEVICE STREAM BYTES                   memset
 *   A START END CORR RUNTIME NAME                          API call (RUNTIME 1, driver 0)
 *   S START END CORR STREAM KIND                           sync (KIND uf_sync_kind)
 *   R START END NAME                                       NVTX range
 *   P START END SM OCC TENSOR DRAM    PM sample (uf_pm_sample): SM active, occupancy, tensor
 *                                     active, DRAM throughput, % of peak ("nan" not read)
 *   U T UTIL                          NVML utilization (%) of the interval ending at T
 *   W T SM_CLOCK_MHZ POWER_W          one read of the SM clock and the board power ("nan")
 *   end N                                                  N = records above
 *
 * NAME is the rest of the line (kernel names have spaces); the writer turns control
 * characters into spaces and writes "?" for a missing name.
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

#include "doctor.h"
#include "strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UF_TRACE_VERSION 3
#define UF_TRACE_MAGIC "underfed-doctor-trace 3"
#define UF_TRACE_MAGIC_V2 "underfed-doctor-trace 2"
#define UF_TRACE_MAGIC_V1 "underfed-doctor-trace 1"
/* A sampled percentage (P records) may read a little above 100: a counter's peak is nominal. */
#define UF_TRACE_SAMPLE_PCT_MAX 200.0
#define UF_TRACE_PREFIX "underfed-trace."
#define UF_TRACE_SUFFIX ".txt"

/* A trace read from a file: the records point into `text`, which the file owns. */
typedef struct uf_trace_file {
    uf_dtrace t;
    char *text;
    char path[512];
} uf_trace_file;

/* The trace as the file's text, into b. */
void uf_trace_format(uf_strbuf *b, const uf_dtrace *t);
/* DIR/underfed-trace.PID.txt, atomically. 0, or -1 with err. */
int uf_trace_write(const char *dir, const uf_dtrace *t, char *err, size_t errlen);
/* Read and check one file. 0, or -1 with err "PATH:LINE: what is wrong". */
int uf_trace_read(const char *path, uf_trace_file *f, char *err, size_t errlen);
/* Parse text (the file's content, modified in place and then owned by f). Same errors. */
int uf_trace_parse(char *text, const char *path, uf_trace_file *f, char *err, size_t errlen);
void uf_trace_free(uf_trace_file *f);

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

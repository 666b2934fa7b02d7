/* underfed doctor: the diagnosis of one process's trace (any CUDA program, recorded by
 * libunderfed_inject.so or made by hand in a test). Plain C, no CUDA.
 *
 * 1. The steady state: steps from NVTX ranges (the most frequent range name), else from the
 *    sequence of device work (kernels by name, copies by direction, memsets, syncs, event
 *    records) in launch order, by two signals (doctor_steps.c): the record whose occurrences
 *    keep a constant spacing over the most records (near ties: the longer spacing, then the
 *    one after the longest host pause; one kernel a step is a step of one kernel), and the
 *    host's pause that recurs at one spacing; the pause sets the phase, and the step's length
 *    where it recurs every k record periods; periods that are not multiples of each other are
 *    ambiguous, and the window is judged as one step. Leading and trailing steps much slower
 *    than the median (warm-up, a compiling first step) are left out. What precedes the steps
 *    (start-up, compilation, warm-up) and follows them (the tail) is measured and reported,
 *    not analysed.
 * 2. Per-step figures: the harness's timeline analysis (timeline.h) over the steady window,
 *    syncs, drains and pageable copies per step included (its step window is the steps' host
 *    span); the device's idle time split by what the host thread that submitted the work
 *    ending each gap was doing (doctor_idle.c: in launch calls, dispatching between them, its
 *    own work, of it input, other CUDA calls, syncs, or nothing: device-side), where in the
 *    step the drains returned, and exposed host-to-device copies.
 * 3. One rule per failure mode (uf_doctor_rules, the one table of thresholds that docs/doctor.md's
 *    table is tested against): verdict none / moderate / high from the share of step time at
 *    stake, the evidence, the fix and the scenario that reproduces it. Padding and recompute
 *    leave no trace in a timeline: those rules say "cannot tell" and why.
 * 4. Opt-in (underfed doctor --ceilings FILE): the figures a trace can honestly hold against
 *    the machine's ceilings file (uf_doctor_compare): the launch calls' median duration against
 *    launch_us, pinned host-to-device copy rates against h2d_pinned_gbs, and DRAM and tensor
 *    activity against copy_dram_pct / gemm_bf16_tensor_pct where the file has them (files
 *    the bench wrote before 2026-12-01 do not). Pageable copies are counted but held against
 *    nothing: their records time only the DMA of data the driver had staged, no end-to-end
 *    rate like h2d_pageable_gbs. A row missing or in another unit is said, its value NaN. */
#ifndef UF_DOCTOR_H
#define UF_DOCTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strbuf.h"
#include "timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The recorder's note: its sentences on what it could not see, "; "-separated. */
#define UF_DOCTOR_NOTE_LEN 1024

/* NVML's utilization as nvmlDeviceGetSamples lists it: the busy share of the interval that
 * ends at t_ns (CUPTI's timebase; the recorder moves NVML's realtime stamps onto it). */
typedef struct uf_util_sample {
    uint64_t t_ns;
    double util_pct;
} uf_util_sample;

/* One read of the SM clock and the board power (NaN where the read failed). */
typedef struct uf_clock_sample {
    uint64_t t_ns;
    double sm_clock_mhz;
    double power_w;
} uf_clock_sample;

/* One read of a host thread's scheduler state (format 4): at t_ns (CUPTI's timebase), the
 * time the thread had run on a CPU so far (the first field of /proc/self/task/TID/schedstat,
 * ns) and its state letter (the third field of .../stat: 'R' running, 'S' sleeping, 'D' waiting
 * on I/O, ...). Two reads of one thread give the share of the interval between them that it
 * ran: a host thread that prepares the data itself runs, one that waits for workers sleeps. */
typedef struct uf_host_sample {
    uint64_t t_ns;
    uint64_t run_ns;
    uint32_t tid;
    char state;
} uf_host_sample;

/* One process's records (one file per pid: doctor_trace.h). Counter means are NaN when not
 * recorded. */
typedef struct uf_dtrace {
    uf_activity *acts;
    size_t n_acts;
    uf_api_call *apis;
    size_t n_apis;
    uf_sync_record *syncs;
    size_t n_syncs;
    uf_range *ranges;
    size_t n_ranges;
    int pid;
    int sm_count;               /* SMs of the device; 0 unknown */
    double sm_active_pct;       /* counters over the run (PM sampling), NaN when absent */
    double tensor_active_pct;
    double dram_pct;
    double nvml_util_pct;       /* NVML "gpu" utilization mean, NaN when absent */
    /* the series (format 3): the analysis takes their means over the steady window; where a
     * series is empty, the run means above stand in (formats 1 and 2, hand-made traces) */
    uf_pm_sample *pm;           /* CUPTI PM sampling, CUPTI's timebase */
    size_t n_pm;
    uf_util_sample *util;
    size_t n_util;
    uf_clock_sample *clocks;
    size_t n_clocks;
    uf_host_sample *host;       /* format 4: the CUDA-calling threads' scheduler reads, by time */
    size_t n_host;
    char counters_note[256];    /* why a series is empty or partial ("" none) */
    uint64_t dropped;           /* records CUPTI dropped */
    char note[UF_DOCTOR_NOTE_LEN]; /* what the recorder could not see (another CUPTI client, ...) */
} uf_dtrace;

/* A finding's verdict (compare.h's uf_verdict is a comparison's: the names stay apart, so
 * that one file can include both). */
typedef enum {
    UF_VERDICT_NONE = 0, UF_VERDICT_MODERATE = 1, UF_VERDICT_HIGH = 2, UF_VERDICT_CANNOT_TELL = 3
} uf_doctor_level;

/* The rules, one per failure mode. */
typedef enum {
    UF_RULE_LAUNCH_BOUND, UF_RULE_HOST_SYNC, UF_RULE_STARVED_INPUT, UF_RULE_HOST_BOUND,
    UF_RULE_ALLOC_CHURN, UF_RULE_KERNEL_COMPILE, UF_RULE_COMM_EXPOSED,
    UF_RULE_ELEMENTWISE_CHAIN, UF_RULE_LOW_SM_FILL, UF_RULE_SIMT_GEMM, UF_RULE_DECODE_GEMV,
    UF_RULE_PADDING, UF_RULE_RECOMPUTE, UF_N_RULES
} uf_rule_id;

/* One row of the rule table: the share of step time at stake (a percentage) is moderate from
 * `moderate_pct` and high from `high_pct`; `gate` is the rule's extra condition in words and
 * `gate_value`, `gate_min_pct` its numbers. Rules that a trace cannot decide have NaN thresholds and say why in `fix`. */
typedef struct uf_doctor_rule {
    const char *id;             /* "launch_bound" */
    const char *failure;        /* the failure mode, one line */
    const char *share;          /* what the share at stake measures */
    double moderate_pct, high_pct;
    const char *gate;           /* the extra condition, in words ("" none) */
    double gate_value;          /* its number (NaN none): comm_exposed the overlap % below
                                 * which it counts, low_sm_fill the NVML % from which it counts */
    double gate_min_pct;        /* the failure's own time as % of the step from which the rule
                                 * applies (comm_exposed: communication); NaN none */
    const char *fix;
    const char *gain;           /* what the gain a fix could give assumes: "if ..." (the step
                                 * without the share at stake) */
    int host_side;              /* the share is the device waiting for the host: removing it
                                 * can also let the host's other work run under the device's
                                 * (more gain), and the recorder's own cost on the host is in
                                 * it (less): "about"; else the step without the share is the
                                 * most the fix gives ("at most") */
    const char *scenario;       /* the suite's reproduction (build/scenarios/NAME --explain),
                                 * or the example; "" none yet */
    const char *source;         /* where the thresholds come from */
} uf_doctor_rule;

extern const uf_doctor_rule uf_doctor_rules[UF_N_RULES];

/* Thresholds the analysis itself uses (steady state, step detection). */
#define UF_DOCTOR_GAIN_MAX 1000.0     /* a share of 99.9 % and more: "at most 1000x" */
#define UF_DOCTOR_MIN_STEPS 3          /* fewer steps: no steady state, the whole run is analysed */
#define UF_DOCTOR_SLOW_STEP 1.5        /* a leading/trailing step this × the median is warm-up/tail */
#define UF_DOCTOR_STEP_WORK_SLACK 1.25 /* a slow leading step does the steps' work: as many device
                                        * records as the median kept step, within this factor, */
#define UF_DOCTOR_STEP_WORK_SHARED 0.5 /* ... at least this share of them of the kept steps' kinds */
#define UF_DOCTOR_CHAIN_MIN 3          /* consecutive elementwise kernels that make a chain */
#define UF_DOCTOR_BATCH_MIN_BYTES 4096ull /* a host-to-device copy smaller than this is a
                                 * value, not a batch: a framework's scalars and constants (JAX
                                 * op by op copies 4-byte ones between its launches: 11,789 of
                                 * a held-out program's 14,633 copies on the H200), so the host
                                 * work before it is not input preparation */
#define UF_DOCTOR_DISPATCH_NS 100000ull /* host time between two CUDA calls of a thread up to
                                        * which it is a framework's per-launch cost, not the
                                        * host's own work: PyTorch eager spends ~10 us of Python
                                        * and dispatcher before each launch (examples/pytorch:
                                        * serial_decode.py eager), JAX op by op some tens; CUDA
                                        * graphs and compilation remove it. 10x that margin;
                                        * what a program does besides launching (a loader's
                                        * collate, logging, an optimizer's Python) takes
                                        * milliseconds a stretch. The recorder's left-out calls
                                        * (< 1 us each, format 4) add to a stretch */
#define UF_DOCTOR_DISPATCH_X 4.0       /* ... or up to this x the thread's median stretch before
                                        * a launch, where that is longer: JAX op by op spends
                                        * 0.5-2 ms of dispatch before each launch (the corpus's
                                        * jax_opbyop on the H200), every launch alike, while a
                                        * program's own work is one long stretch among short
                                        * ones; a framework's ops vary a few times (an optimizer
                                        * step, an autograd node) around their median */
#define UF_DOCTOR_BUILD_AHEAD_RECORDS 64 /* a gap's own work is a build where device code is
                                        * loaded after it with at most this many of the
                                        * device's records between, ... */
#define UF_DOCTOR_BUILD_AHEAD_BUSY 0.01 /* ... together busy less than this x the gap: a
                                        * compiler touches the device in passing (torch.compile
                                        * recompiling on the H200: 1.8-2.8 s of tracing, then two
                                        * 1 us fills read back, then 2.9-3.5 s more before its
                                        * loads); a step's work keeps it busy far more */
#define UF_DOCTOR_TENSOR_PIPES_IDLE 10.0 /* elementwise_chain with counters: tensor active
                                        * below this while busy, the tensor pipes are idle (an
                                        * attention or GEMM kernel keeps them well above) */
#define UF_DOCTOR_TENSOR_IDLE 0.25     /* simt_gemm: tensor active below this × the tensor-core
                                        * GEMMs' share of the step: they ran without them */
#define UF_DOCTOR_DRAM_BOUND 50.0      /* simt_gemm: ... unless DRAM was at least this busy: the
                                        * GEMMs waited on memory (a small M streams its weights
                                        * per token: small_batch micro1 on the H200 ran tensor
                                        * 12.6 %, DRAM 61.8 %), no slow path. elementwise_chain
                                        * with counters: a kernel that kept DRAM this busy
                                        * while the device ran (elementwise_chain unfused on
                                        * the H200: 85.4 %, 96 % of the copy's) is memory-bound */
#define UF_DOCTOR_COVER_TIE 0.02       /* step candidates covering within 2 % of each other tie
                                        * (doctor_steps.c, better_candidate) */
#define UF_DOCTOR_PAUSE_BREAK 1.5      /* the host's pauses taken as step boundaries are at least
                                        * 1.5 x the longest of the others: a dataloader's or a
                                        * sync's pause stands out from the ~10 us a framework
                                        * spends between launches by far more; jitter between
                                        * launches rarely does by this much at a constant
                                        * spacing */
#define UF_DOCTOR_PAUSE_REGULAR 0.6    /* ... and at least 60 % of them follow each other at one
                                        * spacing (the rest: a collection or a page fault inside
                                        * a step, a pause missing where the batch was ready) */
#define UF_DOCTOR_PAUSE_BREAKS 32      /* natural breaks tried, from the longest pause down */
#define UF_DOCTOR_LOOSE_MIN_RECORDS 16 /* UF_DOCTOR_STEP_SLACK's loose chains only for steps
                                        * of this many records or more: in a
                                        * shorter one a record of another thread is a sixth of
                                        * it or more, and its own thread's records repeat at
                                        * one spacing (doctor_steps.c, detect_steps) */
#define UF_DOCTOR_STEP_SLACK 4         /* a record once a step repeats within a quarter of its
                                        * median spacing (doctor_steps.c,
                                        * repeating_records): the kernels a step launches
                                        * change with its shapes (cuBLAS and the compilers pick
                                        * one per size: a torch.compile'd GPT fed 12 sequence
                                        * lengths on the H200 ran steps of 283 to 322 records,
                                        * examples/heldout3/compile_dynamic.py), and a loss read
                                        * every 100 steps adds a few records to one */

/* ---- against the machine's ceilings (opt-in: underfed doctor --ceilings FILE) -------------- */

/* The ceilings file's rows the doctor compares with (uf_doctor_ceiling_rows names them and
 * their units): the launch floor, the pinned host-to-device rate, and the activity PM sampling
 * read during the bench's copy and GEMM (benches/ceilings' activity pass). */
typedef enum {
    UF_CEIL_LAUNCH_US, UF_CEIL_H2D_PINNED_GBS, UF_CEIL_COPY_DRAM_PCT, UF_CEIL_GEMM_TENSOR_PCT,
    UF_N_CEIL
} uf_ceil_id;

typedef struct uf_doctor_ceiling_row {
    const char *name;           /* the row's name in ceilings.csv ("launch_us") */
    const char *unit;           /* the unit it must have ("us") */
} uf_doctor_ceiling_row;

extern const uf_doctor_ceiling_row uf_doctor_ceiling_rows[UF_N_CEIL];

/* Those rows of one file: each value, or NaN with the reason (no such row, another unit). */
typedef struct uf_doctor_ceilings {
    char path[256];
    double value[UF_N_CEIL];
    char why[UF_N_CEIL][96];    /* "" where value holds the row */
    int absent[UF_N_CEIL];      /* the file has no such row */
} uf_doctor_ceilings;

/* Host-to-device copies by host memory: pinned, pageable. */
enum { UF_H2D_PINNED = 0, UF_H2D_PAGEABLE = 1, UF_N_H2D = 2 };

/* The diagnosis against the ceilings (uf_doctor_compare). Ratios NaN where a side is missing. */
typedef struct uf_doctor_vs {
    int compared;               /* 0: no ceilings file given (nothing printed, nothing in JSON) */
    uf_doctor_ceilings c;
    double launch_x;            /* launch_call_us / launch_us */
    double h2d_pinned_pct;      /* pinned copies' rate as % of h2d_pinned_gbs (pageable copies
                                 * have no comparable rate: see h2d_gbs) */
    double dram_of_copy_pct;    /* dram_pct as % of copy_dram_pct */
    double tensor_of_gemm_pct;  /* tensor_active_pct as % of gemm_bf16_tensor_pct */
} uf_doctor_vs;

typedef struct uf_finding {
    uf_rule_id rule;
    uf_doctor_level verdict;
    double share_pct;           /* share of step time at stake (NaN: cannot tell) */
    double gain_x;              /* the most a fix could gain: the step over the step without
                                 * the share at stake, 100 / (100 - share), at most
                                 * UF_DOCTOR_GAIN_MAX (NaN: cannot tell) */
    double step_without_ms;     /* the median step without it */
    double span_ms;             /* > 0: the share and the gain are of this span of the run, not
                                 * of the step (kernel_compile's recompilation before the
                                 * window: the run since its first steps) */
    char evidence[384];         /* the measured figures behind the verdict */
} uf_finding;

/* The diagnosis of one process. Times in ms; shares in % of the steady window (device time),
 * which is the share of the mean step. */
typedef struct uf_diagnosis {
    int pid;
    char step_source[224];      /* "nvtx \"train_step\"" or "detected: every 12 records" or
                                 * "none: whole run" */
    int n_steps;                /* steps in the steady window */
    int steps_left_out;         /* slow leading/trailing steps left out (warm-up, tail) */
    double startup_ms;          /* first record → the window's first device work (start-up,
                                 * compilation, warm-up) */
    double tail_ms;             /* the window's last device work → last record */
    double step_ms;             /* median step on the device: a step's first work to the next's */
    uf_timeline_metrics tl;     /* the harness's metrics over the window; tl.window_ms is the
                                 * steady window on the device: first → last device work
                                 * launched inside the steps */
    /* The device's idle time in the window by what the host thread that submitted the work
     * ending each gap was doing (pass 4, doctor_idle.c), % of the window (of n_devices x the
     * window where the process drove several devices); the nine add up to the idle time: */
    double idle_launch_pct;     /* inside launch calls: that work's own (and its latency to
                                 * start), or another launch just before it */
    double idle_graph_launch_pct; /* of idle_launch, inside graph launches (a graph of many
                                 * tiny kernels can take longer to launch than to run) */
    double idle_dispatch_pct;   /* outside CUDA calls, in stretches of at most
                                 * UF_DOCTOR_DISPATCH_NS between two calls of the thread: a
                                 * framework's dispatch before each launch */
    double idle_input_pct;      /* the host's own work (longer stretches) that ended in a
                                 * host-to-device copy of a batch (UF_DOCTOR_BATCH_MIN_BYTES),
                                 * and the copies' calls */
    double idle_work_pct;       /* the host's own work otherwise: Python, logging, ... */
    double idle_api_pct;        /* inside other CUDA calls (queries, attributes, ...) */
    double idle_alloc_pct;      /* inside calls that allocate, free or pin memory (cudaMalloc,
                                 * cudaFree, ...), and after a drain in a free */
    double idle_compile_pct;    /* inside calls that load or link device code, and the host's
                                 * own work that ended in one (a kernel built for a new shape) */
    double idle_sync_pct;       /* after a drain (the thread's call waited while the device ran
                                 * out of work: as long as that wait, at most the gap) and
                                 * inside calls that wait for the device */
    double idle_device_pct;     /* the work's launch call had returned before the gap began:
                                 * a dependency, the queue, no launch call recorded */
    /* the raw state of the submitting thread over the host-wait idle (every part but
     * idle_device), before any rule reads it; the three add up to it: */
    double host_in_call_pct;    /* inside a CUDA call that does not wait (launches, copies,
                                 * other calls) */
    double host_in_wait_pct;    /* inside a call that may wait for the device */
    double host_outside_pct;    /* inside no CUDA call (dispatch, the host's own work) */
    double input_ran_pct;       /* the share of idle_input's time its thread ran on a CPU (the
                                 * host samples, format 4): it prepared the data itself; low, it
                                 * slept (waited for workers or I/O); NaN not recorded */
    double work_ran_pct;        /* the same for idle_work */
    int n_devices;              /* devices with work in the window */
    /* the rules' shares from the split: */
    double launch_gap_pct;      /* idle_launch - idle_graph_launch + idle_dispatch:
                                 * launch_bound's (graph launches not: the recorder slows them,
                                 * doctor_idle.c) */
    double input_gap_pct;       /* idle_input (starved_input adds exposed copies) */
    double host_gap_pct;        /* idle_work + idle_api: host_bound's */
    double alloc_gap_pct;       /* idle_alloc: alloc_churn's */
    double alloc_calls_per_step;  /* the allocator's calls starting in the window, a step */
    double alloc_ms_per_step;   /* their time a step (the device waiting or not) */
    double compile_gap_pct;     /* idle_compile: kernel_compile's */
    double load_calls_per_step; /* the calls loading device code starting in the window, a step */
    double load_ms_per_step;    /* their time a step */
    double recompile_ms;        /* device idle while the host built or loaded device code
                                 * after steps like the steady ones had run and before the
                                 * window (uf_doctor_work.steps_began_ns: a recompilation the
                                 * window leaves out as start-up); 0 none */
    double since_steps_ms;      /* the run from those first steps to the window's end (0 none) */
    double recompile_pct;       /* recompile_ms of since_steps_ms (per device), in % */
    double sync_gap_pct;        /* idle_sync: host_sync's; syncs, drains and pageable copies
                                 * per step are tl's */
    double sync_pos_pct;        /* mean position in their step where the drains returned
                                 * (0 start, 100 end); NaN with none */
    double h2d_exposed_ms;      /* host-to-device copy time per step not under a kernel */
    double elementwise_ms;      /* kernel time per step in memory-bound chains: runs of >=
                                 * UF_DOCTOR_CHAIN_MIN consecutive memory-bound kernels */
    double chain_family_per_step;   /* their kernels per step memory-bound by family (name) */
    double chain_counters_per_step; /* ... by the counters alone (no family name) */
    double chain_triton_per_step;   /* ... of them Triton's fused kernels (compiled already) */
    int chain_counters;         /* 1: PM samples covered the window's kernels, the counters
                                 * were a signal; 0: families alone */
    double simt_gemm_ms;        /* GEMM kernel time per step on the CUDA cores, as the name
                                 * says (uf_doctor_is_cuda_core_gemm; decode-shaped ones are
                                 * not counted in any of the four) */
    double tc_gemm_ms;          /* ... with a tensor-core name and no misalignment */
    double unknown_gemm_ms;     /* ... whose name says neither (XLA's gemm_fusion_dot, Triton
                                 * templates): only the counters can tell */
    double misaligned_gemm_ms;  /* ... with a tensor-core name that says align1/align2 */
    double gemv_ms;             /* decode-shaped matrix products' kernel time per step
                                 * (uf_doctor_is_decode_matmul) */
    double gemv_per_step;       /* ... and their kernels per step */
    /* the union of the SIMT and misaligned GEMMs' intervals per step, and of all three
     * classes': what simt_gemm counts (kernels of two classes at once count once) */
    double simt_any_ms, gemm_any_ms;
    int sm_count;               /* the trace's SM count (0 unknown) */
    double underfilled_ms;      /* kernel time per step × the share of SMs its grid leaves empty */
    /* the counters over the steady window (NaN where not recorded): PM sampling's means
     * (uf_pm_window_mean), NVML's utilization (uf_util_window), SM clock and power (the reads
     * inside the window) */
    double sm_active_pct, tensor_active_pct, dram_pct;
    double nvml_util_pct, sm_clock_mhz, power_w;
    int n_pm_used, n_util_used, n_clocks_used; /* samples behind each (0: run means or none;
                                                * n_util_used -1: partial intervals) */
    char counters_note[256];    /* the recorder's reason for missing counters */
    /* the host's cost per launch and the copies' rates in the window, for uf_doctor_compare: */
    double launch_call_us;      /* median duration of the launching calls of the window's
                                 * kernels (graph nodes not: one cudaGraphLaunch launches many);
                                 * NaN with none matched */
    int n_launch_calls;
    int n_graph_kernels;        /* the window's kernels launched as graph nodes (left out) */
    double h2d_gbs[UF_N_H2D];   /* host-to-device copies of known size: bytes / their records'
                                 * time (GB/s = bytes per ns); NaN with none. Pinned: the
                                 * transfer. Pageable: only the DMA of data the driver had
                                 * already staged through its pinned buffer, not the host's
                                 * staging, so no end-to-end rate */
    int n_h2d[UF_N_H2D];
    double h2d_mean_bytes[UF_N_H2D];
    uf_doctor_vs vs;            /* against the ceilings, when compared */
    uf_finding findings[UF_N_RULES];   /* in rule order */
    int order[UF_N_RULES];      /* moderate/high by share, then none: order[0] is the top */
    char note[UF_DOCTOR_NOTE_LEN]; /* the recorder's note */
} uf_diagnosis;

/* Diagnose one process's trace. 0, or -1 with err (no device activity, out of memory). */
int uf_doctor_analyze(const uf_dtrace *t, uf_diagnosis *d, char *err, size_t errlen);

/* The verdict of rule r for a share (and its gate: 1 holds, 0 not). */
uf_doctor_level uf_doctor_verdict(uf_rule_id r, double share_pct, int gate_holds);

const char *uf_doctor_verdict_name(uf_doctor_level v);

/* The doctor's rows of the ceilings file at path, read by the suite's strict reader
 * (uf_ceilings_read_rows): a row absent or in another unit is NaN with the reason. 0, or -1
 * with err when the file cannot be read or is not a valid ceilings file. */
int uf_doctor_ceilings_read(const char *path, uf_doctor_ceilings *c, char *err, size_t errlen);
/* The same from rows already read (path names them). */
void uf_doctor_ceilings_from_rows(const char *path, const uf_ceiling_row *rows, int n,
                                  uf_doctor_ceilings *c);
/* Compare d (uf_doctor_analyze's) with c: fills d->vs, which the text and the JSON then show
 * (a line "against this GPU's ceilings (FILE): ..." and the object "ceilings"). */
void uf_doctor_compare(uf_diagnosis *d, const uf_doctor_ceilings *c);

/* The diagnosis as text (what a person reads), and as a JSON object. */
void uf_doctor_print(FILE *f, const uf_diagnosis *d);
void uf_doctor_json(uf_strbuf *b, const uf_diagnosis *d);
/* The rule table as Markdown (docs/doctor.md's table is this output). */
void uf_doctor_rules_markdown(uf_strbuf *b);

/* Kernel-name classes the rules use (exposed for tests): memory-bound families, GEMMs, GEMMs
 * that use tensor cores (not the ffma/simt ones). Substring (or prefix) matches,
 * case-sensitive, against tables in doctor_rules.c. */
/* The family of memory-bound kernels a name belongs to ("PyTorch elementwise", "dropout",
 * "casts and copies", norms, softmax, reductions, indexing, Triton pointwise and reductions,
 * CuPy, XLA loop and input fusions), or NULL. */
const char *uf_doctor_memory_family(const char *name);
/* torch.compile's fused Triton kernels (triton_poi_, triton_red_, triton_per_). */
int uf_doctor_is_triton_fused(const char *name);
/* The families as Markdown (docs/doctor.md's table is this output). */
void uf_doctor_families_markdown(uf_strbuf *b);
int uf_doctor_is_gemm(const char *name);
int uf_doctor_is_tensor_core(const char *name);
/* A GEMM whose name says it runs on the CUDA cores: ffma, simt, or cuBLAS's and CUTLASS's
 * SIMT GEMMs (sgemm, dgemm, gemmSN, gemmk1). A GEMM name that says neither this nor a
 * tensor-core path (uf_doctor_is_tensor_core) tells nothing of its path. */
int uf_doctor_is_cuda_core_gemm(const char *name);
/* A matrix-vector product (batch-1 decode): the name contains "gemv" in any case (cuBLAS's
 * gemv2T_kernel_val, gemv2N_kernel, gemvx_kernel; CUTLASS's gemm::kernel::Gemv, whose
 * namespace also makes it a uf_doctor_is_gemm name; serial_decode's sd_gemv_kernel). The
 * simt_gemm figures leave these out: a GEMV is memory-bound whatever units it runs on. */
int uf_doctor_is_gemv(const char *name);
/* The smaller side of an nvjet (cuBLAS) kernel's CTA tile, from the first "_AxB_" field of its
 * name whose sides are positive decimal numbers; 0 if the name is not nvjet or has none (sm90
 * and sm100 names are read; sm120's three-number tiles, "_mma_64x32x64_", are not). Measured on the H200 (PyTorch 2.11,
 * bf16 F.linear with K = 4096, N = 12288): 1 and 8 tokens ran nvjet_sm90_tst_128x8_64x12_...,
 * 16 ran 128x16, 32 ran 128x32, 64 ran 128x64, 256 ran 192x128. */
int uf_doctor_nvjet_tile_min(const char *name);
/* Tiles this narrow (<= 16) mean a matrix product of at most 16 tokens: decode-shaped. */
#define UF_DOCTOR_SKINNY_TILE 16
/* decode_gemv counts a decode-shaped product only when its grid holds at least half the SMs:
 * a decode product streams a weight matrix that spans the GPU (the corpus's 4096-wide decode
 * on the H200 ran its 128x8 nvjet GEMMs on 96-128 CTAs of 132 SMs), while a skinny tile on a
 * grid that leaves most SMs idle is a small matrix (a width-512 MLP at batch 64 ran 64x8
 * tiles on 64 CTAs), low_sm_fill's to judge (its fix: more rows per kernel). Grids or SM
 * counts unknown count. */
#define UF_DOCTOR_DECODE_MIN_FILL 0.5
/* A decode-shaped matrix product: a GEMV, or an nvjet GEMM whose tile side is <= 16. Such a
 * kernel streams its weights for a few tokens; memory-bound whatever units it runs on, so the
 * simt_gemm figures leave it out. A training job's rank-8 LoRA adapter or 8-expert router
 * would read as one too (a small share of its step). */
int uf_doctor_is_decode_matmul(const char *name);
/* A GEMM kernel name whose operand alignment is 1 or 2 elements (align1, aligna2, ...): rows
 * not 16-byte aligned, the slow path of an odd leading dimension. */
int uf_doctor_is_misaligned(const char *name);
/* cudaEventRecord* calls (runtime API names): kept by the recorder, used to find steps. */
int uf_doctor_is_event_record(const char *api_name);
/* Runtime calls that may wait for the device (cudaFree, cudaDeviceSynchronize,
 * cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy*, cudaMemset*, ...; not cudaFreeAsync
 * nor cudaMemsetAsync... which queue): kept by the recorder even without an activity or a
 * sync record of their own, so that the timeline's drains see them. */
int uf_doctor_may_drain(const char *api_name);

/* ---- what the recorder could not see (its decisions, in plain C so they are tested) ---------- */

/* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another client (nsys, ncu, torch.profiler's
 * Kineto, a second injection) holds CUPTI's one subscriber slot. The recorder checks at
 * compile time that this is CUPTI's value. */
#define UF_CUPTI_MULTIPLE_SUBSCRIBERS 39

/* The note for a CUPTI refusal: CUPTI refused `refused` (a subscription, activity kinds) with
 * `result` (named `result_name`), so the doctor cannot see `lost`. Result 39 names the other
 * profiler as the cause and says that the program runs on. */
void uf_doctor_refusal_note(char *out, size_t len, int result, const char *result_name,
                            const char *refused, const char *lost);

/* Fewer kernels recorded than launched: another activity client took CUPTI's buffers
 * (torch.profiler registers its own; the last registration wins). 1 with the note when fewer
 * than 90 % arrived, else 0; 0 too with graph launches (their kernel count is unknown) or no
 * launch counted (the launch counter was refused: the refusal's note says so). */
int uf_doctor_missing_kernels_note(char *out, size_t len, unsigned long recorded,
                                   unsigned long launched, unsigned long graph_launches);

#ifdef __cplusplus
}
#endif
#endif

/* What the doctor's files share and nothing else uses (doctor.h is the public header). The
 * analysis is a row of passes over one working state, each in its own file and each tested on
 * its own (tests/unit/test_doctor.c):
 *
 *   1. index     (doctor.c)          the records: each activity's launching call, the span
 *   2. steps     (doctor_steps.c)    the steady-state steps and the steady window
 *   3. window    (doctor.c)          the harness's timeline over the window, each activity's step
 *   4. idle      (doctor_idle.c)     the device's idle time split by cause
 *   5. kernels   (doctor_kernels.c)  kernel time by class, the host's cost per launch
 *   6. counters  (doctor.c)          PM sampling, NVML, clocks over the window
 *   7. rules     (doctor_rules.c)    the findings; doctor_report.c prints them
 *
 * uf_doctor_analyze (doctor.c) runs them in that order. */
#ifndef UF_DOCTOR_INTERNAL_H
#define UF_DOCTOR_INTERNAL_H

#include "doctor.h"

/* What a host thread was doing inside one of its CUDA calls, while the device sat idle. */
typedef enum {
    UF_CALL_LAUNCH,             /* queues work and returns: cudaLaunch*, cuLaunch*, graph
                                 * launches, async copies and memsets, event records, stream
                                 * waits (uf_api_never_waits, and the calls that launched a
                                 * recorded activity without waiting) */
    UF_CALL_WAIT,               /* may wait for the device: syncs, blocking copies, cudaFree
                                 * (uf_doctor_may_drain, and the calls of blocking sync records) */
    UF_CALL_H2D,                /* copies to the device (the call of a host-to-device copy
                                 * record): the host stages or hands over a batch */
    UF_CALL_OTHER               /* any other call (cudaMalloc, queries, module loading) */
} uf_call_kind;

/* A host thread's CUDA call, outermost only (a driver call made inside a runtime call is part
 * of it). */
typedef struct uf_doctor_call {
    uint64_t start_ns, end_ns;
    uint32_t thread;            /* 0 unknown: format <= 3 traces, one thread for the process */
    uint8_t kind;               /* uf_call_kind */
    uint8_t work;               /* it launched recorded device work: UF_WORK_* */
    uint8_t graph;              /* a graph launch (cudaGraphLaunch, cuGraphLaunch) */
    uint8_t alloc;              /* it allocates, frees or pins memory (uf_doctor_is_alloc_call),
                                 * or a call inside it does */
    uint8_t load;               /* it loads or links device code (uf_doctor_is_load_call), or a
                                 * call inside it does */
} uf_doctor_call;

/* Is this API call's name a graph launch? */
int uf_doctor_is_graph_launch(const char *api_name);

/* Does this API call allocate, free, map or pin memory (cudaMalloc*, cudaFree*, cudaHostAlloc,
 * cudaHostRegister, cuMemAlloc*, cuMemFree*, cuMemCreate, cuMemMap, ...)? The allocator's
 * calls: a free may wait for the device, an allocation asks the driver (and the OS) for
 * memory, and both cost the host every step a program gives its memory back. */
int uf_doctor_is_alloc_call(const char *api_name);

/* Does this API call load or link device code (cuModuleLoad*, cuLibraryLoad*, cudaLibraryLoad*,
 * cuLink*)? In the steady window a load means a kernel the program had not run before: built
 * for a new shape (cuDNN's runtime-compiled kernels, torch.compile's recompiles, XLA) or
 * JIT-compiled from PTX by the driver. */
int uf_doctor_is_load_call(const char *api_name);

/* What a call launched on the device: nothing recorded, a host-to-device copy, other work. */
enum { UF_WORK_NONE = 0, UF_WORK_H2D = 1, UF_WORK_OTHER = 2 };

/* One thread's calls: calls[first .. first + n). */
typedef struct uf_doctor_thread {
    uint32_t thread;
    size_t first, n;
    uint64_t dispatch_ns;       /* its stretches between two calls up to this long are a
                                 * framework's per-launch cost (uf_doctor_dispatch_ns) */
} uf_doctor_thread;

/* The analysis's working state: what each pass leaves for the ones after it. */
typedef struct uf_doctor_work {
    const uf_dtrace *t;
    /* 1. index */
    uint64_t *launch_ns;        /* per activity: launch call start (or its own start) */
    uint64_t *launch_end;       /* per activity: launch call end (0: no call matched) */
    size_t *act_api;            /* per activity: its launching call's index in t->apis
                                 * (SIZE_MAX none) */
    size_t *sync_api;           /* per sync record: the call that waited (SIZE_MAX none) */
    uint64_t first_ns, last_ns; /* first and last record of the process */
    uf_doctor_call *calls;      /* every thread's outermost calls, by thread, then start */
    size_t n_calls;
    size_t *call_of_api;        /* per API record: its outermost call in calls */
    uf_doctor_thread *threads;  /* each thread's calls in calls, by thread */
    size_t n_threads;
    uint64_t *load_ns;          /* the start of every outermost call that loads device code,
                                 * any thread's, by time */
    size_t n_loads;
    const uf_host_sample **host; /* the host samples by thread, then time */
    size_t n_host;
    /* 2. steps */
    uint64_t *bounds;           /* step starts, n_steps + 1 entries (the last: window end) */
    int n_steps;
    uint64_t steps_began_ns;    /* where steps like the steady ones ran first, before a stretch
                                 * the window leaves out as start-up (a recompilation after the
                                 * warm-up's steps): the first of an earlier chain of at least
                                 * UF_DOCTOR_MIN_STEPS of them, or the first step after the
                                 * run's first build where as many slow leading steps left
                                 * out loaded device code after it (trim_slow_steps);
                                 * UINT64_MAX none */
    /* 3. window: the harness's timeline over the steps, and from one pass over the
     * activities, the steady window's device work */
    uf_timeline tl;
    uf_drain *drains;           /* the timeline's drains in the window, by the end of the call */
    size_t n_drains;
    int *step_of;               /* per activity: its step by launch time, -1 outside the window */
    uint64_t *first_launch;     /* per step: the earliest launch of its work (UINT64_MAX none) */
    uint64_t *first_start;      /* per step: the earliest start of that work on the device */
    uint64_t dev_begin, dev_end, dev_last_start; /* its first start, last end, last start */
} uf_doctor_work;

/* Pass 1: each activity's launching call, each thread's calls by time with their kind, the
 * host samples by thread, and the records' span. 0, or -1 out of memory. */
int uf_doctor_pass_index(uf_doctor_work *w, const uf_dtrace *t);
/* Pass 2: the steps (NVTX, else detected, else the whole run), slow leading and trailing ones
 * left out: w->bounds, w->n_steps; d->step_source, d->steps_left_out. 0, or -1 out of memory. */
int uf_doctor_pass_steps(uf_doctor_work *w, uf_diagnosis *d);
/* Pass 3: the timeline over the steps (d->tl, w->drains), each activity's step, the device
 * window, start-up, tail and the median step. 0; -1 out of memory; -2 no device work launched
 * inside the steady window. */
int uf_doctor_pass_window(uf_doctor_work *w, uf_diagnosis *d);
/* Pass 4: the device's idle time in the steady window by what the host thread that submits
 * the work ending each gap was doing (doctor_idle.c, doctor.h's idle split), and where in
 * their step the drains returned. 0, or -1 out of memory. */
int uf_doctor_pass_idle(const uf_doctor_work *w, uf_diagnosis *d);
/* The calls of thread `thread` in w->calls: [*first, *first + *n), and its dispatch bound
 * (uf_doctor_thread.dispatch_ns; UF_DOCTOR_DISPATCH_NS for a thread without calls). */
void uf_doctor_thread_calls(const uf_doctor_work *w, uint32_t thread, size_t *first, size_t *n,
                            uint64_t *dispatch_ns);
/* The start of the first call of any thread that loads device code at or after x
 * (w->load_ns); UINT64_MAX none. */
uint64_t uf_doctor_first_load(const uf_doctor_work *w, uint64_t x);
/* Did any thread start a call that loads device code from x to y (inclusive)? */
int uf_doctor_loads_between(const uf_doctor_work *w, uint64_t x, uint64_t y);
/* Is this activity a batch copied to the device: host to device, at least
 * UF_DOCTOR_BATCH_MIN_BYTES or of unknown size (a smaller one is a value, launched like a
 * kernel)? */
int uf_doctor_is_batch_copy(const uf_activity *a);
/* A thread's dispatch bound from its calls c[0..n) (by time): the longer of
 * UF_DOCTOR_DISPATCH_NS and UF_DOCTOR_DISPATCH_X x the median, over its calls that launch
 * device work, of its time outside CUDA calls since the last such call (its typical host time
 * per launch: a framework's dispatch spans the small calls it makes on the way).
 * 0 on out of memory (the caller falls back to UF_DOCTOR_DISPATCH_NS). */
uint64_t uf_doctor_dispatch_ns(const uf_doctor_call *c, size_t n);
/* Pass 5: kernel time by class, copies, the host's cost per launch. 0, or -1 out of memory. */
int uf_doctor_pass_kernels(const uf_doctor_work *w, uf_diagnosis *d);
/* Pass 6: the counters over the steady window. */
void uf_doctor_pass_counters(const uf_doctor_work *w, uf_diagnosis *d);
/* Everything the passes allocated. */
void uf_doctor_work_free(uf_doctor_work *w);

/* A value for the evidence text: "n/a" where it was not measured. */
typedef struct uf_doctor_num_text {
    char s[32];
} uf_doctor_num_text;

/* v with `decimals` decimals, or "n/a" when NaN (doctor_rules.c). */
uf_doctor_num_text uf_doctor_num(double v, int decimals);

/* Pass 7: every rule over d's figures: share, verdict and evidence of each finding
 * (doctor_rules.c). */
void uf_doctor_apply_rules(uf_diagnosis *d);

/* d->order: the findings rated moderate or high by share of the step at stake (high first at
 * equal shares), then those rated none by share, cannot tell last. */
void uf_doctor_order_findings(uf_diagnosis *d);

#endif

/* The recorder's counters (inject_counters.h). The harness's instruments, not copies: the PM
 * sampler of pm_sampling.c (libcupti through cupti_dl.c: the soname finds the copy the recorder
 * already links) and nvml.c (opened by the device's PCI bus id, asked of the driver that
 * loaded us: the recorder links no CUDA runtime).
 *
 * A poller thread reads the SM clock and the board power every NVML_PERIOD_MS and fetches
 * NVML's buffered utilization samples every UTIL_FETCH_PERIODS reads (NVML keeps one per 200
 * ms, each the busy share of the interval before it); their realtime stamps are moved onto
 * CUPTI's timebase, the one of every other record.
 *
 * The state is one static struct: CUPTI's resource callback and the exit handler, which start
 * and stop it, carry no user context of ours. Its lock guards start and stop; the series are
 * written by the PM decode thread and the poller until they are joined, then only read. */
#include "inject_counters.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_activity.h>

#include "clock.h"
#include "doctor_trace.h"
#include "instruments.h"
#include "results.h"
#include "status.h"
#include "strbuf.h"

#define PM_INTERVAL_US 10000u   /* 10 ms: 100 samples a second, tens in a short steady window */
#define NVML_PERIOD_MS 100      /* SM clock and power */
#define UTIL_FETCH_PERIODS 10   /* NVML's utilization samples: fetched every second */

typedef struct counters {
    pthread_mutex_t lock;
    int started, stopped;
    CUcontext ctx;              /* the context whose device is sampled */
    uf_pm *pm;
    uf_nvml *nv;
    pthread_t poller;
    int polling;
    atomic_int stop_polling;
    uint64_t util_since_us;     /* the newest utilization sample fetched (realtime µs) */
    uf_pm_sample *pm_samples;
    size_t n_pm;
    uf_util_sample *util;
    int n_util, cap_util;
    uf_clock_sample *clocks;
    int n_clocks, cap_clocks;
    int out_of_memory;          /* some samples were lost to a failed allocation */
    char note[256];
} counters;

static counters cnt = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Append a sentence to the counters note (the recorder's note gets it at exit, and stderr). */
static void add_note(const char *what, const char *why)
{
    size_t len = strlen(cnt.note);
    snprintf(cnt.note + len, sizeof cnt.note - len, "%s%s: %s", len ? "; " : "", what, why);
}

static uint64_t cupti_ns(void)
{
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

/* ---- NVML -------------------------------------------------------------------------------- */

/* The PCI bus id of CUDA device `ordinal`, from the driver already loaded in the process. */
static int bus_id_of(int ordinal, char *bus, int len, char *reason, size_t reason_len)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        snprintf(reason, reason_len, "libcuda.so.1 is not loaded");
        return UF_SKIP;
    }
    CUresult (*get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
    CUresult (*bus_id)(char *, int, CUdevice) =
        (CUresult(*)(char *, int, CUdevice))dlsym(lib, "cuDeviceGetPCIBusId");
    CUdevice dev;
    int rc = get != NULL && bus_id != NULL && get(&dev, ordinal) == CUDA_SUCCESS &&
                     bus_id(bus, len, dev) == CUDA_SUCCESS ? UF_OK : UF_SKIP;
    if (rc != UF_OK)
        snprintf(reason, reason_len, "no PCI bus id for CUDA device %d", ordinal);
    dlclose(lib);   /* NOLOAD took a reference: give it back */
    return rc;
}

static void add_clock(double mhz, double watts)
{
    uf_clock_sample *grown = uf_grow(cnt.clocks, &cnt.cap_clocks, cnt.n_clocks + 1,
                                     sizeof *cnt.clocks, 1024);
    if (grown == NULL) {
        cnt.out_of_memory = 1;
        return;
    }
    cnt.clocks = grown;
    cnt.clocks[cnt.n_clocks++] = (uf_clock_sample){cupti_ns(), mhz, watts};
}

/* The utilization samples NVML buffered since the last fetch, onto CUPTI's timebase. */
static void fetch_util(void)
{
    uint64_t *ts;
    double *pct;
    size_t n;
    char reason[UF_REASON_LEN] = "";
    if (uf_nvml_util_samples(cnt.nv, cnt.util_since_us, &ts, &pct, &n, reason, sizeof reason) !=
        UF_OK)
        return;     /* the last fetch at stop says why, if it still fails */
    int64_t offset = (int64_t)cupti_ns() - (int64_t)uf_realtime_ns();
    for (size_t i = 0; i < n; i++) {
        if (ts[i] <= cnt.util_since_us)
            continue;
        uf_util_sample *grown = uf_grow(cnt.util, &cnt.cap_util, cnt.n_util + 1,
                                        sizeof *cnt.util, 256);
        if (grown == NULL) {
            cnt.out_of_memory = 1;
            break;
        }
        cnt.util = grown;
        cnt.util[cnt.n_util++] = (uf_util_sample){(uint64_t)((int64_t)ts[i] * 1000 + offset),
                                                  pct[i]};
        cnt.util_since_us = ts[i];
    }
    free(ts);
    free(pct);
}

static void sleep_ms(long ms)
{
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void *poller_main(void *arg)
{
    (void)arg;
    for (int tick = 1; !atomic_load(&cnt.stop_polling); tick++) {
        sleep_ms(NVML_PERIOD_MS);
        double mhz, watts;
        uf_nvml_read_clock_power(cnt.nv, &mhz, &watts);
        add_clock(mhz, watts);
        if (tick % UTIL_FETCH_PERIODS == 0)
            fetch_util();
    }
    return NULL;
}

static void start_nvml(int ordinal)
{
    char bus[64], reason[UF_REASON_LEN] = "";
    if (bus_id_of(ordinal, bus, (int)sizeof bus, reason, sizeof reason) != UF_OK ||
        uf_nvml_open_bus_id(bus, &cnt.nv, reason, sizeof reason) != UF_OK) {
        add_note("NVML", reason);
        return;
    }
    /* a second back: the sample that opens the first interval */
    cnt.util_since_us = uf_realtime_ns() / 1000 - 1000000;
    atomic_store(&cnt.stop_polling, 0);
    if (pthread_create(&cnt.poller, NULL, poller_main, NULL) != 0) {
        add_note("NVML", "cannot start the sampling thread");
        uf_nvml_close(cnt.nv);
        cnt.nv = NULL;
        return;
    }
    cnt.polling = 1;
}

static void stop_nvml(void)
{
    if (cnt.nv == NULL)
        return;
    if (cnt.polling) {
        atomic_store(&cnt.stop_polling, 1);
        pthread_join(cnt.poller, NULL);
        cnt.polling = 0;
    }
    fetch_util();
    if (cnt.n_util == 0)
        add_note("NVML", "no utilization sample (nvmlDeviceGetSamples listed none)");
    uf_nvml_close(cnt.nv);
    cnt.nv = NULL;
}

/* ---- PM sampling ------------------------------------------------------------------------- */

static void start_pm(int ordinal)
{
    char reason[UF_REASON_LEN] = "";
    if (uf_cupti_load(reason, sizeof reason) != UF_OK ||
        uf_pm_open(ordinal, &cnt.pm, reason, sizeof reason) != UF_OK ||
        uf_pm_start(cnt.pm, PM_INTERVAL_US, reason, sizeof reason) != UF_OK) {
        add_note("PM sampling", reason[0] ? reason : "cannot start");
        uf_pm_close(cnt.pm);
        cnt.pm = NULL;
    }
}

/* A counter's peak is nominal: a sample may read a little outside 0..100. The trace keeps
 * 0..UF_TRACE_SAMPLE_PCT_MAX (one odd value must not make the file unreadable). */
static double clamp_pct(double v)
{
    return isnan(v) ? v : fmax(0.0, fmin(v, UF_TRACE_SAMPLE_PCT_MAX));
}

static void clamp_sample(uf_pm_sample *s)
{
    s->sm_active_pct = clamp_pct(s->sm_active_pct);
    s->occupancy_pct = clamp_pct(s->occupancy_pct);
    s->tensor_active_pct = clamp_pct(s->tensor_active_pct);
    s->dram_pct = clamp_pct(s->dram_pct);
}

/* Stop and keep the samples; a series with holes (the hardware buffer overflowed) is left
 * empty, as the harness does: its mean would pass for the window's. */
static void stop_pm(void)
{
    if (cnt.pm == NULL)
        return;
    const uf_pm_sample *samples = NULL;
    size_t n = 0;
    char reason[UF_REASON_LEN] = "";
    int rc = uf_pm_stop(cnt.pm, &samples, &n, reason, sizeof reason);
    if (rc != UF_OK || reason[0]) {
        add_note("PM sampling", reason[0] ? reason : "cannot stop");
    } else if (n == 0) {
        add_note("PM sampling", "no sample decoded");
    } else if ((cnt.pm_samples = malloc(n * sizeof *samples)) != NULL) {
        memcpy(cnt.pm_samples, samples, n * sizeof *samples);
        cnt.n_pm = n;
        for (size_t i = 0; i < n; i++)
            clamp_sample(&cnt.pm_samples[i]);
    } else {
        cnt.out_of_memory = 1;
    }
    uf_pm_close(cnt.pm);
    cnt.pm = NULL;
}

/* ---- the interface ------------------------------------------------------------------------- */

/* Set while this thread starts or stops the counters: a context that CUPTI's profiler might
 * create or destroy meanwhile calls back on the same thread, which must not wait for the lock
 * it holds. */
static _Thread_local int inside;

void inj_counters_start(CUcontext ctx)
{
    if (inside)
        return;
    inside = 1;
    pthread_mutex_lock(&cnt.lock);
    if (!cnt.started && !cnt.stopped) {
        cnt.started = 1;
        cnt.ctx = ctx;
        uint32_t device = 0;
        CUptiResult r = cuptiGetDeviceId(ctx, &device);
        if (r != CUPTI_SUCCESS) {
            const char *msg = NULL;
            cuptiGetResultString(r, &msg);
            add_note("cuptiGetDeviceId", msg != NULL ? msg : "failed");
        } else {
            start_pm((int)device);
            start_nvml((int)device);
        }
    }
    pthread_mutex_unlock(&cnt.lock);
    inside = 0;
}

void inj_counters_stop(CUcontext ctx_or_null)
{
    if (inside)
        return;
    inside = 1;
    pthread_mutex_lock(&cnt.lock);
    if (cnt.started && !cnt.stopped && (ctx_or_null == NULL || ctx_or_null == cnt.ctx)) {
        cnt.stopped = 1;
        stop_pm();
        stop_nvml();
    }
    pthread_mutex_unlock(&cnt.lock);
    inside = 0;
}

void inj_counters_off(const char *why)
{
    pthread_mutex_lock(&cnt.lock);
    cnt.stopped = 1;
    uf_copy_str(cnt.note, sizeof cnt.note, why);
    pthread_mutex_unlock(&cnt.lock);
}

void inj_counters_take(uf_dtrace *t)
{
    pthread_mutex_lock(&cnt.lock);
    if (!cnt.started && cnt.note[0] == '\0')
        uf_copy_str(cnt.note, sizeof cnt.note, "not started: no CUDA context was created");
    if (cnt.out_of_memory)
        add_note("samples", "some lost (out of memory)");
    t->pm = cnt.pm_samples;
    t->n_pm = cnt.n_pm;
    t->util = cnt.util;
    t->n_util = (size_t)cnt.n_util;
    t->clocks = cnt.clocks;
    t->n_clocks = (size_t)cnt.n_clocks;
    /* the run means of the header line: what the recorder saw from start to stop */
    uf_pm_sample mean;
    if (cnt.n_pm > 0 && uf_pm_window_mean(cnt.pm_samples, cnt.n_pm, cnt.pm_samples[0].start_ns,
                                          cnt.pm_samples[cnt.n_pm - 1].end_ns, &mean) > 0) {
        t->sm_active_pct = fmin(mean.sm_active_pct, 100.0);  /* the header's range */
        t->tensor_active_pct = fmin(mean.tensor_active_pct, 100.0);
        t->dram_pct = fmin(mean.dram_pct, 100.0);
    }
    double sum = 0.0;
    int n = 0;
    for (int i = 0; i < cnt.n_util; i++)
        if (!isnan(cnt.util[i].util_pct)) {
            sum += cnt.util[i].util_pct;
            n++;
        }
    if (n > 0)
        t->nvml_util_pct = sum / n;
    uf_copy_str(t->counters_note, sizeof t->counters_note, cnt.note);
    pthread_mutex_unlock(&cnt.lock);
}

/* NVML, opened with dlopen so that the programs start where NVML is missing (CI): the
 * utilization that nvidia-smi shows, from NVML's own samples inside the timing pass; the SM
 * clock and the board power, sampled on a thread during it; the GPM metrics (Hopper and
 * later) as a cross-check of the CUPTI counters; and a few facts for the results' metadata.
 * Only the few NVML types used are declared here, with the layouts of nvml.h
 * (NVML_API_VERSION 13), as the H200 probe used them. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "errors.h"
#include "instruments.h"

/* ---- the NVML declarations used -------------------------------------------------------- */

typedef int nvmlReturn_t;               /* enum nvmlReturn_enum */
#define NVML_SUCCESS 0
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

typedef struct {
    unsigned int version;               /* NVML_GPM_SUPPORT_VERSION */
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1

typedef struct {
    char *shortName, *longName, *unit;
} nvmlGpmMetricInfo_t;

typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    nvmlGpmMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

#define NVML_GPM_METRIC_MAX 333
typedef struct {
    unsigned int version;               /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics;
    nvmlGpmSample_t sample1, sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
#define NVML_GPM_METRICS_GET_VERSION 1

/* nvmlDeviceGetFieldValues: one field per entry (40 bytes, as nvml.h lays it out). */
typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    int siVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;                      /* enum nvmlValueType_enum */
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;
/* The board power now, in mW (uiVal): not the trailing 1 s average nvmlDeviceGetPowerUsage
 * reads on Ampere (but GA100) and later. Read on the H200 with driver 580: during a GEMM loop
 * at the 700 W limit it ranged up to 742 W about a 691 W average. */
#define NVML_FI_DEV_POWER_INSTANT 186

enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
/* nvmlDeviceGetSamples: a buffered sample and the kind used (NVML_GPU_UTILIZATION_SAMPLES) */
typedef struct {
    unsigned long long timeStamp;       /* µs, the realtime clock */
    nvmlValue_t sampleValue;
} nvmlSample_t;
#define NVML_GPU_UTILIZATION_SAMPLES 1
#define NVML_ERROR_NOT_FOUND 6           /* nvmlDeviceGetSamples: no sample since the time */
/* GPM metric ids, in the order uf_gpm_end returns them */
enum {
    NVML_GPM_METRIC_SM_UTIL = 2,
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
};
#define GPM_N_METRICS 4
#define GPM_SLOTS 3       /* the first usable snapshot, the newest, the one being read */

typedef nvmlReturn_t (*nvml_init_fn)(void);
typedef nvmlReturn_t (*nvml_shutdown_fn)(void);
typedef const char *(*nvml_error_string_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvml_handle_by_bus_id_fn)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_gpm_support_fn)(nvmlDevice_t, nvmlGpmSupport_t *);
typedef nvmlReturn_t (*nvml_gpm_sample_alloc_fn)(nvmlGpmSample_t *);
typedef nvmlReturn_t (*nvml_gpm_sample_free_fn)(nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_gpm_sample_get_fn)(nvmlDevice_t, nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_gpm_metrics_get_fn)(nvmlGpmMetricsGet_t *);
typedef nvmlReturn_t (*nvml_driver_version_fn)(char *, unsigned int);
typedef nvmlReturn_t (*nvml_clock_info_fn)(nvmlDevice_t, int, unsigned int *);
typedef nvmlReturn_t (*nvml_power_limit_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvml_power_usage_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvml_field_values_fn)(nvmlDevice_t, int, nvmlFieldValue_t *);
typedef nvmlReturn_t (*nvml_samples_fn)(nvmlDevice_t, int, unsigned long long, int *,
                                        unsigned int *, nvmlSample_t *);

struct uf_nvml {
    void *lib;
    nvmlDevice_t device;
    /* required */
    nvml_init_fn init;
    nvml_shutdown_fn shutdown;
    nvml_error_string_fn error_string;
    nvml_handle_by_bus_id_fn handle_by_bus_id;
    /* optional: GPM (drivers from R520) and facts; NULL where the library lacks them */
    nvml_gpm_support_fn gpm_support;
    nvml_gpm_sample_alloc_fn gpm_sample_alloc;
    nvml_gpm_sample_free_fn gpm_sample_free;
    nvml_gpm_sample_get_fn gpm_sample_get;
    nvml_gpm_metrics_get_fn gpm_metrics_get;
    nvml_driver_version_fn driver_version;
    nvml_clock_info_fn clock_info;
    nvml_power_limit_fn power_limit;
    nvml_power_usage_fn power_usage;
    nvml_field_values_fn field_values;
    nvml_samples_fn samples;

    /* SM clock and power sampler */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t sampler;
    int sampler_running;
    int stop_requested;         /* guarded by lock */
    unsigned period_ms;
    double clock_sum_mhz, clock_min_mhz;   /* written by the sampler until joined */
    int clock_samples;
    double power_sum_w;
    int power_samples;
    int power_instant;          /* the last power read was the instant field (else the average) */

    /* GPM: the snapshots watched on a thread during the counters window (see uf_gpm_watch) */
    nvmlGpmSample_t gpm_slot[GPM_SLOTS];
    nvmlGpmMetricsGet_t *gpm_metrics;   /* large (333 metrics): on the heap */
    int gpm_ready;              /* samples allocated, device supported */
    pthread_t gpm_thread;
    int gpm_watching;           /* the thread runs */
    atomic_int gpm_stop;
    uint64_t (*gpm_now_ns)(void);
    uint64_t gpm_t0_ns;         /* the steps began */
    /* written by the thread until joined */
    nvmlReturn_t gpm_error;     /* a failed nvmlGpmSampleGet, else NVML_SUCCESS */
    int gpm_first, gpm_last;    /* slots of the first and last usable snapshot, -1 if none */
    uint64_t gpm_first_ns, gpm_last_ns; /* when each appeared */
    int gpm_fresh;              /* fresh snapshots seen */
};

static void gpm_free(uf_nvml *nv);

/* ---- open / close ---------------------------------------------------------------------- */

/* Resolve the symbols; UF_SKIP naming the first required one that is missing. */
static int resolve_symbols(uf_nvml *nv, char *reason, size_t reason_len)
{
    const char *missing = NULL;
#define NVML_SYMBOL(field, type, name, required)                                          \
    do {                                                                                   \
        nv->field = (type)dlsym(nv->lib, name);                                            \
        if (!nv->field && (required) && !missing)                                          \
            missing = name;                                                                \
    } while (0)
    NVML_SYMBOL(init, nvml_init_fn, "nvmlInit_v2", 1);
    NVML_SYMBOL(shutdown, nvml_shutdown_fn, "nvmlShutdown", 1);
    NVML_SYMBOL(error_string, nvml_error_string_fn, "nvmlErrorString", 1);
    NVML_SYMBOL(handle_by_bus_id, nvml_handle_by_bus_id_fn, "nvmlDeviceGetHandleByPciBusId_v2",
                1);
    NVML_SYMBOL(gpm_support, nvml_gpm_support_fn, "nvmlGpmQueryDeviceSupport", 0);
    NVML_SYMBOL(gpm_sample_alloc, nvml_gpm_sample_alloc_fn, "nvmlGpmSampleAlloc", 0);
    NVML_SYMBOL(gpm_sample_free, nvml_gpm_sample_free_fn, "nvmlGpmSampleFree", 0);
    NVML_SYMBOL(gpm_sample_get, nvml_gpm_sample_get_fn, "nvmlGpmSampleGet", 0);
    NVML_SYMBOL(gpm_metrics_get, nvml_gpm_metrics_get_fn, "nvmlGpmMetricsGet", 0);
    NVML_SYMBOL(driver_version, nvml_driver_version_fn, "nvmlSystemGetDriverVersion", 0);
    NVML_SYMBOL(clock_info, nvml_clock_info_fn, "nvmlDeviceGetClockInfo", 0);
    NVML_SYMBOL(power_limit, nvml_power_limit_fn, "nvmlDeviceGetPowerManagementLimit", 0);
    NVML_SYMBOL(power_usage, nvml_power_usage_fn, "nvmlDeviceGetPowerUsage", 0);
    NVML_SYMBOL(field_values, nvml_field_values_fn, "nvmlDeviceGetFieldValues", 0);
    NVML_SYMBOL(samples, nvml_samples_fn, "nvmlDeviceGetSamples", 0);
#undef NVML_SYMBOL
    if (!missing)
        return UF_OK;
    snprintf(reason, reason_len, "NVML unavailable: libnvidia-ml.so.1 has no %s", missing);
    return UF_SKIP;
}

/* The sampler's mutex and a condition variable on the monotonic clock. */
static int init_sync(uf_nvml *nv, char *reason, size_t reason_len)
{
    pthread_condattr_t attr;
    int err = pthread_condattr_init(&attr);
    if (!err) {
        err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        if (!err)
            err = pthread_cond_init(&nv->wake, &attr);
        pthread_condattr_destroy(&attr);
    }
    if (!err) {
        err = pthread_mutex_init(&nv->lock, NULL);
        if (err)
            pthread_cond_destroy(&nv->wake);
    }
    if (err)
        snprintf(reason, reason_len, "NVML sampler: cannot create its lock: %s", strerror(err));
    return err ? UF_ERR : UF_OK;
}

int uf_nvml_open_bus_id(const char *bus_id, uf_nvml **out, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    *out = NULL;
    if (reason_len)
        reason[0] = '\0';
    uf_nvml *nv = calloc(1, sizeof *nv);
    if (!nv) {
        snprintf(reason, reason_len, "out of memory for NVML");
        return UF_ERR;
    }
    UF_STATUS_OR_GOTO(rc, init_sync(nv, reason, reason_len), out_free_nv);

    nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
        snprintf(reason, reason_len, "NVML unavailable: %s", dlerror());
        rc = UF_SKIP;
        goto out_destroy_sync;
    }
    UF_STATUS_OR_GOTO(rc, resolve_symbols(nv, reason, reason_len), out_close_lib);

    nvmlReturn_t r = nv->init();
    if (r != NVML_SUCCESS) {
        snprintf(reason, reason_len, "NVML unavailable: nvmlInit_v2: %s", nv->error_string(r));
        rc = UF_SKIP;
        goto out_close_lib;
    }
    r = nv->handle_by_bus_id(bus_id, &nv->device);
    if (r != NVML_SUCCESS) {
        snprintf(reason, reason_len, "NVML unavailable: no NVML device at PCI %s: %s", bus_id,
                 nv->error_string(r));
        rc = UF_SKIP;
        goto out_shutdown;
    }
    *out = nv;
    return UF_OK;

out_shutdown:
    nv->shutdown();
out_close_lib:
    dlclose(nv->lib);
out_destroy_sync:
    pthread_cond_destroy(&nv->wake);
    pthread_mutex_destroy(&nv->lock);
out_free_nv:
    free(nv);
    return rc;
}

void uf_nvml_close(uf_nvml *nv)
{
    if (!nv)
        return;
    if (nv->sampler_running) {
        uf_nvml_sampled unused;
        uf_nvml_sampler_stop(nv, &unused);
    }
    if (nv->gpm_watching) {
        uf_pm_sample unused;
        uf_gpm_watch_end(nv, 0, &unused, NULL, 0);
    }
    gpm_free(nv);
    nv->shutdown();
    dlclose(nv->lib);
    pthread_cond_destroy(&nv->wake);
    pthread_mutex_destroy(&nv->lock);
    free(nv);
}

/* ---- SM clock and power sampler -------------------------------------------------------- */

/* The board power in mW: the instant field where the driver has it, else the (averaged)
 * power usage. 1 when read, *instant saying which. */
static int read_power(uf_nvml *nv, unsigned *mw, int *instant)
{
    if (nv->field_values) {
        nvmlFieldValue_t fv;
        memset(&fv, 0, sizeof fv);
        fv.fieldId = NVML_FI_DEV_POWER_INSTANT;
        if (nv->field_values(nv->device, 1, &fv) == NVML_SUCCESS && fv.nvmlReturn == NVML_SUCCESS) {
            *mw = fv.value.uiVal;
            *instant = 1;
            return 1;
        }
    }
    *instant = 0;
    return nv->power_usage && nv->power_usage(nv->device, mw) == NVML_SUCCESS;
}

int uf_nvml_read_clock_power(uf_nvml *nv, double *sm_clock_mhz, double *power_w)
{
    unsigned clock_mhz = 0, power_mw = 0;
    int power_instant = 0;
    int clock_ok = nv->clock_info &&
                   nv->clock_info(nv->device, NVML_CLOCK_SM, &clock_mhz) == NVML_SUCCESS;
    int power_ok = read_power(nv, &power_mw, &power_instant);
    *sm_clock_mhz = clock_ok ? (double)clock_mhz : NAN;
    *power_w = power_ok ? power_mw / 1000.0 : NAN;
    return power_ok && power_instant;
}

/* Every period_ms (the first read one period after start, so that it covers the run), read
 * the SM clock and the board power and accumulate each that was read, until
 * stop is requested. The reads are made outside the lock. */
static void *sampler_main(void *arg)
{
    uf_nvml *nv = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&nv->lock);
    for (;;) {
        uf_timespec_add_ns(&next, (uint64_t)nv->period_ms * 1000000u);
        int err = 0;
        while (!nv->stop_requested && err != ETIMEDOUT)
            err = pthread_cond_timedwait(&nv->wake, &nv->lock, &next);
        if (nv->stop_requested)
            break;
        pthread_mutex_unlock(&nv->lock);
        double clock_mhz, power_w;
        int power_instant = uf_nvml_read_clock_power(nv, &clock_mhz, &power_w);
        pthread_mutex_lock(&nv->lock);
        if (!isnan(clock_mhz)) {
            nv->clock_sum_mhz += clock_mhz;
            if (nv->clock_samples == 0 || clock_mhz < nv->clock_min_mhz)
                nv->clock_min_mhz = clock_mhz;
            nv->clock_samples++;
        }
        if (!isnan(power_w)) {
            nv->power_sum_w += power_w;
            nv->power_samples++;
            nv->power_instant = power_instant;
        }
    }
    pthread_mutex_unlock(&nv->lock);
    return NULL;
}

int uf_nvml_sampler_start(uf_nvml *nv, unsigned period_ms)
{
    if (nv->sampler_running || period_ms == 0)
        return UF_ERR;
    nv->period_ms = period_ms;
    nv->clock_sum_mhz = nv->clock_min_mhz = nv->power_sum_w = 0.0;
    nv->clock_samples = nv->power_samples = 0;
    nv->stop_requested = 0;
    if (pthread_create(&nv->sampler, NULL, sampler_main, nv) != 0)
        return UF_ERR;
    nv->sampler_running = 1;
    return UF_OK;
}

int uf_nvml_sampler_stop(uf_nvml *nv, uf_nvml_sampled *out)
{
    out->sm_clock_mhz = out->sm_clock_min_mhz = out->power_w = NAN;
    out->clock_samples = out->power_samples = out->power_instant = 0;
    if (!nv->sampler_running)
        return UF_ERR;
    pthread_mutex_lock(&nv->lock);
    nv->stop_requested = 1;
    pthread_cond_signal(&nv->wake);
    pthread_mutex_unlock(&nv->lock);
    pthread_join(nv->sampler, NULL);
    nv->sampler_running = 0;
    out->clock_samples = nv->clock_samples;
    if (nv->clock_samples > 0) {
        out->sm_clock_mhz = nv->clock_sum_mhz / nv->clock_samples;
        out->sm_clock_min_mhz = nv->clock_min_mhz;
    }
    out->power_samples = nv->power_samples;
    if (nv->power_samples > 0) {
        out->power_w = nv->power_sum_w / nv->power_samples;
        out->power_instant = nv->power_instant;
    }
    return UF_OK;
}

/* A sample's value as a double, whatever type NVML gave it (enum nvmlValueType_enum). */
static double sample_value(int type, const nvmlValue_t *v)
{
    switch (type) {
    case 0: return v->dVal;
    case 1: return v->uiVal;
    case 2: return (double)v->ulVal;
    case 3: return (double)v->ullVal;
    case 4: return (double)v->sllVal;
    case 5: return v->siVal;
    case 6: return v->usVal;
    default: return NAN;
    }
}

int uf_nvml_util_samples(uf_nvml *nv, uint64_t since_us, uint64_t **ts_us, double **pct,
                         size_t *n, char *reason, size_t reason_len)
{
    *ts_us = NULL;
    *pct = NULL;
    *n = 0;
    if (!nv->samples) {
        snprintf(reason, reason_len, "NVML util: libnvidia-ml.so.1 has no nvmlDeviceGetSamples");
        return UF_SKIP;
    }
    unsigned int count = 0;
    int type = 0;
    nvmlReturn_t st = nv->samples(nv->device, NVML_GPU_UTILIZATION_SAMPLES, since_us, &type,
                                  &count, NULL);
    nvmlSample_t *buf = st == NVML_SUCCESS && count > 0 ? calloc(count, sizeof *buf) : NULL;
    uint64_t *ts = buf ? malloc(count * sizeof *ts) : NULL;
    double *val = ts ? malloc(count * sizeof *val) : NULL;
    if (val)
        st = nv->samples(nv->device, NVML_GPU_UTILIZATION_SAMPLES, since_us, &type, &count, buf);
    int rc = UF_SKIP;
    if (val && st == NVML_SUCCESS) {
        for (unsigned int i = 0; i < count; i++) {
            ts[i] = buf[i].timeStamp;
            val[i] = sample_value(type, &buf[i].sampleValue);
        }
        *ts_us = ts;
        *pct = val;
        *n = count;
        ts = NULL;
        val = NULL;
        rc = UF_OK;
    } else if (st == NVML_ERROR_NOT_FOUND) {
        rc = UF_OK;     /* no sample since since_us */
    } else if (st != NVML_SUCCESS) {
        snprintf(reason, reason_len, "NVML util: nvmlDeviceGetSamples: %s", nv->error_string(st));
    } else if (count == 0) {
        rc = UF_OK;
    } else {
        snprintf(reason, reason_len, "NVML util: out of host memory for %u samples", count);
        rc = UF_ERR;
    }
    free(val);
    free(ts);
    free(buf);
    return rc;
}

int uf_nvml_util_over(uf_nvml *nv, uint64_t t0_us, uint64_t t1_us, double *pct, int *n_used,
                      char *reason, size_t reason_len)
{
    *pct = NAN;
    *n_used = 0;
    /* from a second before the window: the sample before t0 starts the first interval */
    const uint64_t since = t0_us > 1000000 ? t0_us - 1000000 : 0;
    uint64_t *ts;
    double *val;
    size_t count;
    int rc = uf_nvml_util_samples(nv, since, &ts, &val, &count, reason, reason_len);
    if (rc != UF_OK)
        return rc == UF_ERR ? UF_SKIP : rc;
    if (count == 0)
        snprintf(reason, reason_len, "NVML util: nvmlDeviceGetSamples listed no samples");
    else
        *pct = uf_util_window(ts, val, count, t0_us, t1_us, n_used);
    if (count > 0 && *n_used == 0)
        snprintf(reason, reason_len, "NVML util: no whole sample period (%zu samples listed) "
                 "inside the %.0f ms pass", count, (double)(t1_us - t0_us) / 1e3);
    free(val);
    free(ts);
    return *n_used > 0 ? UF_OK : UF_SKIP;
}

/* ---- GPM ------------------------------------------------------------------------------- */

/* What a GPM sample is, measured on the H200 (driver 580, probe in the #15 note): a snapshot
 * that the driver refreshes every 100 ms, describing the counters about 41 ms before it
 * becomes visible. Two samples taken at the edges of a window therefore describe another
 * window, shifted by the lag and cut to the refresh: a 250 ms busy window read 48-50 % SM
 * active where Nsight Compute measured 97 %, and one of 100 ms read 0 %. So a thread polls
 * during the steps, notes when each fresh snapshot appears (two samples of one snapshot
 * have no time between them: DRAM_BW_UTIL comes back NaN), and the reading spans the first
 * snapshot that appeared GPM_LAG_MAX_NS after the steps began to the last one seen before
 * they ended: both describe moments inside the steps. One whole refresh interval then needs
 * a window of ~310 ms. */
#define GPM_POLL_NS 2000000ull              /* a read costs ~0.15 ms of one host core */
#define GPM_LAG_NS 41000000ull              /* measured; places the reading on the host clock */
#define GPM_LAG_MAX_NS 110000000ull         /* bound used for the first snapshot: the lag was
                                             * 41 ms in the probe, but one cell of twelve in a
                                             * later run (GPM 92 % vs PM 97.8 %) fits ~70 ms:
                                             * bounded by one refresh period plus margin */
#define GPM_LATE_NS 2000000ull              /* the watcher stops ~1 ms after the steps end; a
                                             * snapshot that appeared later than this may
                                             * describe the idle after them */

/* Check support and allocate the samples and the metrics struct, once. */
static int gpm_prepare(uf_nvml *nv, char *reason, size_t reason_len)
{
    nvmlReturn_t r = NVML_SUCCESS;
    if (nv->gpm_ready)
        return UF_OK;
    if (!nv->gpm_support || !nv->gpm_sample_alloc || !nv->gpm_sample_free ||
        !nv->gpm_sample_get || !nv->gpm_metrics_get) {
        snprintf(reason, reason_len, "NVML GPM unavailable: the driver's NVML has no GPM API");
        return UF_SKIP;
    }
    nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
    r = nv->gpm_support(nv->device, &support);
    if (r != NVML_SUCCESS || !support.isSupportedDevice) {
        snprintf(reason, reason_len, "NVML GPM unavailable: %s",
                 r != NVML_SUCCESS ? nv->error_string(r)
                                   : "this GPU has no GPM (Hopper or later needed)");
        return UF_SKIP;
    }
    nv->gpm_metrics = calloc(1, sizeof *nv->gpm_metrics);
    if (!nv->gpm_metrics) {
        snprintf(reason, reason_len, "out of memory for NVML GPM metrics");
        return UF_ERR;
    }
    for (int i = 0; i < GPM_SLOTS; i++) {
        r = nv->gpm_sample_alloc(&nv->gpm_slot[i]);
        if (r != NVML_SUCCESS)
            goto out_free;
    }
    nv->gpm_ready = 1;
    return UF_OK;

out_free:
    for (int i = 0; i < GPM_SLOTS; i++) {
        if (nv->gpm_slot[i])
            nv->gpm_sample_free(nv->gpm_slot[i]);
        nv->gpm_slot[i] = NULL;
    }
    free(nv->gpm_metrics);
    nv->gpm_metrics = NULL;
    snprintf(reason, reason_len, "NVML GPM unavailable: nvmlGpmSampleAlloc: %s",
             nv->error_string(r));
    return UF_SKIP;
}

static void gpm_free(uf_nvml *nv)
{
    for (int i = 0; i < GPM_SLOTS; i++)
        if (nv->gpm_slot[i])
            nv->gpm_sample_free(nv->gpm_slot[i]);
    free(nv->gpm_metrics);
}

/* Evaluate the metrics between two samples into out[] (NaN where a metric failed). */
static nvmlReturn_t gpm_evaluate(uf_nvml *nv, nvmlGpmSample_t first, nvmlGpmSample_t second,
                                 int n_metrics, double *out)
{
    static const unsigned ids[GPM_N_METRICS] = {
        NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY, NVML_GPM_METRIC_ANY_TENSOR_UTIL,
        NVML_GPM_METRIC_DRAM_BW_UTIL};
    nvmlGpmMetricsGet_t *m = nv->gpm_metrics;
    memset(m, 0, offsetof(nvmlGpmMetricsGet_t, metrics) + GPM_N_METRICS * sizeof m->metrics[0]);
    m->version = NVML_GPM_METRICS_GET_VERSION;
    m->numMetrics = (unsigned)n_metrics;
    m->sample1 = first;
    m->sample2 = second;
    for (int i = 0; i < n_metrics; i++)
        m->metrics[i].metricId = ids[GPM_N_METRICS - n_metrics + i];
    nvmlReturn_t r = nv->gpm_metrics_get(m);
    for (int i = 0; i < n_metrics; i++)
        out[i] = r == NVML_SUCCESS && m->metrics[i].nvmlReturn == NVML_SUCCESS
                     ? m->metrics[i].value : NAN;
    return r;
}

/* One snapshot read twice: no time between the samples, so the DRAM share is 0/0. */
static int gpm_same_snapshot(uf_nvml *nv, nvmlGpmSample_t older, nvmlGpmSample_t newer)
{
    double dram;
    return gpm_evaluate(nv, older, newer, 1, &dram) != NVML_SUCCESS || isnan(dram);
}

static void *gpm_watch_main(void *arg)
{
    uf_nvml *nv = arg;
    int newest = 0;
    struct timespec pause = {0, (long)GPM_POLL_NS};
    nv->gpm_error = nv->gpm_sample_get(nv->device, nv->gpm_slot[newest]);
    while (nv->gpm_error == NVML_SUCCESS && !atomic_load(&nv->gpm_stop)) {
        nanosleep(&pause, NULL);
        int cur = 0;
        while (cur == newest || cur == nv->gpm_first)
            cur++;
        nv->gpm_error = nv->gpm_sample_get(nv->device, nv->gpm_slot[cur]);
        uint64_t now = nv->gpm_now_ns();
        if (nv->gpm_error != NVML_SUCCESS ||
            gpm_same_snapshot(nv, nv->gpm_slot[newest], nv->gpm_slot[cur]))
            continue;
        nv->gpm_fresh++;
        newest = cur;
        if (nv->gpm_first < 0 && now >= nv->gpm_t0_ns + GPM_LAG_MAX_NS) {
            nv->gpm_first = cur;
            nv->gpm_first_ns = now;
        } else if (nv->gpm_first >= 0) {
            nv->gpm_last = cur;
            nv->gpm_last_ns = now;
        }
    }
    return NULL;
}

int uf_gpm_watch_start(uf_nvml *nv, uint64_t t0_ns, uint64_t (*now_ns)(void), char *reason,
                       size_t reason_len)
{
    int rc = UF_OK;
    if (reason_len)
        reason[0] = '\0';
    if (nv->gpm_watching) {
        snprintf(reason, reason_len, "uf_gpm_watch_start: already watching");
        return UF_ERR;
    }
    UF_STATUS_OR_GOTO(rc, gpm_prepare(nv, reason, reason_len), out);
    atomic_store(&nv->gpm_stop, 0);
    nv->gpm_now_ns = now_ns;
    nv->gpm_t0_ns = t0_ns;
    nv->gpm_error = NVML_SUCCESS;
    nv->gpm_first = nv->gpm_last = -1;
    nv->gpm_fresh = 0;
    if (pthread_create(&nv->gpm_thread, NULL, gpm_watch_main, nv) != 0) {
        snprintf(reason, reason_len, "NVML GPM not read: no thread for the watcher");
        rc = UF_ERR;
        goto out;
    }
    nv->gpm_watching = 1;
out:
    return rc;
}

int uf_gpm_watch_end(uf_nvml *nv, uint64_t t1_ns, uf_pm_sample *out, char *reason,
                     size_t reason_len)
{
    double v[GPM_N_METRICS];
    out->sm_active_pct = out->occupancy_pct = out->tensor_active_pct = out->dram_pct = NAN;
    out->start_ns = out->end_ns = 0;
    if (reason_len)
        reason[0] = '\0';
    if (!nv->gpm_watching) {
        snprintf(reason, reason_len, "uf_gpm_watch_end: not watching");
        return UF_ERR;
    }
    atomic_store(&nv->gpm_stop, 1);
    pthread_join(nv->gpm_thread, NULL);
    nv->gpm_watching = 0;
    if (nv->gpm_error != NVML_SUCCESS) {
        snprintf(reason, reason_len, "NVML GPM unavailable: nvmlGpmSampleGet: %s",
                 nv->error_string(nv->gpm_error));
        return UF_SKIP;
    }
    if (nv->gpm_first < 0 || nv->gpm_last < 0 || nv->gpm_last_ns > t1_ns + GPM_LATE_NS) {
        snprintf(reason, reason_len,
                 "NVML GPM not read: no whole refresh interval inside the %.0f ms window "
                 "(%d snapshots seen; they refresh every ~100 ms and lag ~41 ms)",
                 (t1_ns - nv->gpm_t0_ns) / 1e6, nv->gpm_fresh);
        return UF_SKIP;
    }
    nvmlReturn_t r = gpm_evaluate(nv, nv->gpm_slot[nv->gpm_first], nv->gpm_slot[nv->gpm_last],
                                  GPM_N_METRICS, v);
    if (r != NVML_SUCCESS) {
        snprintf(reason, reason_len, "NVML GPM unavailable: %s", nv->error_string(r));
        return UF_SKIP;
    }
    out->sm_active_pct = v[0];
    out->occupancy_pct = v[1];
    out->tensor_active_pct = v[2];
    out->dram_pct = v[3];
    out->start_ns = nv->gpm_first_ns - GPM_LAG_NS;
    out->end_ns = nv->gpm_last_ns - GPM_LAG_NS;
    return UF_OK;
}

/* ---- facts ----------------------------------------------------------------------------- */

void uf_nvml_facts(uf_nvml *nv, char *driver, size_t driver_len, double *sm_clock_mhz,
                   double *mem_clock_mhz, double *power_limit_w)
{
    unsigned value = 0;
    if (driver_len)
        driver[0] = '\0';
    *sm_clock_mhz = *mem_clock_mhz = *power_limit_w = NAN;
    if (!nv)
        return;
    if (nv->driver_version && driver_len &&
        nv->driver_version(driver, (unsigned)driver_len) != NVML_SUCCESS)
        driver[0] = '\0';
    if (nv->clock_info && nv->clock_info(nv->device, NVML_CLOCK_SM, &value) == NVML_SUCCESS)
        *sm_clock_mhz = value;
    if (nv->clock_info && nv->clock_info(nv->device, NVML_CLOCK_MEM, &value) == NVML_SUCCESS)
        *mem_clock_mhz = value;
    if (nv->power_limit && nv->power_limit(nv->device, &value) == NVML_SUCCESS)
        *power_limit_w = value / 1000.0; /* NVML gives mW */
}

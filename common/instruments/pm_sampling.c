/* The counters pass's instrument: CUPTI PM sampling, a time series of four hardware metrics
 * (the DCGM-like SM active, occupancy, tensor active and DRAM %), sampled by the GPU at a
 * fixed interval into a hardware buffer that a decode thread drains every ~20 ms.
 *
 * Sequence (verified on the H200, CUPTI.md): profiler initialize → device support → chip name
 * → counter availability → host object + metrics → one-pass config image → enable → set
 * config → counter-data image → start; decode loop; stop → final decode → disable. The state
 * of one device lives in uf_pm; the only global is whether the profiler is initialized. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cupti_dl.h" /* the CUPTI headers; needs common/instruments/cshim on the include path */
#include "errors.h"
#include "instruments.h"

/* What a failed CUPTI call of this file is part of (UF_CUPTI_OR_GOTO, errors.h). */
#define CUPTI_WHAT "CUPTI PM sampling"

/* The four metrics, in the order of uf_pm_sample's fields (CUPTI.md has what each reads). */
static const char *const pm_metric_names[] = {
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
};
#define PM_N_METRICS (sizeof pm_metric_names / sizeof pm_metric_names[0])
/* CUPTI takes the list as const char ** and only reads it. */
#define PM_METRICS ((const char **)pm_metric_names)

/* The GPU writes raw samples here; the decode thread drains it long before it fills
 * (seen on the H200: no overflow at 1 ms with 256 MiB, drained every 20 ms). */
#define PM_HARDWARE_BUFFER_BYTES ((size_t)256 << 20)
/* Samples per counter-data image: the image is decoded and re-initialized every drain, so
 * it holds ~20 ms of samples, not the whole run. */
#define PM_MAX_SAMPLES_PER_IMAGE 512
#define PM_DRAIN_PERIOD_MS 20
/* A drain re-decodes while the image comes back full; this bounds one drain. */
#define PM_MAX_DECODE_ROUNDS 64

struct uf_pm {
    int device;
    CUpti_Profiler_Host_Object *host;
    CUpti_PmSampling_Object *sampler;
    uint8_t *availability_image;
    uint8_t *config_image;
    size_t config_image_bytes;
    uint8_t *counter_data;
    size_t counter_data_bytes;

    /* the samples of the current start..stop, written by the decode thread until joined */
    uf_pm_sample *samples;
    size_t n_samples, cap_samples;
    size_t n_decoded;           /* samples decoded since start, the dropped first included */
    size_t overflows;           /* decodes that reported a hardware-buffer overflow */

    pthread_t decoder;
    int running;                /* started and the decode thread not yet joined */
    atomic_int stop_requested;
    int decode_status;          /* the decode thread's first failure, with its reason */
    char decode_reason[UF_REASON_LEN];
};

/* cuptiProfilerInitialize is once per process; deinitialized when the last uf_pm closes. */
static int g_profiler_initialized;
static int g_pm_open;

static void clear_reason(char *reason, size_t reason_len)
{
    if (reason && reason_len)
        reason[0] = '\0';
}

static const char *support_level_name(CUpti_Profiler_Support_Level level)
{
    switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    default: return "unknown";
    }
}

/* ---- open: support, config image, enable ---------------------------------------------- */

static int profiler_initialize(char *reason, size_t reason_len)
{
    int rc = UF_OK;
    if (g_profiler_initialized)
        return UF_OK;
    CUpti_Profiler_Initialize_Params init = {.structSize =
                                                 CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerInitialize)(&init), reason, reason_len,
                     out);
    g_profiler_initialized = 1;
out:
    return rc;
}

/* UF_SKIP naming each part of the configuration that rules PM sampling out. */
static int check_device_supported(int device, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_Profiler_DeviceSupported_Params p = {
        .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE,
        .cuDevice = (CUdevice)device, /* the CUDA device ordinal */
        .api = CUPTI_PROFILER_PM_SAMPLING,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerDeviceSupported)(&p), reason, reason_len,
                     out);
    if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return UF_OK;

    const struct {
        const char *part;
        CUpti_Profiler_Support_Level level;
    } parts[] = {
        {"GPU architecture", p.architecture}, {"SLI", p.sli},
        {"vGPU", p.vGpu},                     {"confidential computing", p.confidentialCompute},
        {"CMP (mining) GPU", p.cmp},          {"WSL", p.wsl},
    };
    size_t used = 0;
    if (reason && reason_len) {
        used = (size_t)snprintf(reason, reason_len,
                                "CUPTI PM sampling unavailable on device %d (%s):", device,
                                support_level_name(p.isSupported));
        for (size_t i = 0; i < sizeof parts / sizeof parts[0] && used < reason_len; i++)
            if (parts[i].level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
                used += (size_t)snprintf(reason + used, reason_len - used, " %s %s;",
                                         parts[i].part, support_level_name(parts[i].level));
    }
    return UF_SKIP;
out:
    return rc;
}

/* The device's counter availability image (size query, then data). */
static int get_counter_availability(uf_pm *pm, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_PmSampling_GetCounterAvailability_Params p = {
        .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE,
        .deviceIndex = (size_t)pm->device,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingGetCounterAvailability)(&p), reason,
                     reason_len, out);
    if (p.counterAvailabilityImageSize == 0)
        return UF_OK; /* no image: the host object then assumes every counter available */
    pm->availability_image = malloc(p.counterAvailabilityImageSize);
    if (!pm->availability_image) {
        snprintf(reason, reason_len, "out of memory for the counter availability image");
        return UF_ERR;
    }
    p.pCounterAvailabilityImage = pm->availability_image;
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingGetCounterAvailability)(&p), reason,
                     reason_len, out_free_image);
    return UF_OK;

out_free_image:
    free(pm->availability_image);
    pm->availability_image = NULL;
out:
    return rc;
}

/* The config image of the four metrics on the host object; UF_SKIP unless it is one pass
 * (PM sampling cannot replay). */
static int build_config_image(uf_pm *pm, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
        .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
        .pHostObject = pm->host,
        .ppMetricNames = PM_METRICS,
        .numMetrics = PM_N_METRICS,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerHostConfigAddMetrics)(&add), reason,
                     reason_len, out);

    CUpti_Profiler_Host_GetConfigImageSize_Params size = {
        .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE,
        .pHostObject = pm->host,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerHostGetConfigImageSize)(&size), reason,
                     reason_len, out);
    pm->config_image = malloc(size.configImageSize);
    if (!pm->config_image) {
        snprintf(reason, reason_len, "out of memory for the PM sampling config image");
        return UF_ERR;
    }
    pm->config_image_bytes = size.configImageSize;

    CUpti_Profiler_Host_GetConfigImage_Params image = {
        .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
        .pHostObject = pm->host,
        .configImageSize = pm->config_image_bytes,
        .pConfigImage = pm->config_image,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerHostGetConfigImage)(&image), reason,
                     reason_len, out_free_image);

    CUpti_Profiler_Host_GetNumOfPasses_Params passes = {
        .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
        .configImageSize = pm->config_image_bytes,
        .pConfigImage = pm->config_image,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerHostGetNumOfPasses)(&passes), reason,
                     reason_len, out_free_image);
    if (passes.numOfPasses != 1) {
        snprintf(reason, reason_len,
                 "CUPTI PM sampling unavailable: the four metrics need %zu passes on this GPU, "
                 "PM sampling collects one",
                 passes.numOfPasses);
        rc = UF_SKIP;
        goto out_free_image;
    }
    return UF_OK;

out_free_image:
    free(pm->config_image);
    pm->config_image = NULL;
    pm->config_image_bytes = 0;
out:
    return rc;
}

/* Deinitialize the host object and free the images of open (each part may be absent). */
static void release_host(uf_pm *pm)
{
    if (pm->host) {
        CUpti_Profiler_Host_Deinitialize_Params deinit = {
            .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
            .pHostObject = pm->host,
        };
        CUptiResult r = CUPTI(cuptiProfilerHostDeinitialize)(&deinit);
        if (r != CUPTI_SUCCESS)
            uf_cupti_status((int)r, "CUPTI PM sampling", "cuptiProfilerHostDeinitialize",
                            __FILE__, __LINE__, NULL, 0);
        pm->host = NULL;
    }
    free(pm->config_image);
    free(pm->availability_image);
    pm->config_image = NULL;
    pm->availability_image = NULL;
}

/* Chip name, availability, host object and config image. */
static int prepare_host(uf_pm *pm, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_Device_GetChipName_Params chip = {
        .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
        .deviceIndex = (size_t)pm->device,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiDeviceGetChipName)(&chip), reason, reason_len, out);
    UF_STATUS_OR_GOTO(rc, get_counter_availability(pm, reason, reason_len), out);

    CUpti_Profiler_Host_Initialize_Params init = {
        .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
        .profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING,
        .pChipName = chip.pChipName,
        .pCounterAvailabilityImage = pm->availability_image,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerHostInitialize)(&init), reason, reason_len,
                     out_release);
    pm->host = init.pHostObject;
    UF_STATUS_OR_GOTO(rc, build_config_image(pm, reason, reason_len), out_release);
    return UF_OK;

out_release:
    release_host(pm);
out:
    return rc;
}

/* Deinitialize the profiler when no uf_pm is open any more. */
static void profiler_release(void)
{
    if (g_pm_open > 0 || !g_profiler_initialized)
        return;
    CUpti_Profiler_DeInitialize_Params deinit = {
        .structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    CUptiResult r = CUPTI(cuptiProfilerDeInitialize)(&deinit);
    if (r != CUPTI_SUCCESS)
        uf_cupti_status((int)r, "CUPTI PM sampling", "cuptiProfilerDeInitialize", __FILE__,
                        __LINE__, NULL, 0);
    g_profiler_initialized = 0;
}

int uf_pm_open(int device, uf_pm **out, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    *out = NULL;
    clear_reason(reason, reason_len);
    if (!uf_cupti_api_get()) {
        snprintf(reason, reason_len, "CUPTI PM sampling unavailable: libcupti not loaded");
        return UF_SKIP;
    }
    uf_pm *pm = calloc(1, sizeof *pm);
    if (!pm) {
        snprintf(reason, reason_len, "out of memory for the PM sampler");
        return UF_ERR;
    }
    pm->device = device;

    UF_STATUS_OR_GOTO(rc, profiler_initialize(reason, reason_len), out_free_pm);
    UF_STATUS_OR_GOTO(rc, check_device_supported(device, reason, reason_len),
                      out_release_profiler);
    UF_STATUS_OR_GOTO(rc, prepare_host(pm, reason, reason_len), out_release_profiler);

    CUpti_PmSampling_Enable_Params enable = {
        .structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE,
        .deviceIndex = (size_t)device,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingEnable)(&enable), reason, reason_len,
                     out_release_host);
    pm->sampler = enable.pPmSamplingObject;
    g_pm_open++;
    *out = pm;
    return UF_OK;

out_release_host:
    release_host(pm);
out_release_profiler:
    profiler_release();
out_free_pm:
    free(pm);
    return rc;
}

/* ---- decoding -------------------------------------------------------------------------- */

static int append_sample(uf_pm *pm, uint64_t start_ns, uint64_t end_ns,
                         const double values[PM_N_METRICS], char *reason, size_t reason_len)
{
    if (pm->n_samples == pm->cap_samples) {
        size_t capacity = pm->cap_samples ? 2 * pm->cap_samples : 1024;
        uf_pm_sample *p = realloc(pm->samples, capacity * sizeof *p);
        if (!p) {
            snprintf(reason, reason_len, "out of memory for %zu PM samples", capacity);
            return UF_ERR;
        }
        pm->samples = p;
        pm->cap_samples = capacity;
    }
    uf_pm_sample *s = &pm->samples[pm->n_samples++];
    s->start_ns = start_ns;
    s->end_ns = end_ns;
    s->sm_active_pct = values[0];
    s->occupancy_pct = values[1];
    s->tensor_active_pct = values[2];
    s->dram_pct = values[3];
    return UF_OK;
}

/* Evaluate the completed samples of the counter-data image; the first sample since start is
 * dropped (it spans the time before start). */
static int collect_samples(uf_pm *pm, size_t *n_completed, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_PmSampling_GetCounterDataInfo_Params info = {
        .structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE,
        .pCounterDataImage = pm->counter_data,
        .counterDataImageSize = pm->counter_data_bytes,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingGetCounterDataInfo)(&info), reason,
                     reason_len, out);
    *n_completed = info.numCompletedSamples;

    for (size_t i = 0; i < info.numCompletedSamples; i++) {
        CUpti_PmSampling_CounterData_GetSampleInfo_Params sample = {
            .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE,
            .pPmSamplingObject = pm->sampler,
            .pCounterDataImage = pm->counter_data,
            .counterDataImageSize = pm->counter_data_bytes,
            .sampleIndex = i,
        };
        UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingCounterDataGetSampleInfo)(&sample),
                         reason, reason_len, out);
        double values[PM_N_METRICS];
        CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
            .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
            .pHostObject = pm->host,
            .pCounterDataImage = pm->counter_data,
            .counterDataImageSize = pm->counter_data_bytes,
            .rangeIndex = i,
            .ppMetricNames = PM_METRICS,
            .numMetrics = PM_N_METRICS,
            .pMetricValues = values,
        };
        UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiProfilerHostEvaluateToGpuValues)(&eval), reason,
                         reason_len, out);
        if (pm->n_decoded++ == 0)
            continue;
        UF_STATUS_OR_GOTO(rc,
                          append_sample(pm, sample.startTimestamp, sample.endTimestamp, values,
                                        reason, reason_len),
                          out);
    }
out:
    return rc;
}

static int init_counter_data(uf_pm *pm, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_PmSampling_CounterDataImage_Initialize_Params init = {
        .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE,
        .pPmSamplingObject = pm->sampler,
        .counterDataSize = pm->counter_data_bytes,
        .pCounterData = pm->counter_data,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingCounterDataImageInitialize)(&init),
                     reason, reason_len, out);
out:
    return rc;
}

/* Decode what the hardware buffer holds into the image, keep its samples, re-initialize it;
 * again while the image came back full. */
static int drain(uf_pm *pm, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    for (int round = 0; round < PM_MAX_DECODE_ROUNDS; round++) {
        CUpti_PmSampling_DecodeData_Params decode = {
            .structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE,
            .pPmSamplingObject = pm->sampler,
            .pCounterDataImage = pm->counter_data,
            .counterDataImageSize = pm->counter_data_bytes,
        };
        UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingDecodeData)(&decode), reason,
                         reason_len, out);
        if (decode.overflow)
            pm->overflows++;
        size_t n_completed = 0;
        UF_STATUS_OR_GOTO(rc, collect_samples(pm, &n_completed, reason, reason_len), out);
        UF_STATUS_OR_GOTO(rc, init_counter_data(pm, reason, reason_len), out);
        if (decode.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL ||
            n_completed == 0)
            break;
    }
out:
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Drains every PM_DRAIN_PERIOD_MS until stop is requested or a decode fails. */
static void *decode_thread_main(void *arg)
{
    uf_pm *pm = arg;
    while (!atomic_load(&pm->stop_requested)) {
        pm->decode_status = drain(pm, pm->decode_reason, sizeof pm->decode_reason);
        if (pm->decode_status != UF_OK)
            break;
        sleep_ms(PM_DRAIN_PERIOD_MS);
    }
    return NULL;
}

/* ---- start / stop / close -------------------------------------------------------------- */

/* Sampling configuration for this start, and the counter-data image on first use. */
static int configure(uf_pm *pm, uint32_t interval_us, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    CUpti_PmSampling_SetConfig_Params config = {
        .structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE,
        .pPmSamplingObject = pm->sampler,
        .configSize = pm->config_image_bytes,
        .pConfig = pm->config_image,
        .hardwareBufferSize = PM_HARDWARE_BUFFER_BYTES,
        .samplingInterval = (uint64_t)interval_us * 1000u, /* ns in GPU_TIME_INTERVAL mode */
        .triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL,
        .hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingSetConfig)(&config), reason, reason_len,
                     out);
    if (pm->counter_data)
        goto out;

    CUpti_PmSampling_GetCounterDataSize_Params size = {
        .structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE,
        .pPmSamplingObject = pm->sampler,
        .pMetricNames = PM_METRICS,
        .numMetrics = PM_N_METRICS,
        .maxSamples = PM_MAX_SAMPLES_PER_IMAGE,
    };
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingGetCounterDataSize)(&size), reason,
                     reason_len, out);
    pm->counter_data = malloc(size.counterDataSize);
    if (!pm->counter_data) {
        snprintf(reason, reason_len, "out of memory for a %zu-byte counter-data image",
                 size.counterDataSize);
        rc = UF_ERR;
        goto out;
    }
    pm->counter_data_bytes = size.counterDataSize;
out:
    return rc;
}

int uf_pm_start(uf_pm *pm, uint32_t interval_us, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    clear_reason(reason, reason_len);
    if (pm->running || interval_us == 0) {
        snprintf(reason, reason_len, "uf_pm_start: %s",
                 pm->running ? "already started" : "interval must be > 0 us");
        return UF_ERR;
    }
    UF_STATUS_OR_GOTO(rc, configure(pm, interval_us, reason, reason_len), out);
    UF_STATUS_OR_GOTO(rc, init_counter_data(pm, reason, reason_len), out);
    pm->n_samples = 0;
    pm->n_decoded = 0;
    pm->overflows = 0;
    pm->decode_status = UF_OK;
    pm->decode_reason[0] = '\0';
    atomic_store(&pm->stop_requested, 0);

    CUpti_PmSampling_Start_Params start = {.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE,
                                           .pPmSamplingObject = pm->sampler};
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingStart)(&start), reason, reason_len, out);
    int err = pthread_create(&pm->decoder, NULL, decode_thread_main, pm);
    if (err != 0) {
        snprintf(reason, reason_len, "cannot start the PM decode thread: %s", strerror(err));
        rc = UF_ERR;
        goto out_stop;
    }
    pm->running = 1;
    return UF_OK;

out_stop: {
    CUpti_PmSampling_Stop_Params stop = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE,
                                         .pPmSamplingObject = pm->sampler};
    CUPTI(cuptiPmSamplingStop)(&stop);
}
out:
    return rc;
}

/* Join the decode thread, then stop the sampler (so Stop never races a decode). */
static int stop_sampling(uf_pm *pm, char *reason, size_t reason_len)
{
    int rc = UF_OK;
    atomic_store(&pm->stop_requested, 1);
    pthread_join(pm->decoder, NULL);
    pm->running = 0;
    CUpti_PmSampling_Stop_Params stop = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE,
                                         .pPmSamplingObject = pm->sampler};
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiPmSamplingStop)(&stop), reason, reason_len, out);
out:
    return rc;
}

int uf_pm_stop(uf_pm *pm, const uf_pm_sample **samples, size_t *n, char *reason,
               size_t reason_len)
{
    int rc = UF_OK;
    *samples = NULL;
    *n = 0;
    clear_reason(reason, reason_len);
    if (!pm->running) {
        snprintf(reason, reason_len, "uf_pm_stop: the sampler was not started");
        return UF_ERR;
    }
    UF_STATUS_OR_GOTO(rc, stop_sampling(pm, reason, reason_len), out);
    if (pm->decode_status != UF_OK) {
        snprintf(reason, reason_len, "%s", pm->decode_reason);
        rc = pm->decode_status;
        goto out;
    }
    UF_STATUS_OR_GOTO(rc, drain(pm, reason, reason_len), out);
    if (pm->overflows > 0)
        snprintf(reason, reason_len,
                 "CUPTI PM sampling: the hardware buffer overflowed in %zu decodes, samples "
                 "were lost (longer interval or faster draining needed)",
                 pm->overflows);
    *samples = pm->samples;
    *n = pm->n_samples;
out:
    return rc;
}

void uf_pm_close(uf_pm *pm)
{
    if (!pm)
        return;
    char reason[UF_REASON_LEN];
    if (pm->running)
        stop_sampling(pm, reason, sizeof reason);
    CUpti_PmSampling_Disable_Params disable = {
        .structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE,
        .pPmSamplingObject = pm->sampler};
    CUptiResult r = CUPTI(cuptiPmSamplingDisable)(&disable);
    if (r != CUPTI_SUCCESS)
        uf_cupti_status((int)r, "CUPTI PM sampling", "cuptiPmSamplingDisable(&disable)",
                        __FILE__, __LINE__, NULL, 0);
    release_host(pm);
    free(pm->counter_data);
    free(pm->samples);
    free(pm);
    g_pm_open--;
    profiler_release();
}

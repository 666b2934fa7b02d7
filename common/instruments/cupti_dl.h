/* libcupti, loaded at run time (cupti_dl.c): the programs do not link it, so a run whose trace
 * and counters passes are off never maps it (a CUPTI client injected into the program would
 * conflict with ours), and every timing pass runs in a process with no CUPTI at all.
 *
 * The CUPTI modules (cupti_trace.c, pm_sampling.c) call each function through the table:
 * CUPTI(cuptiActivityEnable)(kind). Each member has the type of the function declared by the
 * CUPTI headers, so a call is checked as a direct call would be. Internal to those modules and
 * cupti_dl.c; the harness uses uf_cupti_load (instruments.h). Needs common/instruments/cshim on the
 * include path (cupti_profiler_host.h includes <string>). */
#ifndef UF_CUPTI_DL_H
#define UF_CUPTI_DL_H

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

/* Every CUPTI function the harness calls; all are resolved before any is used. */
#define UF_CUPTI_FUNCTIONS(X)                                                              \
    X(cuptiGetVersion)                                                                     \
    X(cuptiGetResultString)                                                                \
    X(cuptiGetTimestamp)                                                                   \
    X(cuptiGetCallbackName)                                                                \
    X(cuptiActivitySetAttribute)                                                           \
    X(cuptiActivityRegisterCallbacks)                                                      \
    X(cuptiActivityEnable)                                                                 \
    X(cuptiActivityDisable)                                                                \
    X(cuptiActivityFlushAll)                                                               \
    X(cuptiActivityGetNextRecord)                                                          \
    X(cuptiActivityGetNumDroppedRecords)                                                   \
    X(cuptiProfilerInitialize)                                                             \
    X(cuptiProfilerDeInitialize)                                                           \
    X(cuptiProfilerDeviceSupported)                                                        \
    X(cuptiDeviceGetChipName)                                                              \
    X(cuptiProfilerHostInitialize)                                                         \
    X(cuptiProfilerHostDeinitialize)                                                       \
    X(cuptiProfilerHostConfigAddMetrics)                                                   \
    X(cuptiProfilerHostGetConfigImageSize)                                                 \
    X(cuptiProfilerHostGetConfigImage)                                                     \
    X(cuptiProfilerHostGetNumOfPasses)                                                     \
    X(cuptiProfilerHostEvaluateToGpuValues)                                                \
    X(cuptiPmSamplingGetCounterAvailability)                                               \
    X(cuptiPmSamplingEnable)                                                               \
    X(cuptiPmSamplingDisable)                                                              \
    X(cuptiPmSamplingSetConfig)                                                            \
    X(cuptiPmSamplingGetCounterDataSize)                                                   \
    X(cuptiPmSamplingCounterDataImageInitialize)                                           \
    X(cuptiPmSamplingStart)                                                                \
    X(cuptiPmSamplingStop)                                                                 \
    X(cuptiPmSamplingDecodeData)                                                           \
    X(cuptiPmSamplingGetCounterDataInfo)                                                   \
    X(cuptiPmSamplingCounterDataGetSampleInfo)

typedef struct uf_cupti_api {
#define UF_CUPTI_MEMBER(name) __typeof__(name) *name;
    UF_CUPTI_FUNCTIONS(UF_CUPTI_MEMBER)
#undef UF_CUPTI_MEMBER
} uf_cupti_api;

/* The resolved functions, or NULL before uf_cupti_load succeeded. Written once, by the load,
 * before any CUPTI pass; read-only afterwards (also from CUPTI's buffer-completion thread). */
const uf_cupti_api *uf_cupti_api_get(void);

/* A call through the table: only after uf_cupti_load succeeded (every entry point of the
 * CUPTI modules checks uf_cupti_api_get() first). */
#define CUPTI(name) (uf_cupti_api_get()->name)

#endif

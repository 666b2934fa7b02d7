/* CUPTI results in words (instruments.h, uf_cupti_status): shared by the harness's CUPTI
 * modules and by the doctor's recorder (libunderfed_inject.so), which links no CUDA runtime;
 * so the driver is asked through libcuda, already loaded by whoever called CUPTI. */
#include <dlfcn.h>
#include <stdio.h>
#include "cupti_dl.h"
#include "errors.h"
#include "instruments.h"
#include "status.h"

/* Is a CUDA driver loaded in this process (libcuda.so.1 mapped, its version non-zero)? */
static int driver_loaded(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL)
        return 0;
    int (*get_version)(int *) = (int (*)(int *))dlsym(lib, "cuDriverGetVersion");
    int version = 0;
    int ok = get_version != NULL && get_version(&version) == 0 && version > 0;
    dlclose(lib);   /* NOLOAD took a reference: give it back */
    return ok;
}

/* ---- CUPTI results in words ------------------------------------------------------------ */

/* The results that mean "this instrument is not available here", with what each means. */
static const struct {
    CUptiResult result;
    const char *meaning;
} cupti_unavailable[] = {
    {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
     "counters are admin-only: run as root or set NVreg_RestrictProfilingToAdminUsers=0"},
    {CUPTI_ERROR_HARDWARE_BUSY,
     "the counters are in use by another client, e.g. DCGM profiling"},
    {CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, "profiling is not supported on this vGPU"},
    {CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
     "the hypervisor does not allow profiling on this vGPU"},
    {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
     "another profiler is attached: nsys, ncu, compute-sanitizer or cuda-gdb"},
    {CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED,
     "profiling and tracing are not allowed in confidential-computing mode"},
    {CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "profiling is not supported on a MIG instance"},
    {CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, "not supported on crypto-mining processors"},
    {CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, "profiling is not supported with SLI"},
    {CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, "profiling is not supported on this WSL setup"},
    {CUPTI_ERROR_INVALID_CHIP_NAME, "this CUPTI does not know this GPU's chip"},
    {CUPTI_ERROR_DISABLED, "CUPTI is disabled by a conflicting profiler"},
    {CUPTI_ERROR_NOT_SUPPORTED, "not supported on this system or device"},
    {CUPTI_ERROR_NOT_INITIALIZED, "CUPTI could not connect to the CUDA driver"},
};

int uf_cupti_status(int cupti_result, const char *what, const char *expr, const char *file,
                    int line, char *reason, size_t reason_len)
{
    const char *name = NULL;
    if (!uf_cupti_api_get() ||
        CUPTI(cuptiGetResultString)((CUptiResult)cupti_result, &name) != CUPTI_SUCCESS || !name)
        name = "unknown CUPTI result";

    for (size_t i = 0; i < sizeof cupti_unavailable / sizeof cupti_unavailable[0]; i++) {
        if ((int)cupti_unavailable[i].result != cupti_result)
            continue;
        if (reason && reason_len)
            snprintf(reason, reason_len, "%s unavailable: %s (%s)", what, name,
                     cupti_unavailable[i].meaning);
        return UF_SKIP;
    }
    /* Without a driver CUPTI only says CUPTI_ERROR_UNKNOWN: that is "unavailable" too. */
    if (!driver_loaded()) {
        if (reason && reason_len)
            snprintf(reason, reason_len, "%s unavailable: %s (no CUDA driver is loaded)", what,
                     name);
        return UF_SKIP;
    }
    uf_report_failure(file, line, expr, name);
    if (reason && reason_len)
        snprintf(reason, reason_len, "%s failed: %s returned %s", what, expr, name);
    return UF_ERR;
}


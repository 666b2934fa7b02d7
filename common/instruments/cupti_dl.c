/* libcupti loaded with dlopen when the first CUPTI pass is about to run (cupti_dl.h says why),
 * as nvml.c loads NVML. The table of resolved functions is part of the harness's CUPTI state:
 * written once here on the main thread, before any CUPTI call, then only read. The library
 * stays loaded until the process exits (CUPTI keeps threads and callbacks of its own). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "cupti_dl.h"
#include "errors.h"
#include "instruments.h"

/* Where the build's toolkit has libcupti (CMakeLists.txt defines both): its soname, found on
 * the loader's path (LD_LIBRARY_PATH, ld.so.conf; the copy a CUPTI client already loaded, if
 * any), then the build's directory, for a toolkit the loader's path does not name. */
#if !defined(UF_CUPTI_SONAME) || !defined(UF_CUPTI_LIBRARY_DIR)
#error "UF_CUPTI_SONAME and UF_CUPTI_LIBRARY_DIR come from the build (CMakeLists.txt)"
#endif

static const char *const cupti_candidates[] = {
    UF_CUPTI_SONAME,
    UF_CUPTI_LIBRARY_DIR "/" UF_CUPTI_SONAME,
    UF_CUPTI_LIBRARY_DIR "/libcupti.so",
};
#define N_CUPTI_CANDIDATES (sizeof cupti_candidates / sizeof cupti_candidates[0])

static struct {
    int loaded;                 /* the library open and every function resolved */
    uf_cupti_api api;
} g_cupti;

const uf_cupti_api *uf_cupti_api_get(void)
{
    return g_cupti.loaded ? &g_cupti.api : NULL;
}

/* The first candidate that loads; NULL with the first failure's words in reason. */
static void *open_library(char *reason, size_t reason_len)
{
    reason[0] = '\0';
    for (size_t i = 0; i < N_CUPTI_CANDIDATES; i++) {
        void *lib = dlopen(cupti_candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
        const char *why = dlerror();
        if (!reason[0])
            snprintf(reason, reason_len,
                     "CUPTI unavailable: " UF_CUPTI_SONAME " is neither on the loader's path "
                     "nor in " UF_CUPTI_LIBRARY_DIR " (%s)",
                     why ? why : "no reason given");
    }
    return NULL;
}

/* Every function of UF_CUPTI_FUNCTIONS; UF_SKIP naming the first one missing. */
static int resolve_functions(void *lib, uf_cupti_api *api, char *reason, size_t reason_len)
{
    const char *missing = NULL;
#define UF_CUPTI_RESOLVE(name)                                                             \
    do {                                                                                   \
        api->name = (__typeof__(api->name))dlsym(lib, #name);                              \
        if (!api->name && !missing)                                                        \
            missing = #name;                                                               \
    } while (0);
    UF_CUPTI_FUNCTIONS(UF_CUPTI_RESOLVE)
#undef UF_CUPTI_RESOLVE
    if (!missing)
        return UF_OK;
    snprintf(reason, reason_len, "CUPTI unavailable: the loaded libcupti has no %s", missing);
    return UF_SKIP;
}

int uf_cupti_load(char *reason, size_t reason_len)
{
    int rc = UF_OK;
    reason[0] = '\0';
    if (g_cupti.loaded)
        return UF_OK;
    void *lib = open_library(reason, reason_len);
    if (!lib)
        return UF_SKIP;
    UF_STATUS_OR_GOTO(rc, resolve_functions(lib, &g_cupti.api, reason, reason_len), out_close);
    g_cupti.loaded = 1;         /* lib stays open until the process exits */
    return UF_OK;

out_close:
    memset(&g_cupti.api, 0, sizeof g_cupti.api);
    dlclose(lib);
    return rc;
}

uint32_t uf_cupti_version(void)
{
    uint32_t version = 0;
    if (!g_cupti.loaded || CUPTI(cuptiGetVersion)(&version) != CUPTI_SUCCESS)
        return 0;
    return version;
}

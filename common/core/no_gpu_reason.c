/* Why no GPU can be used here (no_gpu_reason.h). */
#include "no_gpu_reason.h"

#include <dlfcn.h>
#include <stdio.h>

int uf_library_loads(const char *name, char *why, size_t whylen)
{
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *msg = dlerror();
        if (why != NULL && whylen > 0)
            snprintf(why, whylen, "%s", msg != NULL ? msg : "cannot be loaded");
        return 0;
    }
    dlclose(lib);
    if (why != NULL && whylen > 0)
        why[0] = '\0';
    return 1;
}

void uf_format_no_gpu(int driver_loads, const char *dl_error, const char *runtime_words,
                      char *out, size_t outlen)
{
    if (!driver_loads)
        snprintf(out, outlen, "no NVIDIA driver found (%s)",
                 dl_error != NULL && dl_error[0] != '\0' ? dl_error
                                                         : UF_CUDA_DRIVER_LIB " cannot be loaded");
    else
        snprintf(out, outlen, "no CUDA GPU is usable here (%s)",
                 runtime_words != NULL ? runtime_words : "no device");
}

void uf_no_gpu_reason(const char *runtime_words, char *out, size_t outlen)
{
    char why[256];
    int loads = uf_library_loads(UF_CUDA_DRIVER_LIB, why, sizeof why);
    uf_format_no_gpu(loads, why, runtime_words, out, outlen);
}

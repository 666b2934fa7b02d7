/* Why no GPU can be used here, in words a user can act on: "no NVIDIA driver found" where the
 * driver library cannot be loaded at all (the CUDA runtime then says "driver version is
 * insufficient", which misleads), else the runtime's own words. Plain C, unit-tested; the
 * scenarios' harness and the ceilings bench both print it when they skip. */
#ifndef UF_NO_GPU_REASON_H
#define UF_NO_GPU_REASON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA driver library the runtime loads. */
#define UF_CUDA_DRIVER_LIB "libcuda.so.1"

/* 1 when the shared library NAME loads here (it is closed again), else 0 with dlerror's words
 * in why. */
int uf_library_loads(const char *name, char *why, size_t whylen);

/* The reason from what is known: whether the driver library loads (and dlerror's words when it
 * does not) and the runtime's words ("no device" when the count was 0). */
void uf_format_no_gpu(int driver_loads, const char *dl_error, const char *runtime_words,
                      char *out, size_t outlen);

/* After cudaGetDeviceCount failed or found no device: probe UF_CUDA_DRIVER_LIB and format the
 * reason. runtime_words: cudaGetErrorString of the failure, or "no device". */
void uf_no_gpu_reason(const char *runtime_words, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif

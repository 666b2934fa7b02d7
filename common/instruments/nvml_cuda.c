/* uf_nvml_open for a CUDA runtime device: its PCI bus id from the runtime, then NVML's
 * device at that bus id (nvml.c). Apart from nvml.c so that the doctor's recorder, which
 * links no CUDA runtime, can use NVML through uf_nvml_open_bus_id. */
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "instruments.h"
#include "status.h"

int uf_nvml_open(int cuda_device, uf_nvml **out, char *reason, size_t reason_len)
{
    char bus_id[64];
    *out = NULL;
    cudaError_t ce = cudaDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, cuda_device);
    if (ce != cudaSuccess) {
        snprintf(reason, reason_len, "NVML not used: cudaDeviceGetPCIBusId(%d): %s",
                 cuda_device, cudaGetErrorString(ce));
        return UF_SKIP;
    }
    return uf_nvml_open_bus_id(bus_id, out, reason, reason_len);
}

// Probe: NVML's GPU-utilization sample period on this GPU, and how nvmlDeviceGetUtilizationRates
// ramps when a kernel starts after idle. A spin kernel runs 1.5 s after 1.0 s idle; the rates are
// read every 20 ms; then nvmlDeviceGetSamples(GPU_UTILIZATION) lists its buffered samples.
//   nvcc -O2 -arch=sm_90 -o nvml_util_period benches/probes/nvml_util_period.cu -ldl
// Ran on the H200 (driver 580.159.04), 2026-11-30: nvmlDeviceGetSamples lists one sample every
// 200 ms (198.5-202 ms apart), each the busy share of the 200 ms before its timestamp (79 % for
// the sample 160 ms after the start, 70 % for the one 59 ms after the end); the rates read 0 for
// the first 0.1-0.2 s of the kernel, 58 at 0.2-0.3 s, 100 from 0.4 s, and 100 until 0.3 s after
// it ended. A mean of the rates over a 1 s pass therefore carries ~0.3 s from before the pass.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
typedef struct { unsigned gpu, memory; } util_t;
typedef struct { unsigned long long ts; unsigned long long v; } sample_t;
static double now(void) { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
__global__ void spin(unsigned long long dur) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < dur);
}
int main(void) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
  int (*handle)(unsigned, void **) = (int (*)(unsigned, void **))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  int (*util)(void *, util_t *) = (int (*)(void *, util_t *))dlsym(h, "nvmlDeviceGetUtilizationRates");
  int (*samples)(void *, int, unsigned long long, int *, unsigned *, sample_t *) =
      (int (*)(void *, int, unsigned long long, int *, unsigned *, sample_t *))dlsym(h, "nvmlDeviceGetSamples");
  void *dev; init(); handle(0, &dev);
  cudaFree(0);
  usleep(1500000);
  double t0 = now();
  spin<<<1, 32>>>(1500000000ull);
  for (int i = 0; i < 125; i++) {   /* 2.5 s: 1.5 s busy, 1 s idle */
    util_t u; util(dev, &u);
    printf("rate t=%+.3f s gpu=%u\n", now() - t0, u.gpu);
    usleep(20000);
  }
  cudaDeviceSynchronize();
  static sample_t s[1000]; unsigned n = 1000; int type = 0;
  int rc = samples(dev, 1, (unsigned long long)((t0 - 3) * 1e6), &type, &n, s);
  printf("getSamples rc=%d type=%d n=%u\n", rc, type, n);
  for (unsigned i = 0; i < n; i++)
    printf("sample t=%+.3f s (dt %.1f ms) value=%llu\n", s[i].ts * 1e-6 - t0,
           i ? (s[i].ts - s[i - 1].ts) * 1e-3 : 0.0, s[i].v & 0xffffffffull);
  return 0;
}

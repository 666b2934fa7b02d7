// Probe (not built by CMake), run on the H200 in session 5: when does an NVML GPM sample refresh,
// and where do its boundaries sit in host time? Output: a refresh every ~100 ms; a snapshot
// describes the counters ~41 ms before it appears (see common/instruments/nvml.c, uf_gpm_watch_*).
//   nvcc -O2 -arch=sm_90 -o gpm_refresh benches/probes/gpm_refresh.cu -ldl
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;
typedef struct { char *s, *l, *u; } info_t;
typedef struct { unsigned id; nvmlReturn_t rc; double value; info_t info; } metric_t;
typedef struct { unsigned version, n; nvmlGpmSample_t s1, s2; metric_t m[333]; } mget_t;
static nvmlReturn_t (*p_init)(void);
static nvmlReturn_t (*p_handle)(unsigned, nvmlDevice_t *);
static nvmlReturn_t (*p_alloc)(nvmlGpmSample_t *);
static nvmlReturn_t (*p_get)(nvmlDevice_t, nvmlGpmSample_t);
static nvmlReturn_t (*p_metrics)(mget_t *);
static nvmlDevice_t dev;
static mget_t mg;
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int gpm(nvmlGpmSample_t a, nvmlGpmSample_t b, double *sm, double *dram, int *rc) {
  mg.version = 1; mg.n = 2; mg.s1 = a; mg.s2 = b; mg.m[0].id = 2; mg.m[1].id = 10;
  *rc = p_metrics(&mg); *sm = mg.m[0].value; *dram = mg.m[1].value; return mg.m[0].rc * 100 + mg.m[1].rc;
}
__global__ void spin(unsigned long long dur) { unsigned long long t0, t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < dur); }
#define NS 1000
static nvmlGpmSample_t S[NS]; static double T[NS];
int main(void) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  *(void **)&p_init = dlsym(h, "nvmlInit_v2"); *(void **)&p_handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  *(void **)&p_alloc = dlsym(h, "nvmlGpmSampleAlloc"); *(void **)&p_get = dlsym(h, "nvmlGpmSampleGet");
  *(void **)&p_metrics = dlsym(h, "nvmlGpmMetricsGet");
  p_init(); p_handle(0, &dev);
  for (int i = 0; i < NS; i++) p_alloc(&S[i]);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaStream_t st; cudaStreamCreate(&st); spin<<<sms * 4, 128, 0, st>>>(1000); cudaStreamSynchronize(st);
  for (int trial = 0; trial < 2; trial++) {
    usleep(400000);
    double t0 = now_ms(), launched = -1; int n = 0;
    while (n < NS) {
      double t = now_ms() - t0;
      if (launched < 0 && t >= 300) { spin<<<sms * 4, 128, 0, st>>>(500000000ull); launched = now_ms() - t0; }
      if (t > 1400) break;
      double a = now_ms(); p_get(dev, S[n]); T[n] = (a + now_ms()) / 2 - t0; n++;
      usleep(1500);
    }
    cudaStreamSynchronize(st);
    printf("trial %d: %d samples, launch at %.1f ms (busy until ~%.1f), get cost ~%.3f ms\n", trial, n, launched, launched + 500, 0.0);
    int last = 0, rc; double sm, dram;
    for (int i = 1; i < n; i++) {
      int mrc = gpm(S[last], S[i], &sm, &dram, &rc);
      if (rc != 0 || mrc != 0 || isnan(dram) || (sm == 0 && dram == 0 && i - last < 200)) {
        // treat as identical only if comparing with previous consecutive gives nothing
      }
      int mrc2 = gpm(S[i - 1], S[i], &sm, &dram, &rc);
      if (!(isnan(dram)) || rc || mrc2) {
        printf("  change at t=%7.1f ms (prev change at %7.1f, gap %5.1f): consecutive sm %6.2f dram %6.2f rc %d/%d\n", T[i], T[last], T[i] - T[last], sm, dram, rc, mrc2);
        last = i;
      }
    }
  }
  return 0;
}

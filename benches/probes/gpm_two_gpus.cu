// Probe for the next session (not built by CMake): does NVML GPM read right on two GPUs at once?
// allreduce_overlap's rows disagree with PM sampling on every row (GPM 0.0 % SM where PM reads
// 63.6 %), while every single-GPU scenario agrees within 4.6 points. Both GPUs run the same
// spin kernel for 1.5 s; GPM is read over the middle 500 ms three ways: (a) one thread per
// GPU, as the harness's watchers do; (b) one thread reading both GPUs in turn; (c) GPU 0 alone.
// Expect ~100 % SM active in every case; a wrong figure in (a) only points at concurrent use.
// (d)/(e): a thread per GPU polling every 2 ms for 600 ms, as the harness's watchers do, without
// and with one lock around the reads.
// Ran on two H200s (driver 580.159.04), 2026-11-30, three repetitions: 100.0 % on both GPUs in
// every case, (a) to (e). Concurrent GPM reads are not why allreduce_overlap's rows disagree.
//   nvcc -O2 -arch=sm_90 -o gpm_two_gpus benches/probes/gpm_two_gpus.cu -ldl -lpthread
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
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
static nvmlDevice_t dev[2];
static nvmlGpmSample_t s[2][2];
static double sm_of(int g) {
  static mget_t mg;
  mg.version = 1; mg.n = 1; mg.s1 = s[g][0]; mg.s2 = s[g][1]; mg.m[0].id = 2;
  return p_metrics(&mg) == 0 ? mg.m[0].value : -1;
}
static void *one(void *arg) {
  int g = (int)(long)arg;
  p_get(dev[g], s[g][0]); usleep(500000); p_get(dev[g], s[g][1]);
  return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int use_lock;
/* (d)/(e): the harness's way: each thread polls its GPU every 2 ms for 600 ms, swapping a
 * working sample in; the first and the last fresh samples are compared. */
static nvmlGpmSample_t poll_s[2][3];
static void *poller(void *arg) {
  int g = (int)(long)arg, have = 0;
  for (int i = 0; i < 300; i++) {
    if (use_lock) pthread_mutex_lock(&lock);
    p_get(dev[g], poll_s[g][have ? 1 : 0]);
    if (use_lock) pthread_mutex_unlock(&lock);
    have = 1;
    usleep(2000);
  }
  return NULL;
}
static double poll_sm(int g) {
  static mget_t mg;
  mg.version = 1; mg.n = 1; mg.s1 = poll_s[g][0]; mg.s2 = poll_s[g][1]; mg.m[0].id = 2;
  return p_metrics(&mg) == 0 ? mg.m[0].value : -1;
}
__global__ void spin(unsigned long long dur) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < dur);
}
static void busy(int n) {
  for (int g = 0; g < n; g++) {
    int sms; cudaSetDevice(g); cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g);
    spin<<<sms * 4, 128>>>(1500000000ull);
  }
  usleep(500000);
}
static void done(int n) { for (int g = 0; g < n; g++) { cudaSetDevice(g); cudaDeviceSynchronize(); } }
int main(void) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  *(void **)&p_init = dlsym(h, "nvmlInit_v2"); *(void **)&p_handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  *(void **)&p_alloc = dlsym(h, "nvmlGpmSampleAlloc"); *(void **)&p_get = dlsym(h, "nvmlGpmSampleGet");
  *(void **)&p_metrics = dlsym(h, "nvmlGpmMetricsGet");
  p_init();
  for (int g = 0; g < 2; g++) { p_handle(g, &dev[g]); p_alloc(&s[g][0]); p_alloc(&s[g][1]); p_alloc(&poll_s[g][0]); p_alloc(&poll_s[g][1]); }
  for (int rep = 0; rep < 3; rep++) {
    pthread_t t[2];
    busy(2);
    for (int g = 0; g < 2; g++) pthread_create(&t[g], NULL, one, (void *)(long)g);
    for (int g = 0; g < 2; g++) pthread_join(t[g], NULL);
    done(2);
    printf("(a) a thread per GPU:  SM active GPU0 %.1f %%, GPU1 %.1f %%\n", sm_of(0), sm_of(1));
    busy(2);
    p_get(dev[0], s[0][0]); p_get(dev[1], s[1][0]); usleep(500000);
    p_get(dev[0], s[0][1]); p_get(dev[1], s[1][1]);
    done(2);
    printf("(b) one thread, both: SM active GPU0 %.1f %%, GPU1 %.1f %%\n", sm_of(0), sm_of(1));
    busy(1);
    one((void *)0);
    done(1);
    printf("(c) GPU 0 alone:      SM active GPU0 %.1f %%\n", sm_of(0));
    for (use_lock = 0; use_lock < 2; use_lock++) {
      pthread_t t[2];
      busy(2);
      for (int g = 0; g < 2; g++) pthread_create(&t[g], NULL, poller, (void *)(long)g);
      for (int g = 0; g < 2; g++) pthread_join(t[g], NULL);
      done(2);
      printf("(%c) polling threads%s: SM active GPU0 %.1f %%, GPU1 %.1f %%\n", use_lock ? 'e' : 'd',
             use_lock ? ", one lock" : "", poll_sm(0), poll_sm(1));
    }
  }
  return 0;
}

/* ceilings: the machine's measured ceilings (DESIGN.md, "Ceilings"). On the GPU it runs on, it
 * measures device-to-device copy bandwidth, bf16/tf32/fp32 GEMM rate through cuBLAS, the cost
 * of an empty-kernel launch and of a graph node, host<->device bandwidth (pinned and pageable)
 * and, with two or more GPUs, NCCL all-reduce bus bandwidth; it writes
 * <out>/<gpu-slug>/ceilings.csv. Scenarios express their figures against these numbers, never
 * against datasheets. Each figure is the median of --repeat samples timed with CUDA events
 * after a warm-up; spread_pct is the relative interquartile range (stats.h). */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#if __has_include(<nccl.h>)
#include <nccl.h> /* types and function-pointer typedefs only: libnccl is opened with dlopen */
#define BENCH_HAVE_NCCL_H 1
#else
#define BENCH_HAVE_NCCL_H 0
#endif
#include "underfed.h"
#include "options.h"
#include "results.h"
#include "stats.h"

#define BENCH_MIB ((size_t)1 << 20)
#define BENCH_GIB ((size_t)1 << 30)

enum {
    BENCH_MAX_ROWS = 32,
    BENCH_MAX_GPUS = 16,
    BENCH_STEPS = 8,            /* progress steps: copy, 3 GEMMs, launch, graph, host, NCCL */
    BENCH_GRAPH_NODES = 1000,
    BENCH_REPEAT = 10,          /* samples per figure (default; --repeat overrides) */
    BENCH_QUICK_REPEAT = 5,
    BENCH_WARMUP = 2            /* untimed runs before the samples (default; --warmup overrides) */
};

/* ceilings links underfed_core only (no harness, no CUPTI). Where nothing else defines the
 * reporter behind UF_CUDA_OR_GOTO, this weak definition does; a strong one wins if linked. */
extern "C" __attribute__((weak)) void uf_report_failure(const char *file, int line,
                                                        const char *expr, const char *msg)
{
    fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, expr, msg);
}

/* The cuBLAS check, in the shape of UF_CUDA_OR_GOTO. */
#define CUBLAS_OR_GOTO(rc, expr, label)                                                    \
    do {                                                                                   \
        cublasStatus_t cublas_s_ = (expr);                                                 \
        if (cublas_s_ != CUBLAS_STATUS_SUCCESS) {                                          \
            uf_report_failure(__FILE__, __LINE__, #expr, cublasGetStatusString(cublas_s_));\
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* Everything one measurement needs: the device, one stream, one pair of events, the sample
 * buffer and the rows measured so far. */
typedef struct bench {
    int device;
    int n_gpus;
    int quick;
    int repeat;                 /* timed samples per figure */
    int warmup;                 /* untimed runs before them */
    int step;                   /* progress: measurements started so far */
    cudaDeviceProp prop;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    cublasHandle_t cublas;
    double *samples;            /* repeat entries */
    char nccl_version[UF_NAME_LEN];
    uf_ceiling_row rows[BENCH_MAX_ROWS];
    int n_rows;
} bench;

/* ---- kernels ------------------------------------------------------------------------- */

__global__ void bench_empty_kernel(void) {}

/* murmur3's 32-bit finalizer: a bijection with full avalanche, for reproducible inputs. */
__device__ static uint32_t bench_mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Uniform in [-1, 1) from (key, index): GEMM inputs must not be zeros (zeros draw less power
 * and would flatter the clock). */
__device__ static float bench_uniform(uint32_t key, size_t i)
{
    uint32_t h = bench_mix32((uint32_t)i ^ bench_mix32(key ^ (uint32_t)(i >> 32)));
    return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void bench_fill_f32(float *p, size_t n, uint32_t key)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = bench_uniform(key, i);
}

__global__ void bench_fill_bf16(__nv_bfloat16 *p, size_t n, uint32_t key)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = __float2bfloat16_rn(bench_uniform(key, i));
}

/* ---- rows, progress, timing ------------------------------------------------------------ */

/* Unit of a ceiling from results.c's table; "name@size" rows take the unit of "name". */
static const char *bench_unit(const char *name)
{
    size_t len = strcspn(name, "@");
    for (int i = 0; i < uf_n_ceiling_descs; ++i)
        if (strlen(uf_ceiling_descs[i].name) == len &&
            strncmp(uf_ceiling_descs[i].name, name, len) == 0)
            return uf_ceiling_descs[i].unit;
    return "";
}

/* A new row, not measured yet (value NaN), with the note formatted. NULL when full. */
static uf_ceiling_row *bench_row(bench *b, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static uf_ceiling_row *bench_row(bench *b, const char *name, const char *fmt, ...)
{
    if (b->n_rows >= BENCH_MAX_ROWS) {
        fprintf(stderr, "ceilings: more than %d rows; %s dropped\n", BENCH_MAX_ROWS, name);
        return NULL;
    }
    uf_ceiling_row *row = &b->rows[b->n_rows++];
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", name);
    snprintf(row->unit, sizeof row->unit, "%s", bench_unit(name));
    row->value = NAN;
    row->spread_pct = NAN;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note, sizeof row->note, fmt, ap);
    va_end(ap);
    return row;
}

static void bench_progress(bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bench_progress(bench *b, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    b->step++;
    fprintf(stderr, "ceilings: %s ... %d/%d\n", what, b->step, BENCH_STEPS);
}

/* The median and spread of per-sample values into a row. */
static void bench_row_summary(uf_ceiling_row *row, const double *values, int n)
{
    uf_summary s;
    if (row == NULL || uf_summarize(values, n, &s) != 0)
        return;
    row->value = s.median;
    row->spread_pct = s.spread_pct;
}

/* Per-sample rate: amount / time, amount in units of 1e9 per second (GB/s from bytes,
 * TFLOP/s from flop / 1e3). In place over b->samples (milliseconds in, rate out). */
static void bench_samples_to_rate(bench *b, double amount_per_sample)
{
    for (int i = 0; i < b->repeat; ++i)
        b->samples[i] = amount_per_sample / (b->samples[i] * 1e-3) / 1e9;
}

/* Per-sample cost in microseconds of one of `count` items. In place over b->samples. */
static void bench_samples_to_us_each(bench *b, double count)
{
    for (int i = 0; i < b->repeat; ++i)
        b->samples[i] = b->samples[i] * 1e3 / count;
}

typedef int (*bench_enqueue_fn)(bench *b, const void *arg);

/* Run `enqueue` warmup times, then time it b->repeat times, each between two events on the
 * stream; milliseconds into b->samples. */
static int bench_time(bench *b, bench_enqueue_fn enqueue, const void *arg)
{
    int rc = UF_OK;
    for (int i = 0; i < b->warmup; ++i)
        UF_STATUS_OR_GOTO(rc, enqueue(b, arg), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(b->stream), out);
    for (int i = 0; i < b->repeat; ++i) {
        float ms = 0.0f;
        UF_CUDA_OR_GOTO(rc, cudaEventRecord(b->start, b->stream), out);
        UF_STATUS_OR_GOTO(rc, enqueue(b, arg), out);
        UF_CUDA_OR_GOTO(rc, cudaEventRecord(b->stop, b->stream), out);
        UF_CUDA_OR_GOTO(rc, cudaEventSynchronize(b->stop), out);
        UF_CUDA_OR_GOTO(rc, cudaEventElapsedTime(&ms, b->start, b->stop), out);
        b->samples[i] = ms;
    }
out:
    return rc;
}

/* Largest size <= want (halving, not below floor) such that `copies` buffers of it fit in
 * 90 % of the device's free memory; 0 when even floor does not fit. */
static int bench_fit(size_t want, size_t floor, int copies, size_t *out)
{
    int rc = UF_OK;
    size_t free_bytes = 0, total_bytes = 0;
    UF_CUDA_OR_GOTO(rc, cudaMemGetInfo(&free_bytes, &total_bytes), out_rc);
    *out = 0;
    for (size_t s = want; s >= floor && s > 0; s /= 2)
        if ((double)s * copies <= 0.9 * (double)free_bytes) {
            *out = s;
            break;
        }
out_rc:
    return rc;
}

static int bench_fill(bench *b, void *p, size_t n, int bf16, uint32_t key)
{
    int rc = UF_OK;
    int blocks = b->prop.multiProcessorCount * 8;
    if (bf16)
        bench_fill_bf16<<<blocks, 256, 0, b->stream>>>((__nv_bfloat16 *)p, n, key);
    else
        bench_fill_f32<<<blocks, 256, 0, b->stream>>>((float *)p, n, key);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* ---- copy bandwidth -------------------------------------------------------------------- */

typedef struct bench_copy {
    void *dst;
    const void *src;
    size_t bytes;
    cudaMemcpyKind kind;
} bench_copy;

static int bench_enqueue_copy(bench *b, const void *arg)
{
    const bench_copy *c = (const bench_copy *)arg;
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(c->dst, c->src, c->bytes, c->kind, b->stream), out);
out:
    return rc;
}

/* Device-to-device copy of buffers several times the L2, counting bytes read + written. */
static int bench_copy_d2d(bench *b)
{
    int rc = UF_OK;
    size_t want = b->quick ? 256 * BENCH_MIB : 2 * BENCH_GIB, bytes = 0;
    void *src = NULL, *dst = NULL;
    bench_progress(b, "copy d2d %zu MiB", want / BENCH_MIB);
    UF_STATUS_OR_GOTO(rc, bench_fit(want, 64 * BENCH_MIB, 2, &bytes), out);
    if (bytes == 0) {
        bench_row(b, "copy_d2d_gbs", "not measured: two 64 MiB buffers do not fit");
        goto out;
    }
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&src, bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&dst, bytes), out_free_src);
    UF_STATUS_OR_GOTO(rc, bench_fill(b, src, bytes / sizeof(float), 0, 0x5eed0001u), out_free_dst);
    {
        bench_copy c = {.dst = dst, .src = src, .bytes = bytes, .kind = cudaMemcpyDeviceToDevice};
        UF_STATUS_OR_GOTO(rc, bench_time(b, bench_enqueue_copy, &c), out_free_dst);
    }
    bench_samples_to_rate(b, 2.0 * (double)bytes);
    bench_row_summary(bench_row(b, "copy_d2d_gbs",
                                "cudaMemcpyAsync D2D, %zu MiB (%.0fx L2), read + written bytes",
                                bytes / BENCH_MIB, (double)bytes / (double)b->prop.l2CacheSize),
                      b->samples, b->repeat);
out_free_dst:
    cudaFree(dst);
out_free_src:
    cudaFree(src);
out:
    return rc;
}

/* ---- GEMM rate ------------------------------------------------------------------------- */

typedef struct bench_gemm_kind {
    const char *label;          /* "bf16" */
    const char *row;            /* "gemm_bf16_tflops" */
    cudaDataType_t type;        /* of A, B and C */
    cublasComputeType_t compute;
    size_t elem_bytes;
    const char *note;
} bench_gemm_kind;

static const bench_gemm_kind bench_gemm_kinds[] = {
    {.label = "bf16", .row = "gemm_bf16_tflops", .type = CUDA_R_16BF,
     .compute = CUBLAS_COMPUTE_32F, .elem_bytes = 2,
     .note = "bf16 A B C, fp32 accumulate (CUBLAS_COMPUTE_32F)"},
    {.label = "tf32", .row = "gemm_tf32_tflops", .type = CUDA_R_32F,
     .compute = CUBLAS_COMPUTE_32F_FAST_TF32, .elem_bytes = 4,
     .note = "fp32 A B C, tf32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32)"},
    {.label = "fp32", .row = "gemm_fp32_tflops", .type = CUDA_R_32F,
     .compute = CUBLAS_COMPUTE_32F, .elem_bytes = 4,
     .note = "fp32 A B C, fp32 FMA (CUBLAS_COMPUTE_32F, default math mode)"},
};

typedef struct bench_gemm {
    const bench_gemm_kind *kind;
    int n;
    const void *a, *b;
    void *c;
} bench_gemm;

static int bench_enqueue_gemm(bench *b, const void *arg)
{
    const bench_gemm *g = (const bench_gemm *)arg;
    const float alpha = 1.0f, beta = 0.0f;
    int rc = UF_OK;
    CUBLAS_OR_GOTO(rc, cublasGemmEx(b->cublas, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n,
                                    &alpha, g->a, g->kind->type, g->n, g->b, g->kind->type,
                                    g->n, &beta, g->c, g->kind->type, g->n, g->kind->compute,
                                    CUBLAS_GEMM_DEFAULT),
                   out);
out:
    return rc;
}

/* Square GEMM C = A B at n = 8192 (quick 4096) on random inputs: 2 n^3 flop per call. */
static int bench_gemm_rate(bench *b, const bench_gemm_kind *kind)
{
    int rc = UF_OK;
    int want_n = b->quick ? 4096 : 8192, n = want_n;
    size_t matrix_bytes = 0, elems = 0;
    void *a = NULL, *bm = NULL, *c = NULL;
    bench_progress(b, "gemm %s %d", kind->label, want_n);
    UF_STATUS_OR_GOTO(rc, bench_fit((size_t)want_n * want_n * kind->elem_bytes,
                                    (size_t)1024 * 1024 * kind->elem_bytes, 3, &matrix_bytes),
                      out);
    if (matrix_bytes == 0) {
        bench_row(b, kind->row, "not measured: three 1024^2 matrices do not fit");
        goto out;
    }
    while ((size_t)n * n * kind->elem_bytes > matrix_bytes)
        n /= 2;
    elems = (size_t)n * n;
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&a, elems * kind->elem_bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&bm, elems * kind->elem_bytes), out_free_a);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&c, elems * kind->elem_bytes), out_free_b);
    UF_STATUS_OR_GOTO(rc, bench_fill(b, a, elems, kind->elem_bytes == 2, 0x5eed0a00u), out_free_c);
    UF_STATUS_OR_GOTO(rc, bench_fill(b, bm, elems, kind->elem_bytes == 2, 0x5eed0b00u), out_free_c);
    {
        bench_gemm g = {.kind = kind, .n = n, .a = a, .b = bm, .c = c};
        UF_STATUS_OR_GOTO(rc, bench_time(b, bench_enqueue_gemm, &g), out_free_c);
    }
    bench_samples_to_rate(b, 2.0 * (double)n * n * n / 1e3);
    bench_row_summary(bench_row(b, kind->row, "cublasGemmEx n=%d, %s", n, kind->note),
                      b->samples, b->repeat);
out_free_c:
    cudaFree(c);
out_free_b:
    cudaFree(bm);
out_free_a:
    cudaFree(a);
out:
    return rc;
}

/* ---- launch and graph-node cost -------------------------------------------------------- */

static int bench_enqueue_launches(bench *b, const void *arg)
{
    int count = *(const int *)arg;
    int rc = UF_OK;
    for (int i = 0; i < count; ++i)
        bench_empty_kernel<<<1, 1, 0, b->stream>>>();
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Back-to-back empty kernels: events around the batch / count. An empty kernel takes the
 * GPU less time than a launch takes the host, so this is the host's cost per launch: the
 * floor under any eager loop of small kernels. */
static int bench_launch(bench *b)
{
    int rc = UF_OK;
    int count = b->quick ? 2000 : 20000;
    bench_progress(b, "launch %d empty kernels", count);
    UF_STATUS_OR_GOTO(rc, bench_time(b, bench_enqueue_launches, &count), out);
    bench_samples_to_us_each(b, count);
    bench_row_summary(bench_row(b, "launch_us",
                                "%d back-to-back empty kernels <<<1,1>>> on one stream, "
                                "events around the batch / count", count),
                      b->samples, b->repeat);
out:
    return rc;
}

static int bench_enqueue_graph(bench *b, const void *arg)
{
    cudaGraphExec_t exec = *(const cudaGraphExec_t *)arg;
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaGraphLaunch(exec, b->stream), out);
out:
    return rc;
}

/* Capture BENCH_GRAPH_NODES empty kernels into a graph on b->stream. */
static int bench_capture_graph(bench *b, cudaGraph_t *graph)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal), out);
    for (int i = 0; i < BENCH_GRAPH_NODES; ++i)
        bench_empty_kernel<<<1, 1, 0, b->stream>>>();
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out_end_capture);
out_end_capture:
    {
        /* Always end the capture so that the stream is usable again. */
        cudaError_t e = cudaStreamEndCapture(b->stream, graph);
        if (rc == UF_OK && e != cudaSuccess) {
            uf_report_failure(__FILE__, __LINE__, "cudaStreamEndCapture(b->stream, graph)",
                              cudaGetErrorString(e));
            rc = UF_ERR;
        }
    }
out:
    return rc;
}

/* A captured graph of empty-kernel nodes replayed: time per node. */
static int bench_graph(bench *b)
{
    int rc = UF_OK;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    bench_progress(b, "graph of %d empty-kernel nodes", BENCH_GRAPH_NODES);
    UF_STATUS_OR_GOTO(rc, bench_capture_graph(b, &graph), out);
    UF_CUDA_OR_GOTO(rc, cudaGraphInstantiate(&exec, graph, 0), out_destroy_graph);
    UF_CUDA_OR_GOTO(rc, cudaGraphUpload(exec, b->stream), out_destroy_exec);
    UF_STATUS_OR_GOTO(rc, bench_time(b, bench_enqueue_graph, &exec), out_destroy_exec);
    bench_samples_to_us_each(b, BENCH_GRAPH_NODES);
    bench_row_summary(bench_row(b, "graph_node_us",
                                "graph of %d empty-kernel nodes in a chain, replayed: "
                                "events around cudaGraphLaunch / nodes", BENCH_GRAPH_NODES),
                      b->samples, b->repeat);
out_destroy_exec:
    cudaGraphExecDestroy(exec);
out_destroy_graph:
    cudaGraphDestroy(graph);
out:
    return rc;
}

/* ---- host <-> device ------------------------------------------------------------------- */

/* One direction, one kind of host memory: bytes / time. */
static int bench_host_copy(bench *b, const char *row_name, void *dst, const void *src,
                           size_t bytes, cudaMemcpyKind kind, const char *host_kind)
{
    int rc = UF_OK;
    bench_copy c = {.dst = dst, .src = src, .bytes = bytes, .kind = kind};
    UF_STATUS_OR_GOTO(rc, bench_time(b, bench_enqueue_copy, &c), out);
    bench_samples_to_rate(b, (double)bytes);
    bench_row_summary(bench_row(b, row_name, "cudaMemcpyAsync %zu MiB, %s host memory",
                                bytes / BENCH_MIB, host_kind),
                      b->samples, b->repeat);
out:
    return rc;
}

static int bench_host(bench *b)
{
    int rc = UF_OK;
    size_t bytes = b->quick ? 64 * BENCH_MIB : 256 * BENCH_MIB;
    void *dev = NULL, *pinned = NULL, *pageable = NULL;
    bench_progress(b, "host<->device %zu MiB, pinned and pageable", bytes / BENCH_MIB);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&dev, bytes), out);
    UF_CUDA_OR_GOTO(rc, cudaMallocHost(&pinned, bytes), out_free_dev);
    pageable = malloc(bytes);
    if (pageable == NULL) {
        fprintf(stderr, "ceilings: out of host memory (%zu MiB pageable buffer)\n",
                bytes / BENCH_MIB);
        rc = UF_ERR;
        goto out_free_pinned;
    }
    /* Touch every page so that page faults are not timed; a pattern, not zeros. */
    memset(pinned, 0x5a, bytes);
    memset(pageable, 0x5a, bytes);
    UF_STATUS_OR_GOTO(rc, bench_host_copy(b, "h2d_pinned_gbs", dev, pinned, bytes,
                                          cudaMemcpyHostToDevice, "pinned"), out_free_pageable);
    UF_STATUS_OR_GOTO(rc, bench_host_copy(b, "d2h_pinned_gbs", pinned, dev, bytes,
                                          cudaMemcpyDeviceToHost, "pinned"), out_free_pageable);
    UF_STATUS_OR_GOTO(rc, bench_host_copy(b, "h2d_pageable_gbs", dev, pageable, bytes,
                                          cudaMemcpyHostToDevice, "pageable"), out_free_pageable);
    UF_STATUS_OR_GOTO(rc, bench_host_copy(b, "d2h_pageable_gbs", pageable, dev, bytes,
                                          cudaMemcpyDeviceToHost, "pageable"), out_free_pageable);
out_free_pageable:
    free(pageable);
out_free_pinned:
    cudaFreeHost(pinned);
out_free_dev:
    cudaFree(dev);
out:
    return rc;
}

/* ---- NCCL all-reduce bus bandwidth ----------------------------------------------------- */

#if BENCH_HAVE_NCCL_H
typedef ncclResult_t (*bench_nccl_init_all_fn)(ncclComm_t *, int, const int *);
typedef ncclResult_t (*bench_nccl_all_reduce_fn)(const void *, void *, size_t, ncclDataType_t,
                                                 ncclRedOp_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*bench_nccl_void_fn)(void);
typedef ncclResult_t (*bench_nccl_destroy_fn)(ncclComm_t);
typedef const char *(*bench_nccl_error_string_fn)(ncclResult_t);
typedef ncclResult_t (*bench_nccl_version_fn)(int *);

/* libnccl.so.2, opened at run time so that the program starts where NCCL is missing. */
typedef struct bench_nccl {
    void *lib;
    bench_nccl_init_all_fn comm_init_all;
    bench_nccl_all_reduce_fn all_reduce;
    bench_nccl_void_fn group_start, group_end;
    bench_nccl_destroy_fn comm_destroy;
    bench_nccl_error_string_fn error_string;
    bench_nccl_version_fn get_version;
} bench_nccl;

/* The NCCL check, in the shape of UF_CUDA_OR_GOTO (the error text comes through `api`). */
#define NCCL_OR_GOTO(rc, api, expr, label)                                                 \
    do {                                                                                   \
        ncclResult_t nccl_r_ = (expr);                                                     \
        if (nccl_r_ != ncclSuccess) {                                                      \
            uf_report_failure(__FILE__, __LINE__, #expr, (api)->error_string(nccl_r_));    \
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* UF_OK, or UF_SKIP with the reason when the library or a symbol is missing. */
static int bench_nccl_open(bench_nccl *api, char *reason, size_t reason_len)
{
    memset(api, 0, sizeof *api);
    api->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (api->lib == NULL) {
        snprintf(reason, reason_len, "NCCL not available: %s", dlerror());
        return UF_SKIP;
    }
    struct { void **slot; const char *name; } syms[] = {
        {(void **)&api->comm_init_all, "ncclCommInitAll"},
        {(void **)&api->all_reduce, "ncclAllReduce"},
        {(void **)&api->group_start, "ncclGroupStart"},
        {(void **)&api->group_end, "ncclGroupEnd"},
        {(void **)&api->comm_destroy, "ncclCommDestroy"},
        {(void **)&api->error_string, "ncclGetErrorString"},
        {(void **)&api->get_version, "ncclGetVersion"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; ++i) {
        *syms[i].slot = dlsym(api->lib, syms[i].name);
        if (*syms[i].slot == NULL) {
            snprintf(reason, reason_len, "NCCL lacks %s", syms[i].name);
            dlclose(api->lib);
            api->lib = NULL;
            return UF_SKIP;
        }
    }
    return UF_OK;
}

/* One communicator per GPU of this process, with its buffers, stream and events. */
typedef struct bench_nccl_run {
    int n;
    int devs[BENCH_MAX_GPUS];
    ncclComm_t comms[BENCH_MAX_GPUS];
    cudaStream_t streams[BENCH_MAX_GPUS];
    cudaEvent_t start[BENCH_MAX_GPUS], stop[BENCH_MAX_GPUS];
    float *send[BENCH_MAX_GPUS], *recv[BENCH_MAX_GPUS];
} bench_nccl_run;

/* `iters` all-reduces of `count` floats on every GPU, one group call each. */
static int bench_nccl_enqueue(const bench_nccl *api, bench_nccl_run *r, size_t count, int iters)
{
    int rc = UF_OK;
    for (int it = 0; it < iters; ++it) {
        NCCL_OR_GOTO(rc, api, api->group_start(), out);
        for (int g = 0; g < r->n; ++g)
            NCCL_OR_GOTO(rc, api, api->all_reduce(r->send[g], r->recv[g], count, ncclFloat,
                                                  ncclSum, r->comms[g], r->streams[g]),
                         out_end_group);
out_end_group:
        if (rc != UF_OK) {
            api->group_end();
            goto out;
        }
        NCCL_OR_GOTO(rc, api, api->group_end(), out);
    }
out:
    return rc;
}

/* Time per all-reduce of `bytes`: events on each GPU's stream around `iters` calls; the
 * slowest GPU's time, since the collective ends when every rank has its result. */
static int bench_nccl_time(bench *b, const bench_nccl *api, bench_nccl_run *r, size_t bytes,
                           int iters)
{
    int rc = UF_OK;
    size_t count = bytes / sizeof(float);
    UF_STATUS_OR_GOTO(rc, bench_nccl_enqueue(api, r, count, b->warmup * iters), out);
    for (int g = 0; g < r->n; ++g)
        UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(r->streams[g]), out);
    for (int s = 0; s < b->repeat; ++s) {
        double slowest_ms = 0.0;
        for (int g = 0; g < r->n; ++g) {
            UF_CUDA_OR_GOTO(rc, cudaSetDevice(r->devs[g]), out);
            UF_CUDA_OR_GOTO(rc, cudaEventRecord(r->start[g], r->streams[g]), out);
        }
        UF_STATUS_OR_GOTO(rc, bench_nccl_enqueue(api, r, count, iters), out);
        for (int g = 0; g < r->n; ++g) {
            UF_CUDA_OR_GOTO(rc, cudaSetDevice(r->devs[g]), out);
            UF_CUDA_OR_GOTO(rc, cudaEventRecord(r->stop[g], r->streams[g]), out);
        }
        for (int g = 0; g < r->n; ++g) {
            float ms = 0.0f;
            UF_CUDA_OR_GOTO(rc, cudaEventSynchronize(r->stop[g]), out);
            UF_CUDA_OR_GOTO(rc, cudaEventElapsedTime(&ms, r->start[g], r->stop[g]), out);
            if (ms > slowest_ms)
                slowest_ms = ms;
        }
        b->samples[s] = slowest_ms / iters;
    }
out:
    return rc;
}

/* Buffers, streams and events on every GPU; sends filled with random floats. */
static int bench_nccl_alloc(bench *b, bench_nccl_run *r, size_t max_bytes)
{
    int rc = UF_OK;
    for (int g = 0; g < r->n; ++g) {
        UF_CUDA_OR_GOTO(rc, cudaSetDevice(r->devs[g]), out);
        UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithFlags(&r->streams[g], cudaStreamNonBlocking), out);
        UF_CUDA_OR_GOTO(rc, cudaEventCreate(&r->start[g]), out);
        UF_CUDA_OR_GOTO(rc, cudaEventCreate(&r->stop[g]), out);
        UF_CUDA_OR_GOTO(rc, cudaMalloc(&r->send[g], max_bytes), out);
        UF_CUDA_OR_GOTO(rc, cudaMalloc(&r->recv[g], max_bytes), out);
        bench_fill_f32<<<b->prop.multiProcessorCount * 8, 256, 0, r->streams[g]>>>(
            r->send[g], max_bytes / sizeof(float), 0x5eedcc00u + (uint32_t)g);
        UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
        UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(r->streams[g]), out);
    }
out:
    return rc;
}

/* Frees whatever bench_nccl_alloc created (NULL handles are skipped). */
static void bench_nccl_free(bench_nccl_run *r)
{
    for (int g = 0; g < r->n; ++g) {
        cudaSetDevice(r->devs[g]);
        if (r->send[g]) cudaFree(r->send[g]);
        if (r->recv[g]) cudaFree(r->recv[g]);
        if (r->start[g]) cudaEventDestroy(r->start[g]);
        if (r->stop[g]) cudaEventDestroy(r->stop[g]);
        if (r->streams[g]) cudaStreamDestroy(r->streams[g]);
    }
}

/* Largest power-of-four multiple of 1 MiB <= want whose send + receive buffers fit on every
 * GPU; 0 when 1 MiB does not. */
static int bench_nccl_max_bytes(const bench_nccl_run *r, size_t want, size_t *out)
{
    int rc = UF_OK;
    size_t best = want;
    for (int g = 0; g < r->n; ++g) {
        size_t fit = 0;
        UF_CUDA_OR_GOTO(rc, cudaSetDevice(r->devs[g]), out);
        UF_STATUS_OR_GOTO(rc, bench_fit(want, BENCH_MIB, 2, &fit), out);
        if (fit < best)
            best = fit;
    }
    *out = 0;
    for (size_t s = BENCH_MIB; s <= best; s *= 4)
        *out = s;
out:
    return rc;
}

#define BENCH_NCCL_NOTE                                                                    \
    "all-reduce float sum, %d GPUs, %zu MiB, %d calls per sample, busbw = algbw x 2(n-1)/n"

/* All-reduce (float sum) over every GPU of the machine at 1 MiB, 4 MiB, ... 1 GiB (quick:
 * up to 64 MiB), with nccl-tests' definitions: algbw = bytes / time, busbw = algbw x 2(n-1)/n
 * (the bytes each rank's link carries in a ring, so that busbw is comparable to link speed). */
static int bench_nccl_measure(bench *b, const bench_nccl *api, int n_gpus)
{
    int rc = UF_OK;
    bench_nccl_run r;
    memset(&r, 0, sizeof r);
    r.n = n_gpus;
    for (int g = 0; g < r.n; ++g)
        r.devs[g] = g;
    size_t max_bytes = 0;
    int iters = b->quick ? 5 : 20;
    UF_STATUS_OR_GOTO(rc, bench_nccl_max_bytes(&r, b->quick ? 64 * BENCH_MIB : BENCH_GIB,
                                               &max_bytes), out_free);
    if (max_bytes == 0) {
        bench_row(b, "nccl_busbw_gbs", "not measured: 2 MiB of buffers do not fit");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, bench_nccl_alloc(b, &r, max_bytes), out_free);
    NCCL_OR_GOTO(rc, api, api->comm_init_all(r.comms, r.n, r.devs), out_free);
    for (size_t bytes = BENCH_MIB; bytes <= max_bytes; bytes *= 4) {
        char name[UF_NAME_LEN];
        UF_STATUS_OR_GOTO(rc, bench_nccl_time(b, api, &r, bytes, iters), out_destroy);
        /* ms per all-reduce -> busbw in GB/s */
        for (int s = 0; s < b->repeat; ++s)
            b->samples[s] = (double)bytes / (b->samples[s] * 1e-3) / 1e9 *
                            (2.0 * (r.n - 1) / r.n);
        snprintf(name, sizeof name, "nccl_busbw_gbs@%zu", bytes);
        bench_row_summary(bench_row(b, name, BENCH_NCCL_NOTE, r.n, bytes / BENCH_MIB, iters),
                          b->samples, b->repeat);
        if (bytes * 4 > max_bytes)  /* the largest size is also the headline figure */
            bench_row_summary(bench_row(b, "nccl_busbw_gbs", BENCH_NCCL_NOTE, r.n,
                                        bytes / BENCH_MIB, iters),
                              b->samples, b->repeat);
    }
out_destroy:
    for (int g = 0; g < r.n; ++g)
        if (r.comms[g])
            api->comm_destroy(r.comms[g]);
out_free:
    bench_nccl_free(&r);
    cudaSetDevice(b->device);
    return rc;
}
#endif /* BENCH_HAVE_NCCL_H */

/* NCCL bus bandwidth where there are two or more GPUs; otherwise an empty row with why. */
static int bench_nccl_busbw(bench *b)
{
    int rc = UF_OK;
    bench_progress(b, "nccl all-reduce over %d GPU(s)", b->n_gpus);
    if (b->n_gpus < 2) {
        bench_row(b, "nccl_busbw_gbs", "needs 2 or more GPUs");
        return UF_OK;
    }
#if BENCH_HAVE_NCCL_H
    {
        bench_nccl api;
        char reason[UF_REASON_LEN];
        int n = b->n_gpus > BENCH_MAX_GPUS ? BENCH_MAX_GPUS : b->n_gpus;
        if (bench_nccl_open(&api, reason, sizeof reason) != UF_OK) {
            fprintf(stderr, "ceilings: %s\n", reason);
            bench_row(b, "nccl_busbw_gbs", "%s", reason);
            return UF_OK;
        }
        int version = 0;
        if (api.get_version(&version) == ncclSuccess) {
            int major = version >= 10000 ? version / 10000 : version / 1000;
            int minor = version >= 10000 ? version / 100 % 100 : version / 100 % 10;
            snprintf(b->nccl_version, sizeof b->nccl_version, "%d.%d.%d", major, minor,
                     version % 100);
        }
        rc = bench_nccl_measure(b, &api, n);
        /* libnccl stays loaded: its threads may outlive the communicators. */
    }
#else
    bench_row(b, "nccl_busbw_gbs", "not measured: built without nccl.h");
#endif
    return rc;
}

/* ---- the program ----------------------------------------------------------------------- */

static void bench_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [--quick] [--out DIR] [--device N] [--repeat N] [--warmup N] [--help]\n"
            "Measures the ceilings of the GPU it runs on and writes DIR/GPU/ceilings.csv\n"
            "(DIR defaults to results, or results-quick with --quick, as for the scenarios;\n"
            "GPU is a slug of the device name):\n"
            "  copy_d2d_gbs       device-to-device cudaMemcpy, 2 GiB (quick 256 MiB), read+write\n"
            "  gemm_*_tflops      cublasGemmEx n=8192 (quick 4096): bf16, tf32, fp32\n"
            "  launch_us          per launch, 20000 (quick 2000) back-to-back empty kernels\n"
            "  graph_node_us      per node of a replayed graph of %d empty kernels\n"
            "  h2d/d2h_*_gbs      256 MiB (quick 64 MiB) copies, pinned and pageable host memory\n"
            "  nccl_busbw_gbs     all-reduce bus bandwidth over all GPUs, 1 MiB .. 1 GiB\n"
            "                     (quick .. 64 MiB); needs 2 or more GPUs\n"
            "Each figure: median of --repeat samples (default %d, quick %d) after --warmup\n"
            "untimed runs (default %d). Exit 0 measured, 1 error, 2 usage, 77 no GPU.\n",
            prog, BENCH_GRAPH_NODES, BENCH_REPEAT, BENCH_QUICK_REPEAT, BENCH_WARMUP);
}

/* The kernel driver's version ("580.159.04") from /proc/driver/nvidia/version: the first
 * word made of digits and dots only. "" where the file is absent. */
static void bench_driver_version(char *out, size_t len)
{
    char line[256], word[64];
    out[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f == NULL)
        return;
    if (fgets(line, sizeof line, f) != NULL)
        for (char *p = line; sscanf(p, "%63s", word) == 1; p = strstr(p, word) + strlen(word))
            if (strchr(word, '.') != NULL && strspn(word, "0123456789.") == strlen(word)) {
                snprintf(out, len, "%s", word);
                break;
            }
    fclose(f);
}

/* Run metadata: the GPU, versions, UTC time and the command line (keys as the harness's). */
static void bench_meta(const bench *b, int argc, char **argv, uf_meta *m)
{
    int driver = 0, runtime = 0, cublas = 0;
    char line[UF_REASON_LEN] = "", kernel_driver[64];
    size_t used = 0;
    for (int i = 0; i < argc && used < sizeof line; ++i)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", i ? " " : "", argv[i]);
    time_t now = time(NULL);
    struct tm utc;
    char when[32] = "";
    if (gmtime_r(&now, &utc) != NULL)
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
    bench_driver_version(kernel_driver, sizeof kernel_driver);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cublasGetVersion(b->cublas, &cublas);

    memset(m, 0, sizeof *m);
    uf_meta_set(m, "tool", "ceilings");
    uf_meta_set(m, "gpu", "%s", b->prop.name);
    uf_meta_set(m, "device", "%d", b->device);
    uf_meta_set(m, "gpus_visible", "%d", b->n_gpus);
    uf_meta_set(m, "sm_count", "%d", b->prop.multiProcessorCount);
    uf_meta_set(m, "memory_bytes", "%zu", b->prop.totalGlobalMem);
    uf_meta_set(m, "l2_bytes", "%d", b->prop.l2CacheSize);
    uf_meta_set(m, "compute_capability", "%d.%d", b->prop.major, b->prop.minor);
    uf_meta_set(m, "driver", "%s (CUDA %d.%d)", kernel_driver[0] ? kernel_driver : "unknown",
                driver / 1000, driver % 1000 / 10);
    uf_meta_set(m, "cuda_runtime", "%d.%d", runtime / 1000, runtime % 1000 / 10);
    uf_meta_set(m, "cublas", "%d.%d.%d", cublas / 10000, cublas / 100 % 100, cublas % 100);
    if (b->nccl_version[0])
        uf_meta_set(m, "nccl", "%s", b->nccl_version);
    uf_meta_set(m, "mode", "%s", b->quick ? "quick" : "full");
    uf_meta_set(m, "repeat", "%d", b->repeat);
    uf_meta_set(m, "warmup", "%d", b->warmup);
    uf_meta_set(m, "utc", "%s", when);
    uf_meta_set(m, "command", "%s", line);
}

/* Every measurement in turn; stops at the first error. */
static int bench_measure_all(bench *b)
{
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, bench_copy_d2d(b), out);
    for (size_t i = 0; i < sizeof bench_gemm_kinds / sizeof bench_gemm_kinds[0]; ++i)
        UF_STATUS_OR_GOTO(rc, bench_gemm_rate(b, &bench_gemm_kinds[i]), out);
    UF_STATUS_OR_GOTO(rc, bench_launch(b), out);
    UF_STATUS_OR_GOTO(rc, bench_graph(b), out);
    UF_STATUS_OR_GOTO(rc, bench_host(b), out);
    UF_STATUS_OR_GOTO(rc, bench_nccl_busbw(b), out);
out:
    return rc;
}

/* The rows as a table on stdout, then the file. */
static int bench_write(const bench *b, const uf_meta *meta, const char *out_dir)
{
    char slug[UF_NAME_LEN], dir[UF_PATH_LEN + UF_NAME_LEN + 2], path[sizeof dir + 16];
    char err[UF_REASON_LEN];
    printf("%-26s %12s %-8s %8s  %s\n", "ceiling", "value", "unit", "spread%", "note");
    for (int i = 0; i < b->n_rows; ++i) {
        const uf_ceiling_row *r = &b->rows[i];
        printf("%-26s %12.3f %-8s %8.2f  %s\n", r->name, r->value, r->unit, r->spread_pct,
               r->note);
    }
    uf_slug(b->prop.name, slug, sizeof slug);
    snprintf(dir, sizeof dir, "%s/%s", out_dir, slug);
    snprintf(path, sizeof path, "%s/ceilings.csv", dir);
    if (uf_mkdirs(dir, err, sizeof err) != 0 ||
        uf_ceilings_write(path, meta, b->rows, b->n_rows, err, sizeof err) != 0) {
        fprintf(stderr, "ceilings: %s\n", err);
        return UF_ERR;
    }
    printf("ceilings: wrote %s\n", path);
    return UF_OK;
}

/* Stream, events, cuBLAS handle and the sample buffer on b->device. */
static int bench_open(bench *b)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaSetDevice(b->device), out);
    UF_CUDA_OR_GOTO(rc, cudaGetDeviceProperties(&b->prop, b->device), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking), out);
    UF_CUDA_OR_GOTO(rc, cudaEventCreate(&b->start), out);
    UF_CUDA_OR_GOTO(rc, cudaEventCreate(&b->stop), out);
    CUBLAS_OR_GOTO(rc, cublasCreate(&b->cublas), out);
    CUBLAS_OR_GOTO(rc, cublasSetStream(b->cublas, b->stream), out);
    /* Default math: CUBLAS_COMPUTE_32F really is fp32 (no silent TF32). */
    CUBLAS_OR_GOTO(rc, cublasSetMathMode(b->cublas, CUBLAS_DEFAULT_MATH), out);
    b->samples = (double *)calloc((size_t)b->repeat, sizeof *b->samples);
    if (b->samples == NULL) {
        fprintf(stderr, "ceilings: out of host memory\n");
        rc = UF_ERR;
    }
out:
    return rc;
}

static void bench_close(bench *b)
{
    free(b->samples);
    if (b->cublas) cublasDestroy(b->cublas);
    if (b->stop) cudaEventDestroy(b->stop);
    if (b->start) cudaEventDestroy(b->start);
    if (b->stream) cudaStreamDestroy(b->stream);
}

/* No GPU: the reason on stderr, then 77 (skip), or 1 where a GPU is required. */
static int bench_no_gpu(const char *why)
{
    const char *require = getenv("UNDERFED_REQUIRE_GPU");
    int required = require != NULL && strcmp(require, "1") == 0;
    fprintf(stderr, "ceilings: no CUDA GPU: %s%s\n", why,
            required ? " (UNDERFED_REQUIRE_GPU=1: failing)" : "; skipped");
    return required ? UF_ERR : UF_SKIP;
}

int main(int argc, char **argv)
{
    uf_options opt;
    char err[UF_REASON_LEN];
    bench *b = NULL;
    uf_meta meta;
    int rc = UF_OK, n_gpus = 0;

    if (uf_parse_options(argc, argv, &opt, err, sizeof err) != 0) {
        fprintf(stderr, "ceilings: %s\n", err);
        return UF_USAGE;
    }
    if (opt.help || opt.list || opt.explain) {
        bench_usage(stdout, argv[0]);
        return UF_OK;
    }
    cudaError_t e = cudaGetDeviceCount(&n_gpus);
    if (e != cudaSuccess)
        return bench_no_gpu(cudaGetErrorString(e));
    if (n_gpus == 0)
        return bench_no_gpu("no device visible");
    if (opt.device < 0 || opt.device >= n_gpus) {
        fprintf(stderr, "ceilings: --device %d: %d GPU(s) visible (0..%d)\n", opt.device, n_gpus,
                n_gpus - 1);
        return UF_USAGE;
    }
    b = (bench *)calloc(1, sizeof *b);
    if (b == NULL) {
        fprintf(stderr, "ceilings: out of host memory\n");
        return UF_ERR;
    }
    b->device = opt.device;
    b->n_gpus = n_gpus;
    b->quick = opt.quick;
    b->repeat = opt.repeat > 0 ? opt.repeat : (opt.quick ? BENCH_QUICK_REPEAT : BENCH_REPEAT);
    b->warmup = opt.warmup >= 0 ? opt.warmup : BENCH_WARMUP;

    UF_STATUS_OR_GOTO(rc, bench_open(b), out_close);
    fprintf(stderr, "ceilings: %s (device %d, %d SMs), %s, %d samples per figure\n",
            b->prop.name, b->device, b->prop.multiProcessorCount, b->quick ? "quick" : "full",
            b->repeat);
    UF_STATUS_OR_GOTO(rc, bench_measure_all(b), out_close);
    bench_meta(b, argc, argv, &meta);
    /* The same default folders as the scenarios', so that they find this file; a quick
     * run never overwrites full-run ceilings. */
    rc = bench_write(b, &meta, opt.out_dir[0] ? opt.out_dir
                                              : (opt.quick ? "results-quick" : "results"));
out_close:
    bench_close(b);
    free(b);
    return rc;
}

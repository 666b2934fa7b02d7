/* starved_input: the prefetching pipeline the `workers` fix runs on: N tokenizer threads fill
 * pinned staging slots ahead of the step, a bounded queue hands them over in order, the step
 * thread copies them asynchronously. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "tokenizer.h"
#include "starved_input_source.h"
#include "starved_input_pipeline.h"

struct si_pipeline;

typedef struct si_worker {
    struct si_pipeline *pipe;
    si_scratch scratch;
    pthread_t thread;
    int started;
} si_worker;

typedef struct si_pipeline {
    si_source src;
    int device;                 /* CUDA device of the buffers and events; -1: host-only test */
    int n_workers;              /* >= 1 (sync is the zero-worker case) */
    int n_slots;
    si_slot *slots;
    si_worker *workers;
    pthread_mutex_t lock;       /* guards everything below, and every slot's state */
    pthread_cond_t ready_cv;    /* a slot became READY, or the pipeline stops */
    pthread_cond_t free_cv;     /* a slot became FREE, or the pipeline stops */
    int sync_ready;             /* lock and condition variables initialized */
    int64_t next_produce, next_consume;
    int stop, failed;
    char err[UF_REASON_LEN];    /* the first failure */
    int64_t cpu_ns, batches;    /* producers' CPU time, batches produced */
} si_pipeline;

/* Record the first failure and stop every thread. */
static void pipeline_fail(si_pipeline *p, const char *msg)
{
    pthread_mutex_lock(&p->lock);
    if (!p->failed) {
        p->failed = 1;
        snprintf(p->err, sizeof p->err, "%s", msg);
    }
    p->stop = 1;
    pthread_cond_broadcast(&p->ready_cv);
    pthread_cond_broadcast(&p->free_cv);
    pthread_mutex_unlock(&p->lock);
}

/* A free slot and the next batch number, waiting for a slot if none is free. Returns 0, or 1
 * when the pipeline stops. */
static int claim_slot(si_pipeline *p, si_slot **slot_out, int64_t *batch_out, int *pending_out)
{
    si_slot *slot = NULL;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        for (int i = 0; i < p->n_slots && !slot; i++)
            if (p->slots[i].state == SI_SLOT_FREE)
                slot = &p->slots[i];
        if (slot)
            break;
        pthread_cond_wait(&p->free_cv, &p->lock);
    }
    if (slot) {
        slot->state = SI_SLOT_FILLING;
        *batch_out = p->next_produce++;
        *pending_out = slot->copy_pending;
        slot->copy_pending = 0;
    }
    pthread_mutex_unlock(&p->lock);
    *slot_out = slot;
    return slot ? 0 : 1;
}

/* Wait until the slot's last copy is done, produce the batch into it, and publish it. */
static int fill_slot(si_pipeline *p, si_slot *slot, int64_t batch, int pending, si_scratch *s)
{
    char err[UF_REASON_LEN];
    if (pending && p->device >= 0) {
        cudaError_t e = cudaEventSynchronize(slot->copied);
        if (e != cudaSuccess) {
            snprintf(err, sizeof err, "waiting for a staging buffer's copy failed: %s",
                     cudaGetErrorString(e));
            pipeline_fail(p, err);
            return UF_ERR;
        }
    }
    const uint64_t cpu0_ns = uf_thread_cpu_ns();
    if (produce_batch(&p->src, batch, slot->ids, s, err, sizeof err) != UF_OK) {
        pipeline_fail(p, err);
        return UF_ERR;
    }
    int64_t cpu_ns = (int64_t)(uf_thread_cpu_ns() - cpu0_ns);
    pthread_mutex_lock(&p->lock);
    slot->state = SI_SLOT_READY;
    slot->batch = batch;
    p->cpu_ns += cpu_ns;
    p->batches++;
    pthread_cond_signal(&p->ready_cv);
    pthread_mutex_unlock(&p->lock);
    return UF_OK;
}

static void *worker_main(void *arg)
{
    si_worker *w = (si_worker *)arg;
    si_pipeline *p = w->pipe;
    si_slot *slot;
    int64_t batch;
    int pending;
    if (p->device >= 0) {   /* the events belong to this device's context */
        cudaError_t e = cudaSetDevice(p->device);
        if (e != cudaSuccess) {
            char err[UF_REASON_LEN];
            snprintf(err, sizeof err, "cudaSetDevice in a worker failed: %s",
                     cudaGetErrorString(e));
            pipeline_fail(p, err);
            return NULL;
        }
    }
    while (claim_slot(p, &slot, &batch, &pending) == 0)
        if (fill_slot(p, slot, batch, pending, &w->scratch) != UF_OK)
            break;
    return NULL;
}

/* The consumer's side: the slot holding batch next_consume, waiting until a producer has
 * made it (that wait is the GPU's starvation). */
int pipeline_take(si_pipeline *p, si_slot **out, char *err, size_t errlen)
{
    si_slot *slot = NULL;
    pthread_mutex_lock(&p->lock);
    while (!p->failed) {
        for (int i = 0; i < p->n_slots && !slot; i++)
            if (p->slots[i].state == SI_SLOT_READY && p->slots[i].batch == p->next_consume)
                slot = &p->slots[i];
        if (slot || p->stop)
            break;
        pthread_cond_wait(&p->ready_cv, &p->lock);
    }
    if (slot) {
        slot->state = SI_SLOT_HELD;
        p->next_consume++;
    } else {
        snprintf(err, errlen, "%s", p->failed ? p->err : "the input pipeline has stopped");
    }
    pthread_mutex_unlock(&p->lock);
    *out = slot;
    return slot ? UF_OK : UF_ERR;
}

/* Give a slot back once its copy is enqueued (copy_recorded: its event marks the copy's end). */
void pipeline_release(si_pipeline *p, si_slot *slot, int copy_recorded)
{
    pthread_mutex_lock(&p->lock);
    slot->state = SI_SLOT_FREE;
    slot->copy_pending = copy_recorded;
    pthread_cond_signal(&p->free_cv);
    pthread_mutex_unlock(&p->lock);
}

void pipeline_stats(si_pipeline *p, int64_t *cpu_ns, int64_t *batches)
{
    pthread_mutex_lock(&p->lock);
    *cpu_ns = p->cpu_ns;
    *batches = p->batches;
    pthread_mutex_unlock(&p->lock);
}

/* Stop and join the workers, wait for the copies out of the staging buffers, free it all.
 * Safe on a partly created pipeline. */
void pipeline_destroy(si_pipeline *p)
{
    if (!p)
        return;
    if (p->sync_ready) {
        pthread_mutex_lock(&p->lock);
        p->stop = 1;
        pthread_cond_broadcast(&p->ready_cv);
        pthread_cond_broadcast(&p->free_cv);
        pthread_mutex_unlock(&p->lock);
    }
    for (int i = 0; p->workers && i < p->n_workers; i++)
        if (p->workers[i].started)
            pthread_join(p->workers[i].thread, NULL);
    for (int i = 0; p->slots && i < p->n_slots; i++) {
        si_slot *slot = &p->slots[i];
        if (p->device < 0) {
            free(slot->ids);
            continue;
        }
        if (slot->copied) {
            cudaEventSynchronize(slot->copied);  /* never recorded: returns at once */
            cudaEventDestroy(slot->copied);
        }
        if (slot->ids)
            cudaFreeHost(slot->ids);
    }
    for (int i = 0; p->workers && i < p->n_workers; i++)
        scratch_free(&p->workers[i].scratch);
    if (p->sync_ready) {
        pthread_cond_destroy(&p->free_cv);
        pthread_cond_destroy(&p->ready_cv);
        pthread_mutex_destroy(&p->lock);
    }
    free(p->slots);
    free(p->workers);
    free(p);
}

static int pipeline_init_sync(si_pipeline *p)
{
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return UF_ERR;
    if (pthread_cond_init(&p->ready_cv, NULL) != 0)
        goto out_destroy_lock;
    if (pthread_cond_init(&p->free_cv, NULL) != 0)
        goto out_destroy_ready;
    p->sync_ready = 1;
    return UF_OK;
out_destroy_ready:
    pthread_cond_destroy(&p->ready_cv);
out_destroy_lock:
    pthread_mutex_destroy(&p->lock);
    return UF_ERR;
}

/* Staging buffers: pinned, so that cudaMemcpyAsync is a real asynchronous DMA (from pageable
 * memory the driver would first copy through its own bounce buffer, on the calling thread). */
static int pipeline_alloc_slots(si_pipeline *p, char *err, size_t errlen)
{
    size_t bytes = (size_t)p->src.rows * (size_t)p->src.seq_len * sizeof(int32_t);
    for (int i = 0; i < p->n_slots; i++) {
        si_slot *slot = &p->slots[i];
        cudaError_t e = cudaSuccess;
        if (p->device < 0) {
            slot->ids = (int32_t *)malloc(bytes);
        } else {
            e = cudaHostAlloc((void **)&slot->ids, bytes, cudaHostAllocDefault);
            if (e == cudaSuccess)
                e = cudaEventCreateWithFlags(&slot->copied,
                                             cudaEventDisableTiming | cudaEventBlockingSync);
        }
        if (e != cudaSuccess || !slot->ids) {
            snprintf(err, errlen, "cannot allocate staging buffer %d of %zu bytes: %s", i, bytes,
                     e != cudaSuccess ? cudaGetErrorString(e) : "out of host memory");
            return UF_ERR;
        }
    }
    return UF_OK;
}

/* A pipeline of n_workers (>= 1) producers over src, with 2 * n_workers + 2 slots (a
 * prefetch depth of two batches per worker, as PyTorch's DataLoader does by default). */
int pipeline_create(const si_source *src, int device, int n_workers, si_pipeline **out,
                    char *err, size_t errlen)
{
    si_pipeline *p = (si_pipeline *)calloc(1, sizeof *p);
    *out = NULL;
    if (!p) {
        snprintf(err, errlen, "out of host memory for the input pipeline");
        return UF_ERR;
    }
    p->src = *src;
    p->device = device;
    p->n_workers = n_workers;
    p->n_slots = 2 * n_workers + 2;
    p->slots = (si_slot *)calloc((size_t)p->n_slots, sizeof *p->slots);
    p->workers = (si_worker *)calloc((size_t)n_workers, sizeof *p->workers);
    if (!p->slots || !p->workers || pipeline_init_sync(p) != UF_OK) {
        snprintf(err, errlen, "out of host memory for the input pipeline");
        goto out_destroy;
    }
    if (pipeline_alloc_slots(p, err, errlen) != UF_OK)
        goto out_destroy;
    for (int i = 0; i < n_workers; i++) {
        p->workers[i].pipe = p;
        if (scratch_alloc(&p->workers[i].scratch) != UF_OK) {
            snprintf(err, errlen, "out of host memory for the tokenizer's buffers");
            goto out_destroy;
        }
    }
    for (int i = 0; i < n_workers; i++) {
        int e = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
        if (e != 0) {
            snprintf(err, errlen, "cannot start worker %d of %d: %s", i, n_workers, strerror(e));
            goto out_destroy;
        }
        p->workers[i].started = 1;
    }
    *out = p;
    return UF_OK;
out_destroy:
    pipeline_destroy(p);
    return UF_ERR;
}

/* The recorder's host sampler (inject_host.h).
 *
 * A thread is registered by its OS id (gettid) when it first makes a CUDA call the recorder's
 * callback sees (launches, copies, syncs, event records: underfed_inject.c) or when an API
 * record of it arrives in a CUPTI buffer (any call, but late: buffers complete when full or at
 * exit). Each round, for each registered thread: its CPU clock (uf_thread_cpu_clock: the ns it
 * has run, up to date even while it runs, one system call) and its state letter from
 * /proc/self/task/TID/stat (kept open, re-read with pread at offset 0, which procfs regenerates;
 * parsed by uf_proc_stat_state), stamped with cuptiGetTimestamp() between the two reads. A
 * thread whose clock or stat file can no longer be read has exited: it is not read again.
 *
 * Rounds start on a fixed grid of CLOCK_MONOTONIC deadlines (a late round does not shift the
 * later ones; missed ones are skipped, not caught up). The sampler waits on a condition
 * variable, so that stopping it does not wait out a period.
 *
 * The registry (tids[0..n_tids)) is appended under reg_lock and read by the sampler through
 * n_tids (release/acquire); the samples and the stat file descriptors are the sampler thread's
 * alone until it is joined. */
#define _GNU_SOURCE     /* pthread_condattr_setclock's CLOCK_MONOTONIC, O_CLOEXEC */
#include "inject_host.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti_activity.h>

#include "clock.h"
#include "strbuf.h"

/* Threads over the cap are remembered (to count each once) up to this many. */
#define OVER_CAP_REMEMBERED 1024

typedef struct host_sampler {
    pthread_mutex_t reg_lock;
    uint32_t tids[INJ_HOST_MAX_THREADS];
    atomic_int n_tids;
    uint32_t over_cap[OVER_CAP_REMEMBERED];
    int n_over_cap;
    pid_t pid;                  /* the process that started the sampler */
    uint32_t period_us;
    uint64_t max_samples;
    int running;                /* the thread was started and not yet joined */
    pthread_t thread;
    pthread_mutex_t wait_lock;  /* with wake: the sampler's sleep, cut short by stop */
    pthread_cond_t wake;
    int stop;                   /* guarded by wait_lock */
    /* the sampler thread's own until joined */
    int stat_fd[INJ_HOST_MAX_THREADS];  /* -1 not opened yet, -2 the thread has exited */
    uf_host_sample *samples;
    int n_samples, cap_samples;
    uint64_t left_out;          /* beyond max_samples, or lost to a failed allocation */
    uint64_t cpu_ns;            /* the sampler thread's own CPU time, read as it stops */
} host_sampler;

static host_sampler hs = {.reg_lock = PTHREAD_MUTEX_INITIALIZER,
                          .wait_lock = PTHREAD_MUTEX_INITIALIZER};

void inj_host_register(uint32_t tid)
{
    if (tid == 0 || hs.pid == 0 || getpid() != hs.pid)
        return;     /* the sampler is off, or this is a forked child (its lock may be held) */
    pthread_mutex_lock(&hs.reg_lock);
    int n = atomic_load_explicit(&hs.n_tids, memory_order_relaxed), known = 0;
    for (int i = 0; i < n && !known; i++)
        known = hs.tids[i] == tid;
    for (int i = 0; i < hs.n_over_cap && !known; i++)
        known = hs.over_cap[i] == tid;
    if (!known && n < INJ_HOST_MAX_THREADS) {
        hs.tids[n] = tid;
        atomic_store_explicit(&hs.n_tids, n + 1, memory_order_release);
    } else if (!known && hs.n_over_cap < OVER_CAP_REMEMBERED) {
        hs.over_cap[hs.n_over_cap++] = tid;
    }
    pthread_mutex_unlock(&hs.reg_lock);
}

static void add_sample(uint64_t t_ns, uint64_t run_ns, uint32_t tid, char state)
{
    if ((uint64_t)hs.n_samples >= hs.max_samples) {
        hs.left_out++;
        return;
    }
    uf_host_sample *grown = uf_grow(hs.samples, &hs.cap_samples, hs.n_samples + 1,
                                    sizeof *hs.samples, 4096);
    if (grown == NULL) {
        hs.left_out++;
        return;
    }
    hs.samples = grown;
    hs.samples[hs.n_samples++] = (uf_host_sample){.t_ns = t_ns, .run_ns = run_ns, .tid = tid,
                                                  .state = state};
}

/* One read of thread slot i; a thread that has exited is marked and left alone after. */
static void sample_thread(int i)
{
    uint32_t tid = hs.tids[i];
    if (hs.stat_fd[i] == -2)
        return;
    if (hs.stat_fd[i] == -1) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%u/stat", tid);
        hs.stat_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
        if (hs.stat_fd[i] < 0) {
            hs.stat_fd[i] = -2;
            return;
        }
    }
    struct timespec cpu;
    char text[1024], state = '?';
    uint64_t t_ns = 0;
    int clock_rc = clock_gettime(uf_thread_cpu_clock(tid), &cpu);
    cuptiGetTimestamp(&t_ns);
    ssize_t n = clock_rc == 0 ? pread(hs.stat_fd[i], text, sizeof text - 1, 0) : -1;
    if (n <= 0) {
        close(hs.stat_fd[i]);
        hs.stat_fd[i] = -2;
        return;
    }
    if (uf_proc_stat_state(text, (size_t)n, &state) != 0)
        state = '?';
    add_sample(t_ns, uf_timespec_ns(&cpu), tid, state);
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    const uint64_t period_ns = (uint64_t)hs.period_us * 1000u;
    struct timespec next, now;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&hs.wait_lock);
    while (!hs.stop) {
        uf_timespec_add_ns(&next, period_ns);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (before(&next, &now))    /* late: the next deadline of the grid after now */
            while (before(&next, &now))
                uf_timespec_add_ns(&next, period_ns);
        int rc = 0;     /* 0: woken (stop, or spuriously: wait on); ETIMEDOUT: the deadline */
        while (!hs.stop && rc == 0)
            rc = pthread_cond_timedwait(&hs.wake, &hs.wait_lock, &next);
        if (hs.stop)
            break;
        pthread_mutex_unlock(&hs.wait_lock);
        int n = atomic_load_explicit(&hs.n_tids, memory_order_acquire);
        for (int i = 0; i < n; i++)
            sample_thread(i);
        pthread_mutex_lock(&hs.wait_lock);
    }
    pthread_mutex_unlock(&hs.wait_lock);
    hs.cpu_ns = uf_thread_cpu_ns();
    return NULL;
}

int inj_host_start(uint32_t period_us, uint64_t max_samples)
{
    hs.period_us = period_us;
    hs.max_samples = max_samples;
    for (int i = 0; i < INJ_HOST_MAX_THREADS; i++)
        hs.stat_fd[i] = -1;
    if (period_us == 0)
        return 0;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0 ||
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&hs.wake, &attr) != 0) {
        hs.period_us = 0;
        return 0;
    }
    pthread_condattr_destroy(&attr);
    hs.pid = getpid();
    if (pthread_create(&hs.thread, NULL, sampler_main, NULL) != 0) {
        hs.pid = 0;
        hs.period_us = 0;
        return 0;
    }
    hs.running = 1;
    return 1;
}

void inj_host_stop(void)
{
    if (!hs.running || getpid() != hs.pid)
        return;
    pthread_mutex_lock(&hs.wait_lock);
    hs.stop = 1;
    pthread_cond_signal(&hs.wake);
    pthread_mutex_unlock(&hs.wait_lock);
    pthread_join(hs.thread, NULL);
    hs.running = 0;
    for (int i = 0; i < INJ_HOST_MAX_THREADS; i++)
        if (hs.stat_fd[i] >= 0)
            close(hs.stat_fd[i]);
}

uint64_t inj_host_cpu_ns(void)
{
    return hs.cpu_ns;
}

void inj_host_take(uf_dtrace *t, uf_trace_info *info)
{
    pthread_mutex_lock(&hs.reg_lock);
    t->host = hs.samples;
    t->n_host = (size_t)hs.n_samples;
    info->host_period_us = hs.period_us;
    info->host_threads = (uint32_t)atomic_load(&hs.n_tids);
    info->host_threads_over_cap = (uint32_t)hs.n_over_cap;
    info->host_left_out = hs.left_out;
    pthread_mutex_unlock(&hs.reg_lock);
}

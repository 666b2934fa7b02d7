/* The host's clocks (clock.h). */
#include "clock.h"

/* 0 when the clock cannot be read. */
static uint64_t clock_ns(clockid_t clock)
{
    struct timespec t = {0, 0};
    clock_gettime(clock, &t);
    return uf_timespec_ns(&t);
}

uint64_t uf_mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

double uf_mono_s(void)
{
    struct timespec t = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

uint64_t uf_realtime_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

uint64_t uf_thread_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t uf_timespec_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

void uf_timespec_add_ns(struct timespec *t, uint64_t ns)
{
    uint64_t sum = (uint64_t)t->tv_nsec + ns % 1000000000u;
    t->tv_sec += (time_t)(ns / 1000000000u + sum / 1000000000u);
    t->tv_nsec = (long)(sum % 1000000000u);
}

/* The host's clocks (clock.h): the readings agree with each other and move as they should; a
 * deadline carries its nanoseconds into seconds. */
#include <criterion/criterion.h>
#include <math.h>
#include <time.h>

#include "clock.h"

Test(clock, monotonic_in_ns_and_s)
{
    uint64_t a = uf_mono_ns();
    double s = uf_mono_s();
    uint64_t b = uf_mono_ns();
    cr_assert(a > 0 && b >= a);
    cr_assert(s * 1e9 >= (double)a - 1e3 && s * 1e9 <= (double)b + 1e3, "the same clock");
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
    cr_assert_geq(uf_mono_ns() - b, 2000000u, "2 ms of sleep pass on the monotonic clock");
}

Test(clock, realtime_is_the_epoch)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t ns = uf_realtime_ns();
    cr_assert_geq(ns / 1000000000u, (uint64_t)t.tv_sec);
    cr_assert_leq(ns / 1000000000u, (uint64_t)t.tv_sec + 1);
}

Test(clock, thread_cpu_counts_work_not_sleep)
{
    uint64_t cpu0 = uf_thread_cpu_ns(), wall0 = uf_mono_ns();
    volatile double x = 0;
    while (uf_thread_cpu_ns() - cpu0 < 5000000u && uf_mono_ns() - wall0 < 2000000000u)
        x += sqrt(x + 1);   /* busy until 5 ms of CPU (2 s at most, on a loaded machine) */
    uint64_t busy = uf_thread_cpu_ns() - cpu0, wall = uf_mono_ns() - wall0;
    cr_assert_geq(busy, 5000000u, "a busy loop uses CPU time (%llu ns in %llu ns)",
                  (unsigned long long)busy, (unsigned long long)wall);
    cr_assert_leq(busy, wall + 1000000u, "one thread's CPU time within its wall time");
    uint64_t cpu1 = uf_thread_cpu_ns();
    struct timespec nap = {0, 20000000};
    nanosleep(&nap, NULL);
    cr_assert_lt(uf_thread_cpu_ns() - cpu1, 5000000u, "a sleep uses none");
}

Test(clock, deadline_carries)
{
    struct timespec t = {5, 999999999};
    uf_timespec_add_ns(&t, 1);
    cr_assert(t.tv_sec == 6 && t.tv_nsec == 0);
    uf_timespec_add_ns(&t, 2500000000u);
    cr_assert(t.tv_sec == 8 && t.tv_nsec == 500000000);
    uf_timespec_add_ns(&t, 999999999u);
    cr_assert(t.tv_sec == 9 && t.tv_nsec == 499999999);
    uf_timespec_add_ns(&t, 0);
    cr_assert(t.tv_sec == 9 && t.tv_nsec == 499999999);
    uf_timespec_add_ns(&t, 3600ull * 1000000000u + 500000001u);
    cr_assert(t.tv_sec == 3610 && t.tv_nsec == 0);
}

Test(clock, timespec_in_ns)
{
    struct timespec t = {3, 250};
    cr_assert_eq(uf_timespec_ns(&t), 3000000250u);
    t = (struct timespec){0, 999999999};
    cr_assert_eq(uf_timespec_ns(&t), 999999999u);
}

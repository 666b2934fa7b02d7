/* underfed doctor, pass 4: the device's idle time split by cause (doctor_internal.h lists the
 * passes): the host-wait gaps after a drain (a sync, blocking read-back or pageable copy in
 * flight when the device ran out of work), before a step's first work, and between launches;
 * and where in their step the drains returned. */
#include "doctor.h"

#include <math.h>
#include <stdlib.h>

#include "doctor_internal.h"

/* Where in their step the drains returned, on average (0 start, 100 end): where the host got
 * its value (a sync is entered early when the host runs ahead; what the step pays for is when
 * it comes back). NaN without drains. */
static double drain_position_pct(const uf_doctor_work *w, const uf_drain *dr, size_t n_dr)
{
    size_t n = 0;
    double pos = 0.0;
    for (size_t i = 0; i < n_dr; i++) {
        int s = uf_timeline_step_index(w->bounds, w->n_steps, dr[i].start_ns);
        if (s < 0 || s >= w->n_steps)
            continue;
        double len = (double)(w->bounds[s + 1] - w->bounds[s]);
        double at = (double)(dr[i].end_ns - w->bounds[s]) / len * 100.0;
        pos += at < 100.0 ? at : 100.0;
        n++;
    }
    return n > 0 ? pos / (double)n : NAN;
}

/* The host_sync figures from the timeline's drains: the idle after them, as a share of the
 * window (the gaps whose mean is uf_timeline_metrics.sync_gap_us, those that end inside the
 * window: the last step's drain idles into the step after it, which is not in the window,
 * and the shares of the window's idle must add up), and where in the step they returned.
 * last_start_ns: the latest start of the window's device work. */
static void sync_figures(const uf_doctor_work *w, const uf_drain *dr, size_t n_dr,
                         uint64_t last_start_ns, uf_diagnosis *d)
{
    double gap_ns = 0.0;
    for (size_t i = 0; i < n_dr; i++)
        if (dr[i].has_gap && dr[i].end_ns <= last_start_ns)
            gap_ns += (double)dr[i].gap_ns;
    d->sync_gap_pct = gap_ns / (d->tl.window_ms * 1e6) * 100.0;
    d->sync_pos_pct = drain_position_pct(w, dr, n_dr);
}

/* Did a drain return inside gap g, having started before the device ran dry? (dr by end) */
static int gap_follows_drain(const uf_drain *dr, size_t n_dr, const uf_gap *g)
{
    size_t lo = 0, hi = n_dr;   /* first drain ending at or after the gap's start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dr[mid].end_ns < g->start_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < n_dr && dr[i].end_ns <= g->end_ns; i++)
        if (dr[i].start_ns <= g->start_ns)
            return 1;
    return 0;
}

/* The host-wait idle gaps split by cause: after a drain (the share the timeline's sync_gap_us
 * measures: set in sync_figures), before a step's first work, between launches. dr by end. */
static int gap_figures(const uf_doctor_work *w, const uf_drain *dr, size_t n_dr,
                       uf_diagnosis *d)
{
    uf_gap *gaps;
    size_t n_gaps;
    if (uf_timeline_idle_gaps(&w->tl, &gaps, &n_gaps) != 0)
        return -1;
    const uint64_t *first = w->first_launch;
    double input_ns = 0, launch_ns = 0;
    /* a step of one record (one kernel a step) has no inside: its gaps are at once before its
     * first work and between launches, and stay launch gaps */
    int boundaries = w->n_steps > 1 && d->tl.n_activities > (size_t)w->n_steps;
    for (size_t i = 0; i < n_gaps; i++) {
        const uf_gap *g = &gaps[i];
        double len = (double)(g->end_ns - g->start_ns);
        if (!g->host_wait)
            continue;
        int s = uf_timeline_step_index(w->bounds, w->n_steps, g->next_launch_ns);
        if (gap_follows_drain(dr, n_dr, g))
            continue;
        if (boundaries && s >= 0 && g->next_launch_ns == first[s])
            input_ns += len;
        else
            launch_ns += len;
    }
    double window_ns = d->tl.window_ms * 1e6;
    d->input_gap_pct = input_ns / window_ns * 100.0;
    d->launch_gap_pct = launch_ns / window_ns * 100.0;
    free(gaps);
    return 0;
}


int uf_doctor_pass_idle(const uf_doctor_work *w, uf_diagnosis *d)
{
    if (gap_figures(w, w->drains, w->n_drains, d) != 0)
        return -1;
    sync_figures(w, w->drains, w->n_drains, w->dev_last_start, d);
    return 0;
}

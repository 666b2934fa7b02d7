/* Pass 1, the timing pass (harness_run.h): CUDA events between consecutive steps after a
 * warm-up, in batches until the minimum time has passed, with NVML sampling every GPU
 * meanwhile. The first pass of every cell: it runs before libcupti is even loaded. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

#include "clock.h"
#include "instruments.h"
#include "harness_run.h"
#include "stats.h"
#include "timing.h"

/* The timing pass's warm-up (warmup.h): the planned steps, then whole steps more until the
 * scenario's least time has passed since the first; a wait after each round, as uf_warmup_next
 * needs complete steps (and one wait even with no step: nothing pending before the timing). */
static int warm_up(run *r, int variant, const char *name)
{
    double t0 = uf_mono_s();
    int done = 0, n = uf_warmup_next(&r->warmup, 0, 0.0), rc;
    do {
        rc = uf_h_run_steps(r, variant, n, name);
        if (rc == UF_OK)
            rc = uf_wait_stream(&r->ctx, r->ctx.stream, "the warm-up steps");
        done += n;
        n = rc == UF_OK ? uf_warmup_next(&r->warmup, done, (uf_mono_s() - t0) * 1e3) : 0;
    } while (n > 0);
    return rc;
}

/* Stop rank k's NVML sampler and put what it saw into its rows: the clock and power it read,
 * and the utilization of NVML's own samples inside the pass, t0_us..t1_us (uf_nvml_util_over:
 * the rates the sampler read lag the pass and carry the time before it). */
static void take_nvml_samples(run *r, uf_row *row, int k, uint64_t t0_us, uint64_t t1_us)
{
    uf_nvml_sampled seen;
    uf_row *dst[2];
    char reason[UF_REASON_LEN] = "";
    int n_used = 0;
    double util_pct = NAN;
    uf_nvml_sampler_stop(nvml_of(r, k), &seen);
    if (uf_nvml_util_over(nvml_of(r, k), t0_us, t1_us, &util_pct, &n_used, reason,
                          sizeof reason) != UF_OK)
        uf_h_rank_note(row, k, reason);
    for (int i = 0, n = uf_h_rank_rows(row, k, dst); i < n; i++) {
        dst[i]->nvml_util_pct = util_pct;
        dst[i]->sm_clock_mhz = seen.sm_clock_mhz;
        dst[i]->sm_clock_min_mhz = seen.sm_clock_min_mhz;
        dst[i]->power_w = seen.power_w;
    }
    if (seen.power_samples > 0)
        r->power_read = seen.power_instant ? 2 : 1;
}

/* Pass 1: CUDA events between consecutive steps, batches until the minimum time has passed;
 * NVML utilization, SM clock and board power sampled meanwhile on every GPU. */
int uf_h_timing_pass(run *r, int variant, uf_row *row)
{
    int rc = UF_OK;
    const char *name = r->s->variants[variant].name;
    uf_marks marks = {0};   /* mark i: before step i of a batch; mark repeat: after the last */
    double *times_ms = malloc((size_t)TIMING_MAX_STEPS * sizeof *times_ms);
    int n_times = 0, n_ranks = ranks_analysed(r);
    int sampling[UF_MAX_RANKS] = {0};
    uint64_t t0_us = 0, t1_us = 0;  /* the pass on the realtime clock, for NVML's samples */
    if (!times_ms) {
        rc = uf_fail(&r->ctx, UF_ERR, "out of host memory for the timing pass");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, uf_marks_create(&marks, r->repeat + 1), out_free);

    uf_h_open_rank_instruments(r);   /* before the warm-up: no idle gap before the timed steps */
    UF_STATUS_OR_GOTO(rc, warm_up(r, variant, name), out_destroy);

    double min_ms = r->opt.quick ? TIMING_MIN_MS_QUICK : TIMING_MIN_MS_FULL;
    for (int k = 0; k < n_ranks; k++) {
        if (nvml_note_of(r, k)[0])
            uf_h_rank_note(row, k, nvml_note_of(r, k));
        sampling[k] = nvml_of(r, k) &&
                      uf_nvml_sampler_start(nvml_of(r, k), NVML_PERIOD_MS) == UF_OK;
    }
    double t0 = uf_mono_s();
    t0_us = uf_realtime_ns() / 1000u;
    r->ctx.timing = 1;      /* the timed steps only: cleared at out_sampler */
    do {
        UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, 0, r->ctx.stream), out_sampler);
        for (int i = 0; i < r->repeat; i++) {
            nvtxRangePushA(name);
            rc = r->s->run_step(&r->ctx, variant);
            nvtxRangePop();
            if (rc != UF_OK)
                goto out_sampler;
            UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, i + 1, r->ctx.stream), out_sampler);
        }
        UF_STATUS_OR_GOTO(rc, uf_wait_event(&r->ctx, uf_marks_event(&marks, r->repeat),
                                            "the timed steps"), out_sampler);
        for (int i = 0; i < r->repeat && n_times < TIMING_MAX_STEPS; i++) {
            float ms = 0;
            UF_STATUS_OR_GOTO(rc, uf_marks_ms(&marks, i, i + 1, &ms), out_sampler);
            times_ms[n_times++] = ms;
        }
    } while (!process_mode(r) && (uf_mono_s() - t0) * 1e3 < min_ms &&
             n_times + r->repeat <= TIMING_MAX_STEPS);

    uf_summary sum;
    uf_summarize(times_ms, n_times, &sum);
    row->step_ms = sum.median;
    row->step_ms_min = sum.min;
    row->step_ms_max = sum.max;
    row->step_ms_mean = sum.mean;
    row->spread_pct = sum.spread_pct;
    row->steps_timed = n_times;

out_sampler:
    r->ctx.timing = 0;
    t1_us = uf_realtime_ns() / 1000u;
    for (int k = 0; k < n_ranks; k++)
        if (sampling[k])
            take_nvml_samples(r, row, k, t0_us, t1_us);
out_destroy:
    uf_marks_free(&marks);
out_free:
    free(times_ms);
    return rc;
}

int uf_calibrate_step_ms(uf_ctx *ctx, cudaStream_t stream,
                         int (*enqueue)(void *arg, cudaStream_t stream), void *arg,
                         double warmup_ms, int batch, int steps, double *median_ms)
{
    int rc = UF_OK;
    uf_marks marks = {NULL, 0};
    if (steps < 1 || batch < 1)
        return uf_fail(ctx, UF_ERR, "calibration: %d steps in batches of %d: nothing to time",
                       steps, batch);
    double *ms = (double *)calloc((size_t)steps, sizeof *ms);
    if (!ms)
        return uf_fail(ctx, UF_ERR, "calibration: out of host memory");
    const uint64_t warm_from_ns = uf_mono_ns();
    UF_STATUS_OR_GOTO(rc, uf_marks_create(&marks, steps + 1), out);
    do {
        for (int i = 0; i < batch; i++)
            UF_STATUS_OR_GOTO(rc, enqueue(arg, stream), out);
        UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, stream, "the calibration's warm-up"), out);
    } while ((double)(uf_mono_ns() - warm_from_ns) < warmup_ms * 1e6);
    UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, 0, stream), out);
    for (int i = 0; i < steps; i++) {
        UF_STATUS_OR_GOTO(rc, enqueue(arg, stream), out);
        UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, i + 1, stream), out);
    }
    UF_STATUS_OR_GOTO(rc, uf_wait_event(ctx, uf_marks_event(&marks, steps),
                                        "the calibration steps"), out);
    for (int i = 0; i < steps; i++) {
        float step_ms = 0;
        UF_STATUS_OR_GOTO(rc, uf_marks_ms(&marks, i, i + 1, &step_ms), out);
        ms[i] = step_ms;
    }
    *median_ms = uf_median(ms, steps);
out:
    uf_marks_free(&marks);
    free(ms);
    return rc;
}

/* Pass 3, the counters pass (harness_run.h): CUPTI PM sampling and NVML GPM on every GPU
 * over enough back-to-back steps to span COUNTERS_MIN_MS; the window's means into the rows,
 * rank 0's samples for the time-series plot, and GPM kept only where it agrees with PM. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instruments.h"
#include "harness_run.h"
#include "timeline.h"

/* Rank k's NVML GPM reading against its PM samples over the window that the GPM snapshots
 * describe (samples NULL: PM has none to offer). The agreement goes into its rows; the GPM
 * values too, unless they disagree by more than UF_GPM_AGREE_PTS: then a note says by how
 * much and the doubtful values stay empty. */
static void take_gpm(uf_row *row, int k, const uf_pm_sample *gpm, const uf_pm_sample *samples,
                     size_t n_samples)
{
    uf_pm_sample pm;
    uf_row *dst[2];
    int worst = -1;
    double off = NAN;
    char note[UF_REASON_LEN];
    if (samples && uf_pm_window_mean(samples, n_samples, gpm->start_ns, gpm->end_ns, &pm) > 0)
        off = uf_gpm_disagreement(&pm, gpm, &worst);
    else
        uf_h_rank_note(row, k, "NVML GPM not compared: no PM samples over its window");
    int doubtful = !isnan(off) && off > UF_GPM_AGREE_PTS;
    if (doubtful) {
        double g[4], p[4];
        uf_pm_counters(gpm, g);
        uf_pm_counters(&pm, p);
        snprintf(note, sizeof note,
                 "NVML GPM disagrees with PM sampling by %.1f points (%s: GPM %.1f %%, PM "
                 "%.1f %% over the same %.0f ms): GPM values left empty",
                 off, uf_counter_names[worst], g[worst], p[worst],
                 (gpm->end_ns - gpm->start_ns) / 1e6);
        uf_h_rank_note(row, k, note);
    }
    for (int i = 0, n = uf_h_rank_rows(row, k, dst); i < n; i++) {
        dst[i]->gpm_agree_pts = off;
        if (doubtful)
            continue;
        dst[i]->gpm_sm_active_pct = gpm->sm_active_pct;
        dst[i]->gpm_occupancy_pct = gpm->occupancy_pct;
        dst[i]->gpm_tensor_active_pct = gpm->tensor_active_pct;
        dst[i]->gpm_dram_pct = gpm->dram_pct;
    }
}

/* Stop rank k's PM sampler; the window's means into its rows, and (rank 0) the samples inside
 * the window into the row for the time-series plot. `keep` 0 (the steps failed): stop only.
 * *usable: the samples, when whole, for the GPM comparison (else NULL). */
static void take_pm_samples(run *r, uf_row *row, int k, uint64_t t0, uint64_t t1, int keep,
                            const uf_pm_sample **usable, size_t *n_usable)
{
    char reason[UF_REASON_LEN] = "";
    const uf_pm_sample *samples = NULL;
    size_t n_samples = 0;
    uf_pm_sample mean;
    uf_row *dst[2];
    *usable = NULL;
    *n_usable = 0;
    int stopped = uf_pm_stop(pm_of(r, k), &samples, &n_samples, reason, sizeof reason);
    uf_h_rank_note(row, k, reason);  /* e.g. buffer overflow */
    if (stopped != UF_OK || !keep)
        return;
    if (reason[0]) {
        /* samples were lost (the hardware buffer overflowed): a mean over what is left would
         * pass for the window's, so the PM metrics and the series stay empty; GPM read its own
         * counters over the window and keeps its values, uncompared */
        uf_h_rank_note(row, k, "PM counters left empty");
        return;
    }
    if (uf_pm_window_mean(samples, n_samples, t0, t1, &mean) == 0) {
        uf_h_rank_note(row, k, "no PM sample in the window");
        return;
    }
    *usable = samples;
    *n_usable = n_samples;
    for (int i = 0, n = uf_h_rank_rows(row, k, dst); i < n; i++) {
        dst[i]->sm_active_pct = mean.sm_active_pct;
        dst[i]->occupancy_pct = mean.occupancy_pct;
        dst[i]->tensor_active_pct = mean.tensor_active_pct;
        dst[i]->dram_pct = mean.dram_pct;
    }
    if (k != 0 || row->samples)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < n_samples; i++)
        kept += samples[i].end_ns > t0 && samples[i].start_ns < t1;
    row->samples = kept ? malloc(kept * sizeof *row->samples) : NULL;
    if (row->samples) {
        for (size_t i = 0; i < n_samples; i++)
            if (samples[i].end_ns > t0 && samples[i].start_ns < t1)
                row->samples[row->n_samples++] = samples[i];
    }
}

/* UNDERFED_GPM_ALONE=1: a diagnostic for the counters pass: NVML GPM read with CUPTI PM
 * sampling off. On two GPUs GPM disagrees with PM sampling on every row (docs/metrics.md, "How
 * far the instruments agree") and neither concurrent reads nor concurrent evaluation explain
 * it; this tells whether PM sampling running on both GPUs does. */
static int gpm_alone(void)
{
    const char *v = getenv("UNDERFED_GPM_ALONE");
    return v && strcmp(v, "1") == 0;
}

/* Pass 3: PM sampling (and NVML GPM) on every GPU over enough back-to-back steps to span
 * COUNTERS_MIN_MS. A GPU whose sampler does not start keeps its reason; the steps run when at
 * least one started (or, with UNDERFED_GPM_ALONE=1, for GPM alone). */
int uf_h_counters_pass(run *r, int variant, uf_row *row)
{
    int rc = UF_OK, n_ranks = ranks_analysed(r), any = 0, alone = gpm_alone();
    int started[UF_MAX_RANKS] = {0}, gpm[UF_MAX_RANKS] = {0};
    char reason[UF_REASON_LEN] = "";
    const char *name = r->s->variants[variant].name;
    int n = steps_spanning(r, row->step_ms, COUNTERS_MIN_MS, COUNTERS_MAX_STEPS);

    uint64_t t0 = 0, t1 = 0;
    uf_h_open_rank_instruments(r);   /* a no-op after a timing pass */
    uf_h_open_rank_pm(r, n_ranks);   /* a no-op for the ranks the timing passes used */
    for (int k = 0; k < n_ranks; k++) {
        if (alone) {
            uf_h_rank_note(row, k, "PM sampling off (UNDERFED_GPM_ALONE=1): NVML GPM alone");
            continue;
        }
        if (!pm_of(r, k)) {
            uf_h_rank_note(row, k, pm_note_of(r, k));
            continue;
        }
        int st = uf_pm_start(pm_of(r, k), PM_INTERVAL_US, reason, sizeof reason);
        started[k] = st == UF_OK;
        if (!started[k])
            uf_h_rank_note(row, k, reason);
        if (st == UF_SKIP && k == 0) {  /* not permitted after all (e.g. a profiler attached) */
            r->counters_denied = 1;
            if (!r->pm_note[0])
                snprintf(r->pm_note, sizeof r->pm_note, "%s", reason);
        }
        any |= started[k];
    }
    if (!any && !alone)
        return UF_OK;
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(&r->ctx, r->ctx.stream, "the steps before the "
                                         "counters"), out_stop);
    t0 = uf_cupti_now_ns();
    for (int k = 0; k < n_ranks; k++) {
        gpm[k] = nvml_of(r, k) &&
                 uf_gpm_watch_start(nvml_of(r, k), t0, uf_cupti_now_ns, reason, sizeof reason) ==
                     UF_OK;
        if (!gpm[k] && nvml_of(r, k))
            uf_h_rank_note(row, k, reason);
    }
    UF_STATUS_OR_GOTO(rc, uf_h_run_steps(r, variant, n, name), out_stop);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(&r->ctx, r->ctx.stream, "the counted steps"),
                      out_stop);
    t1 = uf_cupti_now_ns();

out_stop:
    for (int k = 0; k < n_ranks; k++) {
        const uf_pm_sample *samples = NULL;
        size_t n_samples = 0;
        uf_pm_sample reading;
        if (gpm[k] && uf_gpm_watch_end(nvml_of(r, k), t1, &reading, reason, sizeof reason) !=
                          UF_OK) {
            gpm[k] = 0;
            if (rc == UF_OK)
                uf_h_rank_note(row, k, reason);
        }
        if (started[k])
            take_pm_samples(r, row, k, t0, t1, rc == UF_OK, &samples, &n_samples);
        if (gpm[k] && rc == UF_OK)
            take_gpm(row, k, &reading, samples, n_samples);
    }
    return rc;
}

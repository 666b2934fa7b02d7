/* Pass 2, the trace pass (harness_run.h): CUPTI Activity over a warm-up and the measured
 * steps, and the timeline metrics of the window on every GPU; with --trace, a copy of each
 * traced run for the Chrome trace. Runs after every timing pass (libcupti loaded by then). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instruments.h"
#include "harness_run.h"
#include "timeline.h"
#include "timing.h"
#include "trace_export.h"

/* Keep a copy of a traced run for --trace (names stay valid until uf_trace_release). */
static void keep_section(run *r, const char *label, const uf_activity *acts, size_t n_acts,
                         const uf_api_call *apis, size_t n_apis)
{
    uf_trace_section *grown = realloc(r->sections, (size_t)(r->n_sections + 1) * sizeof *grown);
    if (!grown)
        return;
    r->sections = grown;
    uf_trace_section *sec = &r->sections[r->n_sections];
    uf_activity *a = malloc(n_acts * sizeof *a + 1);
    uf_api_call *p = malloc(n_apis * sizeof *p + 1);
    char *l = strdup(label);
    if (!a || !p || !l) {
        free(a);
        free(p);
        free(l);
        return;
    }
    memcpy(a, acts, n_acts * sizeof *a);
    memcpy(p, apis, n_apis * sizeof *p);
    *sec = (uf_trace_section){.label = l, .acts = a, .n_acts = n_acts, .apis = p,
                              .n_apis = n_apis};
    r->n_sections++;
}

/* The timeline metrics of rank k's GPU (the trace holds every GPU's records) into its rows. */
static void trace_metrics_of_rank(const run *r, uf_row *row, int k, uf_timeline tl)
{
    uf_timeline_metrics m;
    uf_row *dst[2];
    tl.device_id = r->ctx.device + k;
    tl.sm_count = sm_count_of(r, k);
    if (uf_timeline_analyze(&tl, &m) != 0) {
        uf_h_rank_note(row, k, "trace pass recorded no device activity");
        return;
    }
    for (int i = 0, n = uf_h_rank_rows(row, k, dst); i < n; i++) {
        dst[i]->busy_pct = m.busy_pct;
        dst[i]->kernels_per_step = m.kernels_per_step;
        dst[i]->kernel_us_mean = m.kernel_us_mean;
        dst[i]->launch_us = m.launch_us;
        dst[i]->idle_host_pct = m.idle_host_pct;
        dst[i]->idle_other_pct = m.idle_other_pct;
        dst[i]->comm_overlap_pct = m.comm_overlap_pct;
        dst[i]->comm_exposed_ms = m.comm_exposed_ms;
        dst[i]->comm_sm_pct = m.comm_sm_pct;
        dst[i]->copy_overlap_pct = m.copy_overlap_pct;
        dst[i]->syncs_per_step = m.syncs_per_step;
        dst[i]->stream_syncs_per_step = m.stream_syncs_per_step;
        dst[i]->context_syncs_per_step = m.context_syncs_per_step;
        dst[i]->event_syncs_per_step = m.event_syncs_per_step;
        dst[i]->pageable_copies_per_step = m.pageable_copies_per_step;
        dst[i]->drains_per_step = m.drains_per_step;
        dst[i]->sync_gap_us = m.sync_gap_us;
    }
}

/* Pass 2: CUPTI Activity over warm-up + measured steps (enough to span TRACE_MIN_MS at the
 * timing pass's step, at least --repeat); timeline metrics of the window, on every GPU. */
int uf_h_trace_pass(run *r, int variant, uf_row *row)
{
    int rc = UF_OK;
    const char *name = r->s->variants[variant].name;
    int n = steps_spanning(r, row->step_ms, TRACE_MIN_MS, TRACE_MAX_STEPS);
    uint64_t *step_begin = malloc((size_t)n * sizeof *step_begin);
    uf_marks marks = {0};   /* mark 0: before the traced steps; mark 1: after them */
    uint64_t begin_ns = 0, end_ns = 0, enqueued_ns = 0;
    char reason[UF_REASON_LEN] = "";
    if (!step_begin)
        return uf_fail(&r->ctx, UF_ERR, "out of host memory for the trace pass");
    UF_STATUS_OR_GOTO(rc, uf_marks_create(&marks, 2), out_free);

    uf_h_open_rank_instruments(r);   /* the SM counts (a no-op after a timing pass) */
    int began = uf_trace_begin(reason, sizeof reason);
    if (began != UF_OK) {
        uf_h_note_every_rank(row, reason);
        snprintf(r->trace_note, sizeof r->trace_note, "%s", reason);
        r->trace_ok = 0;
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, uf_h_run_steps(r, variant, 2, name), out_end);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(&r->ctx, r->ctx.stream, "the trace's warm-up steps"),
                      out_end);
    begin_ns = uf_cupti_now_ns();
    UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, 0, r->ctx.stream), out_end);
    for (int i = 0; i < n; i++) {
        step_begin[i] = uf_cupti_now_ns();
        UF_STATUS_OR_GOTO(rc, uf_h_run_steps(r, variant, 1, name), out_end);
    }
    enqueued_ns = uf_cupti_now_ns();    /* the closing mark and wait below are no step's */
    UF_STATUS_OR_GOTO(rc, uf_marks_record(&marks, 1, r->ctx.stream), out_end);
    UF_STATUS_OR_GOTO(rc, uf_wait_event(&r->ctx, uf_marks_event(&marks, 1), "the traced steps"),
                      out_end);
    end_ns = uf_cupti_now_ns();
    float ms = 0;
    UF_STATUS_OR_GOTO(rc, uf_marks_ms(&marks, 0, 1, &ms), out_end);
    row->trace_step_ms = ms / n;
    row->trace_overhead = row->trace_step_ms / row->step_ms;

out_end:
    if (uf_trace_end(reason, sizeof reason) != UF_OK)
        uf_h_note_every_rank(row, reason);
    if (rc == UF_OK) {
        const uf_activity *acts;
        const uf_api_call *apis;
        const uf_sync_record *syncs;
        size_t n_acts, n_apis, n_syncs, dropped;
        uf_trace_records(&acts, &n_acts, &apis, &n_apis, &syncs, &n_syncs, &dropped);
        char note[96] = "";
        if (dropped)    /* a timeline with holes: every trace metric would be wrong */
            snprintf(note, sizeof note, "CUPTI dropped %zu records: trace metrics left empty",
                     dropped);
        uf_timeline tl = {.acts = acts, .n_acts = n_acts, .apis = apis, .n_apis = n_apis,
                          .measure_begin_ns = begin_ns, .measure_end_ns = end_ns,
                          .step_begin_ns = step_begin, .n_steps = n, .device_id = r->ctx.device,
                          .sm_count = r->sm_count, .syncs = syncs, .n_syncs = n_syncs,
                          .steps_enqueued_ns = enqueued_ns};
        for (int k = 0; k < ranks_analysed(r); k++) {
            uf_h_rank_note(row, k, note);
            if (!dropped)
                trace_metrics_of_rank(r, row, k, tl);
        }
        if (r->opt.trace_path[0]) {
            char label[UF_REASON_LEN], where[200];
            point_label(r, r->point, where, sizeof where);
            snprintf(label, sizeof label, "%s @ %s", name, where);
            keep_section(r, label, acts, n_acts, apis, n_apis);
        }
    }
out_free:
    uf_marks_free(&marks);
    free(step_begin);
    return rc;
}

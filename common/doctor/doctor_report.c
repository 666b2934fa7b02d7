/* underfed doctor: its report (doctor.h says what each step does). The comparison against the
 * machine's ceilings file and the three outputs: the text report (uf_doctor_print), the JSON
 * (uf_doctor_json) and the rules' markdown table (uf_doctor_rules_markdown). The figures are
 * measured in doctor.c; the rules that judge them are in doctor_rules.c. */
#include "doctor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

/* ---- against the machine's ceilings ------------------------------------------------------- */

/* The rows of benches/ceilings' file the doctor reads, with their units; copy_dram_pct and
 * gemm_bf16_tensor_pct (DRAM and tensor activity PM sampling reads during the bench's copy and
 * GEMM: its activity pass) are absent from files written before it had one: the comparison
 * says so. */
const uf_doctor_ceiling_row uf_doctor_ceiling_rows[UF_N_CEIL] = {
    [UF_CEIL_LAUNCH_US] = {"launch_us", "us"},
    [UF_CEIL_H2D_PINNED_GBS] = {"h2d_pinned_gbs", "GB/s"},
    [UF_CEIL_COPY_DRAM_PCT] = {"copy_dram_pct", "%"},
    [UF_CEIL_GEMM_TENSOR_PCT] = {"gemm_bf16_tensor_pct", "%"},
};


static const uf_ceiling_row *find_row(const uf_ceiling_row *rows, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

void uf_doctor_ceilings_from_rows(const char *path, const uf_ceiling_row *rows, int n,
                                  uf_doctor_ceilings *c)
{
    memset(c, 0, sizeof *c);
    uf_copy_str(c->path, sizeof c->path, path);
    for (int k = 0; k < UF_N_CEIL; k++) {
        const uf_doctor_ceiling_row *want = &uf_doctor_ceiling_rows[k];
        const uf_ceiling_row *row = find_row(rows, n, want->name);
        c->value[k] = NAN;
        c->absent[k] = row == NULL;
        if (row == NULL)
            snprintf(c->why[k], sizeof c->why[k], "no %s row", want->name);
        /* an empty unit is the row's own, as the suite's reader takes it */
        else if (row->unit[0] != '\0' && strcmp(row->unit, want->unit) != 0)
            snprintf(c->why[k], sizeof c->why[k], "%s is in '%.32s', not '%s'", want->name,
                     row->unit, want->unit);
        else if (isnan(row->value))
            snprintf(c->why[k], sizeof c->why[k], "%s not measured", want->name);
        else
            c->value[k] = row->value;
    }
}

int uf_doctor_ceilings_read(const char *path, uf_doctor_ceilings *c, char *err, size_t errlen)
{
    uf_ceiling_row *rows;
    int n;
    if (uf_ceilings_read_rows(path, &rows, &n, err, errlen) != 0)
        return -1;
    uf_doctor_ceilings_from_rows(path, rows, n, c);
    free(rows);
    return 0;
}

void uf_doctor_compare(uf_diagnosis *d, const uf_doctor_ceilings *c)
{
    uf_doctor_vs *v = &d->vs;
    v->compared = 1;
    v->c = *c;
    v->launch_x = d->launch_call_us / c->value[UF_CEIL_LAUNCH_US];
    v->h2d_pinned_pct = d->h2d_gbs[UF_H2D_PINNED] / c->value[UF_CEIL_H2D_PINNED_GBS] * 100.0;
    v->dram_of_copy_pct = d->dram_pct / c->value[UF_CEIL_COPY_DRAM_PCT] * 100.0;
    v->tensor_of_gemm_pct = d->tensor_active_pct / c->value[UF_CEIL_GEMM_TENSOR_PCT] * 100.0;
}

/* The launch part of the ceilings line. */
static void print_launch_vs(FILE *f, const uf_diagnosis *d)
{
    const uf_doctor_ceilings *c = &d->vs.c;
    if (d->n_launch_calls == 0 && d->n_graph_kernels > 0) {
        fprintf(f, "no launch calls of their own: the steady window's %d kernels are nodes of "
                   "replayed graphs (one cudaGraphLaunch launches many: no cost per launch)",
                d->n_graph_kernels);
        return;
    }
    if (d->n_launch_calls == 0) {
        fprintf(f, "no kernel launch call matched in the steady window");
        return;
    }
    fprintf(f, "launch calls %.1f us median (%d calls)", d->launch_call_us, d->n_launch_calls);
    if (isnan(c->value[UF_CEIL_LAUNCH_US]))
        fprintf(f, ", no floor to compare with (%s)", c->why[UF_CEIL_LAUNCH_US]);
    else
        fprintf(f, " against this machine's floor of %.2f us for back-to-back empty kernels "
                   "(%.1fx; beyond the floor, the host's own cost per call: arguments, the "
                   "program's or framework's work inside the call, the recorder's callback)",
                c->value[UF_CEIL_LAUNCH_US], d->vs.launch_x);
}

/* The pinned host-to-device copies against h2d_pinned_gbs: their record is the transfer. */
static void print_h2d_pinned_vs(FILE *f, const uf_diagnosis *d)
{
    const uf_doctor_ceilings *c = &d->vs.c;
    int k = UF_H2D_PINNED;
    if (d->n_h2d[k] == 0) {
        fprintf(f, "pinned none");
        return;
    }
    fprintf(f, "pinned %d copies of %.0f bytes mean at %.3g GB/s", d->n_h2d[k],
            d->h2d_mean_bytes[k], d->h2d_gbs[k]);
    if (isnan(c->value[UF_CEIL_H2D_PINNED_GBS]))
        fprintf(f, " (%s)", c->why[UF_CEIL_H2D_PINNED_GBS]);
    else
        fprintf(f, ", %.3g %% of %.2f GB/s", d->vs.h2d_pinned_pct,
                c->value[UF_CEIL_H2D_PINNED_GBS]);
}

/* The pageable host-to-device copies, held against nothing: CUPTI's record times only the
 * device's DMA of data the driver had already staged through its pinned buffer (the host's
 * staging, what makes them slow, is outside it), and the call's span is no better (the runtime
 * first synchronizes the stream), so no end-to-end rate to set against h2d_pageable_gbs. */
static void print_h2d_pageable(FILE *f, const uf_diagnosis *d)
{
    int k = UF_H2D_PAGEABLE;
    if (d->n_h2d[k] == 0) {
        fprintf(f, "pageable none");
        return;
    }
    fprintf(f, "pageable %d copies of %.0f bytes mean, DMA at %.3g GB/s (their records time "
               "only the DMA of data the host had staged: no end-to-end rate to hold against "
               "h2d_pageable_gbs)", d->n_h2d[k], d->h2d_mean_bytes[k], d->h2d_gbs[k]);
}

/* One activity counter (its window mean) as a share of the bench's, or why not. */
static void print_activity_vs(FILE *f, const char *what, double pct, const uf_doctor_ceilings *c,
                              int ceiling, const char *bench, double share)
{
    if (isnan(c->value[ceiling]))
        fprintf(f, "%s %s %% (%s)", what, uf_doctor_num(pct, 1).s, c->why[ceiling]);
    else if (isnan(pct))
        fprintf(f, "%s not recorded (no counters; the %s's is %.1f %%)", what, bench,
                c->value[ceiling]);
    else
        fprintf(f, "%s %.1f %%, %.0f %% of the %s's %.1f %%", what, pct, share, bench,
                c->value[ceiling]);
}

/* The ceilings lines: launch cost, host-to-device copies, activity. */
static void print_ceilings(FILE *f, const uf_diagnosis *d)
{
    const uf_doctor_ceilings *c = &d->vs.c;
    fprintf(f, "  against this GPU's ceilings (%s): ", c->path);
    print_launch_vs(f, d);
    fprintf(f, "\n      host-to-device copies: ");
    print_h2d_pinned_vs(f, d);
    fprintf(f, "; ");
    print_h2d_pageable(f, d);
    fprintf(f, "\n      activity: ");
    if (c->absent[UF_CEIL_COPY_DRAM_PCT] && c->absent[UF_CEIL_GEMM_TENSOR_PCT]) {
        fprintf(f, "the ceilings file has no activity rows (%s, %s)\n",
                uf_doctor_ceiling_rows[UF_CEIL_COPY_DRAM_PCT].name,
                uf_doctor_ceiling_rows[UF_CEIL_GEMM_TENSOR_PCT].name);
        return;
    }
    print_activity_vs(f, "DRAM", d->dram_pct, c, UF_CEIL_COPY_DRAM_PCT, "copy",
                      d->vs.dram_of_copy_pct);
    fprintf(f, "; ");
    print_activity_vs(f, "tensor", d->tensor_active_pct, c, UF_CEIL_GEMM_TENSOR_PCT, "GEMM",
                      d->vs.tensor_of_gemm_pct);
    fprintf(f, "\n");
}

/* ---- output -------------------------------------------------------------------------------- */

static void print_finding(FILE *f, const uf_diagnosis *d, const uf_finding *x)
{
    const uf_doctor_rule *r = &uf_doctor_rules[x->rule];
    if (x->verdict == UF_VERDICT_CANNOT_TELL)
        fprintf(f, "  %-18s cannot tell  %s\n", r->id, r->share);
    else
        fprintf(f, "  %-18s %-11s %5.1f %% of %s  %s\n", r->id,
                uf_doctor_verdict_name(x->verdict), x->share_pct,
                x->span_ms > 0.0 ? "run " : "step", x->evidence);
    if (x->verdict == UF_VERDICT_MODERATE || x->verdict == UF_VERDICT_HIGH) {
        if (x->span_ms > 0.0)
            fprintf(f, "      gain: %s %.*fx faster (the run since its first steps %.1f -> %.1f "
                    "s) if %s%s\n", r->host_side ? "about" : "at most", x->gain_x < 10.0 ? 1 : 0,
                    x->gain_x, x->span_ms / 1e3, x->step_without_ms / 1e3, r->gain,
                    r->host_side ? " (more if the host's other work then runs under the "
                                   "device's)" : "");
        else
        fprintf(f, "      gain: %s %.*fx faster (step %.3f -> %.3f ms) if %s%s\n",
                r->host_side ? "about" : "at most", x->gain_x < 10.0 ? 1 : 0, x->gain_x,
                d->step_ms, x->step_without_ms, r->gain,
                r->host_side ? " (more if the host's other work then runs under the device's)"
                             : "");
        fprintf(f, "      fix: %s\n", r->fix);
        if (r->scenario[0])
            fprintf(f, "      reproduced by: %s\n", r->scenario);
    }
}

/* The counters line: over the steady window, or why there are none. */
static void print_counters(FILE *f, const uf_diagnosis *d)
{
    int any = !isnan(d->sm_active_pct) || !isnan(d->nvml_util_pct) || !isnan(d->sm_clock_mhz);
    if (!any) {
        int why = d->counters_note[0] != '\0';
        fprintf(f, "  counters: none%s%s%s\n", why ? " (" : "", d->counters_note, why ? ")" : "");
        return;
    }
    fprintf(f, "  counters (steady window, %d PM samples): SM active %s %%, tensor active %s %%, "
               "DRAM %s %%; NVML util %s %%, SM clock %s MHz, power %s W\n", d->n_pm_used,
            uf_doctor_num(d->sm_active_pct, 1).s, uf_doctor_num(d->tensor_active_pct, 1).s,
            uf_doctor_num(d->dram_pct, 1).s, uf_doctor_num(d->nvml_util_pct, 0).s,
            uf_doctor_num(d->sm_clock_mhz, 0).s, uf_doctor_num(d->power_w, 0).s);
    if (d->counters_note[0])
        fprintf(f, "  counters note: %s\n", d->counters_note);
}

void uf_doctor_print(FILE *f, const uf_diagnosis *d)
{
    const uf_finding *top = &d->findings[d->order[0]];
    fprintf(f, "pid %d: ", d->pid);
    if (top->verdict == UF_VERDICT_HIGH || top->verdict == UF_VERDICT_MODERATE)
        fprintf(f, "%s (%s, %.1f %% of %s at stake)\n", uf_doctor_rules[top->rule].failure,
                uf_doctor_verdict_name(top->verdict), top->share_pct,
                top->span_ms > 0.0 ? "the run since its first steps" : "each step");
    else
        fprintf(f, "no failure mode found above its threshold\n");
    if (d->note[0])
        fprintf(f, "  could not see: %s\n", d->note);
    fprintf(f, "  steps: %d (%s), %d slow ones left out; step %.3f ms (median)\n", d->n_steps,
            d->step_source, d->steps_left_out, d->step_ms);
    fprintf(f, "  left out: start-up (initialization, compilation, warm-up) %.1f ms, tail %.1f ms;"
               " steady window %.1f ms\n", d->startup_ms, d->tail_ms, d->tl.window_ms);
    fprintf(f, "  per step: busy %.1f %%, %.1f kernels of %s us, launch-to-start %s us, %.2f "
               "syncs, %.2f calls that drained the device (syncs, frees, blocking copies; returning at "
               "%s %% of the step), %.1f pageable copies\n", d->tl.busy_pct, d->tl.kernels_per_step,
            uf_doctor_num(d->tl.kernel_us_mean, 1).s, uf_doctor_num(d->tl.launch_us, 1).s,
            d->tl.syncs_per_step, d->tl.drains_per_step, uf_doctor_num(d->sync_pos_pct, 0).s,
            d->tl.pageable_copies_per_step);
    double idle = d->idle_launch_pct + d->idle_dispatch_pct + d->idle_input_pct +
                  d->idle_work_pct + d->idle_api_pct + d->idle_alloc_pct + d->idle_compile_pct +
                  d->idle_sync_pct + d->idle_device_pct;
    fprintf(f, "  idle %.1f %%%s, by what the submitting thread did: in launch calls %.1f, "
               "dispatching between launches %.1f, the host's own work %.1f (of it input %.1f), "
               "other CUDA calls %.1f, allocating and freeing memory %.1f, building and loading "
               "kernels %.1f, syncs %.1f; device-side %.1f\n", idle,
            d->n_devices > 1 ? " of the devices' time" : "", d->idle_launch_pct,
            d->idle_dispatch_pct, d->idle_input_pct + d->idle_work_pct, d->idle_input_pct,
            d->idle_api_pct, d->idle_alloc_pct, d->idle_compile_pct, d->idle_sync_pct,
            d->idle_device_pct);
    fprintf(f, "  host-wait idle %.1f %%, the submitting thread's state: in CUDA calls %.1f, in "
               "calls waiting for the device %.1f, outside CUDA %.1f\n",
            d->host_in_call_pct + d->host_in_wait_pct + d->host_outside_pct, d->host_in_call_pct,
            d->host_in_wait_pct, d->host_outside_pct);
    print_counters(f, d);
    if (d->vs.compared)
        print_ceilings(f, d);
    fprintf(f, "  findings:\n");
    for (int i = 0; i < UF_N_RULES; i++)
        print_finding(f, d, &d->findings[d->order[i]]);
}

static void json_num(uf_strbuf *b, const char *key, double v)
{
    uf_sb_item(b, ", ");
    uf_sb_printf(b, "\"%s\": ", key);
    /* 6 digits; a count, pid or byte count (whole, below 10^15) every digit: 6 rounds 1e6+ */
    uf_sb_json_number(b, v, isfinite(v) && v == floor(v) && fabs(v) < 1e15 ? 15 : 6);
}

static void json_str(uf_strbuf *b, const char *key, const char *s)
{
    uf_sb_item(b, ", ");
    uf_sb_printf(b, "\"%s\": ", key);
    uf_sb_json_string(b, s);
}

/* The host-to-device copies: pinned ones with their share of h2d_pinned_gbs; pageable ones
 * with their DMA rate and no share (print_h2d_pageable says why). */
static void json_h2d(uf_strbuf *b, const uf_diagnosis *d)
{
    json_num(b, "h2d_pinned_achieved_gbs", d->h2d_gbs[UF_H2D_PINNED]);
    json_num(b, "h2d_pinned_copies", d->n_h2d[UF_H2D_PINNED]);
    json_num(b, "h2d_pinned_mean_bytes", d->h2d_mean_bytes[UF_H2D_PINNED]);
    json_num(b, "h2d_pinned_pct", d->vs.h2d_pinned_pct);
    json_num(b, "h2d_pageable_copies", d->n_h2d[UF_H2D_PAGEABLE]);
    json_num(b, "h2d_pageable_mean_bytes", d->h2d_mean_bytes[UF_H2D_PAGEABLE]);
    json_num(b, "h2d_pageable_dma_gbs", d->h2d_gbs[UF_H2D_PAGEABLE]);
}

/* The "ceilings" object: the file's rows (null where absent, in another unit or not
 * measured; "missing" says which and why), the window's figures and the ratios. */
static void json_ceilings(uf_strbuf *b, const uf_diagnosis *d)
{
    const uf_doctor_vs *v = &d->vs;
    char missing[UF_N_CEIL * 100] = "";
    uf_sb_item(b, ", ");
    uf_sb_puts(b, "\"ceilings\": {");
    b->n_items = 0;
    json_str(b, "file", v->c.path);
    uf_sb_puts(b, ", \"rows\": {");
    b->n_items = 0;
    for (int k = 0; k < UF_N_CEIL; k++) {
        json_num(b, uf_doctor_ceiling_rows[k].name, v->c.value[k]);
        if (v->c.why[k][0])
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? "; " : "", v->c.why[k]);
    }
    uf_sb_puts(b, "}");
    json_str(b, "missing", missing);
    json_num(b, "launch_call_us", d->launch_call_us);
    json_num(b, "launch_calls", d->n_launch_calls);
    json_num(b, "graph_node_kernels", d->n_graph_kernels);
    json_num(b, "launch_x", v->launch_x);
    json_h2d(b, d);
    json_num(b, "dram_of_copy_pct", v->dram_of_copy_pct);
    json_num(b, "tensor_of_gemm_pct", v->tensor_of_gemm_pct);
    uf_sb_puts(b, "}");
}

void uf_doctor_json(uf_strbuf *b, const uf_diagnosis *d)
{
    size_t outer = b->n_items;
    b->n_items = 0;
    uf_sb_puts(b, "{");
    json_num(b, "pid", d->pid);
    json_str(b, "top_finding", uf_doctor_rules[d->findings[d->order[0]].rule].id);
    json_str(b, "step_source", d->step_source);
    json_str(b, "note", d->note);
    json_num(b, "steps", d->n_steps);
    json_num(b, "steps_left_out", d->steps_left_out);
    json_num(b, "startup_ms", d->startup_ms);
    json_num(b, "tail_ms", d->tail_ms);
    json_num(b, "window_ms", d->tl.window_ms);
    json_num(b, "step_ms", d->step_ms);
    json_num(b, "busy_pct", d->tl.busy_pct);
    json_num(b, "idle_host_pct", d->tl.idle_host_pct);
    json_num(b, "launch_gap_pct", d->launch_gap_pct);
    json_num(b, "input_gap_pct", d->input_gap_pct);
    json_num(b, "host_gap_pct", d->host_gap_pct);
    json_num(b, "sync_gap_pct", d->sync_gap_pct);
    json_num(b, "alloc_gap_pct", d->alloc_gap_pct);
    json_num(b, "alloc_calls_per_step", d->alloc_calls_per_step);
    json_num(b, "alloc_ms_per_step", d->alloc_ms_per_step);
    json_num(b, "compile_gap_pct", d->compile_gap_pct);
    json_num(b, "load_calls_per_step", d->load_calls_per_step);
    json_num(b, "load_ms_per_step", d->load_ms_per_step);
    json_num(b, "recompile_ms", d->recompile_ms);
    json_num(b, "since_steps_ms", d->since_steps_ms);
    json_num(b, "recompile_pct", d->recompile_pct);
    json_num(b, "idle_launch_call_pct", d->idle_launch_pct);
    json_num(b, "idle_graph_launch_pct", d->idle_graph_launch_pct);
    json_num(b, "idle_dispatch_pct", d->idle_dispatch_pct);
    json_num(b, "idle_input_pct", d->idle_input_pct);
    json_num(b, "idle_host_work_pct", d->idle_work_pct);
    json_num(b, "idle_cuda_other_pct", d->idle_api_pct);
    json_num(b, "idle_alloc_pct", d->idle_alloc_pct);
    json_num(b, "idle_compile_pct", d->idle_compile_pct);
    json_num(b, "idle_sync_pct", d->idle_sync_pct);
    json_num(b, "idle_device_pct", d->idle_device_pct);
    json_num(b, "host_wait_pct", d->host_in_call_pct + d->host_in_wait_pct + d->host_outside_pct);
    json_num(b, "host_wait_in_cuda_call_pct", d->host_in_call_pct);
    json_num(b, "host_wait_in_sync_call_pct", d->host_in_wait_pct);
    json_num(b, "host_wait_outside_cuda_pct", d->host_outside_pct);
    json_num(b, "input_thread_ran_pct", d->input_ran_pct);
    json_num(b, "host_work_thread_ran_pct", d->work_ran_pct);
    json_num(b, "devices", d->n_devices);
    json_num(b, "kernels_per_step", d->tl.kernels_per_step);
    json_num(b, "kernel_us_mean", d->tl.kernel_us_mean);
    json_num(b, "launch_us", d->tl.launch_us);
    json_num(b, "comm_ms_per_step", d->tl.comm_ms_per_step);
    json_num(b, "comm_overlap_pct", d->tl.comm_overlap_pct);
    json_num(b, "comm_exposed_ms", d->tl.comm_exposed_ms);
    json_num(b, "copy_overlap_pct", d->tl.copy_overlap_pct);
    json_num(b, "syncs_per_step", d->tl.syncs_per_step);
    json_num(b, "drains_per_step", d->tl.drains_per_step);
    json_num(b, "sync_gap_us", d->tl.sync_gap_us);
    json_num(b, "sync_pos_pct", d->sync_pos_pct);
    json_num(b, "pageable_copies_per_step", d->tl.pageable_copies_per_step);
    json_num(b, "h2d_exposed_ms", d->h2d_exposed_ms);
    json_num(b, "sm_active_pct", d->sm_active_pct);
    json_num(b, "tensor_active_pct", d->tensor_active_pct);
    json_num(b, "dram_pct", d->dram_pct);
    json_num(b, "nvml_util_pct", d->nvml_util_pct);
    json_num(b, "sm_clock_mhz", d->sm_clock_mhz);
    json_num(b, "power_w", d->power_w);
    json_num(b, "pm_samples", d->n_pm_used);
    json_str(b, "counters_note", d->counters_note);
    if (d->vs.compared)
        json_ceilings(b, d);
    uf_sb_item(b, ", ");
    uf_sb_puts(b, "\"findings\": [");
    for (int i = 0; i < UF_N_RULES; i++) {
        const uf_finding *f = &d->findings[d->order[i]];
        const uf_doctor_rule *r = &uf_doctor_rules[f->rule];
        uf_sb_puts(b, i ? ", {" : "{");
        b->n_items = 0;
        json_str(b, "rule", r->id);
        json_str(b, "verdict", uf_doctor_verdict_name(f->verdict));
        json_num(b, "share_pct", f->share_pct);
        json_num(b, "gain_x", f->gain_x);
        json_str(b, "gain_bound", r->host_side ? "about" : "at_most");
        json_num(b, f->span_ms > 0.0 ? "run_without_ms" : "step_without_ms", f->step_without_ms);
        if (f->span_ms > 0.0)
            json_num(b, "run_span_ms", f->span_ms);
        json_str(b, "evidence", f->evidence);
        json_str(b, "fix", r->fix);
        json_str(b, "scenario", r->scenario);
        uf_sb_puts(b, "}");
    }
    uf_sb_puts(b, "]}");
    b->n_items = outer;
}

static void md_threshold(uf_strbuf *b, double v)
{
    if (isnan(v))
        uf_sb_puts(b, " cannot tell |");
    else
        uf_sb_printf(b, " %g %% |", v);
}

void uf_doctor_rules_markdown(uf_strbuf *b)
{
    uf_sb_puts(b, "| rule | failure | share of step at stake | moderate | high | also needs | "
                  "reproduced by | source |\n|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < UF_N_RULES; i++) {
        const uf_doctor_rule *r = &uf_doctor_rules[i];
        uf_sb_printf(b, "| `%s` | %s | %s |", r->id, r->failure, r->share);
        md_threshold(b, r->moderate_pct);
        md_threshold(b, r->high_pct);
        uf_sb_printf(b, " %s | %s | %s |\n", r->gate, r->scenario[0] ? r->scenario : "none yet",
                     r->source);
    }
}

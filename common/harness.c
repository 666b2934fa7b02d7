/* The harness: runs a scenario's variants over its sweep through the four measurement passes
 * of DESIGN.md (timing, trace, counters, NVML view), writes the results and returns the exit
 * code; the claims, the printed table and teaching summary, and the metadata are in
 * harness_report.c (harness_run.h: what one run holds). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

#include "gpu_probe.h"
#include "harness_run.h"
#include "no_gpu.h"
#include "peers.h"
#include "proc_maps.h"
#include "stats.h"
#include "timeline.h"
#include "timing.h"
#include "trace_export.h"
#include "underfed.h"


/* ---- small helpers ------------------------------------------------------------------- */

enum {
    WATCH_POLL_NS = 100000      /* 100 µs between queries of a watched wait */
};

int uf_fail(uf_ctx *ctx, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->reason, sizeof ctx->reason, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", ctx->scenario ? ctx->scenario->name : "underfed", ctx->reason);
    return status;
}

double uf_axis(const uf_ctx *ctx, const char *name)
{
    for (int i = 0; i < ctx->scenario->n_axes; i++)
        if (strcmp(ctx->scenario->axes[i].name, name) == 0)
            return ctx->axis[i];
    return NAN;
}

int uf_only_at_default(uf_ctx *ctx, int variant, const char *axis)
{
    for (int i = 0; i < ctx->scenario->n_axes; i++) {
        const uf_axis_desc *ax = &ctx->scenario->axes[i];
        if (strcmp(ax->name, axis) != 0 || ctx->axis[i] == ax->default_value)
            continue;
        snprintf(ctx->reason, sizeof ctx->reason,
                 "%s does not depend on %s: measured at %s=%g only",
                 ctx->scenario->variants[variant].name, axis, axis, ax->default_value);
        return UF_SKIP;
    }
    return UF_OK;
}

int uf_check_fits(uf_ctx *ctx, size_t bytes, const char *what)
{
    size_t free_bytes = 0, total_bytes = 0;
    cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (e != cudaSuccess)
        return uf_fail(ctx, UF_ERR, "cudaMemGetInfo failed: %s", cudaGetErrorString(e));
    if ((double)bytes > 0.95 * (double)free_bytes)
        return uf_fail(ctx, UF_USAGE,
                       "%s needs %.2f GiB of device memory, but only %.2f GiB of %.2f GiB are "
                       "free: choose a smaller size",
                       what, bytes / 1073741824.0, free_bytes / 1073741824.0,
                       total_bytes / 1073741824.0);
    return UF_OK;
}

/* A watched wait (uf_watch): poll `query` until it is done, the watch reports a lost rank,
 * or the deadline passes; on a failure every communicator is aborted. */
static int watched_wait(uf_ctx *ctx, cudaError_t (*query)(void *), void *obj, const char *what)
{
    const uf_watch *w = ctx->watch;
    double deadline = wall_s() + w->limit_s;
    struct timespec nap = {0, WATCH_POLL_NS};
    char why[UF_REASON_LEN];
    for (;;) {
        cudaError_t e = query(obj);
        if (e == cudaSuccess)
            return UF_OK;
        if (e != cudaErrorNotReady) {
            w->abort(w->arg);
            return uf_fail(ctx, UF_ERR, "%s failed: %s; every communicator was aborted", what,
                           cudaGetErrorString(e));
        }
        if (w->check(w->arg, why, sizeof why) != UF_OK) {
            w->abort(w->arg);
            return uf_fail(ctx, UF_ERR, "waiting for %s: %s; every communicator was aborted",
                           what, why);
        }
        if (wall_s() > deadline) {
            w->abort(w->arg);
            return uf_fail(ctx, UF_ERR, "%s did not finish within %.0f s (a rank hung?); every "
                           "communicator was aborted", what, w->limit_s);
        }
        nanosleep(&nap, NULL);
    }
}

static cudaError_t query_stream(void *obj)
{
    return cudaStreamQuery((cudaStream_t)obj);
}

static cudaError_t query_event(void *obj)
{
    return cudaEventQuery((cudaEvent_t)obj);
}

static cudaError_t sync_stream(void *obj)
{
    return cudaStreamSynchronize((cudaStream_t)obj);
}

static cudaError_t sync_event(void *obj)
{
    return cudaEventSynchronize((cudaEvent_t)obj);
}

/* A wait: watched (polled, with a deadline) where ctx->watch is set, else blocking. */
static int wait_for(uf_ctx *ctx, cudaError_t (*query)(void *), cudaError_t (*sync)(void *),
                    void *obj, const char *what)
{
    if (ctx->watch)
        return watched_wait(ctx, query, obj, what);
    cudaError_t e = sync(obj);
    return e == cudaSuccess ? UF_OK : uf_fail(ctx, UF_ERR, "%s failed: %s", what,
                                              cudaGetErrorString(e));
}

int uf_wait_stream(uf_ctx *ctx, cudaStream_t stream, const char *what)
{
    return wait_for(ctx, query_stream, sync_stream, (void *)stream, what);
}

int uf_wait_event(uf_ctx *ctx, cudaEvent_t event, const char *what)
{
    return wait_for(ctx, query_event, sync_event, (void *)event, what);
}

void uf_teardown_drain(uf_ctx *ctx)
{
    cudaError_t e = cudaStreamSynchronize(ctx->stream);
    if (e != cudaSuccess)
        uf_report_failure(__FILE__, __LINE__, "cudaStreamSynchronize(stream)",
                          cudaGetErrorString(e));
}

/* ---- the sweep ------------------------------------------------------------------------ */

static void build_sweep(run *r)
{
    r->n_points = 1;
    for (int a = 0; a < r->s->n_axes; a++) {
        const uf_axis_desc *ax = &r->s->axes[a];
        const double *vals;
        int n;
        declared_values(ax, r->opt.quick, &vals, &n);
        for (int k = 0; k < r->opt.n_sweeps; k++)   /* --sweep: at least one value (options.c) */
            if (strcmp(r->opt.sweeps[k].axis, ax->name) == 0) {
                vals = r->opt.sweeps[k].values;
                n = r->opt.sweeps[k].n;
            }
        if (n > UF_MAX_SWEEP)
            n = UF_MAX_SWEEP;
        memcpy(r->axis_values[a], vals, (size_t)n * sizeof(double));
        r->axis_counts[a] = n;
        r->n_points *= n;
    }
}

static void point_at(const run *r, int index, double *point)
{
    for (int a = r->s->n_axes - 1; a >= 0; a--) {
        point[a] = r->axis_values[a][index % r->axis_counts[a]];
        index /= r->axis_counts[a];
    }
}

/* ---- passes --------------------------------------------------------------------------- */

int uf_h_run_steps(run *r, int variant, int n, const char *label)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA(label);
        int rc = r->s->run_step(&r->ctx, variant);
        nvtxRangePop();
        if (rc != UF_OK)
            return rc;
    }
    return UF_OK;
}

static void progress(const run *r, const char *variant, const char *pass)
{
    double elapsed = wall_s() - r->started_s;
    char eta[48] = "";
    if (r->cells_done > 0) {
        double left = elapsed / r->cells_done * (r->cells_total - r->cells_done);
        snprintf(eta, sizeof eta, ", ~%.0f s left", left);
    }
    char where[256];
    point_label(r, r->point, where, sizeof where);
    fprintf(stderr, "[%s] %d/%d %s @ %s: %s (%.0f s elapsed%s)\n", r->s->name,
            r->cells_done + 1, r->cells_total, variant, where, pass, elapsed, eta);
}

double uf_step_ms(const uf_ctx *ctx, const uf_row *row)
{
    return ctx->scenario->step_stat == UF_STAT_MEAN ? row->step_ms_mean : row->step_ms;
}


/* The harness's figures from the scenario's counts: over the step of the declared statistic,
 * against the ceilings recorded in the metadata (fill_meta). */
static void derive(const run *r, uf_row *row)
{
    double step_s = uf_step_ms(&r->ctx, row) * 1e-3;
    row->tflops_useful = row->useful_flops / step_s / 1e12;
    row->pct_of_gemm = 100.0 * row->tflops_useful / r->ceilings.gemm_bf16_tflops;
    row->gbs = row->min_bytes / step_s / 1e9;
    row->pct_of_copy = 100.0 * row->gbs / r->ceilings.copy_d2d_gbs;
    if ((!isnan(row->useful_flops) || !isnan(row->min_bytes)) && r->ceilings_note[0])
        note_append(row->skip_reason, sizeof row->skip_reason, r->ceilings_note);
}

/* Phase 1 of one variant at the current point: the timing pass (with the NVML view),
 * verification, and what the scenario counts (describe). libcupti is not even loaded yet
 * (open_cupti_instruments): once CUPTI Activity has been enabled, even disabled again,
 * launches stay slower (seen on the H200: 3.4 → 5.6 µs per launch). */
static int timed_cell(run *r, int variant, uf_row *row)
{
    int rc = UF_OK;
    const uf_variant_desc *v = &r->s->variants[variant];
    progress(r, v->name, "timing");
    UF_STATUS_OR_GOTO(rc, uf_h_timing_pass(r, variant, row), out);
    if (r->nvml_note[0])
        note_append(row->skip_reason, sizeof row->skip_reason, r->nvml_note);

    progress(r, v->name, "verify");
    uint64_t verify_seed =
        r->opt.seed * 0x9E3779B97F4A7C15ULL + 7919u * (uint64_t)r->ctx.point_index + 1;
    double err = NAN;
    int vrc = r->s->verify(&r->ctx, variant, verify_seed, &err);
    row->max_rel_err = err;
    row->verified = vrc == UF_OK;
    if (vrc == UF_ERR) {
        r->wrong_results++;
        note_append(row->skip_reason, sizeof row->skip_reason, r->ctx.reason);
    } else if (vrc != UF_OK) {
        rc = vrc;
        goto out;
    }
    /* what the scenario counts, while the state still holds what verify found */
    if (r->s->describe)
        UF_STATUS_OR_GOTO(rc, r->s->describe(&r->ctx, variant, row), out);
    derive(r, row);
out:
    return rc;
}

/* Phase 2: the trace pass and the counters pass. */
static int instrumented_cell(run *r, int variant, uf_row *row)
{
    int rc = UF_OK;
    const char *name = r->s->variants[variant].name;
    if (r->opt.trace_pass && r->trace_ok) {
        progress(r, name, "trace");
        UF_STATUS_OR_GOTO(rc, uf_h_trace_pass(r, variant, row), out);
    } else {
        uf_h_note_every_rank(row, r->trace_note);
    }
    if (r->opt.counters && r->pm) {
        progress(r, name, "counters");
        UF_STATUS_OR_GOTO(rc, uf_h_counters_pass(r, variant, row), out);
    } else {
        uf_h_note_every_rank(row, r->pm_note);
    }
out:
    return rc;
}

/* A new row's identity: the variant, its role and the current point. */
static void start_row(const run *r, int variant, uf_row *row)
{
    const uf_variant_desc *v = &r->s->variants[variant];
    snprintf(row->variant, sizeof row->variant, "%s", v->name);
    snprintf(row->role, sizeof row->role, "%s", role_name(v->role));
    memcpy(row->axis, r->point, sizeof row->axis);
}

/* One phase of one variant at the current point, between begin_variant and end_variant. */
static int measure_cell(run *r, int variant, int row_index, int instrumented)
{
    int rc = UF_OK;
    const uf_variant_desc *v = &r->s->variants[variant];
    char range[UF_REASON_LEN], where[200];
    point_label(r, r->point, where, sizeof where);
    snprintf(range, sizeof range, "%s @ %s", v->name, where);
    nvtxRangePushA(range);

    uf_row *row = &r->table.rows[row_index];
    if (!instrumented) {
        start_row(r, variant, row);
        if (ranks_analysed(r) > 1)
            UF_STATUS_OR_GOTO(rc, uf_h_add_rank_lines(r, row), out_pop);
    }
    if (r->s->begin_variant) {
        r->ctx.reason[0] = '\0';
        rc = r->s->begin_variant(&r->ctx, variant);
        if (rc == UF_SKIP) {            /* the variant does not apply at this point */
            note_append(row->skip_reason, sizeof row->skip_reason, r->ctx.reason);
            rc = UF_OK;
            goto out_pop;
        }
        if (rc != UF_OK)
            goto out_pop;
    }
    rc = instrumented ? instrumented_cell(r, variant, row) : timed_cell(r, variant, row);
    if (r->s->end_variant) {
        int erc = r->s->end_variant(&r->ctx, variant);
        if (rc == UF_OK)
            rc = erc;
    }
out_pop:
    nvtxRangePop();
    r->cells_done++;
    return rc;
}

/* ---- the run ---------------------------------------------------------------------------- */

/* The rule of each of the scenario's axes (underfed.h: uf_axis_desc). */
static void axis_rules(const uf_scenario *s, uf_axis_rule *rules)
{
    for (int a = 0; a < s->n_axes && a < UF_MAX_AXES; a++) {
        const uf_axis_desc *ax = &s->axes[a];
        rules[a] = (uf_axis_rule){.name = ax->name, .kind = ax->kind, .min = ax->min,
                                  .max = ax->max, .choices = ax->choices,
                                  .n_choices = ax->n_choices};
    }
}

/* The scenario's own axis values (default, full, quick) against its axes' rules: a value out
 * of its rule is a programming error. Returns 0, or 1 with the message printed. */
static int check_declared_axes(const uf_scenario *s, const uf_axis_rule *rules)
{
    char err[UF_REASON_LEN];
    for (int a = 0; a < s->n_axes && a < UF_MAX_AXES; a++) {
        const uf_axis_desc *ax = &s->axes[a];
        int bad = uf_axis_check(&rules[a], ax->default_value, err, sizeof err);
        for (int k = 0; k < ax->n_values && !bad; k++)
            bad = uf_axis_check(&rules[a], ax->values[k], err, sizeof err);
        for (int k = 0; k < ax->n_quick_values && !bad; k++)
            bad = uf_axis_check(&rules[a], ax->quick_values[k], err, sizeof err);
        if (bad) {
            fprintf(stderr, "%s: programming error: a declared axis value: %s\n", s->name, err);
            return 1;
        }
    }
    return 0;
}

/* An axis value as --list shows it: a choice's name, else the number. */
static void format_axis_value(const uf_axis_rule *rule, double v, char *out, size_t len)
{
    const char *name = uf_axis_choice_name(rule, v);
    if (name != NULL)
        snprintf(out, len, "%s", name);
    else
        format_number(v, out, len);
}

static void print_list(const uf_scenario *s)
{
    printf("%s — %s\n\nvariants:\n", s->name, s->title);
    for (int i = 0; i < s->n_variants; i++)
        printf("  %-14s %-6s %s\n", s->variants[i].name,
               role_name(s->variants[i].role), s->variants[i].summary);
    printf("\naxes (--sweep AXIS=v1,v2,...):\n");
    uf_axis_rule rules[UF_MAX_AXES];
    axis_rules(s, rules);
    for (int a = 0; a < s->n_axes && a < UF_MAX_AXES; a++) {
        const uf_axis_desc *ax = &s->axes[a];
        char num[32], takes[256];
        uf_axis_describe(&rules[a], takes, sizeof takes);
        printf("  %-12s %s (%s; takes %s). default ", ax->name, ax->summary, ax->unit, takes);
        format_axis_value(&rules[a], ax->default_value, num, sizeof num);
        printf("%s; full:", num);
        for (int k = 0; k < ax->n_values; k++) {
            format_axis_value(&rules[a], ax->values[k], num, sizeof num);
            printf("%s%s", k ? "," : " ", num);
        }
        printf("; quick:");
        for (int k = 0; k < ax->n_quick_values; k++) {
            format_axis_value(&rules[a], ax->quick_values[k], num, sizeof num);
            printf("%s%s", k ? "," : " ", num);
        }
        printf("\n");
    }
    uf_warmup w;
    uf_warmup_plan(s->warmup, s->warmup_min_ms, DEFAULT_WARMUP, -1, 0, &w);
    printf("\nwarm-up before each timing pass: %d step(s)", w.steps);
    if (w.min_ms > 0)
        printf(" and >= %.0f ms of wall time (full run and --quick);\n  --warmup N sets the "
               "steps (the least time still applies), --warmup 0: no warm-up at all\n", w.min_ms);
    else
        printf("; --warmup N sets the steps\n");
    if (s->n_extras)
        printf("\nscenario columns:\n");
    for (int e = 0; e < s->n_extras; e++)
        printf("  %-22s %s (%s)\n", s->extras[e].name, s->extras[e].summary, s->extras[e].unit);
}

/* Exit 77 (or 1 with UNDERFED_REQUIRE_GPU=1) with the reason. */
static int skip(const char *name, const char *reason)
{
    int required = gpu_required();
    fprintf(stderr, "%s: %s: %s\n", name, required ? "error (UNDERFED_REQUIRE_GPU=1)" : "skipped",
            reason);
    return required ? UF_ERR : UF_SKIP;
}

/* Make ctx->device current and read its properties. */
static int open_device(run *r, struct cudaDeviceProp *prop)
{
    int rc = UF_OK;
    UF_CUDA_OR_GOTO(rc, cudaSetDevice(r->ctx.device), out);
    UF_CUDA_OR_GOTO(rc, cudaFree(0), out);
    UF_CUDA_OR_GOTO(rc, cudaGetDeviceProperties(prop, r->ctx.device), out);
out:
    return rc;
}

/* Process mode: this rank's one GPU, --device + its local rank; a process that sees a single
 * GPU (a launcher that binds one per task) uses that one. */
static int select_rank_gpu(run *r, int available, struct cudaDeviceProp *prop)
{
    int local = r->launch.local_rank;
    if (r->opt.gpus > 1) {
        fprintf(stderr, "%s: --gpus %d: under a launcher (%s) each process drives one GPU\n",
                r->s->name, r->opt.gpus, r->launch.source);
        return UF_USAGE;
    }
    if (available == 1 && r->opt.device == 0)
        local = 0;
    if (local >= available) {
        fprintf(stderr, "%s: local rank %d (%s) needs GPU %d + %d, but %d GPU(s) are visible "
                "from there\n", r->s->name, r->launch.local_rank, r->launch.source,
                r->opt.device, local, available);
        return UF_USAGE;
    }
    r->ctx.device = r->opt.device + local;
    r->ctx.n_gpus = 1;
    return open_device(r, prop);
}

static int select_gpus(run *r, struct cudaDeviceProp *prop)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    char reason[UF_REASON_LEN];
    if (e != cudaSuccess || count == 0) {
        uf_no_gpu_reason(e != cudaSuccess ? cudaGetErrorString(e) : "no device", reason,
                         sizeof reason);
        return skip(r->s->name, reason);
    }
    if (r->opt.device >= count) {
        fprintf(stderr, "%s: --device %d, but only %d GPU(s) are visible\n", r->s->name,
                r->opt.device, count);
        return UF_USAGE;
    }
    int available = count - r->opt.device;
    if (process_mode(r))
        return select_rank_gpu(r, available, prop);
    int wanted = r->opt.gpus ? r->opt.gpus : available;
    int needed = r->s->min_gpus > 1 ? r->s->min_gpus : 1;
    if (wanted > available || wanted < needed) {
        snprintf(reason, sizeof reason, "needs %d GPU(s) (asked for %d), %d visible from device %d",
                 wanted > needed ? wanted : needed, wanted, available, r->opt.device);
        return skip(r->s->name, reason);
    }
    r->ctx.device = r->opt.device;
    r->ctx.n_gpus = r->s->min_gpus > 1 ? wanted : 1;
    return open_device(r, prop);
}

/* The instruments of the timing passes (NVML), and the notes of the passes turned off. No
 * CUPTI: that waits for open_cupti_instruments, after every timing pass. */
static void open_instruments(run *r)
{
    if (uf_nvml_open(r->ctx.device, &r->nvml, r->nvml_note, sizeof r->nvml_note) != UF_OK)
        r->nvml = NULL;
    r->trace_ok = 1;
    r->cupti_in_timing = -1;
    if (!r->opt.trace_pass)
        snprintf(r->trace_note, sizeof r->trace_note, "trace pass off (--no-trace)");
    if (!r->opt.counters)
        snprintf(r->pm_note, sizeof r->pm_note, "counters off (--no-counters)");
}

/* After every timing pass, before the first trace or counters pass: load libcupti, then open
 * PM sampling on rank 0 and on the other GPUs the timing passes used (before any CUPTI
 * Activity, as always). A library that does not load turns both passes off with its reason;
 * PM sampling not permitted here is a legitimate n/a (counters_denied). Nothing when both
 * passes are off: such a run never loads CUPTI. */
static void open_cupti_instruments(run *r)
{
    char reason[UF_REASON_LEN];
    int pm_rc;
    if (!r->opt.trace_pass && !r->opt.counters)
        return;
    if (uf_cupti_load(reason, sizeof reason) != UF_OK) {
        if (r->opt.trace_pass) {
            r->trace_ok = 0;
            snprintf(r->trace_note, sizeof r->trace_note, "%s", reason);
        }
        if (r->opt.counters)
            snprintf(r->pm_note, sizeof r->pm_note, "%s", reason);
        fprintf(stderr, "[%s] %s\n", r->s->name, reason);
        return;
    }
    if (!r->opt.counters)
        return;
    if ((pm_rc = uf_pm_open(r->ctx.device, &r->pm, r->pm_note, sizeof r->pm_note)) != UF_OK) {
        r->pm = NULL;
        r->counters_denied = pm_rc == UF_SKIP;  /* not permitted here: a legitimate n/a */
        fprintf(stderr, "[%s] counters: %s\n", r->s->name, r->pm_note);
    }
    uf_h_open_rank_pm(r, r->n_rank_opened);
}

/* Whether libcupti is mapped now, at the end of the timing passes (for cupti_meta). */
static void note_cupti_after_timing(run *r)
{
    r->cupti_in_timing = uf_library_mapped("libcupti.so", r->cupti_in_timing_path,
                                           sizeof r->cupti_in_timing_path);
}

static void read_ceilings(run *r)
{
    char path[sizeof r->out_dir + 32], err[UF_REASON_LEN];
    uf_ceilings_clear(&r->ceilings);
    r->ctx.ceilings = &r->ceilings;
    snprintf(path, sizeof path, "%s/ceilings.csv", r->out_dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(r->ceilings_note, sizeof r->ceilings_note,
                 "no ceilings.csv beside the results: run benches/ceilings for shares of ceilings");
        return;
    }
    fclose(f);
    uf_meta *meta = calloc(1, sizeof *meta);
    if (!meta) {
        snprintf(r->ceilings_note, sizeof r->ceilings_note, "ceilings unread: out of memory");
        return;
    }
    if (uf_ceilings_read_meta(path, &r->ceilings, meta, err, sizeof err) != 0) {
        snprintf(r->ceilings_note, sizeof r->ceilings_note, "ceilings unreadable: %.200s", err);
    } else {
        const char *git = uf_meta_get(meta, "git"), *utc = uf_meta_get(meta, "utc");
        snprintf(r->ceilings_git, sizeof r->ceilings_git, "%s", git ? git : "");
        snprintf(r->ceilings_utc, sizeof r->ceilings_utc, "%s", utc ? utc : "");
    }
    free(meta);
}

static int write_results(run *r)
{
    char path[sizeof r->out_dir + UF_NAME_LEN + 16], err[UF_REASON_LEN];
    int rc = UF_OK;
    snprintf(path, sizeof path, "%s/%s.csv", r->out_dir, r->s->name);
    if (uf_table_write_csv(&r->table, path, err, sizeof err) != 0)
        goto fail;
    fprintf(stderr, "[%s] wrote %s\n", r->s->name, path);
    snprintf(path, sizeof path, "%s/%s.json", r->out_dir, r->s->name);
    if (uf_table_write_json(&r->table, path, err, sizeof err) != 0)
        goto fail;
    snprintf(path, sizeof path, "%s/%s.series.csv", r->out_dir, r->s->name);
    if (uf_table_write_series_csv(&r->table, path, err, sizeof err) != 0)
        goto fail;
    if (r->opt.trace_path[0] && r->n_sections) {
        if (uf_trace_export_chrome(r->opt.trace_path, r->sections, r->n_sections, err,
                                   sizeof err) != 0)
            goto fail;
        fprintf(stderr, "[%s] wrote %s (open it in ui.perfetto.dev)\n", r->s->name,
                r->opt.trace_path);
    }
    return rc;
fail:
    fprintf(stderr, "%s: %s\n", r->s->name, err);
    return UF_ERR;
}

/* A point the scenario's setup declined: empty rows with the reason. */
static int skip_point(run *r, int instrumented, int *row_index)
{
    for (int v = 0; v < r->s->n_variants; v++) {
        if (!r->variant_selected[v])
            continue;
        if (!instrumented) {
            uf_row *row = uf_table_append(&r->table);
            if (!row)
                return uf_fail(&r->ctx, UF_ERR, "out of host memory for the results table");
            start_row(r, v, row);
            note_append(row->skip_reason, sizeof row->skip_reason, r->ctx.reason);
        }
        (*row_index)++;
        r->cells_done++;
    }
    return UF_OK;
}

/* One phase over every point: setup, each selected variant, teardown. Phase 1 appends the
 * rows; phase 2 fills the same rows in the same order. */
static int sweep_phase(run *r, int instrumented)
{
    int rc = UF_OK, row_index = 0;
    for (int p = 0; p < r->n_points; p++) {
        point_at(r, p, r->point);
        r->ctx.point_index = p;
        r->ctx.axis = r->point;
        r->ctx.state = NULL;
        r->ctx.reason[0] = '\0';
        int src = r->s->setup(&r->ctx);
        if (src == UF_SKIP_POINT) {
            if (r->s->teardown)
                r->s->teardown(&r->ctx);
            rc = skip_point(r, instrumented, &row_index);
            if (rc != UF_OK)
                return rc;
            continue;
        }
        if (src != UF_OK) {
            if (r->s->teardown)
                r->s->teardown(&r->ctx);
            return src == UF_SKIP ? skip(r->s->name, r->ctx.reason) : src;
        }
        for (int v = 0; v < r->s->n_variants && rc == UF_OK; v++) {
            if (!r->variant_selected[v])
                continue;
            if (!instrumented && !uf_table_append(&r->table)) {
                rc = uf_fail(&r->ctx, UF_ERR, "out of host memory for the results table");
                break;
            }
            rc = measure_cell(r, v, row_index++, instrumented);
        }
        if (r->s->teardown)
            r->s->teardown(&r->ctx);
        if (rc != UF_OK)
            return rc;
    }
    return rc;
}

/* Every timing pass (with verify and describe) runs before libcupti is even loaded (see
 * timed_cell); then the CUPTI instruments open, and the trace and counters passes run on the
 * same inputs (setup draws them from the same seed). */
static int sweep_all(run *r)
{
    r->cells_total = 2 * r->n_points * r->n_selected;
    r->started_s = wall_s();
    int rc = sweep_phase(r, 0);
    if (rc == UF_OK) {
        note_cupti_after_timing(r);
        open_cupti_instruments(r);
    }
    if (rc == UF_OK && ((r->opt.trace_pass && r->trace_ok) || (r->opt.counters && r->pm))) {
        rc = sweep_phase(r, 1);
    } else {
        for (int i = 0; i < r->table.n_rows; i++) {
            uf_h_note_every_rank(&r->table.rows[i], r->trace_note);
            uf_h_note_every_rank(&r->table.rows[i], r->pm_note);
        }
        r->cells_done = r->cells_total;
    }
    return rc;
}

static int prepare(run *r, int argc, char **argv)
{
    char err[UF_REASON_LEN];
    int rc = uf_parse_options(argc, argv, &r->opt, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: %s (see --help)\n", r->s->name, err);
        return UF_USAGE;
    }
    const char *variant_names[UF_MAX_VARIANTS], *axis_names[UF_MAX_AXES];
    for (int i = 0; i < r->s->n_variants && i < UF_MAX_VARIANTS; i++)
        variant_names[i] = r->s->variants[i].name;
    for (int a = 0; a < r->s->n_axes && a < UF_MAX_AXES; a++)
        axis_names[a] = r->s->axes[a].name;
    if (uf_options_validate(&r->opt, variant_names, r->s->n_variants, axis_names, r->s->n_axes,
                            err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", r->s->name, err);
        return UF_USAGE;
    }
    uf_axis_rule rules[UF_MAX_AXES];
    axis_rules(r->s, rules);
    if (check_declared_axes(r->s, rules) != 0)
        return UF_ERR;
    const int n_rules = r->s->n_axes < UF_MAX_AXES ? r->s->n_axes : UF_MAX_AXES;
    if (uf_options_check_sweeps(&r->opt, rules, n_rules, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s (see --list)\n", r->s->name, err);
        return UF_USAGE;
    }
    for (int v = 0; v < r->s->n_variants; v++) {
        int chosen = r->opt.n_variants == 0;
        for (int k = 0; k < r->opt.n_variants; k++)
            chosen |= strcmp(r->opt.variants[k], r->s->variants[v].name) == 0;
        r->variant_selected[v] = chosen;
        r->n_selected += chosen;
    }
    int scen_repeat = r->opt.quick ? r->s->quick_repeat : r->s->repeat;
    if (scen_repeat <= 0)
        scen_repeat = r->opt.quick ? DEFAULT_QUICK_REPEAT : DEFAULT_REPEAT;
    r->repeat = r->opt.repeat > 0 ? r->opt.repeat : scen_repeat;
    build_sweep(r);
    if (r->n_points > MAX_POINTS) {
        fprintf(stderr, "%s: the sweep has %d points; at most %d\n", r->s->name, r->n_points,
                MAX_POINTS);
        return UF_USAGE;
    }
    return UF_OK;
}

static void release(run *r)
{
    for (int i = 0; i < r->n_sections; i++) {
        free((void *)r->sections[i].label);
        free((void *)r->sections[i].acts);
        free((void *)r->sections[i].apis);
    }
    free(r->sections);
    uf_table_free(&r->table);
    uf_h_close_rank_instruments(r);
    if (r->pm)
        uf_pm_close(r->pm);
    if (r->nvml)
        uf_nvml_close(r->nvml);
    uf_trace_release();
    if (r->ctx.stream)
        cudaStreamDestroy(r->ctx.stream);
    uf_peers_close(r->ctx.peers);  /* after the last collective: a goodbye, not a loss */
}

int uf_main(const uf_scenario *s, int argc, char **argv)
{
    uf_expectations *ex = NULL;
    run *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "%s: out of host memory\n", s->name);
        return UF_ERR;
    }
    r->s = s;
    r->ctx.scenario = s;
    r->ctx.opt = &r->opt;
    int rc = prepare(r, argc, argv);
    if (rc != UF_OK)
        goto out;
    if (r->opt.help) {
        uf_print_usage(stdout, s->name);
        printf("\n");
        print_list(s);
        goto out;
    }
    if (r->opt.list) {
        print_list(s);
        goto out;
    }
    if (r->opt.explain) {
        fputs(uf_scenario_page, stdout);
        goto out;
    }
    /* a claim naming what does not exist is a programming error: found before any GPU work */
    rc = uf_h_check_claims(s, r->opt.quick, r->opt.check_claims);
    if (rc != UF_OK || r->opt.check_claims)
        goto out;

    struct cudaDeviceProp prop;
    rc = uf_h_join_world(r);
    if (rc != UF_OK)
        goto out;
    rc = select_gpus(r, &prop);
    if (rc != UF_OK)
        goto out;
    rc = uf_h_meet_ranks(r);
    if (rc != UF_OK)
        goto out;
    /* once the launch mode is known: a least warm-up time would make ranks' step counts differ */
    uf_warmup_plan(s->warmup, s->warmup_min_ms, DEFAULT_WARMUP, r->opt.warmup, process_mode(r),
                   &r->warmup);
    r->sm_count = prop.multiProcessorCount;
    r->ctx.seed = r->opt.seed;
    r->ctx.quick = r->opt.quick;
    UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithFlags(&r->ctx.stream, cudaStreamNonBlocking), out);

    char slug[UF_NAME_LEN], err[UF_REASON_LEN];
    uf_slug(prop.name, slug, sizeof slug);
    snprintf(r->out_dir, sizeof r->out_dir, "%s/%s",
             r->opt.out_dir[0] ? r->opt.out_dir : (r->opt.quick ? "results-quick" : "results"),
             slug);
    if (uf_mkdirs(r->out_dir, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", s->name, err);
        rc = UF_USAGE;
        goto out;
    }
    read_ceilings(r);
    open_instruments(r);

    uf_table_init(&r->table, s->name);
    for (int a = 0; a < s->n_axes; a++)
        uf_table_add_axis(&r->table, s->axes[a].name);
    for (int e = 0; e < s->n_extras; e++)
        uf_table_add_extra(&r->table, s->extras[e].name, s->extras[e].unit);
    uf_h_fill_meta(r, argc, argv, &prop);
    char warm[UF_REASON_LEN];
    uf_warmup_describe(&r->warmup, warm, sizeof warm);
    fprintf(stderr, "[%s] %s, %d point(s) × %d variant(s), repeat %d, warm-up %s%s%s\n", s->name,
            prop.name, r->n_points, r->n_selected, r->repeat, warm,
            r->opt.counters ? "" : "; counters: ", r->opt.counters ? "" : r->pm_note);

    rc = sweep_all(r);
    if (rc != UF_OK)
        goto out;
    uf_h_counters_meta(r);
    uf_h_cupti_meta(r);
    if (r->power_read)
        uf_meta_set(&r->table.meta, "power_source", "%s",
                    r->power_read == 2 ? "NVML instant board power (NVML_FI_DEV_POWER_INSTANT)"
                                       : "nvmlDeviceGetPowerUsage (a trailing 1 s average on "
                                         "Ampere and later)");
    if (process_mode(r) && r->launch.rank != 0) {
        /* the results, the table and the claims are rank 0's (its GPU's figures) */
        fprintf(stderr, "[%s] rank %d: done; rank 0 writes the results\n", s->name,
                r->launch.rank);
        rc = r->wrong_results ? UF_ERR : UF_OK;
        goto out;
    }
    if (r->opt.expect && s->expect && !r->wrong_results) {
        ex = uf_h_evaluate_claims(r);
        if (!ex) {
            rc = uf_fail(&r->ctx, UF_ERR, "out of host memory for the claims");
            goto out;
        }
    }
    rc = write_results(r);
    if (rc != UF_OK)
        goto out;
    uf_h_print_table(r);
    uf_h_print_ranks(r);
    uf_h_print_lesson(r);
    if (r->wrong_results) {
        printf("\n%d result(s) WRONG: see skip_reason in the results; exit 1\n", r->wrong_results);
        rc = UF_ERR;
        goto out;
    }
    if (ex)
        rc = uf_h_claims_verdict(r, ex);
out:
    uf_claims_free(ex);
    release(r);
    free(r);
    return rc;
}

/* The harness: runs a scenario's variants over its sweep (harness_sweep.c) through the four
 * measurement passes of docs/design.md (timing, trace, counters, NVML view), writes the results
 * and returns the exit code. Here: the scenario interface's helpers (uf_fail, uf_axis, the waits),
 * --list, the GPUs, the instruments, the ceilings, the results and uf_main; the passes, the
 * ranks and the report are in their own files (harness_run.h lists them, and what one run
 * holds). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instruments.h"
#include "harness_run.h"
#include "no_gpu_reason.h"
#include "rank_exchange.h"
#include "stdout_check.h"
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
    double deadline = uf_mono_s() + w->limit_s;
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
        if (uf_mono_s() > deadline) {
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
    if (s->n_axes > UF_MAX_AXES) {
        fprintf(stderr, "%s: the scenario declares %d axes, at most %d (UF_MAX_AXES)\n", s->name,
                s->n_axes, UF_MAX_AXES);
        return 1;
    }
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
int uf_h_skip(const char *name, const char *reason)
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
        return uf_h_skip(r->s->name, reason);
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
        return uf_h_skip(r->s->name, reason);
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
    uf_h_build_sweep(r);
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

    rc = uf_h_sweep_all(r);
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
    /* what was printed (the table, --list, --explain, the claims) must have reached stdout */
    if (uf_stdout_flushed(s->name) != 0 && rc == UF_OK)
        rc = UF_ERR;
    return rc;
}

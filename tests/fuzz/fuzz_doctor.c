/* A fuzzed doctor trace through the doctor's reading path, and the oracle (fuzz_doctor.h). */
#include "fuzz_doctor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/json_check.h"
#include "strbuf.h"

/* What a figure is, and so what bounds it. */
typedef enum {
    TIME_MS,        /* a duration in ms: 0..span */
    TIME_US,        /* a duration in us: 0..span */
    SIGNED_US,      /* a time difference in us: -span..span (a kernel's start - its launch) */
    SHARE_PCT,      /* a share of the step or window: 0..100 */
    COUNTER_PCT,    /* a counter's mean: 0..UF_TRACE_SAMPLE_PCT_MAX */
    PER_STEP,       /* a count per step: 0..the file's records */
    RATE            /* a rate: finite, >= 0 */
} figure_kind;

typedef struct figure {
    const char *name;
    double value;
    figure_kind kind;
} figure;

static const char *known_figures = "";
static unsigned long long known_breaches;

void fuzz_doctor_set_known(const char *figures)
{
    known_figures = figures != NULL ? figures : "";
}

unsigned long long fuzz_doctor_known_breaches(void)
{
    return known_breaches;
}

/* Is name in the comma-separated known list? */
static int is_known(const char *name)
{
    size_t n = strlen(name);
    for (const char *p = known_figures; (p = strstr(p, name)) != NULL; p += n)
        if ((p == known_figures || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

static int check_figure_bound(const figure *g, double span_ms, double records, char *why,
                              size_t len);

/* One figure against its bound; a known defect's breach is counted, not failed. */
static int check_figure(const figure *g, double span_ms, double records, char *why, size_t len)
{
    if (check_figure_bound(g, span_ms, records, why, len) == 0)
        return 0;
    if (!is_known(g->name))
        return -1;
    known_breaches++;
    return 0;
}

/* One figure against its bound; NaN passes (a figure may be missing), inf never does. */
static int check_figure_bound(const figure *g, double span_ms, double records, char *why,
                              size_t len)
{
    double v = g->value;
    if (isnan(v))
        return 0;
    if (isinf(v)) {
        snprintf(why, len, "%s = %g: not finite", g->name, v);
        return -1;
    }
    const double slack = 1e-6;
    double lo = 0.0, hi = 0.0;
    switch (g->kind) {
    case TIME_MS: hi = span_ms; break;
    case TIME_US: hi = span_ms * 1e3; break;
    case SIGNED_US: lo = -span_ms * 1e3; hi = span_ms * 1e3; break;
    case SHARE_PCT: hi = 100.0; break;
    case COUNTER_PCT: hi = UF_TRACE_SAMPLE_PCT_MAX; break;
    case PER_STEP: hi = records; break;
    case RATE: hi = INFINITY; break;
    }
    if (v < lo - slack * (fabs(lo) + 1.0) || v > hi + slack * (fabs(hi) + 1.0)) {
        snprintf(why, len, "%s = %g: outside %g..%g (the run's span, a share's 100 %%, the "
                 "file's records)", g->name, v, lo, hi);
        return -1;
    }
    return 0;
}

#define F(field, kind) {#field, d->field, kind}

/* The figures of a diagnosis (uf_diagnosis as of this writing). */
static size_t figures_of(const uf_diagnosis *d, figure *out, size_t cap)
{
    const figure all[] = {
        F(startup_ms, TIME_MS), F(tail_ms, TIME_MS), F(step_ms, TIME_MS),
        F(tl.window_ms, TIME_MS), F(h2d_exposed_ms, TIME_MS), F(elementwise_ms, TIME_MS),
        F(simt_gemm_ms, TIME_MS), F(tc_gemm_ms, TIME_MS), F(misaligned_gemm_ms, TIME_MS),
        F(gemv_ms, TIME_MS), F(simt_any_ms, TIME_MS), F(gemm_any_ms, TIME_MS),
        F(underfilled_ms, TIME_MS), F(tl.comm_ms_per_step, TIME_MS),
        F(tl.comm_exposed_ms, TIME_MS), F(tl.copy_ms_per_step, TIME_MS),
        F(launch_call_us, TIME_US), F(tl.kernel_us_mean, TIME_US), F(tl.sync_gap_us, TIME_US),
        F(tl.launch_us, SIGNED_US),
        F(launch_gap_pct, SHARE_PCT), F(input_gap_pct, SHARE_PCT), F(sync_gap_pct, SHARE_PCT),
        F(sync_pos_pct, SHARE_PCT), F(tl.busy_pct, SHARE_PCT), F(tl.idle_host_pct, SHARE_PCT),
        F(tl.idle_other_pct, SHARE_PCT), F(tl.comm_overlap_pct, SHARE_PCT),
        F(tl.comm_sm_pct, SHARE_PCT), F(tl.copy_overlap_pct, SHARE_PCT),
        F(sm_active_pct, COUNTER_PCT), F(tensor_active_pct, COUNTER_PCT),
        F(dram_pct, COUNTER_PCT), F(nvml_util_pct, COUNTER_PCT),
        F(tl.kernels_per_step, PER_STEP), F(tl.syncs_per_step, PER_STEP),
        F(tl.stream_syncs_per_step, PER_STEP), F(tl.context_syncs_per_step, PER_STEP),
        F(tl.event_syncs_per_step, PER_STEP), F(tl.pageable_copies_per_step, PER_STEP),
        F(tl.drains_per_step, PER_STEP), F(gemv_per_step, PER_STEP),
        F(h2d_gbs[UF_H2D_PINNED], RATE), F(h2d_gbs[UF_H2D_PAGEABLE], RATE),
        F(h2d_mean_bytes[UF_H2D_PINNED], RATE), F(h2d_mean_bytes[UF_H2D_PAGEABLE], RATE),
        F(n_steps, PER_STEP), F(steps_left_out, PER_STEP), F(n_launch_calls, PER_STEP),
        F(n_graph_kernels, PER_STEP),
        F(idle_launch_pct, SHARE_PCT), F(idle_graph_launch_pct, SHARE_PCT),
        F(idle_dispatch_pct, SHARE_PCT), F(idle_input_pct, SHARE_PCT),
        F(idle_work_pct, SHARE_PCT), F(idle_api_pct, SHARE_PCT), F(idle_sync_pct, SHARE_PCT),
        F(idle_device_pct, SHARE_PCT), F(host_in_call_pct, SHARE_PCT),
        F(host_in_wait_pct, SHARE_PCT), F(host_outside_pct, SHARE_PCT),
        F(input_ran_pct, SHARE_PCT), F(work_ran_pct, SHARE_PCT), F(host_gap_pct, SHARE_PCT),
        F(unknown_gemm_ms, TIME_MS), F(chain_family_per_step, PER_STEP),
        F(chain_counters_per_step, PER_STEP), F(chain_triton_per_step, PER_STEP),
        F(idle_alloc_pct, SHARE_PCT), F(idle_compile_pct, SHARE_PCT), F(alloc_gap_pct, SHARE_PCT),
        F(compile_gap_pct, SHARE_PCT), F(alloc_calls_per_step, PER_STEP),
        F(load_calls_per_step, PER_STEP), F(alloc_ms_per_step, TIME_MS),
        F(load_ms_per_step, TIME_MS), F(recompile_ms, TIME_MS), F(since_steps_ms, TIME_MS),
        F(recompile_pct, SHARE_PCT),
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && n < cap; i++)
        out[n++] = all[i];
    for (int r = 0; r < UF_N_RULES && n < cap; r++)
        out[n++] = (figure){uf_doctor_rules[d->findings[r].rule].id, d->findings[r].share_pct,
                            SHARE_PCT};
    for (int r = 0; r < UF_N_RULES && n < cap; r++)
        out[n++] = (figure){"a finding's step without its share", d->findings[r].step_without_ms,
                            TIME_MS};
    return n;
}
#undef F

/* A nan or inf printed as a figure: the word alone, not inside a longer one. */
static int prints_nan(const char *line, size_t n)
{
    static const char *const words[] = {"nan", "inf", "NaN", "Inf", "NAN", "INF"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        for (const char *p = line; (p = strstr(p, words[w])) != NULL && p < line + n; p++) {
            char before = p > line ? p[-1] : ' ', after = p[3];
            int alnum_b = (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
                          (before >= '0' && before <= '9') || before == '_';
            int alnum_a = (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
                          after == '_';
            if (!alnum_b && !alnum_a)
                return 1;
        }
    return 0;
}

/* The report's text: UTF-8, no control character but '\n', no nan/inf figure (the lines that
 * quote the file's notes aside: their words are the file's). */
static int check_text(const char *text, const uf_dtrace *t, char *why, size_t len)
{
    for (const char *p = text; *p != '\0';) {
        size_t n = uf_utf8_len(p);
        unsigned char c = (unsigned char)*p;
        if (n == 0 || (n == 1 && ((c < 0x20 && c != '\n') || c == 0x7f)) ||
            (n == 2 && c == 0xc2 && (unsigned char)p[1] < 0xa0)) {
            snprintf(why, len, "the report holds byte 0x%02x at offset %zu (a control "
                     "character or not UTF-8)", c, (size_t)(p - text));
            return -1;
        }
        p += n;
    }
    const char *end = text + strlen(text);
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
        char *copy = malloc(n + 1);
        if (copy == NULL)
            return 0;
        memcpy(copy, line, n);
        copy[n] = '\0';
        int quotes_note = (t->note[0] && strstr(copy, t->note) != NULL) ||
                          (t->counters_note[0] && strstr(copy, t->counters_note) != NULL);
        int bad = !quotes_note && prints_nan(copy, n);
        if (bad)
            snprintf(why, len, "the report prints nan or inf: %.200s", copy);
        free(copy);
        if (bad)
            return -1;
        line += n + (nl != NULL);
    }
    return 0;
}

int fuzz_doctor_oracle(const uf_trace_file *f, const uf_diagnosis *d, const char *report,
                       const char *json, char *why, size_t why_len)
{
    const uf_trace_info *i = &f->info;
    double span_ms = (double)(i->span_end_ns - i->span_start_ns) / 1e6;
    const uf_dtrace *t = &f->t;
    double records = (double)(t->n_acts + t->n_apis + t->n_syncs + t->n_ranges + t->n_pm +
                              t->n_util + t->n_clocks + t->n_host);
    figure g[128];
    size_t n = figures_of(d, g, sizeof g / sizeof g[0]);
    for (size_t k = 0; k < n; k++)
        if (check_figure(&g[k], span_ms, records, why, why_len) != 0)
            return -1;
    double whole = d->startup_ms + d->tl.window_ms + d->tail_ms;
    if (!isnan(whole) && whole > span_ms * (1 + 1e-9) + 1e-6) {
        snprintf(why, why_len, "start-up %g + window %g + tail %g ms = %g: beyond the run's span "
                 "of %g ms", d->startup_ms, d->tl.window_ms, d->tail_ms, whole, span_ms);
        return -1;
    }
    double idle = d->launch_gap_pct + d->input_gap_pct + d->sync_gap_pct;
    if (!isnan(idle) && idle > 100.0 + 1e-6) {
        snprintf(why, why_len, "the idle parts (launch %g + input %g + sync %g %%) exceed the "
                 "whole step", d->launch_gap_pct, d->input_gap_pct, d->sync_gap_pct);
        return -1;
    }
    /* the idle split: its nine parts add up to the idle, the raw host state to the host-wait
     * part of it (doctor.h), both within the window */
    double parts = d->idle_launch_pct + d->idle_dispatch_pct + d->idle_input_pct +
                   d->idle_work_pct + d->idle_api_pct + d->idle_alloc_pct + d->idle_compile_pct +
                   d->idle_sync_pct + d->idle_device_pct;
    double raw = d->host_in_call_pct + d->host_in_wait_pct + d->host_outside_pct;
    if (!isnan(parts) && (parts > 100.0 + 1e-6 ||
                          fabs(raw - (parts - d->idle_device_pct)) > 1e-6 * (1.0 + parts))) {
        snprintf(why, why_len, "the idle split (%g %%, of it host-wait %g) and the host state "
                 "(%g %%) disagree or exceed the window", parts, parts - d->idle_device_pct, raw);
        return -1;
    }
    for (int r = 0; r < UF_N_RULES; r++) {
        const uf_finding *f = &d->findings[r];
        if (!isnan(f->gain_x) && (f->gain_x < 1.0 - 1e-9 || f->gain_x > 1000.0 + 1e-9)) {
            snprintf(why, why_len, "%s: gain %gx outside 1..1000", uf_doctor_rules[f->rule].id,
                     f->gain_x);
            return -1;
        }
    }
    if (report != NULL && check_text(report, t, why, why_len) != 0)
        return -1;
    if (json != NULL && !json_valid(json)) {
        snprintf(why, why_len, "the JSON is not valid: %.200s", json);
        return -1;
    }
    return 0;
}

/* Does err start with "PATH:"? */
static int names_file(const char *err, const char *path)
{
    size_t n = strlen(path);
    return strncmp(err, path, n) == 0 && err[n] == ':';
}

int fuzz_doctor_one(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    err[0] = '\0';
    if (memchr(data, '\0', len) != NULL)
        return 1;       /* uf_trace_read refuses it so ("a NUL byte inside"), before parsing */
    char *text = malloc(len + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, len);
    text[len] = '\0';
    uf_trace_file f;
    if (uf_trace_parse(text, path, &f, err, errlen) != 0)
        return names_file(err, path) ? 1 : -1;
    uf_diagnosis *d = calloc(1, sizeof *d);
    int rc = 0;
    if (d != NULL && uf_doctor_analyze(&f.t, d, err, errlen) == 0) {
        char *report = NULL;
        size_t report_len = 0;
        FILE *mem = open_memstream(&report, &report_len);
        if (mem != NULL) {
            uf_doctor_print(mem, d);
            fclose(mem);
        }
        uf_strbuf line = {0}, json = {0};
        uf_trace_describe(&line, &f);
        uf_doctor_json(&json, d);
        char why[512] = "";
        if (fuzz_doctor_oracle(&f, d, report, json.data, why, sizeof why) != 0 ||
            (line.data != NULL && check_text(line.data, &f.t, why, sizeof why) != 0)) {
            snprintf(err, errlen, "%s", why);
            rc = -2;
        }
        free(report);
        free(line.data);
        free(json.data);
    }
    free(d);
    uf_trace_free(&f);
    return rc;
}

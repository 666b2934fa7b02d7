/* The harness's report side (harness_run.h): the claims (expect.h) checked on the run's
 * table, the table and teaching summary printed, and the metadata written with the results. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness_run.h"
#include "proc_maps.h"
#include "stats.h"

/* ---- expectations --------------------------------------------------------------------- */

/* The scenario's declarations as the claims engine (expect.h) sees them. */
typedef struct claims_decl {
    const char *variants[UF_MAX_VARIANTS];
    const char *extras[UF_MAX_EXTRA];
    uf_claims_axis axes[UF_MAX_AXES];
    uf_claims_decl decl;
} claims_decl;

/* r: the values each axis ran; NULL: the values declared for the mode (the dry check). */
static void make_decl(const uf_scenario *s, int quick, const run *r, claims_decl *d)
{
    for (int v = 0; v < s->n_variants && v < UF_MAX_VARIANTS; v++)
        d->variants[v] = s->variants[v].name;
    for (int e = 0; e < s->n_extras && e < UF_MAX_EXTRA; e++)
        d->extras[e] = s->extras[e].name;
    for (int a = 0; a < s->n_axes && a < UF_MAX_AXES; a++) {
        uf_claims_axis *ca = &d->axes[a];
        ca->name = s->axes[a].name;
        ca->default_value = s->axes[a].default_value;
        if (r) {
            ca->values = r->axis_values[a];
            ca->n_values = r->axis_counts[a];
        } else {
            declared_values(&s->axes[a], quick, &ca->values, &ca->n_values);
        }
        declared_values(&s->axes[a], 0, &ca->full_values, &ca->n_full_values);
    }
    d->decl = (uf_claims_decl){.variants = d->variants, .n_variants = s->n_variants,
                               .axes = d->axes, .n_axes = s->n_axes,
                               .extras = d->extras, .n_extras = s->n_extras};
}

/* Print the programming errors the engine found; returns how many. */
static int claims_errors(const uf_scenario *s, const uf_expectations *ex, const char *mode)
{
    int n = uf_claims_n_errors(ex);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "%s: programming error in the claims (%s run): %s\n", s->name, mode,
                uf_claims_error(ex, i));
    return n;
}

/* The scenario's claims on a dry report of the points one mode declares: every variant,
 * metric and point they name must exist. Returns the number of errors (printed). */
static int check_claims_mode(const uf_scenario *s, int quick, int verbose)
{
    const char *mode = quick ? "--quick" : "full";
    claims_decl d;
    make_decl(s, quick, NULL, &d);
    uf_run_facts facts = {.quick = quick};
    uf_expectations *ex = uf_claims_new(&d.decl, NULL, &facts);
    if (!ex) {
        fprintf(stderr, "%s: the claims check (%s run) has no memory or too many points\n",
                s->name, mode);
        return 1;
    }
    s->expect(uf_claims_report(ex), ex);
    uf_claims_end(ex);
    int errors = claims_errors(s, ex, mode);
    if (!errors && verbose)
        fprintf(stdout, "[%s] %d claims (%s run): every name they use exists\n", s->name,
                uf_claims_count(ex), mode);
    uf_claims_free(ex);
    return errors;
}

/* Before any GPU work: UF_OK, or UF_ERR when a claim names something that does not exist.
 * both: the full and the --quick declarations (--check-claims); else the run's mode. */
int uf_h_check_claims(const uf_scenario *s, int quick, int both)
{
    if (!s->expect)
        return UF_OK;
    int errors = check_claims_mode(s, quick, both);
    if (both)
        errors += check_claims_mode(s, !quick, both);
    return errors ? UF_ERR : UF_OK;
}

static void set_pass(uf_run_facts *f, uf_source src, uf_pass_state state, const char *reason)
{
    f->state[src] = state;
    snprintf(f->reason[src], sizeof f->reason[src], "%s", reason);
}

/* What became of each pass in this run: why an empty metric is empty. */
static void claims_facts(const run *r, uf_run_facts *f)
{
    memset(f, 0, sizeof *f);
    f->quick = r->opt.quick;
    if (!r->opt.trace_pass)
        set_pass(f, UF_SRC_TRACE, UF_PASS_OFF, "trace pass off (--no-trace)");
    else if (!r->trace_ok)
        set_pass(f, UF_SRC_TRACE, UF_PASS_FAILED, r->trace_note);
    if (!r->opt.counters)
        set_pass(f, UF_SRC_COUNTERS, UF_PASS_OFF, "counters off (--no-counters)");
    else if (r->counters_denied)
        set_pass(f, UF_SRC_COUNTERS, UF_PASS_DENIED, r->pm_note);
    else if (!r->pm)
        set_pass(f, UF_SRC_COUNTERS, UF_PASS_FAILED, r->pm_note);
    if (!r->nvml)
        set_pass(f, UF_SRC_NVML, UF_PASS_FAILED, r->nvml_note);
    if (r->ceilings_note[0])
        set_pass(f, UF_SRC_CEILINGS, UF_PASS_FAILED, r->ceilings_note);
}

/* Run the scenario's claims on the measured table and record each verdict in the results'
 * metadata (claim.N). NULL when out of memory. */
uf_expectations *uf_h_evaluate_claims(run *r)
{
    claims_decl d;
    uf_run_facts facts;
    make_decl(r->s, r->opt.quick, r, &d);
    claims_facts(r, &facts);
    uf_expectations *ex = uf_claims_new(&d.decl, &r->table, &facts);
    if (!ex)
        return NULL;
    r->s->expect(uf_claims_report(ex), ex);
    uf_claims_end(ex);
    for (int i = 0; i < uf_claims_count(ex); i++) {
        char key[UF_NAME_LEN], line[UF_META_VALUE_LEN];
        snprintf(key, sizeof key, "claim.%d", i + 1);
        uf_claim_line(uf_claims_at(ex, i), line, sizeof line);
        uf_meta_set(&r->table.meta, key, "%s", line);
    }
    return ex;
}

/* Print the claims and return the exit code they make: UF_ERR for a name that does not exist
 * (a branch the dry check did not take), else the engine's verdict. */
int uf_h_claims_verdict(const run *r, const uf_expectations *ex)
{
    int required = gpu_required();
    uf_claims_print(stdout, ex, required);
    if (claims_errors(r->s, ex, r->opt.quick ? "--quick" : "full"))
        return UF_ERR;
    return uf_claims_exit_code(uf_claims_tally_of(ex), required);
}

/* ---- output ----------------------------------------------------------------------------- */

static void print_value(double v, int width, int decimals)
{
    if (isnan(v))
        printf(" %*s", width, "-");
    else
        printf(" %*.*f", width, decimals, v);
}

void uf_h_print_table(const run *r)
{
    /* the columns, the width their values need and their decimals; label, unit and meaning
     * are the metric table's */
    static const struct { const char *metric; int width, decimals; } shown[] = {
        {"step_ms", 10, 4},      {"spread_pct", 7, 1},        {"busy_pct", 6, 1},
        {"nvml_util_pct", 6, 1}, {"sm_clock_mhz", 6, 0},      {"power_w", 5, 0},
        {"sm_active_pct", 6, 1}, {"tensor_active_pct", 7, 1}, {"dram_pct", 6, 1},
        {"launch_us", 8, 2},     {"idle_host_pct", 6, 1},
        {"verified", 5, -1},     /* yes, WRONG or n/a */
    };
    enum { N_SHOWN = sizeof shown / sizeof shown[0] };
    const uf_metric_desc *desc[N_SHOWN];
    int width[N_SHOWN];
    const uf_table *t = &r->table;
    printf("\n# %s — %s\n", r->s->name, r->s->title);
    for (int m = 0; m < N_SHOWN; m++) {
        desc[m] = uf_metric_find(shown[m].metric);
        int label_len = (int)strlen(desc[m]->label);
        width[m] = label_len > shown[m].width ? label_len : shown[m].width;
        printf("# %s: %s\n", desc[m]->label, desc[m]->hint);
    }
    printf("%-14s", "variant");     /* the labels, and under them the units */
    for (int a = 0; a < t->n_axes; a++)
        printf(" %10s", t->axis_names[a]);
    for (int m = 0; m < N_SHOWN; m++)
        printf(" %*s", width[m], desc[m]->label);
    printf("\n%-14s", "");
    for (int a = 0; a < t->n_axes; a++)
        printf(" %10s", "");
    for (int m = 0; m < N_SHOWN; m++)
        printf(" %*s", width[m], uf_metric_unit_shown(desc[m]));
    printf("\n");
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *row = &t->rows[i];
        printf("%-14s", row->variant);
        for (int a = 0; a < t->n_axes; a++) {
            char num[32];
            format_number(row->axis[a], num, sizeof num);
            printf(" %10s", num);
        }
        for (int m = 0; m < N_SHOWN - 1; m++)
            print_value(uf_table_value(t, row, shown[m].metric), width[m], shown[m].decimals);
        printf(" %*s\n", width[N_SHOWN - 1],
               isnan(row->verified) ? "n/a" : row->verified == 1 ? "yes" : "WRONG");
    }
    for (int e = 0; e < t->n_extra; e++) {
        printf("# %s (%s):", t->extra_names[e], t->extra_units[e]);
        for (int i = 0; i < t->n_rows; i++) {
            double v = t->rows[i].extra[e];
            if (isnan(v))
                printf(" %s=-", t->rows[i].variant);
            else
                printf(" %s=%.4g", t->rows[i].variant, v);
        }
        printf("\n");
    }
}

/* On several GPUs: each row's per-GPU figures, one line per GPU (the results' rank lines). */
void uf_h_print_ranks(const run *r)
{
    static const struct { const char *metric; int decimals; } shown[] = {
        {"busy_pct", 1},      {"comm_exposed_ms", 3}, {"sm_clock_mhz", 0}, {"power_w", 0},
        {"sm_active_pct", 1}, {"nvml_util_pct", 1},
    };
    const uf_table *t = &r->table;
    int header = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *row = &t->rows[i];
        char where[200];
        if (row->n_ranks == 0)
            continue;
        if (!header++) {
            printf("\n# per GPU (trace, counters, NVML of each rank; the row above is rank 0):\n");
            printf("%-14s %-40s %4s", "variant", "point", "rank");
            for (size_t m = 0; m < sizeof shown / sizeof shown[0]; m++) {
                char heading[2 * UF_NAME_LEN];
                uf_metric_heading(uf_metric_find(shown[m].metric), heading, sizeof heading);
                printf(" %15s", heading);
            }
            printf("\n");
        }
        point_label(r, row->axis, where, sizeof where);
        for (int k = 0; k < row->n_ranks; k++) {
            printf("%-14s %-40s %4d", row->variant, where, k);
            for (size_t m = 0; m < sizeof shown / sizeof shown[0]; m++)
                print_value(uf_row_rank_value(row, k, shown[m].metric), 15, shown[m].decimals);
            printf("\n");
        }
    }
}

/* One line per metric that moved between the broken variant and each fixed one, at every
 * point: what a reader should look at. */
void uf_h_print_lesson(const run *r)
{
    /* the metrics and their significant digits; label and unit are the metric table's */
    static const struct { const char *metric; int digits; } shown[] = {
        {"step_ms", 3},       {"busy_pct", 3},          {"nvml_util_pct", 3},
        {"sm_clock_mhz", 4},  {"power_w", 4},           {"sm_active_pct", 3},
        {"tensor_active_pct", 3}, {"dram_pct", 3},      {"idle_host_pct", 3},
        {"tflops_useful", 3}, {"gbs", 3},
    };
    const uf_table *t = &r->table;
    printf("\n## What happened\n%s\n", r->s->failure);
    printf("\n## The fix\n%s\n", r->s->fix);
    printf("\n## What the numbers show\n");
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *broken = &t->rows[i];
        if (strcmp(broken->role, "broken") != 0)
            continue;
        for (int j = 0; j < t->n_rows; j++) {
            const uf_row *fixed = &t->rows[j];
            if (strcmp(fixed->role, "fixed") != 0 ||
                memcmp(fixed->axis, broken->axis, sizeof fixed->axis) != 0 ||
                isnan(broken->step_ms) || isnan(fixed->step_ms))
                continue;
            char where[200];
            point_label(r, broken->axis, where, sizeof where);
            printf("- %s → %s @ %s:", broken->variant, fixed->variant, where);
            for (size_t m = 0; m < sizeof shown / sizeof shown[0]; m++) {
                double a = uf_table_value(t, broken, shown[m].metric);
                double b = uf_table_value(t, fixed, shown[m].metric);
                if (isnan(a) || isnan(b))
                    continue;
                const uf_metric_desc *desc = uf_metric_find(shown[m].metric);
                const char *unit = uf_metric_unit_shown(desc);
                printf(" %s %.*g→%.*g%s%s", desc->label, shown[m].digits, a, shown[m].digits, b,
                       unit[0] ? " " : "", unit);
                if (strcmp(shown[m].metric, "step_ms") == 0 && b > 0)
                    printf(" (%.2f× %s)", a > b ? a / b : b / a, a > b ? "faster" : "slower");
                printf(";");
            }
            if (broken->verified != 1 || fixed->verified != 1)
                printf(" NOT VERIFIED: no speed-up is claimed");
            printf("\n");
        }
    }
}

/* ---- metadata --------------------------------------------------------------------------- */

static void lib_version(const char *lib, const char *symbol, int kind, char *out, size_t len)
{
    snprintf(out, len, "unavailable");
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    void *fn = dlsym(h, symbol);
    if (fn && kind == 0) {            /* ncclGetVersion(int*) */
        int v = 0;
        if (((int (*)(int *))fn)(&v) == 0)
            snprintf(out, len, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    } else if (fn && kind == 1) {     /* cublasGetProperty(type, int*) */
        int major = 0, minor = 0, patch = 0;
        int (*get)(int, int *) = (int (*)(int, int *))fn;
        if (get(0, &major) == 0 && get(1, &minor) == 0 && get(2, &patch) == 0)
            snprintf(out, len, "%d.%d.%d", major, minor, patch);
    }
    dlclose(h);
}

/* What every derived figure was computed with: the step statistic, and the value of every
 * ceiling measured (pct_of_gemm, pct_of_copy and the scenario's own shares read them), with
 * the ceilings file's git and time, so that a reader recomputes a share from this file alone. */
static void derived_meta(const run *r, uf_meta *m)
{
    uf_meta_set(m, "step_stat", "%s", step_stat_name(r->s->step_stat));
    for (int i = 0; i < uf_n_ceiling_descs; i++) {
        double v = *(const double *)((const char *)&r->ceilings + uf_ceiling_descs[i].offset);
        char key[UF_NAME_LEN];
        if (isnan(v))
            continue;
        snprintf(key, sizeof key, "ceiling.%.48s", uf_ceiling_descs[i].name);
        uf_meta_set(m, key, "%.10g", v);
    }
    if (r->ceilings_git[0])
        uf_meta_set(m, "ceilings.git", "%s", r->ceilings_git);
    if (r->ceilings_utc[0])
        uf_meta_set(m, "ceilings.utc", "%s", r->ceilings_utc);
}

/* Whether libcupti was ever mapped into the process (/proc/self/maps, whoever loaded it) and
 * when: after the timing passes, as the harness loads it, or already during them. The CUPTI
 * version only where the harness loaded it; else empty, and cupti_loaded says why not. */
void uf_h_cupti_meta(run *r)
{
    uf_meta *m = &r->table.meta;
    char path[UF_REASON_LEN], why[2 * UF_REASON_LEN] = "";
    int mapped = uf_library_mapped("libcupti.so", path, sizeof path);
    uint32_t version = uf_cupti_version();
    if (mapped == 1 && r->cupti_in_timing == 1)
        uf_meta_set(m, "cupti_loaded", "yes, already during the timing passes (%s)",
                    r->cupti_in_timing_path);
    else if (mapped == 1)
        uf_meta_set(m, "cupti_loaded", "yes, after the timing passes (%s)", path);
    else if (mapped < 0)
        uf_meta_set(m, "cupti_loaded", "unknown (%s)", path);
    else {
        note_append(why, sizeof why, r->trace_note);
        note_append(why, sizeof why, r->pm_note);
        uf_meta_set(m, "cupti_loaded", "no (%s)", why[0] ? why : "no CUPTI pass ran");
    }
    if (version)
        uf_meta_set(m, "cupti_api", "%u", version);
    else
        uf_meta_set(m, "cupti_api", "%s", "");
}

void uf_h_counters_meta(run *r)
{
    uf_meta_set(&r->table.meta, "counters", "%s",
                r->pm ? "CUPTI PM sampling, 1 ms interval" : r->pm_note);
}

void uf_h_fill_meta(run *r, int argc, char **argv, const struct cudaDeviceProp *prop)
{
    uf_meta *m = &r->table.meta;
    char cmd[UF_REASON_LEN] = "";
    for (int i = 0; i < argc; i++) {
        size_t used = strlen(cmd);
        snprintf(cmd + used, sizeof cmd - used, "%s%s", i ? " " : "", argv[i]);
    }
    uf_meta_set(m, "scenario", "%s", r->s->name);
    uf_meta_set(m, "title", "%s", r->s->title);
    uf_meta_set(m, "failure", "%s", r->s->failure);
    uf_meta_set(m, "fix", "%s", r->s->fix);
    uf_meta_set(m, "git", "%s", uf_git_describe);
    uf_meta_set(m, "command", "%s", cmd);
    uf_meta_set(m, "gpu", "%s", prop->name);
    uf_meta_set(m, "gpus_used", "%d", r->ctx.n_gpus);
    uf_meta_set(m, "sm_count", "%d", prop->multiProcessorCount);
    uf_meta_set(m, "compute_capability", "%d.%d", prop->major, prop->minor);
    uf_meta_set(m, "memory_bytes", "%zu", prop->totalGlobalMem);
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    char drv[96] = "";
    double sm_mhz = NAN, mem_mhz = NAN, power_w = NAN;
    if (r->nvml)
        uf_nvml_facts(r->nvml, drv, sizeof drv, &sm_mhz, &mem_mhz, &power_w);
    uf_meta_set(m, "driver", "%s (CUDA %d.%d)", drv[0] ? drv : "unknown", driver / 1000,
                (driver % 1000) / 10);
    uf_meta_set(m, "cuda_runtime", "%d.%d", runtime / 1000, (runtime % 1000) / 10);
    char ver[64];
    lib_version("libcublas.so.13", "cublasGetProperty", 1, ver, sizeof ver);
    uf_meta_set(m, "cublas", "%s", ver);
    lib_version("libnccl.so.2", "ncclGetVersion", 0, ver, sizeof ver);
    uf_meta_set(m, "nccl", "%s", ver);
    uf_h_cupti_meta(r);              /* the keys' place; their values at the end of the run */
    uf_meta_set(m, "clocks_mhz", "sm %.0f, memory %.0f (at start)", sm_mhz, mem_mhz);
    uf_meta_set(m, "power_limit_w", "%.0f", power_w);
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    uf_meta_set(m, "utc", "%s", stamp);
    uf_meta_set(m, "mode", "%s", r->opt.quick ? "quick" : "full");
    uf_meta_set(m, "repeat", "%d", r->repeat);
    uf_meta_set(m, "warmup", "%d", r->warmup.steps);
    uf_meta_set(m, "warmup_min_ms", "%.0f%s%s", r->warmup.min_ms,
                r->warmup.off ? "; the scenario's least time is off: " : "",
                r->warmup.off ? r->warmup.off : "");
    uf_meta_set(m, "seed", "%llu", (unsigned long long)r->opt.seed);
    for (int a = 0; a < r->s->n_axes; a++) {
        char key[UF_NAME_LEN];
        snprintf(key, sizeof key, "default.%.48s", r->s->axes[a].name);
        uf_meta_set(m, key, "%.10g", r->s->axes[a].default_value);
    }
    uf_meta_set(m, "timing", "CUDA events between consecutive steps, >= %d ms per variant",
                r->opt.quick ? TIMING_MIN_MS_QUICK : TIMING_MIN_MS_FULL);
    uf_h_counters_meta(r);           /* the key's place; its value once PM sampling was opened */
    uf_meta_set(m, "ceilings", "%s", r->ceilings_note[0] ? r->ceilings_note : "ceilings.csv");
    derived_meta(r, m);
}

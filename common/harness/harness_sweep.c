/* The sweep and its cells (harness_run.h): every point of the sweep, and at each the selected
 * variants, in two phases: first every cell's timing pass (with verify and describe), then,
 * once the CUPTI instruments are open, every cell's trace and counters passes on the same
 * inputs. A cell is one variant at one point; its row of the results is filled by both. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "instruments.h"
#include "harness_run.h"
#include "proc_maps.h"

/* ---- the sweep ------------------------------------------------------------------------ */

void uf_h_build_sweep(run *r)
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

/* ---- the cells ------------------------------------------------------------------------ */

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
    double elapsed = uf_mono_s() - r->started_s;
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
    /* A result with values that are not finite has an infinite error (verify.h): the file
     * leaves it empty, with the reason in skip_reason below, since a results file holds finite
     * numbers only (bounds.h) and `inf` would make the run's own file unreadable. */
    row->max_rel_err = isfinite(err) ? err : NAN;
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

/* ---- the two phases ------------------------------------------------------------------- */

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
            return src == UF_SKIP ? uf_h_skip(r->s->name, r->ctx.reason) : src;
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
int uf_h_sweep_all(run *r)
{
    r->cells_total = 2 * r->n_points * r->n_selected;
    r->started_s = uf_mono_s();
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

/* The expectation engine (see expect.h): the `where` grammar, point and metric lookup, claims
 * and their verdicts, the dry report that checks a claim list's names, and the run's verdict.
 *
 * Why an n/a is what it is: every uf_value that returns an empty value records a cause (the
 * row was not run or not measured, or the metric's source was switched off, not permitted,
 * or unavailable), and the next claim made collects the causes recorded since the previous
 * one. A NaN claim is legitimately n/a only when every cause is legitimate. */
#include "expect.h"
#include "options.h"
#include "strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_CLAIMS = 64,
    MAX_CAUSES = 16,        /* per claim */
    MAX_MISSES = 32,        /* rows looked up and not found, over the evaluation */
    MAX_ERRORS = 32,
    MAX_DRY_ROWS = 1 << 16,
    CAUSE_LEN = 512
};

/* Where each fixed column comes from. tests/unit/test_expect.c checks that every uf_metrics
 * column is listed here, so a new column cannot be judged without one. */
static const struct { const char *metric; uf_source source; } metric_sources[] = {
    {"step_ms", UF_SRC_TIMING}, {"step_ms_min", UF_SRC_TIMING}, {"step_ms_max", UF_SRC_TIMING},
    {"step_ms_mean", UF_SRC_TIMING},
    {"spread_pct", UF_SRC_TIMING}, {"steps_timed", UF_SRC_TIMING},
    {"verified", UF_SRC_TIMING}, {"max_rel_err", UF_SRC_TIMING},
    {"trace_step_ms", UF_SRC_TRACE}, {"trace_overhead", UF_SRC_TRACE},
    {"busy_pct", UF_SRC_TRACE}, {"kernels_per_step", UF_SRC_TRACE},
    {"kernel_us_mean", UF_SRC_TRACE}, {"launch_us", UF_SRC_TRACE},
    {"idle_host_pct", UF_SRC_TRACE}, {"idle_other_pct", UF_SRC_TRACE},
    {"comm_overlap_pct", UF_SRC_TRACE}, {"comm_exposed_ms", UF_SRC_TRACE},
    {"comm_sm_pct", UF_SRC_TRACE}, {"copy_overlap_pct", UF_SRC_TRACE},
    {"syncs_per_step", UF_SRC_TRACE}, {"stream_syncs_per_step", UF_SRC_TRACE},
    {"context_syncs_per_step", UF_SRC_TRACE}, {"event_syncs_per_step", UF_SRC_TRACE},
    {"pageable_copies_per_step", UF_SRC_TRACE}, {"drains_per_step", UF_SRC_TRACE},
    {"sync_gap_us", UF_SRC_TRACE},
    {"sm_active_pct", UF_SRC_COUNTERS}, {"occupancy_pct", UF_SRC_COUNTERS},
    {"tensor_active_pct", UF_SRC_COUNTERS}, {"dram_pct", UF_SRC_COUNTERS},
    {"gpm_sm_active_pct", UF_SRC_COUNTERS}, {"gpm_occupancy_pct", UF_SRC_COUNTERS},
    {"gpm_tensor_active_pct", UF_SRC_COUNTERS}, {"gpm_dram_pct", UF_SRC_COUNTERS},
    {"gpm_agree_pts", UF_SRC_COUNTERS},
    {"nvml_util_pct", UF_SRC_NVML}, {"sm_clock_mhz", UF_SRC_NVML},
    {"sm_clock_min_mhz", UF_SRC_NVML}, {"power_w", UF_SRC_NVML},
    {"useful_flops", UF_SRC_SCENARIO}, {"executed_flops", UF_SRC_SCENARIO},
    {"tflops_useful", UF_SRC_SCENARIO}, {"min_bytes", UF_SRC_SCENARIO},
    {"gbs", UF_SRC_SCENARIO}, {"peak_mem_bytes", UF_SRC_SCENARIO},
    {"pct_of_gemm", UF_SRC_CEILINGS}, {"pct_of_copy", UF_SRC_CEILINGS},
};

typedef struct cause {
    int legit;
    char text[CAUSE_LEN];
} cause;

struct uf_report {
    uf_expectations *ex;        /* lookups are recorded there */
};

struct uf_expectations {
    uf_report rep;
    uf_claims_decl decl;        /* its arrays point to the copies below */
    const char *variants[UF_MAX_VARIANTS];
    const char *extras[UF_MAX_EXTRA];
    uf_claims_axis axes[UF_MAX_AXES];
    uf_where_axis where_axes[UF_MAX_AXES];
    uf_run_facts facts;
    const uf_table *table;      /* the measured one, or &dry */
    uf_table dry;
    int checking;
    int n_claims;
    uf_claim claims[MAX_CLAIMS];
    /* recorded since the previous claim */
    int n_causes;
    cause causes[MAX_CAUSES];
    int full_run;
    char full_run_why[UF_REASON_LEN];
    int misses_since;
    /* over the whole evaluation */
    int n_misses;
    char misses[MAX_MISSES][CAUSE_LEN];
    int n_errors;
    char errors[MAX_ERRORS][UF_REASON_LEN];
};

/* ---- the `where` grammar --------------------------------------------------------------- */

int uf_axis_value_same(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static void axis_names_text(const uf_where_axis *axes, int n_axes, char *out, size_t len)
{
    out[0] = '\0';
    for (int a = 0; a < n_axes; a++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", a ? ", " : "", axes[a].name);
    }
    if (n_axes == 0)
        snprintf(out, len, "none");
}

static int axis_index(const uf_where_axis *axes, int n_axes, const char *name)
{
    for (int a = 0; a < n_axes; a++)
        if (strcmp(axes[a].name, name) == 0)
            return a;
    return -1;
}

/* The largest (want_max) or smallest of values; values is not empty. */
static double extreme(const double *values, int n, int want_max)
{
    double best = values[0];
    for (int k = 1; k < n; k++)
        if (want_max ? values[k] > best : values[k] < best)
            best = values[k];
    return best;
}

/* One "AXIS=VALUE" item into point/how. */
static int parse_item(const uf_where_axis *axes, int n_axes, char *item, double *point,
                      uf_where_how *how, int *named, char *err, size_t errlen)
{
    char *eq = strchr(item, '=');
    if (!eq || eq == item)
        return uf_set_err(err, errlen, "\"%s\" is not AXIS=VALUE", item);
    *eq = '\0';
    const char *value = eq + 1;
    int a = axis_index(axes, n_axes, item);
    if (a < 0) {
        char names[256];
        axis_names_text(axes, n_axes, names, sizeof names);
        return uf_set_err(err, errlen, "unknown axis \"%s\" (axes: %s)", item, names);
    }
    if (named[a])
        return uf_set_err(err, errlen, "axis %s named twice", item);
    named[a] = 1;
    if (strcmp(value, "max") == 0 || strcmp(value, "min") == 0) {
        if (axes[a].n_values <= 0 || !axes[a].values)
            return uf_set_err(err, errlen, "%s=%s: the axis has no values", item, value);
        point[a] = extreme(axes[a].values, axes[a].n_values, value[1] == 'a');
        how[a] = UF_WHERE_EXTREME;
        return 0;
    }
    if (uf_parse_number(value, &point[a]) != 0)
        return uf_set_err(err, errlen,
                          "%s=%s: not a value (a number such as 4096, 4K, 64M, 1G, or max, min)",
                          item, value);
    how[a] = UF_WHERE_NUMBER;
    return 0;
}

int uf_where_parse(const uf_where_axis *axes, int n_axes, const char *where, double *point,
                   uf_where_how *how, char *err, size_t errlen)
{
    uf_where_how local_how[UF_MAX_AXES];
    int named[UF_MAX_AXES] = {0};
    if (n_axes < 0 || n_axes > UF_MAX_AXES)
        return uf_set_err(err, errlen, "%d axes: at most %d", n_axes, UF_MAX_AXES);
    if (!how)
        how = local_how;
    for (int a = 0; a < n_axes; a++) {
        point[a] = axes[a].default_value;
        how[a] = UF_WHERE_DEFAULT;
    }
    if (!where || !*where)
        return 0;
    for (const char *p = where;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[128];
        if (len == 0)
            return uf_set_err(err, errlen, "point \"%s\": an empty item", where);
        if (len >= sizeof item)
            return uf_set_err(err, errlen, "point \"%s\": an item is too long", where);
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_item(axes, n_axes, item, point, how, named, err, errlen) != 0)
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* ---- sources of metrics ---------------------------------------------------------------- */

int uf_metric_source(const char *metric)
{
    for (size_t i = 0; i < sizeof metric_sources / sizeof metric_sources[0]; i++)
        if (strcmp(metric_sources[i].metric, metric) == 0)
            return (int)metric_sources[i].source;
    return -1;
}

/* The source of a column this report has (fixed, extra or axis); -1 when it has none. */
static int column_source(const uf_expectations *ex, const char *metric)
{
    for (int i = 0; i < uf_n_metrics; i++)
        if (strcmp(uf_metrics[i].name, metric) == 0) {
            int s = uf_metric_source(metric);
            return s >= 0 ? s : UF_SRC_SCENARIO;
        }
    for (int e = 0; e < ex->decl.n_extras; e++)
        if (strcmp(ex->decl.extras[e], metric) == 0)
            return UF_SRC_SCENARIO;
    for (int a = 0; a < ex->decl.n_axes; a++)
        if (strcmp(ex->decl.axes[a].name, metric) == 0)
            return UF_SRC_AXIS;
    return -1;
}

/* ---- recording what lookups found -------------------------------------------------------- */

static void add_error(uf_expectations *ex, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_error(uf_expectations *ex, const char *fmt, ...)
{
    if (ex->n_errors >= MAX_ERRORS)
        return;
    char *dst = ex->errors[ex->n_errors++];
    int used = snprintf(dst, UF_REASON_LEN, "claim %d: ", ex->n_claims + 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst + used, UF_REASON_LEN - (size_t)used, fmt, ap);
    va_end(ap);
}

static void add_cause(uf_expectations *ex, int legit, const char *text)
{
    for (int i = 0; i < ex->n_causes; i++)
        if (strcmp(ex->causes[i].text, text) == 0)
            return;
    if (ex->n_causes >= MAX_CAUSES)
        return;
    cause *c = &ex->causes[ex->n_causes++];
    c->legit = legit;
    snprintf(c->text, sizeof c->text, "%s", text);
}

static void add_miss(uf_expectations *ex, const char *text)
{
    for (int i = ex->misses_since; i < ex->n_misses; i++)
        if (strcmp(ex->misses[i], text) == 0)
            return;
    if (ex->n_misses == MAX_MISSES) {      /* full: forget the oldest */
        memmove(ex->misses[0], ex->misses[1], (MAX_MISSES - 1) * sizeof ex->misses[0]);
        ex->n_misses--;
        if (ex->misses_since > 0)
            ex->misses_since--;
    }
    snprintf(ex->misses[ex->n_misses++], CAUSE_LEN, "%s", text);
}

/* "ops=5,bits=32" for a row. */
static void row_point(const uf_expectations *ex, const uf_row *row, char *out, size_t len)
{
    out[0] = '\0';
    for (int a = 0; a < ex->decl.n_axes; a++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s=%.10g", a ? "," : "", ex->decl.axes[a].name,
                 row->axis[a]);
    }
}

/* A NULL row: the rows looked up and not found since the previous claim (else all so far). */
static void missing_rows_text(const uf_expectations *ex, char *out, size_t len)
{
    int from = ex->misses_since < ex->n_misses ? ex->misses_since : 0;
    snprintf(out, len, "a row it reads was not run");
    for (int i = from; i < ex->n_misses; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", i == from ? ": " : "; ", ex->misses[i]);
    }
}

/* Why `metric` of `row` is empty, as a cause of the next claim. */
static void note_empty(uf_expectations *ex, const uf_row *row, const char *metric, int src)
{
    char text[CAUSE_LEN], where[96];
    int legit = 0;
    if (!row) {
        missing_rows_text(ex, text, sizeof text);
        add_cause(ex, 0, text);
        return;
    }
    row_point(ex, row, where, sizeof where);
    const char *skip = row->skip_reason[0] ? row->skip_reason : "no reason recorded";
    if (src != UF_SRC_AXIS && isnan(row->step_ms)) {
        snprintf(text, sizeof text, "%s @ %s was not measured: %s", row->variant, where, skip);
    } else if (ex->facts.state[src] == UF_PASS_OFF || ex->facts.state[src] == UF_PASS_DENIED) {
        legit = 1;
        snprintf(text, sizeof text, "%s", ex->facts.reason[src]);
    } else if (ex->facts.state[src] == UF_PASS_FAILED) {
        snprintf(text, sizeof text, "%s: %s", metric, ex->facts.reason[src]);
    } else {
        snprintf(text, sizeof text, "%s of %s @ %s is empty: %s", metric, row->variant, where,
                 skip);
    }
    add_cause(ex, legit, text);
}

/* ---- the evaluation ---------------------------------------------------------------------- */

/* The dry table: every variant at every point of the axes' values, every metric empty. */
static int build_dry(uf_expectations *ex)
{
    const uf_claims_decl *d = &ex->decl;
    long n_points = 1;
    uf_table_init(&ex->dry, "");
    for (int a = 0; a < d->n_axes; a++) {
        if (uf_table_add_axis(&ex->dry, d->axes[a].name) != 0)
            return -1;
        n_points *= d->axes[a].n_values > 0 ? d->axes[a].n_values : 1;
    }
    for (int e = 0; e < d->n_extras; e++)
        if (uf_table_add_extra(&ex->dry, d->extras[e], "") != 0)
            return -1;
    if (n_points * d->n_variants > MAX_DRY_ROWS)
        return -1;
    for (int v = 0; v < d->n_variants; v++)
        for (long p = 0; p < n_points; p++) {
            uf_row *row = uf_table_append(&ex->dry);
            if (!row)
                return -1;
            snprintf(row->variant, sizeof row->variant, "%s", d->variants[v]);
            long rest = p;
            for (int a = d->n_axes - 1; a >= 0; a--) {
                const uf_claims_axis *ax = &d->axes[a];
                int n = ax->n_values > 0 ? ax->n_values : 1;
                row->axis[a] = ax->n_values > 0 ? ax->values[rest % n] : ax->default_value;
                rest /= n;
            }
        }
    return 0;
}

uf_expectations *uf_claims_new(const uf_claims_decl *decl, const uf_table *table,
                               const uf_run_facts *facts)
{
    if (decl->n_axes > UF_MAX_AXES || decl->n_extras > UF_MAX_EXTRA ||
        decl->n_variants > UF_MAX_VARIANTS)
        return NULL;
    uf_expectations *ex = calloc(1, sizeof *ex);
    if (!ex)
        return NULL;
    ex->rep.ex = ex;
    ex->decl = *decl;
    for (int v = 0; v < decl->n_variants; v++)
        ex->variants[v] = decl->variants[v];
    for (int e = 0; e < decl->n_extras; e++)
        ex->extras[e] = decl->extras[e];
    for (int a = 0; a < decl->n_axes; a++)
        ex->axes[a] = decl->axes[a];
    ex->decl.variants = ex->variants;
    ex->decl.extras = ex->extras;
    ex->decl.axes = ex->axes;
    ex->facts = *facts;
    for (int a = 0; a < decl->n_axes; a++)
        ex->where_axes[a] = (uf_where_axis){.name = decl->axes[a].name,
                                            .default_value = decl->axes[a].default_value,
                                            .values = decl->axes[a].values,
                                            .n_values = decl->axes[a].n_values};
    ex->checking = table == NULL;
    ex->table = table;
    if (ex->checking) {
        if (build_dry(ex) != 0) {
            uf_claims_free(ex);
            return NULL;
        }
        ex->table = &ex->dry;
    }
    return ex;
}

void uf_claims_free(uf_expectations *ex)
{
    if (!ex)
        return;
    if (ex->checking)
        uf_table_free(&ex->dry);
    free(ex);
}

const uf_report *uf_claims_report(const uf_expectations *ex)
{
    return &ex->rep;
}

int uf_claims_count(const uf_expectations *ex)
{
    return ex->n_claims;
}

const uf_claim *uf_claims_at(const uf_expectations *ex, int i)
{
    return i >= 0 && i < ex->n_claims ? &ex->claims[i] : NULL;
}

void uf_claims_end(uf_expectations *ex)
{
    if (ex->full_run)
        add_error(ex, "uf_expect_full_run(\"%.80s\") with no claim after it", ex->full_run_why);
    ex->full_run = 0;
}

int uf_claims_n_errors(const uf_expectations *ex)
{
    return ex->n_errors;
}

const char *uf_claims_error(const uf_expectations *ex, int i)
{
    return i >= 0 && i < ex->n_errors ? ex->errors[i] : NULL;
}

/* ---- lookups ------------------------------------------------------------------------------ */

static int known_variant(const uf_expectations *ex, const char *variant)
{
    for (int v = 0; v < ex->decl.n_variants; v++)
        if (strcmp(ex->decl.variants[v], variant) == 0)
            return 1;
    return 0;
}

static void values_text(const double *values, int n, char *out, size_t len)
{
    out[0] = '\0';
    for (int k = 0; k < n; k++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%.10g", k ? "," : "", values[k]);
    }
}

/* When checking: every value of the point that a claim names or defaults to must be one the
 * scenario declares for the mode checked (for a full-run claim: for a full run). */
static void check_declared(uf_expectations *ex, const char *variant, const char *where,
                           const double *point, const uf_where_how *how)
{
    for (int a = 0; a < ex->decl.n_axes; a++) {
        const uf_claims_axis *ax = &ex->decl.axes[a];
        const double *values = ex->full_run ? ax->full_values : ax->values;
        int n = ex->full_run ? ax->n_full_values : ax->n_values;
        int found = how[a] == UF_WHERE_EXTREME || n <= 0;
        for (int k = 0; k < n && !found; k++)
            found = uf_axis_value_same(values[k], point[a]);
        if (found)
            continue;
        char list[256];
        values_text(values, n, list, sizeof list);
        add_error(ex, "%s @ \"%s\": %s %s=%.10g is not a value a %s run has (%s: %s)", variant,
                  where ? where : "", how[a] == UF_WHERE_DEFAULT ? "the default" : "the point",
                  ax->name, point[a], ex->full_run || !ex->facts.quick ? "full" : "--quick",
                  ax->name, list);
    }
}

const uf_row *uf_find(const uf_report *rep, const char *variant, const char *where)
{
    uf_expectations *ex = rep->ex;
    double point[UF_MAX_AXES];
    uf_where_how how[UF_MAX_AXES];
    char err[UF_REASON_LEN], miss[CAUSE_LEN];
    if (!variant || !known_variant(ex, variant)) {
        add_error(ex, "unknown variant \"%s\"", variant ? variant : "(null)");
        snprintf(miss, sizeof miss, "unknown variant \"%s\"", variant ? variant : "(null)");
        add_miss(ex, miss);
        return NULL;
    }
    if (uf_where_parse(ex->where_axes, ex->decl.n_axes, where, point, how, err, sizeof err)) {
        add_error(ex, "%s @ \"%s\": %s", variant, where, err);
        snprintf(miss, sizeof miss, "bad point \"%s\"", where);
        add_miss(ex, miss);
        return NULL;
    }
    if (ex->checking)
        check_declared(ex, variant, where, point, how);
    const uf_table *t = ex->table;
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *row = &t->rows[i];
        int same = strcmp(row->variant, variant) == 0;
        for (int a = 0; a < ex->decl.n_axes && same; a++)
            same = uf_axis_value_same(row->axis[a], point[a]);
        if (same)
            return row;
    }
    snprintf(miss, sizeof miss, "%s @ %s", variant, where && *where ? where : "the defaults");
    add_miss(ex, miss);
    return NULL;
}

double uf_value(const uf_report *rep, const uf_row *row, const char *metric)
{
    uf_expectations *ex = rep->ex;
    int src = metric ? column_source(ex, metric) : -1;
    if (src < 0) {
        char text[CAUSE_LEN];
        add_error(ex, "unknown metric \"%s\" (not a column, scenario column or axis)",
                  metric ? metric : "(null)");
        snprintf(text, sizeof text, "unknown metric \"%s\"", metric ? metric : "(null)");
        add_cause(ex, 0, text);
        return NAN;
    }
    double v = row ? uf_table_value(ex->table, row, metric) : NAN;
    if (isnan(v))
        note_empty(ex, row, metric, src);
    return v;
}

int uf_axis_values(const uf_report *rep, const char *axis, const double **values)
{
    uf_expectations *ex = rep->ex;
    int a = axis ? axis_index(ex->where_axes, ex->decl.n_axes, axis) : -1;
    *values = NULL;
    if (a < 0) {
        add_error(ex, "unknown axis \"%s\"", axis ? axis : "(null)");
        return 0;
    }
    *values = ex->where_axes[a].values;
    return ex->where_axes[a].n_values;
}

/* ---- claims -------------------------------------------------------------------------------- */

static const char *cmp_text(uf_cmp cmp)
{
    switch (cmp) {
    case UF_LE: return "<=";
    case UF_GE: return ">=";
    case UF_LT: return "<";
    default: return ">";
    }
}

static int holds(double value, uf_cmp cmp, double bound)
{
    switch (cmp) {
    case UF_LE: return value <= bound;
    case UF_GE: return value >= bound;
    case UF_LT: return value < bound;
    default: return value > bound;
    }
}

/* An n/a claim's reason and legitimacy, from the causes recorded since the previous claim. */
static void explain_na(const uf_expectations *ex, uf_claim *c)
{
    c->legit = ex->n_causes > 0;
    c->reason[0] = '\0';
    for (int i = 0; i < ex->n_causes; i++) {
        /* through a local copy: c lies inside ex, and the compiler cannot tell the cause's
         * text from the claim's reason (-Wrestrict) */
        char part[sizeof c->reason];
        size_t used = strlen(c->reason);
        snprintf(part, sizeof part, "%s%s", i ? "; " : "", ex->causes[i].text);
        snprintf(c->reason + used, sizeof c->reason - used, "%s", part);
        c->legit &= ex->causes[i].legit;
    }
    if (ex->n_causes == 0)
        snprintf(c->reason, sizeof c->reason,
                 "the value is not a number though every metric it read was measured (a "
                 "condition of the scenario's, or inputs looked up before the previous claim)");
}

/* A claim was made: what was recorded for it does not carry over to the next. */
static void forget_pending(uf_expectations *ex)
{
    ex->n_causes = 0;
    ex->full_run = 0;
    ex->misses_since = ex->n_misses;
}

void uf_expect(uf_expectations *ex, const char *claim, double value, uf_cmp cmp, double bound)
{
    if (ex->n_claims >= MAX_CLAIMS) {
        add_error(ex, "more than %d claims", MAX_CLAIMS);
        forget_pending(ex);
        return;
    }
    uf_claim *c = &ex->claims[ex->n_claims++];
    memset(c, 0, sizeof *c);
    snprintf(c->text, sizeof c->text, "%s", claim ? claim : "");
    c->value = value;
    c->bound = bound;
    c->cmp = cmp;
    if (ex->full_run && ex->facts.quick) {
        c->verdict = UF_NA;
        c->legit = 1;
        snprintf(c->reason, sizeof c->reason, "needs a full run, this is --quick: %s",
                 ex->full_run_why);
    } else if (isnan(value)) {
        c->verdict = UF_NA;
        explain_na(ex, c);
    } else {
        c->verdict = holds(value, cmp, bound) ? UF_HELD : UF_FAILED;
    }
    forget_pending(ex);
}

void uf_expect_full_run(uf_expectations *ex, const char *why)
{
    ex->full_run = 1;
    snprintf(ex->full_run_why, sizeof ex->full_run_why, "%s", why ? why : "");
}

void uf_expect_metric(uf_expectations *ex, const uf_report *rep, const char *variant,
                      const char *where, const char *metric, uf_cmp cmp, double bound,
                      const char *why)
{
    char text[512];
    snprintf(text, sizeof text, "%s %s%s%s %s %g: %s", variant, metric, where ? " @ " : "",
             where ? where : "", cmp_text(cmp), bound, why);
    uf_expect(ex, text, uf_value(rep, uf_find(rep, variant, where), metric), cmp, bound);
}

void uf_expect_ratio(uf_expectations *ex, const uf_report *rep, const char *variant_a,
                     const char *variant_b, const char *where, const char *metric, uf_cmp cmp,
                     double bound, const char *why)
{
    char text[512];
    snprintf(text, sizeof text, "%s/%s %s%s%s %s %g: %s", variant_a, variant_b, metric,
             where ? " @ " : "", where ? where : "", cmp_text(cmp), bound, why);
    double a = uf_value(rep, uf_find(rep, variant_a, where), metric);
    double b = uf_value(rep, uf_find(rep, variant_b, where), metric);
    uf_expect(ex, text, a / b, cmp, bound);
}

/* ---- the verdict ----------------------------------------------------------------------------- */

uf_claims_tally uf_claims_tally_of(const uf_expectations *ex)
{
    uf_claims_tally t = {0, 0, 0, 0};
    for (int i = 0; i < ex->n_claims; i++) {
        const uf_claim *c = &ex->claims[i];
        t.held += c->verdict == UF_HELD;
        t.failed += c->verdict == UF_FAILED;
        t.na += c->verdict == UF_NA;
        t.na_legit += c->verdict == UF_NA && c->legit;
    }
    return t;
}

int uf_claims_exit_code(uf_claims_tally t, int require_gpu)
{
    if (t.failed > 0)
        return UF_UNMET;
    if (t.na > t.na_legit)
        return UF_UNMET;
    if (require_gpu && t.na > 0)
        return UF_UNMET;
    return UF_OK;
}

static const char *verdict_text(uf_claim_verdict v)
{
    return v == UF_HELD ? "held" : v == UF_FAILED ? "FAILED" : "n/a";
}

void uf_claim_line(const uf_claim *c, char *out, size_t len)
{
    if (c->verdict == UF_NA)
        snprintf(out, len, "[n/a] (%.240s; %s) %s", c->reason,
                 c->legit ? "legitimate" : "not legitimate", c->text);
    else
        snprintf(out, len, "[%s] (measured %.6g, bound %s %.6g) %s", verdict_text(c->verdict),
                 c->value, cmp_text(c->cmp), c->bound, c->text);
}

/* " CMP B" (after the value) into *cmp and *bound; the characters read, 0 when s does not
 * start so. */
static int parse_bound(const char *s, uf_cmp *cmp, double *bound)
{
    static const struct { const char *text; uf_cmp cmp; } cmps[] = {
        {"<= ", UF_LE}, {">= ", UF_GE}, {"< ", UF_LT}, {"> ", UF_GT}};
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++) {
        size_t n = strlen(cmps[i].text);
        if (strncmp(s, cmps[i].text, n) != 0)
            continue;
        char *end;
        double b = strtod(s + n, &end);
        if (end == s + n || isnan(b))
            return 0;
        *cmp = cmps[i].cmp;
        *bound = b;
        return (int)(end - s);
    }
    return 0;
}

/* An older line's bound: TEXT up to its first ": " ends in " CMP B" (uf_expect_metric's and
 * uf_expect_ratio's wording). */
static void bound_from_text(const char *text, uf_claim_read *out)
{
    const char *colon = strstr(text, ": ");
    if (!colon)
        return;
    for (const char *p = text; p < colon; p++) {
        uf_cmp cmp;
        double bound;
        int n = *p == ' ' ? parse_bound(p + 1, &cmp, &bound) : 0;
        if (n > 0 && p + 1 + n == colon) {
            out->cmp = cmp;
            out->bound = bound;
            return;
        }
    }
}

int uf_claim_parse(const char *line, uf_claim_read *out, char *err, size_t errlen)
{
    static const char *const verdicts[] = {"[held] (measured ", "[FAILED] (measured ", "[n/a] ("};
    memset(out, 0, sizeof *out);
    out->value = out->bound = NAN;
    int v = 0;
    while (v < 3 && strncmp(line, verdicts[v], strlen(verdicts[v])) != 0)
        v++;
    if (v == 3) {
        snprintf(err, errlen, "not a claim line (it starts neither \"[held] (measured \", "
                 "\"[FAILED] (measured \" nor \"[n/a] (\")");
        return -1;
    }
    const char *p = line + strlen(verdicts[v]);
    if (v == 2) {   /* the reason may hold parentheses: it ends at its legitimacy */
        const char *yes = strstr(p, "; legitimate) "), *no = strstr(p, "; not legitimate) ");
        if (!yes && !no) {
            snprintf(err, errlen, "n/a claim line without \"; legitimate) \" or \"; not "
                     "legitimate) \" after its reason");
            return -1;
        }
        out->verdict = UF_NA;
        out->legit = yes && (!no || yes < no);
        out->text = out->legit ? yes + strlen("; legitimate) ") : no + strlen("; not legitimate) ");
        return 0;
    }
    char *end;
    out->verdict = v == 0 ? UF_HELD : UF_FAILED;
    out->value = strtod(p, &end);
    if (end == p) {
        snprintf(err, errlen, "claim line without a number after \"measured \"");
        return -1;
    }
    p = end;
    if (strncmp(p, ", bound ", 8) == 0) {
        int n = parse_bound(p + 8, &out->cmp, &out->bound);
        if (n == 0) {
            snprintf(err, errlen, "claim line: \", bound \" not followed by <=, >=, < or > "
                     "and a number");
            return -1;
        }
        p += 8 + n;
    }
    if (strncmp(p, ") ", 2) != 0) {
        snprintf(err, errlen, "claim line: the measured value is not followed by \") \"");
        return -1;
    }
    out->text = p + 2;
    if (isnan(out->bound))
        bound_from_text(out->text, out);
    return 0;
}

void uf_claims_print(FILE *f, const uf_expectations *ex, int require_gpu)
{
    fprintf(f, "\n## Expectation\n");
    for (int i = 0; i < ex->n_claims; i++) {
        const uf_claim *c = &ex->claims[i];
        if (c->verdict == UF_NA)
            fprintf(f, "- [n/a] %s\n    not judged: %s (%s)\n", c->text, c->reason,
                    c->legit ? "a legitimate reason" : "NOT a legitimate reason");
        else
            fprintf(f, "- [%s] %s (measured %.4g)\n", verdict_text(c->verdict), c->text,
                    c->value);
    }
    uf_claims_tally t = uf_claims_tally_of(ex);
    fprintf(f, "%d held, %d FAILED, %d n/a (%d with a legitimate reason)\n", t.held, t.failed,
            t.na, t.na_legit);
    if (t.failed > 0)
        fprintf(f, "The expectation did not hold: exit 3.\n");
    else if (t.na > t.na_legit)
        fprintf(f, "%d claim(s) not judged without a legitimate reason: exit 3.\n",
                t.na - t.na_legit);
    else if (require_gpu && t.na > 0)
        fprintf(f, "UNDERFED_REQUIRE_GPU=1: every claim must be judged, %d were not: exit 3.\n",
                t.na);
    else if (t.na > 0)
        fprintf(f, "Every claim judged held; the n/a ones have legitimate reasons.\n");
}

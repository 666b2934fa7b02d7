/* The figures of one scenario each (plots/SCENARIO.gp): their data, and every fact about it
 * that the script needs (counts, defaults, ceilings), written by `underfed plotdata`
 * (plotdata_cmd.c) through the plot data writer (plotdata.h). A figure whose columns are absent
 * from the file still gets its files, with counts of 0: the script then says what is missing
 * instead of drawing nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plotfigs.h"

enum { GIB = 1073741824 };

/* The first of two axis names the file has, or NULL. */
static const char *axis_of(const uf_table *t, const char *name, const char *other)
{
    return tq_axis_index(t, name) >= 0 ? name : tq_axis_index(t, other) >= 0 ? other : NULL;
}

static void begin(pd_fig *f, const pd_source *s)
{
    pd_fig_begin(f, s->out, s->name, s->csv);
    pd_str(f, "gpu", s->gpu);
}

/* One metric of one variant at the default point; NaN when absent. */
static double metric_of(const pd_source *s, const double *point, const char *variant,
                        const char *metric)
{
    const uf_row *r = tq_row_at(s->t, variant, point);
    return r ? pd_metric(s->t, r, metric) : NAN;
}

/* allreduce_overlap: step time and exposed communication of `bucketed` against bucket_mib,
 * with `sequential` and the compute and all-reduce alone as reference levels. */
static int fig_buckets(const pd_source *s, const double *point)
{
    static const char *const cols[] = {"step_ms", "comm_exposed_ms"};
    int count[2] = {0, 0}, ax = tq_axis_index(s->t, "bucket_mib");
    pd_fig f;
    begin(&f, s);
    uf_strbuf *b = pd_dat(&f, "buck", "_buckets");
    if (ax >= 0 && tq_has_variant(s->t, "bucketed"))
        pd_points(b, s->t, ax, point, "bucketed", cols, 2, count);
    pd_int(&f, "nstep", count[0]);
    pd_int(&f, "nexp", count[1]);
    pd_num(&f, "seq_step", metric_of(s, point, "sequential", "step_ms"));
    pd_num(&f, "seq_exp", metric_of(s, point, "sequential", "comm_exposed_ms"));
    double compute = metric_of(s, point, "bucketed", "compute_ms");
    double comm = metric_of(s, point, "bucketed", "comm_ms");
    pd_num(&f, "compute", isnan(compute) ? metric_of(s, point, "sequential", "compute_ms")
                                         : compute);
    pd_num(&f, "comm", isnan(comm) ? metric_of(s, point, "sequential", "comm_ms") : comm);
    return pd_fig_commit(&f, "allreduce_overlap");
}

/* A point of the memory / step-time plane: x GiB, y ms, its label. */
typedef struct plane_point {
    double x, y;
    char label[UF_NAME_LEN + 8];
} plane_point;

/* x as `awk '{ print $2 / 1073741824 }'` printed it from the %.6g bytes: %.6g again. */
static double gib(double bytes)
{
    char text[32];
    snprintf(text, sizeof text, "%.6g", bytes / GIB);
    return strtod(text, NULL);
}

/* Each policy at the default point (every_k too unless its sweep is drawn): n points. */
static int policies(const pd_source *s, const double *point, const char *mem, int skip_every_k,
                    plane_point *p)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(s->t, names, UF_MAX_VARIANTS), k = 0;
    for (int v = 0; v < n; v++) {
        double m = metric_of(s, point, names[v], mem);
        double y = metric_of(s, point, names[v], "step_ms");
        if (isnan(m) || isnan(y) || (skip_every_k && strcmp(names[v], "every_k") == 0))
            continue;
        p[k] = (plane_point){.x = gib(m), .y = y};
        snprintf(p[k++].label, sizeof p->label, "%s", names[v]);
    }
    return k;
}

/* every_k at each k of the sweep along axis kax, the other axes at the default point. */
static int every_k(const pd_source *s, const double *point, int kax, const char *mem,
                   plane_point *p)
{
    const uf_row **rows = malloc((size_t)(s->t->n_rows + 1) * sizeof *rows);
    int n = rows ? tq_sweep_rows(s->t, "every_k", kax, point, rows) : 0, k = 0;
    for (int i = 0; i < n && k < UF_MAX_SWEEP; i++) {
        double m = pd_metric(s->t, rows[i], mem), y = pd_metric(s->t, rows[i], "step_ms");
        if (isnan(m) || isnan(y))
            continue;
        p[k] = (plane_point){.x = gib(m), .y = y};
        snprintf(p[k++].label, sizeof p->label, "k=%.10g", rows[i]->axis[kax]);
    }
    free(rows);
    return k;
}

static void put_plane(uf_strbuf *b, const plane_point *p, int n)
{
    for (int i = 0; i < n; i++)
        uf_sb_printf(b, "%.6g %.6g %s\n", p[i].x, p[i].y, p[i].label);
}

static int by_memory(const void *pa, const void *pb)
{
    const plane_point *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    return a->y < b->y ? -1 : a->y > b->y;
}

/* checkpoint_recompute: every policy on the memory / step-time plane, its Pareto front (in
 * order of memory, each point faster than every point using less). */
static int fig_pareto(const pd_source *s, const double *point)
{
    plane_point pol[UF_MAX_VARIANTS], all[UF_MAX_VARIANTS + UF_MAX_SWEEP];
    const char *kname = axis_of(s->t, "k", "every_k");
    int sweep_k = kname && tq_has_variant(s->t, "every_k");
    int kax = kname ? tq_axis_index(s->t, kname) : -1;
    const char *mem = policies(s, point, "act_peak_bytes", sweep_k, pol) > 0 ? "act_peak_bytes"
                                                                          : "peak_mem_bytes";
    int npol = policies(s, point, mem, sweep_k, pol);
    int nek = sweep_k ? every_k(s, point, kax, mem, all + npol) : 0;
    pd_fig f;
    begin(&f, s);
    pd_str(&f, "mem", mem);
    pd_int(&f, "npol", npol);
    pd_int(&f, "nek", nek);
    put_plane(pd_dat(&f, "pol", "_pareto_policies"), pol, npol);
    put_plane(pd_dat(&f, "ek", "_pareto_every_k"), all + npol, nek);
    memcpy(all, pol, (size_t)npol * sizeof *pol);
    qsort(all, (size_t)(npol + nek), sizeof *all, by_memory);
    uf_strbuf *front = pd_dat(&f, "front", "_pareto_front");
    for (int i = 0, best = -1; i < npol + nek; i++)
        if (best < 0 || all[i].y < all[best].y) {
            put_plane(front, &all[i], 1);
            best = i;
        }
    return pd_fig_commit(&f, "checkpoint_recompute");
}

/* Where a point of the roofline sits, to two digits ("" when it has no place): consecutive N
 * at one place get one label. */
static void roof_place(const uf_table *t, const uf_row *r, double *x, double *y, char *key,
                       size_t len)
{
    double step = pd_metric(t, r, "step_ms"), flops = pd_metric(t, r, "executed_flops");
    *x = pd_metric(t, r, "intensity_flop_per_byte");
    *y = (isnan(flops) ? *x * pd_metric(t, r, "bytes_moved") : flops) / step / 1e9;
    key[0] = '\0';
    if (isfinite(*x) && isfinite(*y))
        snprintf(key, len, "%.2g %.2g", *x, *y);
}

/* The roofline's point labels of a sweep, a block per variant as pd_points writes them:
 * "intensity TFLOP/s N", consecutive N at the same place (%.2g of both) merged into one
 * label "1-16". TFLOP/s: executed flops (else intensity x bytes moved) / step time. */
static void roof_labels(uf_strbuf *b, const uf_table *t, int ax, const double *point,
                        const uf_row **rows)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        char key[64] = "", here[64], held[64] = "";
        double first = NAN, last = NAN, x = NAN, y = NAN;
        int k = tq_sweep_rows(t, names[v], ax, point, rows);
        uf_sb_puts(b, v ? "\n\n" : "");
        for (int i = 0; i <= k; i++) {
            if (i < k)
                roof_place(t, rows[i], &x, &y, here, sizeof here);
            else
                here[0] = '\0';            /* the end: the last label out */
            if (here[0] && strcmp(here, key) == 0) {
                last = rows[i]->axis[ax];
                continue;
            }
            if (key[0] && first == last)
                uf_sb_printf(b, "%s %.10g\n", held, first);
            else if (key[0])
                uf_sb_printf(b, "%s %.10g-%.10g\n", held, first, last);
            snprintf(key, sizeof key, "%s", here);
            if (here[0]) {
                snprintf(held, sizeof held, "%.6g %.6g", x, y);
                first = last = rows[i]->axis[ax];
            }
        }
    }
}

/* One precision of the chain: its sweep along N at `where` (NULL: the default point), and
 * its roofline labels; empty when off, or when the file has no row there. */
static void chain_sweep(pd_fig *f, const pd_source *s, const char *nax, int on,
                        const char *where, const char *tag)   /* tag: fp32, bf16 */
{
    static const char *const cols[] = {"step_ms", "gbs", "intensity_flop_per_byte",
                                       "executed_flops", "bytes_moved"};
    char key[16], suffix[32];
    int count[5] = {0}, ax = nax ? tq_axis_index(s->t, nax) : -1;
    double point[UF_MAX_AXES];
    snprintf(key, sizeof key, "dat%s", tag + 2);
    snprintf(suffix, sizeof suffix, "_%s", tag);
    uf_strbuf *b = pd_dat(f, key, suffix);
    snprintf(key, sizeof key, "lab%s", tag + 2);
    snprintf(suffix, sizeof suffix, "_labels_%s", tag);
    uf_strbuf *labels = pd_dat(f, key, suffix);
    const uf_row **rows = malloc((size_t)(s->t->n_rows + 1) * sizeof *rows);
    if (!rows)
        f->vars.failed = 1;
    else if (on && ax >= 0 && pd_point(s->t, where, point) == 0 &&
             tq_point_has_rows(s->t, point, ax)) {
        pd_points(b, s->t, ax, point, NULL, cols, 5, count);
        roof_labels(labels, s->t, ax, point, rows);
    }
    free(rows);
    snprintf(key, sizeof key, "n%s", tag + 2);
    pd_int(f, key, count[0]);
    snprintf(key, sizeof key, "r%s", tag + 2);
    pd_int(f, key, count[2]);
}

/* elementwise_chain: time and bandwidth against N, fp32 and bf16; the roofline. */
static int fig_chain(const pd_source *s, const double *point)
{
    const char *nax = axis_of(s->t, "ops", "n");
    int has_bits = tq_axis_index(s->t, "bits") >= 0, rc = 0;
    double copy, fp32, bf16;
    pd_fig f;
    (void)point;
    if (pd_ceiling(s->dir, "copy_d2d_gbs", &copy) != 0 ||
        pd_ceiling(s->dir, "gemm_fp32_tflops", &fp32) != 0 ||
        pd_ceiling(s->dir, "gemm_bf16_tflops", &bf16) != 0)
        return -1;
    begin(&f, s);
    pd_names(&f, s->t, "vnames");
    pd_int(&f, "has_bits", has_bits);
    pd_num(&f, "copy", copy);
    pd_num(&f, "gemm_fp32", fp32);
    pd_num(&f, "gemm_bf16", bf16);
    chain_sweep(&f, s, nax, 1, has_bits ? "bits=32" : NULL, "fp32");
    chain_sweep(&f, s, nax, has_bits, "bits=16", "bf16");
    rc = pd_fig_commit(&f, "elementwise_chain");
    return rc;
}

/* Per variant, how many values of metric its sweep along ax has and its last one (in the
 * order of ax): "n0 v0 n1 v1 ...". */
static void sweep_levels(uf_strbuf *st, const uf_table *t, int ax, const double *point,
                         const char *metric, const uf_row **rows)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(t, names, UF_MAX_VARIANTS);
    for (int v = 0; v < n; v++) {
        int k = ax >= 0 ? tq_sweep_rows(t, names[v], ax, point, rows) : 0, measured = 0;
        double last = NAN;
        for (int i = 0; i < k; i++) {
            double m = pd_metric(t, rows[i], metric);
            if (!isnan(m)) {
                last = m;
                measured++;
            }
        }
        uf_sb_printf(st, "%s%d", v ? " " : "", measured);
        pd_put_num(st, last);
    }
}

/* starved_input: busy % and tokens/s against workers; a variant with one value of a column
 * is drawn as a level (st_busy, st_tokens: sweep_levels). */
static int fig_workers(const pd_source *s, const double *point)
{
    static const char *const cols[] = {"busy_pct", "tokens_per_s"};
    int count[2], ax = tq_axis_index(s->t, "workers");
    const uf_row **rows = malloc((size_t)(s->t->n_rows + 1) * sizeof *rows);
    pd_fig f;
    begin(&f, s);
    pd_names(&f, s->t, "vnames");
    uf_strbuf *b = pd_dat(&f, "data", "_workers");
    if (ax >= 0)
        pd_points(b, s->t, ax, point, NULL, cols, 2, count);
    for (int c = 0; c < 2; c++) {
        uf_strbuf st = {0};
        if (rows)
            sweep_levels(&st, s->t, ax, point, cols[c], rows);
        st.failed |= !rows;
        pd_str(&f, c == 0 ? "st_busy" : "st_tokens", st.data ? st.data : "");
        f.vars.failed |= st.failed;
        free(st.data);
    }
    free(rows);
    return pd_fig_commit(&f, "starved_input");
}

/* varlen_attention: step time, useful and executed TFLOP/s, useful and executed FLOPs. */
static int fig_flops(const pd_source *s, const double *point)
{
    static const char *const cols[] = {"step_ms", "tflops_useful", "tflops_executed",
                                       "useful_flops", "executed_flops", "padding_pct"};
    int count[6];
    double gemm;
    pd_fig f;
    if (pd_ceiling(s->dir, "gemm_bf16_tflops", &gemm) != 0)
        return -1;
    begin(&f, s);
    pd_names(&f, s->t, "vnames");
    pd_num(&f, "gemm", gemm);
    pd_values(pd_dat(&f, "data", "_flops"), s->t, point, cols, 6, count);
    pd_int(&f, "nstep", count[0]);
    pd_int(&f, "nflops", count[3] + count[4]);
    pd_int(&f, "nrate", count[1] + count[2] + count[3] + count[4]);
    return pd_fig_commit(&f, "varlen_attention");
}

/* The M (GEMM rows) of a small_batch row: tokens per step / micro-batches, NaN when absent. */
static double gemm_rows(const uf_table *t, const uf_row *r)
{
    return pd_metric(t, r, "tokens_per_step") / pd_metric(t, r, "micro_batches");
}

/* The rate the copy ceiling allows a row, TFLOP/s: its useful FLOPs per byte (the scenario's
 * own counts, useful_flops / min_bytes) x the copy bandwidth (GB/s); NaN when absent. */
static double copy_slope(const uf_table *t, const uf_row *r, double copy_gbs)
{
    return pd_metric(t, r, "useful_flops") / pd_metric(t, r, "min_bytes") * copy_gbs / 1000;
}

/* Where the copy slope meets the GEMM roof along the sweep (rows in order of M, slope[i] at
 * m[i]): M interpolated log-log between the last row under the roof and the next; NaN when the
 * slope does not cross it. */
static double ridge_of(const double *m, const double *slope, int n, double gemm)
{
    for (int i = 1; i < n; i++) {
        if (!(slope[i - 1] < gemm && slope[i] >= gemm))
            continue;
        double t = log(gemm / slope[i - 1]) / log(slope[i] / slope[i - 1]);
        return exp(log(m[i - 1]) + t * log(m[i] / m[i - 1]));
    }
    return NAN;
}

/* small_batch's micro1 sweep: "tokens "micro1" ..." then per M its rate, weight GB/s, copy
 * slope and utilizations; the roofline (min of slope and roof, the ridge point inserted) into
 * roof. count: [rate, gbs, slope, nvml, sm, tensor]. Returns the useful FLOPs per byte per
 * token at the smallest M with a slope (NaN: none), and the ridge's M in *ridge. */
static double micro1_sweep(uf_strbuf *b, uf_strbuf *roof, const pd_source *s, int ax,
                           const double *point, double copy, double gemm, int *count,
                           double *ridge)
{
    static const char *const util[] = {"nvml_util_pct", "sm_active_pct", "tensor_active_pct"};
    const uf_row **rows = malloc((size_t)(s->t->n_rows + 1) * sizeof *rows);
    double *m = malloc((size_t)(s->t->n_rows + 1) * 2 * sizeof *m);
    double *slope = m ? m + s->t->n_rows + 1 : NULL;
    double per_token = NAN;
    int n = rows && m && ax >= 0 ? tq_sweep_rows(s->t, "micro1", ax, point, rows) : 0, k = 0;
    b->failed |= !rows || !m;
    uf_sb_puts(b, "tokens \"micro1\" tflops_useful gbs copy_slope_tflops nvml_util_pct "
                  "sm_active_pct tensor_active_pct\n");
    for (int i = 0; i < n; i++) {
        double v[6] = {pd_metric(s->t, rows[i], "tflops_useful"),
                       pd_metric(s->t, rows[i], "gbs"), copy_slope(s->t, rows[i], copy)};
        for (int c = 0; c < 3; c++)
            v[3 + c] = pd_metric(s->t, rows[i], util[c]);
        uf_sb_printf(b, "%.10g", rows[i]->axis[ax]);
        for (int c = 0; c < 6; c++) {
            pd_put_num(b, v[c]);
            count[c] += !isnan(v[c]);
        }
        uf_sb_puts(b, "\n");
        if (isnan(v[2]))
            continue;
        if (isnan(per_token))
            per_token = v[2] * 1000 / copy / rows[i]->axis[ax];
        m[k] = rows[i]->axis[ax];
        slope[k++] = v[2];
    }
    *ridge = ridge_of(m, slope, k, gemm);
    for (int i = 0; i < k; i++) {
        if (i > 0 && m[i - 1] < *ridge && *ridge <= m[i])
            uf_sb_printf(roof, "%.6g %.6g\n", *ridge, gemm);
        uf_sb_printf(roof, "%.10g %.6g\n", m[i], fmin(slope[i], gemm));
    }
    free(rows);
    free(m);
    return per_token;
}

/* small_batch: micro1 against M on a roofline (useful TFLOP/s under the measured bf16 GEMM
 * roof and the copy slope, weight GB/s on a second axis), large_micro (at its GEMM rows) and
 * wave as markers; micro1's NVML util, SM active and tensor active on the same M axis. */
static int fig_small_batch(const pd_source *s, const double *point)
{
    static const char *const rate[] = {"tflops_useful", "gbs"};
    int count[6] = {0}, nwave[2] = {0, 0}, ax = tq_axis_index(s->t, "tokens");
    double copy, gemm, ridge;
    pd_fig f;
    if (pd_ceiling(s->dir, "copy_d2d_gbs", &copy) != 0 ||
        pd_ceiling(s->dir, "gemm_bf16_tflops", &gemm) != 0)
        return -1;
    begin(&f, s);
    pd_num(&f, "copy", copy);
    pd_num(&f, "gemm", gemm);
    uf_strbuf *b = pd_dat(&f, "micro", "_micro1");
    uf_strbuf *roof = pd_dat(&f, "roof", "_roof");
    double per_token = micro1_sweep(b, roof, s, ax, point, copy, gemm, count, &ridge);
    pd_num(&f, "flop_per_byte_per_token", per_token);
    pd_num(&f, "ridge", ridge);
    pd_counts(&f, "counts", count, 6);
    uf_strbuf *w = pd_dat(&f, "wave", "_wave");
    if (ax >= 0 && tq_has_variant(s->t, "wave"))
        pd_points(w, s->t, ax, point, "wave", rate, 2, nwave);
    pd_int(&f, "nwave", nwave[0]);
    /* large_micro: one point, at the rows of its GEMMs */
    const uf_row *large = tq_row_at(s->t, "large_micro", point);
    double lx = large ? gemm_rows(s->t, large) : NAN;
    double ly = large ? pd_metric(s->t, large, "tflops_useful") : NAN;
    int has_large = isfinite(lx) && isfinite(ly);
    uf_strbuf *l = pd_dat(&f, "large", "_large");
    if (has_large)
        uf_sb_printf(l, "%.6g %.6g\n", lx, ly);
    pd_int(&f, "nlarge", has_large);
    return pd_fig_commit(&f, "small_batch");
}

/* odd_hidden's and aligned_hidden's useful TFLOP/s along dim, a block each, as pd_points
 * writes them: variables nsweep (blocks) and ndim (rates). */
static void alignment_sweep(pd_fig *f, const pd_source *s, int ax, const double *point)
{
    static const char *const cols[] = {"tflops_useful"};
    uf_strbuf *b = pd_dat(f, "dims", "_dim");
    int nsweep = 0, nrate = 0, count[1];
    for (int v = 0; v < 2 && ax >= 0; v++) {
        const char *name = v == 0 ? "odd_hidden" : "aligned_hidden";
        if (!tq_has_variant(s->t, name))
            continue;
        uf_sb_puts(b, nsweep++ ? "\n\n" : "");
        pd_points(b, s->t, ax, point, name, cols, 1, count);
        nrate += count[0];
    }
    pd_int(f, "nsweep", nsweep);
    pd_int(f, "ndim", nrate);
}

/* odd_hidden at each dim that is a multiple of 8 (a 16-byte bf16 row): "dim TFLOP/s" lines,
 * their number as nspike. */
static void alignment_spikes(pd_fig *f, const pd_source *s, int ax, const double *point)
{
    uf_strbuf *sp = pd_dat(f, "spikes", "_spikes");
    const uf_row **rows = malloc((size_t)(s->t->n_rows + 1) * sizeof *rows);
    int n = rows && ax >= 0 ? tq_sweep_rows(s->t, "odd_hidden", ax, point, rows) : 0, k = 0;
    f->vars.failed |= !rows;
    for (int i = 0; i < n; i++) {
        double x = rows[i]->axis[ax], y = pd_metric(s->t, rows[i], "tflops_useful");
        if (fmod(x, 8) == 0 && !isnan(y)) {
            uf_sb_printf(sp, "%.10g %.6g\n", x, y);
            k++;
        }
    }
    free(rows);
    pd_int(f, "nspike", k);
}

/* The vocabulary pair and the precision ladder at point, a line each: "variant" role, useful
 * TFLOP/s, its own math's ceiling, tensor active; their names as bnames, nbar and nbrate
 * (bars with a rate). */
static void alignment_bars(pd_fig *f, const pd_source *s, const double *point)
{
    static const char *const bars[] = {"odd_vocab", "padded_vocab", "fp32", "tf32", "bf16"};
    uf_strbuf *bb = pd_dat(f, "bars", "_bars");
    const char *shown[sizeof bars / sizeof bars[0]];
    int nbar = 0, nrate = 0;
    for (size_t i = 0; i < sizeof bars / sizeof bars[0]; i++) {
        const uf_row *r = tq_row_at(s->t, bars[i], point);
        if (!r)
            continue;
        /* the ceiling of the variant's own math, as the scenario chose it (fp32 FMA, TF32 or
         * bf16) and measured the row against it: useful TFLOP/s over pct_of_own_ceiling */
        double rate = pd_metric(s->t, r, "tflops_useful");
        double pct = pd_metric(s->t, r, "pct_of_own_ceiling");
        double ceiling = pct > 0 ? rate / (pct / 100.0) : NAN;
        uf_sb_printf(bb, "\"%s\" %s", bars[i], r->role[0] ? r->role : "-");
        pd_put_num(bb, rate);
        pd_put_num(bb, ceiling);
        pd_put_num(bb, pd_metric(s->t, r, "tensor_active_pct"));
        uf_sb_puts(bb, "\n");
        shown[nbar++] = bars[i];
        nrate += !isnan(rate);
    }
    pd_words(f, "bnames", shown, nbar);
    pd_int(f, "nbar", nbar);
    pd_int(f, "nbrate", nrate);
}

/* tensor_alignment: odd_hidden and aligned_hidden's TFLOP/s against dim, odd_hidden's points
 * at multiples of 8 (16-byte bf16 rows) apart as spikes; the vocabulary pair and the
 * precision ladder at the default point as bars, each with its own math's measured ceiling. */
static int fig_alignment(const pd_source *s, const double *point)
{
    int ax = tq_axis_index(s->t, "dim");
    double gemm;
    pd_fig f;
    if (pd_ceiling(s->dir, "gemm_bf16_tflops", &gemm) != 0)
        return -1;
    begin(&f, s);
    pd_num(&f, "gemm", gemm);
    alignment_sweep(&f, s, ax, point);
    alignment_spikes(&f, s, ax, point);
    alignment_bars(&f, s, point);
    return pd_fig_commit(&f, "tensor_alignment");
}

/* The variants of a file whose role is `broken` (the scenario's variants table says which; the
 * results file carries it in its role column), in the file's order, into names; how many. */
static int broken_variants(const uf_table *t, const char **names)
{
    const char *all[UF_MAX_VARIANTS];
    int n = tq_variants(t, all, UF_MAX_VARIANTS), k = 0;
    for (int v = 0; v < n; v++)
        for (int i = 0; i < t->n_rows; i++)
            if (strcmp(t->rows[i].variant, all[v]) == 0) {
                if (strcmp(t->rows[i].role, "broken") == 0)
                    names[k++] = all[v];
                break;
            }
    return k;
}

/* host_sync's columns: a cost per broken variant, then idle_host_pct of item and deferred. */
enum { HS_NCOLS = UF_MAX_VARIANTS + 2 };

static int by_value(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The values of axis ax with a row at point (ax free), in increasing order, into xs (room for
 * UF_MAX_SWEEP); returns how many. */
static int sweep_values(const uf_table *t, int ax, const double *point, double *xs)
{
    double seen[UF_MAX_SWEEP], at[UF_MAX_AXES];
    int n = tq_distinct_values(t, ax, seen, UF_MAX_SWEEP), k = 0;
    memcpy(at, point, sizeof at);
    for (int i = 0; i < n; i++) {
        at[ax] = seen[i];
        if (tq_point_has_rows(t, at, -1))
            xs[k++] = seen[i];
    }
    qsort(xs, (size_t)k, sizeof *xs, by_value);
    return k;
}

/* What a variant's sync costs at point: its step over deferred's there, less 1, in %; NaN
 * when either step is absent. */
static double sync_cost(const pd_source *s, const double *point, const char *variant)
{
    double broken = metric_of(s, point, variant, "step_ms");
    double fixed = metric_of(s, point, "deferred", "step_ms");
    return (broken / fixed - 1) * 100;    /* NaN in, NaN out; fixed 0 is refused on reading */
}

/* One line of host_sync's cost data at point: "host_pct cost... idle_item idle_deferred",
 * a cost per variant of broken[0..nb), NaN where a row or value is absent; count[c] gains
 * each number of column c. */
static void host_sync_line(uf_strbuf *b, const pd_source *s, const double *point, int ax,
                           const char *const *broken, int nb, int *count)
{
    double v[HS_NCOLS];
    for (int c = 0; c < nb; c++)
        v[c] = sync_cost(s, point, broken[c]);
    v[nb] = metric_of(s, point, "item", "idle_host_pct");
    v[nb + 1] = metric_of(s, point, "deferred", "idle_host_pct");
    uf_sb_printf(b, "%.10g", point[ax]);
    for (int c = 0; c < nb + 2; c++) {
        pd_put_num(b, v[c]);
        count[c] += !isnan(v[c]);
    }
    uf_sb_puts(b, "\n");
}

/* host_sync: against host_pct (the host's own work per step, % of the GPU step), at the
 * default launches, each broken variant's step (the file's, by role) as a cost over
 * `deferred`'s at the same point (one column each), and idle_host_pct of `item` and
 * `deferred` (host_sync_line); counts per column, the broken variants' names, the launches
 * and deferred's calibrated GPU step. */
static int fig_host_sync(const pd_source *s, const double *point)
{
    double xs[UF_MAX_SWEEP], at[UF_MAX_AXES];
    const char *broken[UF_MAX_VARIANTS];
    int nb = broken_variants(s->t, broken);
    int count[HS_NCOLS] = {0}, ax = tq_axis_index(s->t, "host_pct"), lax;
    int n = ax >= 0 ? sweep_values(s->t, ax, point, xs) : 0;
    pd_fig f;
    begin(&f, s);
    uf_strbuf *b = pd_dat(&f, "data", "_cost");
    uf_sb_puts(b, "# host_pct");
    for (int c = 0; c < nb; c++)
        uf_sb_printf(b, " cost_%s", broken[c]);
    uf_sb_puts(b, " idle_host_item idle_host_deferred\n");
    memcpy(at, point, sizeof at);
    for (int i = 0; i < n; i++) {
        at[ax] = xs[i];
        host_sync_line(b, s, at, ax, broken, nb, count);
    }
    pd_words(&f, "broken", broken, nb);
    pd_counts(&f, "counts", count, nb + 2);
    lax = tq_axis_index(s->t, "launches");
    pd_num(&f, "launches", lax >= 0 ? point[lax] : NAN);
    pd_num(&f, "gpu_step", metric_of(s, point, "deferred", "gpu_step_ms"));
    return pd_fig_commit(&f, "host_sync");
}

/* serial_decode's variants, in the figure's order: the three batch-1 ones, then batched. */
static const char *const sd_names[] = {"eager_b1", "graph_b1", "persistent", "batched"};
enum { SD_NV = sizeof sd_names / sizeof sd_names[0], SD_NCOLS = 2 * SD_NV + 1 };

/* serial_decode: against d_model (the other axes at the default point), each variant's step
 * time and share of the copy ceiling, and the floor of a batch-1 step: graph_b1's bytes
 * (weights and one cache) at the copy ceiling, in ms. */
static int fig_serial_decode(const pd_source *s, const double *point)
{
    double xs[UF_MAX_SWEEP], at[UF_MAX_AXES], copy;
    int count[SD_NCOLS] = {0}, ax = tq_axis_index(s->t, "d_model");
    int n = ax >= 0 ? sweep_values(s->t, ax, point, xs) : 0;
    pd_fig f;
    if (pd_ceiling(s->dir, "copy_d2d_gbs", &copy) != 0)
        return -1;
    begin(&f, s);
    uf_strbuf *b = pd_dat(&f, "data", "_decode");
    uf_sb_puts(b, "# d_model, step_ms of eager_b1 graph_b1 persistent batched, their "
                  "pct_of_copy, floor_ms\n");
    memcpy(at, point, sizeof at);
    for (int i = 0; i < n; i++) {
        double v[SD_NCOLS];
        at[ax] = xs[i];
        for (int c = 0; c < SD_NV; c++) {
            v[c] = metric_of(s, at, sd_names[c], "step_ms");
            v[SD_NV + c] = metric_of(s, at, sd_names[c], "pct_of_copy");
        }
        v[2 * SD_NV] = metric_of(s, at, "graph_b1", "min_bytes") / copy / 1e6;
        uf_sb_printf(b, "%.10g", xs[i]);
        for (int c = 0; c < SD_NCOLS; c++) {
            pd_put_num(b, v[c]);
            count[c] += !isnan(v[c]);
        }
        uf_sb_puts(b, "\n");
    }
    pd_words(&f, "variants", sd_names, SD_NV);
    pd_counts(&f, "counts", count, SD_NCOLS);
    pd_num(&f, "speedup", metric_of(s, point, "batched", "tokens_per_s") /
                              metric_of(s, point, "graph_b1", "tokens_per_s"));
    return pd_fig_commit(&f, "serial_decode");
}

static const struct scenario_figure {
    const char *scenario;                   /* also its script: plots/SCENARIO.gp */
    int (*write)(const pd_source *s, const double *point);
} figures[] = {
    {"allreduce_overlap", fig_buckets},
    {"checkpoint_recompute", fig_pareto},
    {"elementwise_chain", fig_chain},
    {"host_sync", fig_host_sync},
    {"serial_decode", fig_serial_decode},
    {"small_batch", fig_small_batch},
    {"starved_input", fig_workers},
    {"tensor_alignment", fig_alignment},
    {"varlen_attention", fig_flops},
};

int pd_scenario_figures(const pd_source *s)
{
    double point[UF_MAX_AXES];
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (strcmp(figures[i].scenario, s->name) == 0)
            return pd_point(s->t, NULL, point) != 0 ? -1 : figures[i].write(s, point);
    return 1;
}

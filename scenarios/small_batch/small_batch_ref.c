/* small_batch's plain-C parts: shapes and byte counts, the fp64 host reference of the layer
 * stack's step, the chase and spin chains, the wave arithmetic. See small_batch_ref.h. */
#include "small_batch_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- shapes and counts ---------------------------------------------------------------------- */

int sb_in_features(int linear, int d) { return linear == SB_DOWN ? 4 * d : d; }

int sb_out_features(int linear, int d)
{
    return linear == SB_QKV ? 3 * d : linear == SB_UP ? 4 * d : d;
}

float sb_weight_scale(int linear, int d)
{
    return (float)sqrt(3.0 / sb_in_features(linear, d));
}

double sb_layer_params(int d) { return 12.0 * d * (double)d; }

double sb_step_flops(int d, int layers, double tokens)
{
    return 6.0 * tokens * sb_layer_params(d) * layers;
}

double sb_step_bytes(int d, int layers, double micro, double n_micro)
{
    double per_micro = 0.0, accumulate = 0.0;
    for (int j = 0; j < SB_N_LINEARS; j++) {
        const double k = sb_in_features(j, d), n = sb_out_features(j, d), w = 2.0 * k * n;
        const double x = 2.0 * micro * k, y = 2.0 * micro * n;
        per_micro += (w + x + y)     /* forward: Y = X·Wᵀ */
                     + (w + y + x)   /* input gradient: dX = dY·W */
                     + (x + y + w);  /* weight gradient: dW = dYᵀ·X */
        accumulate += w;             /* dW read back to add the next micro-batch's */
    }
    return layers * (n_micro * per_micro + (n_micro - 1.0) * accumulate);
}

double sb_act_bytes(int d, int layers, double micro)
{
    return 2.0 * 9.0 * d * micro * layers;
}

/* ---- the fp64 host reference ----------------------------------------------------------------- */

/* What the device stores, when emulated: the value rounded to bf16. */
static double stored(double x, int emulate) { return emulate ? uf_bf16_round((float)x) : x; }

/* y[0..n) = W·x, W n × k row-major. */
static void mat_vec(const double *w, const double *x, int n, int k, double *y, int emulate)
{
    for (int o = 0; o < n; o++) {
        double acc = 0.0;
        for (int i = 0; i < k; i++)
            acc += w[(size_t)o * k + i] * x[i];
        y[o] = stored(acc, emulate);
    }
}

/* dx[0..k) = Wᵀ·g over rows [o0, o0 + n) of W (k columns), g indexed from o0. */
static void mat_t_vec(const double *w, const double *g, int o0, int n, int k, double *dx,
                      int emulate)
{
    for (int i = 0; i < k; i++) {
        double acc = 0.0;
        for (int o = 0; o < n; o++)
            acc += w[(size_t)(o0 + o) * k + i] * g[o];
        dx[i] = stored(acc, emulate);
    }
}

/* part (n × k) += g ⊗ x. */
static void outer_add(double *part, const double *g, const double *x, int n, int k)
{
    for (int o = 0; o < n; o++)
        for (int i = 0; i < k; i++)
            part[(size_t)o * k + i] += g[o] * x[i];
}

typedef struct ref_work {
    double *w[SB_REF_MAX_LAYERS][SB_N_LINEARS], *part[SB_REF_MAX_LAYERS][SB_N_LINEARS];
    double *h, *qkv, *o, *u;            /* one token's activations: (L+1)·d, L·3d, L·d, L·4d */
    double *g, *gu, *go, *gv;           /* one token's gradients: d, 4d, d, d */
} ref_work;

static void forward_token(const sb_ref_shape *s, ref_work *wk, int emulate)
{
    const int d = s->d;
    for (int l = 0; l < s->layers; l++) {
        double *h = wk->h + (size_t)l * d, *qkv = wk->qkv + (size_t)l * 3 * d;
        double *o = wk->o + (size_t)l * d, *u = wk->u + (size_t)l * 4 * d;
        mat_vec(wk->w[l][SB_QKV], h, 3 * d, d, qkv, emulate);
        mat_vec(wk->w[l][SB_O], qkv + 2 * d, d, d, o, emulate);     /* O reads V */
        mat_vec(wk->w[l][SB_UP], o, 4 * d, d, u, emulate);
        mat_vec(wk->w[l][SB_DOWN], u, d, 4 * d, h + d, emulate);
    }
}

/* Backward of one token from its upstream gradient (in wk->g); leaves dL/dx0 in wk->g. */
static void backward_token(const sb_ref_shape *s, ref_work *wk, int emulate)
{
    const int d = s->d;
    for (int l = s->layers - 1; l >= 0; l--) {
        const double *h = wk->h + (size_t)l * d, *qkv = wk->qkv + (size_t)l * 3 * d;
        const double *o = wk->o + (size_t)l * d, *u = wk->u + (size_t)l * 4 * d;
        outer_add(wk->part[l][SB_DOWN], wk->g, u, d, 4 * d);
        mat_t_vec(wk->w[l][SB_DOWN], wk->g, 0, d, 4 * d, wk->gu, emulate);
        outer_add(wk->part[l][SB_UP], wk->gu, o, 4 * d, d);
        mat_t_vec(wk->w[l][SB_UP], wk->gu, 0, 4 * d, d, wk->go, emulate);
        outer_add(wk->part[l][SB_O], wk->go, qkv + 2 * d, d, d);
        mat_t_vec(wk->w[l][SB_O], wk->go, 0, d, d, wk->gv, emulate);
        /* QKV's gradient is zero in its Q and K rows: only V fed the layer */
        outer_add(wk->part[l][SB_QKV] + (size_t)2 * d * d, wk->gv, h, d, d);
        mat_t_vec(wk->w[l][SB_QKV], wk->gv, 2 * d, d, d, wk->g, emulate);
    }
}

static int shape_ok(const sb_ref_shape *s)
{
    return s->d > 0 && s->layers > 0 && s->layers <= SB_REF_MAX_LAYERS && s->tokens > 0 &&
           s->micro > 0 && s->tokens % s->micro == 0;
}

/* Carve the pool: out's tensors, the weights, the partial sums, one token's scratch. */
static double *carve(const sb_ref_shape *s, double *p, sb_ref_out *out, ref_work *wk)
{
    const int d = s->d, L = s->layers;
    out->y = p;
    p += (size_t)s->tokens * d;
    out->dx0 = p;
    p += (size_t)s->tokens * d;
    for (int l = 0; l < L; l++)
        for (int j = 0; j < SB_N_LINEARS; j++) {
            const size_t n = (size_t)sb_in_features(j, d) * sb_out_features(j, d);
            out->dw[l][j] = p;
            wk->w[l][j] = p + n;
            wk->part[l][j] = p + 2 * n;
            p += 3 * n;
        }
    wk->h = p;
    p += (size_t)(L + 1) * d;
    wk->qkv = p;
    p += (size_t)L * 3 * d;
    wk->o = p;
    p += (size_t)L * d;
    wk->u = p;
    p += (size_t)L * 4 * d;
    wk->g = p;
    wk->gu = p + d;
    wk->go = p + 5 * d;
    wk->gv = p + 6 * d;
    return p + 7 * d;
}

static size_t pool_doubles(const sb_ref_shape *s)
{
    const size_t d = (size_t)s->d, L = (size_t)s->layers;
    return 2 * (size_t)s->tokens * d + 3 * L * (size_t)sb_layer_params(s->d) + (L + 1) * d +
           8 * L * d + 7 * d;
}

static void fill_weights(const sb_ref_shape *s, uint64_t seed, ref_work *wk)
{
    for (int l = 0; l < s->layers; l++)
        for (int j = 0; j < SB_N_LINEARS; j++) {
            const size_t n = (size_t)sb_in_features(j, s->d) * sb_out_features(j, s->d);
            const float scale = sb_weight_scale(j, s->d);
            for (size_t e = 0; e < n; e++)
                wk->w[l][j][e] = uf_bf16_round(sb_random(seed, SB_T_W + 4 * l + j, e, scale));
        }
}

/* Add the micro-batch's partial weight gradients into out's, rounding as the device stores. */
static void accumulate(const sb_ref_shape *s, ref_work *wk, sb_ref_out *out, int emulate)
{
    for (int l = 0; l < s->layers; l++)
        for (int j = 0; j < SB_N_LINEARS; j++) {
            const size_t n = (size_t)sb_in_features(j, s->d) * sb_out_features(j, s->d);
            for (size_t e = 0; e < n; e++) {
                out->dw[l][j][e] = stored(out->dw[l][j][e] + wk->part[l][j][e], emulate);
                wk->part[l][j][e] = 0.0;
            }
        }
}

int sb_host_reference(const sb_ref_shape *s, uint64_t seed, int emulate_bf16, sb_ref_out *out)
{
    ref_work wk;
    const int d = s->d;
    if (!shape_ok(s))
        return -1;
    out->pool = calloc(pool_doubles(s), sizeof(double));
    if (!out->pool)
        return 1;
    carve(s, out->pool, out, &wk);
    fill_weights(s, seed, &wk);
    for (int t = 0; t < s->tokens; t++) {
        for (int c = 0; c < d; c++) {
            const uint64_t e = (uint64_t)t * d + c;
            wk.h[c] = uf_bf16_round(sb_random(seed, SB_T_X0, e, 1.0f));
            wk.g[c] = uf_bf16_round(sb_random(seed, SB_T_DY, e, 1.0f));
        }
        forward_token(s, &wk, emulate_bf16);
        memcpy(out->y + (size_t)t * d, wk.h + (size_t)s->layers * d, (size_t)d * sizeof(double));
        backward_token(s, &wk, emulate_bf16);
        memcpy(out->dx0 + (size_t)t * d, wk.g, (size_t)d * sizeof(double));
        if ((t + 1) % s->micro == 0)
            accumulate(s, &wk, out, emulate_bf16);
    }
    return 0;
}

/* ---- the chase and the spin ------------------------------------------------------------------- */

uint32_t sb_chase_host(uint32_t start, uint32_t mask, long hops)
{
    uint32_t i = start & mask;
    for (long h = 0; h < hops; h++)
        i = sb_chase_next(i, mask);
    return i;
}

uint32_t sb_spin_host(uint32_t h, long iters)
{
    for (long i = 0; i < iters; i++)
        h = sb_spin_round(h, (uint32_t)i);
    return h;
}

/* ---- wave quantization ------------------------------------------------------------------------ */

int sb_wave_report(double rows, double cols, int tile_rows, int tile_cols, int splitk, int sms,
                   sb_waves *out)
{
    if (!(rows >= 1 && cols >= 1) || tile_rows < 1 || tile_cols < 1 || splitk < 1 || sms < 1)
        return -1;
    const double tr = ceil(rows / tile_rows), tc = ceil(cols / tile_cols);
    out->tiles = tr * tc * splitk;
    out->waves = out->tiles / sms;
    out->wave_eff_pct = 100.0 * out->tiles / (ceil(out->waves) * sms);
    out->tile_fill_pct = 100.0 * rows * cols / (tr * tile_rows * tc * tile_cols);
    return 0;
}

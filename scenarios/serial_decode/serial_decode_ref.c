/* serial_decode's plain-C parts: the shape and its bytes, the fp64 host reference of a greedy
 * decode, and the comparison of two decodes (serial_decode_ref.h says what each does). */
#include "serial_decode_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

/* ---- the shape ------------------------------------------------------------------------------ */

int sd_shape_make(int d, int layers, int vocab, int cache, int batch, sd_shape *s, char *err,
                  size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (d < 256 || d > 16384 || d % 256 != 0) {
        snprintf(err, errlen, "d_model=%d: must be a multiple of 256 from 256 to 16384 (whole "
                 "KV groups of %d heads of %d, whole 16-byte chunks per lane)", d, SD_GROUP,
                 SD_HEAD_DIM);
        return -1;
    }
    if (layers < 1 || layers > 128 || vocab < 2 || vocab > (1 << 20) || batch < 1 ||
        batch > 1024 || cache < SD_CHUNK || cache > SD_CHUNK * SD_MAX_CHUNKS ||
        cache % SD_CHUNK != 0) {
        snprintf(err, errlen, "layers=%d, vocab=%d, cache=%d, batch=%d: out of range (layers "
                 "1..128, vocab 2..2^20, cache a multiple of %d up to %d, batch 1..1024)",
                 layers, vocab, cache, batch, SD_CHUNK, SD_CHUNK * SD_MAX_CHUNKS);
        return -1;
    }
    s->d = d;
    s->layers = layers;
    s->vocab = vocab;
    s->cache = cache;
    s->batch = batch;
    s->heads = d / SD_HEAD_DIM;
    s->kv_heads = s->heads / SD_GROUP;
    s->kv_dim = s->kv_heads * SD_HEAD_DIM;
    s->ffn = 4 * d;
    s->qkv_rows = d + 2 * s->kv_dim;
    const double biggest = fmax(fmax((double)sd_cache_elems(s), (double)vocab * d),
                                (double)s->ffn * d);
    if (biggest >= 4294967296.0) {
        snprintf(err, errlen, "d_model=%d, batch=%d: a tensor of %.3g elements; the random "
                 "draws index with 32 bits (< 2^32)", d, batch, biggest);
        return -1;
    }
    return 0;
}

size_t sd_cache_elems(const sd_shape *s)
{
    return (size_t)s->batch * s->layers * 2 * (size_t)s->cache * s->kv_dim;
}

double sd_weight_bytes(const sd_shape *s)
{
    return 2.0 * ((double)s->layers * (double)sd_layer_elems(s) + (double)s->vocab * s->d);
}

double sd_cache_bytes(const sd_shape *s)
{
    return 2.0 * (double)sd_cache_elems(s);
}

/* ---- the host reference --------------------------------------------------------------------- */

/* A matrix as the device drew it: element i is bf16(uniform at (key, i)), redrawn at each use
 * (a model of width 1024 would take 1 GB of floats to keep). */
typedef struct ref_mat {
    uint32_t key;
    float amp;
    int rows, cols;
} ref_mat;

static ref_mat mat_of(const sd_shape *s, uint64_t seed, int l, int j)
{
    ref_mat w = {sd_mat_key(seed, l, j), sd_amplitude(sd_mat_cols(s, j)), sd_mat_rows(s, j),
                 sd_mat_cols(s, j)};
    return w;
}

static float weight(const ref_mat *w, size_t i)
{
    return uf_bf16_round(sd_uniform(w->key, (uint32_t)i, w->amp));
}

/* out[r] = W[r] . v, in fp64. */
static void matvec(const ref_mat *w, const double *v, double *out)
{
    for (int r = 0; r < w->rows; r++) {
        const size_t first = (size_t)r * w->cols;
        double acc = 0.0;
        for (int c = 0; c < w->cols; c++)
            acc += (double)weight(w, first + c) * v[c];
        out[r] = acc;
    }
}

/* h = bf16(x / rms(x)) (RMSNorm, no weight), as the device rounds its input. */
static void rms_norm(const double *x, int d, double *h)
{
    double ss = 0.0;
    for (int i = 0; i < d; i++)
        ss += x[i] * x[i];
    const double inv = 1.0 / sqrt(ss / d + (double)SD_RMS_EPS);
    for (int i = 0; i < d; i++)
        h[i] = uf_bf16_round((float)(x[i] * inv));
}

/* Attention of the d query features q over one layer's cache (K then V, cache x kv_dim
 * each; every position): a[d], bf16. */
static void attend(const sd_shape *s, const float *cache_l, const double *q, double *a,
                   double *score)
{
    const float *k = cache_l, *v = cache_l + (size_t)s->cache * s->kv_dim;
    for (int h = 0; h < s->heads; h++) {
        const int g = h / SD_GROUP;
        double mx = -INFINITY, sum = 0.0;
        for (int p = 0; p < s->cache; p++) {
            double dot = 0.0;
            for (int f = 0; f < SD_HEAD_DIM; f++)
                dot += q[h * SD_HEAD_DIM + f] * k[(size_t)p * s->kv_dim + g * SD_HEAD_DIM + f];
            score[p] = dot / sqrt((double)SD_HEAD_DIM);
            mx = fmax(mx, score[p]);
        }
        for (int p = 0; p < s->cache; p++) {
            score[p] = exp(score[p] - mx);
            sum += score[p];
        }
        for (int f = 0; f < SD_HEAD_DIM; f++) {
            double o = 0.0;
            for (int p = 0; p < s->cache; p++)
                o += score[p] * v[(size_t)p * s->kv_dim + g * SD_HEAD_DIM + f];
            a[h * SD_HEAD_DIM + f] = uf_bf16_round((float)(o / sum));
        }
    }
}

/* Work space of one reference decode. */
typedef struct ref_work {
    float *cache;                   /* the sequence's: layers x 2 x cache x kv_dim */
    double *x, *h, *a, *big, *score;
} ref_work;

/* One layer on the residual x (fp32 values), writing K and V at position pos of its cache. */
static void ref_layer(const sd_shape *s, uint64_t seed, int l, int pos, ref_work *w)
{
    float *cache_l = w->cache + (size_t)l * 2 * s->cache * s->kv_dim;
    const int d = s->d, kvd = s->kv_dim;
    ref_mat qkv = mat_of(s, seed, l, SD_QKV), o = mat_of(s, seed, l, SD_O);
    ref_mat up = mat_of(s, seed, l, SD_UP), down = mat_of(s, seed, l, SD_DOWN);
    rms_norm(w->x, d, w->h);
    matvec(&qkv, w->h, w->big);
    for (int f = 0; f < d; f++)
        w->big[f] = (float)w->big[f];                           /* q: fp32 */
    for (int f = 0; f < kvd; f++) {
        cache_l[(size_t)pos * kvd + f] = uf_bf16_round((float)w->big[d + f]);
        cache_l[((size_t)s->cache + pos) * kvd + f] = uf_bf16_round((float)w->big[d + kvd + f]);
    }
    attend(s, cache_l, w->big, w->a, w->score);
    matvec(&o, w->a, w->h);
    for (int i = 0; i < d; i++)
        w->x[i] = (float)(w->x[i] + w->h[i]);
    rms_norm(w->x, d, w->h);
    matvec(&up, w->h, w->big);
    for (int i = 0; i < s->ffn; i++)
        w->big[i] = uf_bf16_round(sd_gelu((float)w->big[i]));
    matvec(&down, w->big, w->h);
    for (int i = 0; i < d; i++)
        w->x[i] = (float)(w->x[i] + w->h[i]);
}

int sd_ref_decode(const sd_shape *s, uint64_t seed, int b, int steps, const int *inputs,
                  double *logits)
{
    ref_work w;
    const int d = s->d;
    const size_t big_n = (size_t)(s->ffn > s->qkv_rows ? s->ffn : s->qkv_rows);
    const size_t per_seq = (size_t)s->layers * 2 * s->cache * s->kv_dim;
    const ref_mat head = {sd_key(seed, SD_T_HEAD), sd_amplitude(d), s->vocab, d};
    const uint32_t embed_key = sd_key(seed, SD_T_EMBED), cache_key = sd_key(seed, SD_T_CACHE);
    int rc = 0;
    w.cache = malloc(per_seq * sizeof *w.cache);
    w.x = malloc((size_t)d * sizeof *w.x);
    w.h = malloc((size_t)d * sizeof *w.h);
    w.a = malloc((size_t)d * sizeof *w.a);
    w.big = malloc(big_n * sizeof *w.big);
    w.score = malloc((size_t)s->cache * sizeof *w.score);
    if (!w.cache || !w.x || !w.h || !w.a || !w.big || !w.score) {
        rc = 1;
        goto out;
    }
    /* sequence b's slice of the one cache tensor */
    const size_t first = sd_cache_index(s, b, 0, 0, 0, 0);
    for (size_t i = 0; i < per_seq; i++)
        w.cache[i] = uf_bf16_round(sd_uniform(cache_key, (uint32_t)(first + i), 1.0f));
    for (int t = 0; t < steps; t++) {
        const int tok = inputs[t];
        if (tok < 0 || tok >= s->vocab) {
            for (int v = 0; v < s->vocab; v++)
                logits[(size_t)t * s->vocab + v] = NAN;   /* no such token: nothing to compare */
            continue;
        }
        for (int i = 0; i < d; i++)
            w.x[i] = uf_bf16_round(sd_uniform(embed_key, (uint32_t)((size_t)tok * d + i), 1.0f));
        for (int l = 0; l < s->layers; l++)
            ref_layer(s, seed, l, t % s->cache, &w);
        rms_norm(w.x, d, w.h);
        matvec(&head, w.h, logits + (size_t)t * s->vocab);
    }
out:
    free(w.cache);
    free(w.x);
    free(w.h);
    free(w.a);
    free(w.big);
    free(w.score);
    return rc;
}

/* ---- comparing decodes ------------------------------------------------------------------------ */

int sd_top2(const double *v, int n, double *margin)
{
    int top = -1;
    double best = -INFINITY, second = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (top < 0 || v[i] > best) {
            if (top >= 0)
                second = best;
            best = v[i];
            top = i;
        } else if (v[i] > second) {
            second = v[i];
        }
    }
    *margin = top < 0 ? NAN : best - second;    /* -inf second: one number, infinite margin */
    return top;
}

void sd_compare(const float *got, const int *got_tok, const double *want, const int *want_tok,
                int steps, int vocab, double tol, sd_match *m)
{
    memset(m, 0, sizeof *m);
    m->bad_step = m->diverged_step = -1;
    for (int t = 0; t < steps; t++) {
        const float *g = got + (size_t)t * vocab;
        const double *w = want + (size_t)t * vocab;
        uf_err e;
        double margin;
        const int top = sd_top2(w, vocab, &margin);
        const int wt = want_tok ? want_tok[t] : top;
        uf_err_init(&e);
        for (int v = 0; v < vocab; v++) {
            uf_err_add(&e, (size_t)v, g[v], w[v]);
            m->bitwise_diff += (double)g[v] != w[v] && !(isnan(g[v]) && isnan(w[v]));
        }
        m->steps_compared++;
        m->nonfinite |= e.nonfinite > 0;
        m->max_rel_err = fmax(m->max_rel_err, uf_err_value(&e));
        if (got_tok[t] == wt)
            continue;
        if (margin > tol * e.max_ref) {
            m->bad_step = t;
            return;
        }
        if (m->diverged_step < 0)
            m->diverged_step = t;   /* a rounding may pick either */
        if (want_tok)
            return;             /* free-running: from here the two sequences part */
    }
}

/* checkpoint_recompute's fp64 host reference: the whole step (forward and backward of the
 * block stack) on a tiny model, inputs regenerated from the seed, storage rounded to bf16 where
 * the device stores bf16. Plain C, no CUDA (the kernels and the model are in
 * checkpoint_recompute_kernels.cu and checkpoint_recompute_model.cu). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_recompute_ref.h"

/* Power of two nearest to v: keeps the random inputs exact in fp32 (see cr_random). */
static float pow2_near(double v) { return (float)exp2(round(log2(v))); }
float w1_scale(int d) { return pow2_near(2.0 / sqrt((double)d)); } /* U(±1/√d) */
float w2_scale(int d) { return pow2_near(1.0 / sqrt((double)d)); } /* U(±1/√(4d)) */

/* ---- the fp64 host reference (tiny model) ------------------------------------------------- */

/* The device stores every activation and gradient in bf16: the reference rounds there too. */
static double ref_bf16(double v) { return uf_bf16_round((float)v); }

static double ref_gelu(double v)
{
    return 0.5 * v * (1.0 + tanh((double)CR_GELU_C * (v + (double)CR_GELU_A * v * v * v)));
}

static double ref_gelu_grad(double v)
{
    const double c = CR_GELU_C, a = CR_GELU_A;
    const double t = tanh(c * (v + a * v * v * v));
    return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * c * (1.0 + 3.0 * a * v * v);
}

/* Forward of the whole stack in fp64 (storage rounded to bf16 where the device stores bf16).
 * x holds the L+1 block inputs, the rest one slice per block. */
static void ref_forward(int d, int T, int L, const double *w1, const double *w2, const double *gam,
                        const double *bet, double *x, double *xn, double *hh, double *g,
                        double *mean, double *rstd)
{
    const int h = 4 * d;
    const size_t w = (size_t)h * d, td = (size_t)T * d, th = (size_t)T * h;
    for (int i = 0; i < L; i++) {
        const double *xi = x + i * td, *W1 = w1 + i * w, *W2 = w2 + i * w;
        double *xo = x + (i + 1) * td, *xni = xn + i * td, *hi = hh + i * th, *gi = g + i * th;
        for (int t = 0; t < T; t++) {
            double mu = 0, var = 0;
            for (int j = 0; j < d; j++)
                mu += xi[(size_t)t * d + j];
            mu /= d;
            for (int j = 0; j < d; j++)
                var += (xi[(size_t)t * d + j] - mu) * (xi[(size_t)t * d + j] - mu);
            const double rs = 1.0 / sqrt(var / d + (double)CR_LN_EPS);
            mean[(size_t)i * T + t] = mu;
            rstd[(size_t)i * T + t] = rs;
            for (int j = 0; j < d; j++)
                xni[(size_t)t * d + j] = ref_bf16((xi[(size_t)t * d + j] - mu) * rs *
                                                      gam[(size_t)i * d + j] +
                                                  bet[(size_t)i * d + j]);
        }
        for (int t = 0; t < T; t++)
            for (int o = 0; o < h; o++) {
                double s = 0;
                for (int j = 0; j < d; j++)
                    s += W1[o + (size_t)j * h] * xni[(size_t)t * d + j];
                hi[(size_t)t * h + o] = ref_bf16(s);
                gi[(size_t)t * h + o] = ref_bf16(ref_gelu(hi[(size_t)t * h + o]));
            }
        for (int t = 0; t < T; t++)
            for (int j = 0; j < d; j++) {
                double s = 0;
                for (int o = 0; o < h; o++)
                    s += W2[j + (size_t)o * d] * gi[(size_t)t * h + o];
                xo[(size_t)t * d + j] = ref_bf16(xi[(size_t)t * d + j] + ref_bf16(s));
            }
    }
}

/* Backward of block i in fp64; dy holds dL/dy on entry, dL/dx on return. dg, dxn: scratch. */
static void ref_block_backward(int d, int T, int i, const double *W1, const double *W2,
                               const double *ga, const double *xi, const double *xni,
                               const double *hi, const double *gi, const double *mean,
                               const double *rstd, double *dy, double *dg, double *dxn,
                               cr_ref *out)
{
    const int h = 4 * d;
    const size_t w = (size_t)h * d;
    for (int o = 0; o < h; o++)
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (int t = 0; t < T; t++)
                s += dy[(size_t)t * d + j] * gi[(size_t)t * h + o];
            out->dw2[i * w + j + (size_t)o * d] = ref_bf16(s);
        }
    for (int t = 0; t < T; t++)
        for (int o = 0; o < h; o++) {
            double s = 0;
            for (int j = 0; j < d; j++)
                s += W2[j + (size_t)o * d] * dy[(size_t)t * d + j];
            dg[(size_t)t * h + o] = ref_bf16(ref_bf16(s) * ref_gelu_grad(hi[(size_t)t * h + o]));
        }
    for (int j = 0; j < d; j++)
        for (int o = 0; o < h; o++) {
            double s = 0;
            for (int t = 0; t < T; t++)
                s += dg[(size_t)t * h + o] * xni[(size_t)t * d + j];
            out->dw1[i * w + o + (size_t)j * h] = ref_bf16(s);
        }
    for (int t = 0; t < T; t++)
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (int o = 0; o < h; o++)
                s += W1[o + (size_t)j * h] * dg[(size_t)t * h + o];
            dxn[(size_t)t * d + j] = ref_bf16(s);
        }
    for (int j = 0; j < d; j++) {
        double sg = 0, sb = 0;
        for (int t = 0; t < T; t++) {
            const double xh = (xi[(size_t)t * d + j] - mean[t]) * rstd[t];
            sg += dxn[(size_t)t * d + j] * xh;
            sb += dxn[(size_t)t * d + j];
        }
        out->dgamma[(size_t)i * d + j] = sg;
        out->dbeta[(size_t)i * d + j] = sb;
    }
    for (int t = 0; t < T; t++) {
        double m1 = 0, m2 = 0;
        for (int j = 0; j < d; j++) {
            const double gd = dxn[(size_t)t * d + j] * ga[j];
            m1 += gd;
            m2 += gd * (xi[(size_t)t * d + j] - mean[t]) * rstd[t];
        }
        m1 /= d;
        m2 /= d;
        for (int j = 0; j < d; j++) {
            const double gd = dxn[(size_t)t * d + j] * ga[j];
            const double xh = (xi[(size_t)t * d + j] - mean[t]) * rstd[t];
            dy[(size_t)t * d + j] = ref_bf16(dy[(size_t)t * d + j] + rstd[t] * (gd - m1 - xh * m2));
        }
    }
}

/* The whole step in fp64 on inputs regenerated from the seed. */
int host_reference(int d, int T, int L, uint64_t seed, cr_ref *out)
{
    const int h = 4 * d;
    const size_t w = (size_t)h * d, td = (size_t)T * d, th = (size_t)T * h;
    const size_t n_out = 2 * L * w + td + 2 * (size_t)L * d;
    const size_t n_work = 2 * L * w + 2 * (size_t)L * d + (L + 1) * td + L * td + 2 * L * th +
                          2 * (size_t)L * T + td + th + td;
    double *p, *w1, *w2, *gam, *bet, *x, *xn, *hh, *g, *mean, *rstd, *dy, *dg, *dxn;
    double *work = (double *)malloc(n_work * sizeof(double));
    out->pool = (double *)malloc(n_out * sizeof(double));
    if (!work || !out->pool) {
        free(work);
        free(out->pool);
        out->pool = NULL;
        return 1;
    }
    p = out->pool;
    out->dw1 = p; p += L * w;
    out->dw2 = p; p += L * w;
    out->dx0 = p; p += td;
    out->dgamma = p; p += (size_t)L * d;
    out->dbeta = p;
    p = work;
    w1 = p; p += L * w;
    w2 = p; p += L * w;
    gam = p; p += (size_t)L * d;
    bet = p; p += (size_t)L * d;
    x = p; p += (L + 1) * td;
    xn = p; p += L * td;
    hh = p; p += L * th;
    g = p; p += L * th;
    mean = p; p += (size_t)L * T;
    rstd = p; p += (size_t)L * T;
    dy = p; p += td;
    dg = p; p += th;
    dxn = p;
    for (size_t e = 0; e < L * w; e++) {
        w1[e] = ref_bf16(cr_random(seed, CR_T_W1, e, w1_scale(d), 0.0f));
        w2[e] = ref_bf16(cr_random(seed, CR_T_W2, e, w2_scale(d), 0.0f));
    }
    for (size_t e = 0; e < (size_t)L * d; e++) {
        gam[e] = cr_random(seed, CR_T_GAMMA, e, 1.0f, 1.0f);
        bet[e] = cr_random(seed, CR_T_BETA, e, 0.5f, 0.0f);
    }
    for (size_t e = 0; e < td; e++) {
        x[e] = ref_bf16(cr_random(seed, CR_T_X0, e, 2.0f, 0.0f));
        dy[e] = ref_bf16(cr_random(seed, CR_T_DY, e, 2.0f, 0.0f));
    }
    ref_forward(d, T, L, w1, w2, gam, bet, x, xn, hh, g, mean, rstd);
    for (int i = L - 1; i >= 0; i--)
        ref_block_backward(d, T, i, w1 + i * w, w2 + i * w, gam + (size_t)i * d, x + i * td,
                           xn + i * td, hh + i * th, g + i * th, mean + (size_t)i * T,
                           rstd + (size_t)i * T, dy, dg, dxn, out);
    memcpy(out->dx0, dy, td * sizeof(double));
    free(work);
    return 0;
}


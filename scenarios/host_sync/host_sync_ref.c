/* host_sync's plain-C parts: see host_sync_ref.h. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "host_sync_ref.h"

enum { HS_REF_MAX_THREADS = 16 };

/* Columns [j0, j1) of x·W for the checked rows: each weight is drawn once per layer and used
 * for every row (the weights never sit in host memory: 8 layers of 4096^2 would be 512 MiB).
 * Each sum runs over k in order, whichever thread computes its column. */
typedef struct chain_part {
    uint32_t key;
    int d, n_rows, j0, j1;
    float amplitude;
    const double *in;
    double *acc;
} chain_part;

static void *chain_columns(void *arg)
{
    const chain_part *p = (const chain_part *)arg;
    const int d = p->d;
    for (int r = 0; r < p->n_rows; r++)
        memset(p->acc + (size_t)r * d + p->j0, 0, (size_t)(p->j1 - p->j0) * sizeof *p->acc);
    for (int k = 0; k < d; k++)
        for (int j = p->j0; j < p->j1; j++) {
            const double w = uf_bf16_round(hs_uniform(p->key, (uint32_t)k * (uint32_t)d +
                                                                  (uint32_t)j, p->amplitude));
            for (int r = 0; r < p->n_rows; r++)
                p->acc[(size_t)r * d + j] += p->in[(size_t)r * d + k] * w;
        }
    return NULL;
}

/* One layer's x·W, its columns split over n_threads (a thread that does not start leaves its
 * columns to the calling thread). */
static void chain_layer(uint32_t key, int d, float amplitude, const double *in, int n_rows,
                        double *acc, int n_threads)
{
    chain_part parts[HS_REF_MAX_THREADS];
    pthread_t tid[HS_REF_MAX_THREADS];
    int started[HS_REF_MAX_THREADS] = {0};
    if (n_threads > d)
        n_threads = d;
    for (int t = 0; t < n_threads; t++) {
        parts[t] = (chain_part){.key = key, .d = d, .n_rows = n_rows, .amplitude = amplitude,
                                .in = in, .acc = acc, .j0 = (int)((long long)d * t / n_threads),
                                .j1 = (int)((long long)d * (t + 1) / n_threads)};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, chain_columns, &parts[t]) == 0;
    }
    chain_columns(&parts[0]);
    for (int t = 1; t < n_threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            chain_columns(&parts[t]);
    }
}

/* The threads hs_ref_rows uses: the online CPUs, at most HS_REF_MAX_THREADS. */
static int ref_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > HS_REF_MAX_THREADS ? HS_REF_MAX_THREADS : (int)n;
}

int hs_ref_rows(uint64_t seed, int tokens, int d, int layers, const int *rows, int n_rows,
                double *out)
{
    return hs_ref_rows_threads(seed, tokens, d, layers, rows, n_rows, out, ref_threads());
}

int hs_ref_rows_threads(uint64_t seed, int tokens, int d, int layers, const int *rows,
                        int n_rows, double *out, int n_threads)
{
    const size_t n = (size_t)n_rows * (size_t)d;
    for (int r = 0; r < n_rows; r++)
        if (rows[r] < 0 || rows[r] >= tokens)
            return 1;
    double *acc = malloc(n * sizeof *acc);
    if (!acc)
        return 1;
    const int threads = n_threads < 1 ? 1 : n_threads > HS_REF_MAX_THREADS ? HS_REF_MAX_THREADS
                                                                         : n_threads;
    const uint32_t x_key = hs_key(seed, HS_T_X);
    for (int r = 0; r < n_rows; r++)
        for (int k = 0; k < d; k++)
            out[(size_t)r * d + k] = uf_bf16_round(
                hs_uniform(x_key, (uint32_t)rows[r] * (uint32_t)d + (uint32_t)k, 1.0f));
    for (int l = 0; l < layers; l++) {
        chain_layer(hs_key(seed, HS_T_W + (uint32_t)l), d, hs_w_amplitude(d), out, n_rows, acc,
                    threads);
        /* the GEMM stores bf16, the activation reads it and stores bf16 again */
        for (size_t e = 0; e < n; e++)
            out[e] = uf_bf16_round((float)tanh(uf_bf16_round((float)acc[e])));
    }
    free(acc);
    return 0;
}

double hs_ref_loss(const float *y, size_t n, uint32_t label_key, uint64_t step)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double diff = (double)y[i] - (double)hs_label(label_key, step, (uint32_t)i);
        sum += diff * diff;
    }
    return n ? sum / (double)n : NAN;
}

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

int hs_loss_mismatch(const float *reported, const float *ref, int n, int lag)
{
    int bad = 0;
    for (int s = 0; s < n; s++) {
        if (s < lag)
            bad += !isnan(reported[s]);
        else
            bad += !same_bits(reported[s], ref[s - lag]);
    }
    return bad;
}

int hs_loss_lag(const float *reported, const float *ref, int n, int max_lag)
{
    for (int lag = 0; lag <= max_lag && lag < n; lag++)
        if (hs_loss_mismatch(reported, ref, n, lag) == 0)
            return lag;
    return -1;
}

double hs_now_us(void)
{
    return 1e-3 * (double)uf_mono_ns();
}

void hs_host_work(double us)
{
    if (!(us > 0))
        return;
    const double until = hs_now_us() + us;
    while (hs_now_us() < until)
        ;
}

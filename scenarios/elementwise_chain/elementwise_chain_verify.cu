/* elementwise_chain: verification (every element bitwise against the per-element device
 * reference, runs of elements against the host reference). A step is the scenario's own
 * run_step (ctx->scenario), as the harness runs it. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "random.h"
#include "underfed.h"
#include "verify.h"
#include "elementwise_chain_ref.h"
#include "elementwise_chain_kernels.h"
#include "elementwise_chain_setup.h"
#include "elementwise_chain_state.h"
#include "elementwise_chain_verify.h"

enum {
    EW_SAMPLE_BLOCKS = 16,      /* host check: this many runs of contiguous elements ... */
    EW_SAMPLE_ELEMS = 2048      /* ... of this length (first, last, and spread between) */
};

/* Host copies of a run of elements of each tensor, for the host check. */
typedef struct ew_host_sample {
    void *x, *residual, *y, *bias;
} ew_host_sample;

typedef struct ew_host_result {
    size_t bad;
    size_t first_bad;           /* element index */
    float first_got, first_want;
    uf_err err;                 /* max_rel_err over the checked elements (verify.h) */
} ew_host_result;

/* Copy elements [offset, offset + count) of x, residual and y (and the bias) to the host and
 * compare each, bitwise, with the host reference of the variant. */
static int ew_host_check(uf_ctx *ctx, const ew_state *st, const ew_host_sample *h, size_t offset,
                         size_t count, int round_each, ew_host_result *res)
{
    int rc = UF_OK;
    size_t eb = st->elem_bytes, at = offset * eb, len = count * eb;
    cudaStream_t s = ctx->stream;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->x, (const char *)st->x + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->residual, (const char *)st->residual + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->y, (const char *)st->y + at, len,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(h->bias, st->bias, st->bias_bytes,
                                        cudaMemcpyDeviceToHost, s), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(s), out);
    for (size_t j = 0; j < count; ++j) {
        size_t e = offset + j;
        float x = ew_host_storage_value(ew_host_load_bits(h->x, j, st->bits), st->bits);
        float r = ew_host_storage_value(ew_host_load_bits(h->residual, j, st->bits), st->bits);
        float b = ew_host_storage_value(ew_host_load_bits(h->bias, e % EW_HIDDEN, st->bits),
                                        st->bits);
        uint32_t want = ew_host_chain_bits(x, r, b, e, st->n_ops, st->seed, round_each,
                                           st->bits);
        uint32_t got = ew_host_load_bits(h->y, j, st->bits);
        float got_f = ew_host_storage_value(got, st->bits);
        float want_f = ew_host_storage_value(want, st->bits);
        uf_err_add(&res->err, e, got_f, want_f);    /* the poison left in place: infinite */
        if (got == want)
            continue;
        if (res->bad++ == 0) {
            res->first_bad = e;
            res->first_got = got_f;
            res->first_want = want_f;
        }
    }
out:
    return rc;
}

/* Where host-check run s starts: the first and last elements, and runs spread by the seed. */
static size_t ew_sample_offset(const ew_state *st, uint64_t seed, int s)
{
    size_t span = st->n - EW_SAMPLE_ELEMS;
    if (s == 0)
        return 0;
    if (s == EW_SAMPLE_BLOCKS - 1)
        return span;
    uint64_t h = ((uint64_t)uf_mix32((uint32_t)seed + (uint32_t)s) << 32) |
                 uf_mix32((uint32_t)(seed >> 32) ^ (0x85ebca6bu * (uint32_t)s));
    return (size_t)(h % (span + 1));
}

/* The device check of every element against the variant's rounding model. */
static int ew_device_check(uf_ctx *ctx, const ew_state *st, int round_each,
                           unsigned long long *bad)
{
    int rc = UF_OK;
    ew_check_args a = {
        .x = st->x,
        .residual = st->residual,
        .bias = st->bias,
        .y = st->y,
        .n = st->n,
        .bits = st->bits,
        .n_ops = st->n_ops,
        .round_each = round_each,
        .seed = st->seed,
        .bad = st->d_bad,
    };
    bad[0] = 0;
    bad[1] = ~0ull;
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->d_bad, bad, 2 * sizeof *bad, cudaMemcpyHostToDevice,
                                        ctx->stream), out);
    ew_check_kernel<<<st->check_blocks, EW_BLOCK, 0, ctx->stream>>>(a);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(bad, st->d_bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                                        ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* Fresh inputs, poisoned output (0xff bytes: NaN in fp32 and bf16), one step of the variant;
 * then every element is compared bitwise with a plain per-element device reference, and runs
 * of elements with the host reference. Both model the variant's rounding: unfused rounds to
 * the storage type after every op, fused once at the end. In fp32 the two models are the same
 * function, so fused and unfused outputs are bitwise identical; in bf16 they differ by design,
 * and each is exact against its own model. Tolerance: none (bitwise); max_rel_err (verify.h)
 * over the host-checked elements is 0 when they all agree. */
int ew_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err)
{
    int rc = UF_OK;
    ew_state *st = (ew_state *)ctx->state;
    int round_each = variant == EW_UNFUSED;
    const char *name = variant == EW_UNFUSED ? "unfused" : "fused";
    unsigned long long bad[2];
    ew_host_result res;
    ew_host_sample h;
    memset(&res, 0, sizeof res);
    memset(&h, 0, sizeof h);
    uf_err_init(&res.err);
    *max_rel_err = NAN;

    h.x = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.residual = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.y = malloc(EW_SAMPLE_ELEMS * st->elem_bytes);
    h.bias = malloc(st->bias_bytes);
    if (!h.x || !h.residual || !h.y || !h.bias) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory");
        goto out_free;
    }
    UF_STATUS_OR_GOTO(rc, ew_make_inputs(ctx, st, seed), out_free);
    UF_CUDA_OR_GOTO(rc, cudaMemsetAsync(st->y, 0xff, st->tensor_bytes, ctx->stream), out_free);
    UF_STATUS_OR_GOTO(rc, ctx->scenario->run_step(ctx, variant), out_free);
    UF_STATUS_OR_GOTO(rc, ew_device_check(ctx, st, round_each, bad), out_free);
    for (int s = 0; s < EW_SAMPLE_BLOCKS; ++s)
        UF_STATUS_OR_GOTO(rc, ew_host_check(ctx, st, &h, ew_sample_offset(st, seed, s),
                                            EW_SAMPLE_ELEMS, round_each, &res), out_free);
    if (bad[0] > 0 && res.bad == 0)  /* the host sample missed it: look at the first one */
        UF_STATUS_OR_GOTO(rc, ew_host_check(ctx, st, &h, (size_t)bad[1], 1, round_each, &res),
                          out_free);
    *max_rel_err = uf_err_value(&res.err);
    if (res.bad > 0)
        rc = uf_fail(ctx, UF_ERR,
                     "%s: %llu of %zu elements differ from the per-element reference, %zu of %zu "
                     "checked from the host reference (element %zu: got %.9g, expected %.9g)",
                     name, bad[0], st->n, res.bad, res.err.count, res.first_bad,
                     (double)res.first_got, (double)res.first_want);
    else if (bad[0] > 0)
        rc = uf_fail(ctx, UF_ERR,
                     "%s: %llu of %zu elements differ from the per-element device reference, "
                     "though element %llu agrees with the host reference: a reference is wrong",
                     name, bad[0], st->n, bad[1]);
out_free:
    free(h.bias);
    free(h.y);
    free(h.residual);
    free(h.x);
    return rc;
}

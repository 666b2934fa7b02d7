/* launch_storm: setup (the point's axes, the op table and inputs on the device) and its helpers:
 * the inputs' upload (verification uploads fresh ones) and the release of a device buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "launch_storm_ref.h"
#include "launch_storm_setup.h"

/* The point's axes (whole numbers in range: the harness checked them against ls_axes). */
static int read_point(uf_ctx *ctx, size_t *n, int *n_ops)
{
    *n = (size_t)uf_axis(ctx, "elems");
    *n_ops = (int)uf_axis(ctx, "ops");
    return UF_OK;
}

int ls_upload_inputs(uf_ctx *ctx, ls_state *st, uint64_t seed, float *host_in)
{
    int rc = UF_OK;
    ls_fill_inputs(host_in, st->n, seed);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->x_in, host_in, st->n * sizeof(float),
                                        cudaMemcpyHostToDevice, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

void ls_free_device(void *p, const char *what)
{
    cudaError_t e = cudaFree(p);
    if (e != cudaSuccess)
        uf_report_failure(__FILE__, __LINE__, what, cudaGetErrorString(e));
}

int ls_setup(uf_ctx *ctx)
{
    int rc = UF_OK;
    size_t n = 0;
    int n_ops = 0;
    size_t tensor_bytes, table_bytes;
    ls_state *st = NULL;
    float *host_in = NULL;
    UF_STATUS_OR_GOTO(rc, read_point(ctx, &n, &n_ops), out);
    tensor_bytes = n * sizeof(float);
    table_bytes = (size_t)n_ops * sizeof(ls_op);
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, 2 * tensor_bytes + table_bytes,
                                        "input, output and op table"), out);

    st = (ls_state *)calloc(1, sizeof *st);
    host_in = (float *)malloc(tensor_bytes);
    if (!st || !host_in || !(st->ops = (ls_op *)malloc(table_bytes))) {
        rc = uf_fail(ctx, UF_ERR, "out of host memory for %zu elements and %d ops", n, n_ops);
        goto out_free_host;
    }
    st->n = n;
    st->n_ops = n_ops;
    st->device_bytes = 2 * tensor_bytes + table_bytes;
    ls_build_op_table(st->ops, n_ops);

    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->x_in, tensor_bytes), out_free_host);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->x_out, tensor_bytes), out_free_x_in);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->ops_dev, table_bytes), out_free_x_out);
    /* From pageable memory: staged before the call returns, ordered before the kernels. */
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->ops_dev, st->ops, table_bytes,
                                        cudaMemcpyHostToDevice, ctx->stream), out_free_ops_dev);
    UF_STATUS_OR_GOTO(rc, ls_upload_inputs(ctx, st, ctx->seed, host_in), out_free_ops_dev);
    free(host_in);
    ctx->state = st;
    return UF_OK;

out_free_ops_dev:
    ls_free_device(st->ops_dev, "cudaFree(ops_dev)");
out_free_x_out:
    ls_free_device(st->x_out, "cudaFree(x_out)");
out_free_x_in:
    ls_free_device(st->x_in, "cudaFree(x_in)");
out_free_host:
    if (st)
        free(st->ops);
    free(host_in);
    free(st);
out:
    return rc;
}

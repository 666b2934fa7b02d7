/* launch_storm: a training step whose activation and normalization math is written as K tiny
 * elementwise kernels over a small tensor (batch 1, hidden 4096). Each kernel runs for a
 * microsecond or two, but the CPU needs several microseconds to launch the next one, so the
 * GPU idles in launch gaps. Variants: `eager` (K launches per step, broken), `graph` (the same
 * K kernels captured once in a CUDA graph and replayed with one launch, fix 1), `fused` (one
 * kernel applies the K ops in registers, fix 2). The sweep over tensor size shows where launch
 * cost stops mattering. See README.md. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "random.h"
#include "underfed.h"
#include "verify.h"

/* ---- the ops: data, not branches ----------------------------------------------------------
 * Op k of a step is kind k % OP_KINDS with its own constant c_k (see build_op_table). All
 * variants evaluate the same apply_op with explicitly rounded intrinsics (no contraction the
 * compiler could choose differently per kernel), so eager, graph and fused are bitwise equal. */
enum op_kind { OP_SCALE, OP_BIAS, OP_GELU, OP_SILU, OP_RESIDUAL, OP_CLAMP, OP_NORM, OP_KINDS };

/* How c_k is derived from a = sign_k * amplitude * (1 + jitter_k / 4): offset + a, exp(a) (a
 * multiplicative scale whose passes cancel in log space), or expm1(a) (the same for x + c*x). */
enum const_form { FORM_OFFSET, FORM_EXP, FORM_EXPM1 };

typedef struct op_desc {
    const char *name;
    const char *formula;        /* what apply_op computes, for the reader */
    int form;                   /* enum const_form */
    double offset, amplitude;
} op_desc;

/* The table, in enum op_kind order. Amplitudes are small and the sign of every constant flips
 * on each pass over the table, so consecutive passes nearly undo each other: through 1000 ops
 * the values stay within +-2.3 (the clamp at +-4 is a safety net that never triggers), and every
 * output still depends on its own input (host simulation at K = 1000: d out / d in between
 * 0.12 and 1.33). Each op still moves the larger values by 0.75-6 %, far above the
 * verification tolerance. */
static const op_desc op_descs[OP_KINDS] = {
    {"scale", "y = c*x", FORM_EXP, 0.0, 0.05},
    {"bias", "y = x + c", FORM_OFFSET, 0.0, 0.05},
    {"gelu", "y = x + c*GELU_tanh(x)", FORM_OFFSET, 0.0, 0.02},
    {"silu", "y = x + c*x/(1 + exp(-x))", FORM_OFFSET, 0.0, 0.02},
    {"residual", "y = x + c*x", FORM_EXPM1, 0.0, 0.05},
    {"clamp", "y = min(max(x, -c), c)", FORM_OFFSET, 4.0, 0.0},
    {"norm", "y = x + c*x*(1 - x*x)  (square-root-free pull towards |x| = 1)", FORM_OFFSET, 0.0,
     0.01},
};

typedef struct ls_op {
    int kind;
    float c;
} ls_op;

#define LS_GELU_K0 0.7978845608f    /* sqrt(2/pi), rounded to float */
#define LS_GELU_K1 0.044715f
#define LS_BLOCK 256                 /* threads per block, one element per thread */
#define LS_TABLE_SEED 0x5eedull      /* the op constants are part of the program, not the data */
#define LS_REF_WORK 16777216.0       /* host reference budget: elements checked x ops */
#define LS_MAX_OPS 100000            /* beyond this one step is most of a second of launches */
#define LS_MAX_ELEMS 68719476736.0   /* 2^36: keeps the grid within 2^31 blocks */

/* One op on one value. Every rounding is explicit (__f*_rn), so the compiler cannot contract
 * differently in the per-op kernel and in the fused loop; tanhf and expf are the same calls. */
__device__ __forceinline__ float apply_op(int kind, float x, float c)
{
    switch (kind) {
    case OP_SCALE:
        return __fmul_rn(c, x);
    case OP_BIAS:
        return __fadd_rn(x, c);
    case OP_GELU: {
        float x3 = __fmul_rn(__fmul_rn(x, x), x);
        float inner = __fmul_rn(LS_GELU_K0, __fmaf_rn(LS_GELU_K1, x3, x));
        float gelu = __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, tanhf(inner)));
        return __fmaf_rn(c, gelu, x);
    }
    case OP_SILU: {
        float silu = __fdiv_rn(x, __fadd_rn(1.0f, expf(-x)));
        return __fmaf_rn(c, silu, x);
    }
    case OP_RESIDUAL:
        return __fmaf_rn(c, x, x);
    case OP_CLAMP:
        return fminf(fmaxf(x, -c), c);
    case OP_NORM:
        return __fmaf_rn(__fmul_rn(c, x), __fmaf_rn(-x, x, 1.0f), x);
    default:
        return __int_as_float(0x7fc00000); /* an unknown kind poisons the output: verify fails */
    }
}

/* One op over the tensor (eager and graph). `in` may equal `out`: op 0 reads the input, the
 * later ops work in place on the output, so every step is the same work and never drifts. */
__global__ void op_kernel(const float *in, float *out, size_t n, int kind, float c)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = apply_op(kind, in[i], c);
}

/* All K ops in registers (fused): one read and one write per element. */
__global__ void fused_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n,
                             const ls_op *__restrict__ ops, int n_ops)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
#pragma unroll 4
    for (int k = 0; k < n_ops; ++k)
        x = apply_op(ops[k].kind, x, ops[k].c);
    out[i] = x;
}

/* The same op in double on the host: the reference. Same float constants, exact math. */
static double reference_op(int kind, double x, double c)
{
    switch (kind) {
    case OP_SCALE:
        return c * x;
    case OP_BIAS:
        return x + c;
    case OP_GELU: {
        double inner = (double)LS_GELU_K0 * (x + (double)LS_GELU_K1 * x * x * x);
        return x + c * (0.5 * x * (1.0 + tanh(inner)));
    }
    case OP_SILU:
        return x + c * (x / (1.0 + exp(-x)));
    case OP_RESIDUAL:
        return x + c * x;
    case OP_CLAMP:
        return fmin(fmax(x, -c), c);
    case OP_NORM:
        return x + c * x * (1.0 - x * x);
    default:
        return NAN;
    }
}

/* ---- host-side random numbers (counter-based: value i depends only on seed and i) -------- */

/* Inputs uniform in [-2, 2): the range where GELU and SiLU are nonlinear. 24 bits, so that
 * 4u - 2 is exact in float. */
static void fill_inputs(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(4.0 * uf_uniform_at(seed, i, 24) - 2.0);
}

/* Op k: kind k % OP_KINDS; constant with a sign that flips on every pass over the table and
 * a magnitude jittered by up to +-25 % per k. */
static void build_op_table(ls_op *ops, int n_ops)
{
    for (int k = 0; k < n_ops; ++k) {
        int kind = k % OP_KINDS;
        const op_desc *d = &op_descs[kind];
        double sign = (k / OP_KINDS) % 2 == 0 ? 1.0 : -1.0;
        double jitter = 2.0 * uf_uniform_at(LS_TABLE_SEED, (uint64_t)k, 24) - 1.0;
        double a = sign * d->amplitude * (1.0 + 0.25 * jitter);
        double c = d->form == FORM_EXP     ? exp(a)
                   : d->form == FORM_EXPM1 ? expm1(a)
                                           : d->offset + a;
        ops[k].kind = kind;
        ops[k].c = (float)c;
    }
}

/* ---- the scenario's state ----------------------------------------------------------------- */

enum { V_EAGER, V_GRAPH, V_FUSED };

typedef struct ls_state {
    size_t n;                   /* tensor elements */
    int n_ops;                  /* K: ops (kernels) per step */
    float *x_in, *x_out;        /* device: the step's input (never written by a step), output */
    ls_op *ops_dev;             /* device: the op table, read by the fused kernel */
    ls_op *ops;                 /* host: the same table, read by eager launches and the reference */
    cudaGraphExec_t graph_exec; /* graph variant, between begin_variant and end_variant */
    size_t device_bytes;        /* everything allocated on the device */
} ls_state;

static unsigned grid_blocks(size_t n)
{
    return (unsigned)((n + LS_BLOCK - 1) / LS_BLOCK);
}

/* K launches: op 0 from x_in into x_out, ops 1..K-1 in place on x_out. */
static int enqueue_eager(const ls_state *st, cudaStream_t stream)
{
    int rc = UF_OK;
    unsigned blocks = grid_blocks(st->n);
    const float *src = st->x_in;
    for (int k = 0; k < st->n_ops; ++k) {
        op_kernel<<<blocks, LS_BLOCK, 0, stream>>>(src, st->x_out, st->n, st->ops[k].kind,
                                                   st->ops[k].c);
        UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
        src = st->x_out;
    }
out:
    return rc;
}

static int enqueue_fused(const ls_state *st, cudaStream_t stream)
{
    int rc = UF_OK;
    fused_kernel<<<grid_blocks(st->n), LS_BLOCK, 0, stream>>>(st->x_in, st->x_out, st->n,
                                                              st->ops_dev, st->n_ops);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* One step of a variant on the context's stream; no synchronisation. */
static int enqueue_variant(uf_ctx *ctx, int variant)
{
    const ls_state *st = (const ls_state *)ctx->state;
    int rc = UF_OK;
    switch (variant) {
    case V_EAGER:
        return enqueue_eager(st, ctx->stream);
    case V_GRAPH:
        if (!st->graph_exec)
            return uf_fail(ctx, UF_ERR, "graph: step run before the graph was captured");
        UF_CUDA_OR_GOTO(rc, cudaGraphLaunch(st->graph_exec, ctx->stream), out);
        return rc;
    case V_FUSED:
        return enqueue_fused(st, ctx->stream);
    default:
        return uf_fail(ctx, UF_ERR, "unknown variant %d", variant);
    }
out:
    return rc;
}

/* The point's axes (whole numbers in range: the harness checked them against ls_axes). */
static int read_point(uf_ctx *ctx, size_t *n, int *n_ops)
{
    *n = (size_t)uf_axis(ctx, "elems");
    *n_ops = (int)uf_axis(ctx, "ops");
    return UF_OK;
}

/* Inputs from `seed` into host_in and x_in; waits for the copy. */
static int upload_inputs(uf_ctx *ctx, ls_state *st, uint64_t seed, float *host_in)
{
    int rc = UF_OK;
    fill_inputs(host_in, st->n, seed);
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->x_in, host_in, st->n * sizeof(float),
                                        cudaMemcpyHostToDevice, ctx->stream), out);
    UF_CUDA_OR_GOTO(rc, cudaStreamSynchronize(ctx->stream), out);
out:
    return rc;
}

/* teardown cannot return a status: report a failed release and carry on. */
static void free_device(void *p, const char *what)
{
    cudaError_t e = cudaFree(p);
    if (e != cudaSuccess)
        uf_report_failure(__FILE__, __LINE__, what, cudaGetErrorString(e));
}

static int ls_setup(uf_ctx *ctx)
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
    build_op_table(st->ops, n_ops);

    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->x_in, tensor_bytes), out_free_host);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->x_out, tensor_bytes), out_free_x_in);
    UF_CUDA_OR_GOTO(rc, cudaMalloc((void **)&st->ops_dev, table_bytes), out_free_x_out);
    /* From pageable memory: staged before the call returns, ordered before the kernels. */
    UF_CUDA_OR_GOTO(rc, cudaMemcpyAsync(st->ops_dev, st->ops, table_bytes,
                                        cudaMemcpyHostToDevice, ctx->stream), out_free_ops_dev);
    UF_STATUS_OR_GOTO(rc, upload_inputs(ctx, st, ctx->seed, host_in), out_free_ops_dev);
    free(host_in);
    ctx->state = st;
    return UF_OK;

out_free_ops_dev:
    free_device(st->ops_dev, "cudaFree(ops_dev)");
out_free_x_out:
    free_device(st->x_out, "cudaFree(x_out)");
out_free_x_in:
    free_device(st->x_in, "cudaFree(x_in)");
out_free_host:
    if (st)
        free(st->ops);
    free(host_in);
    free(st);
out:
    return rc;
}

/* graph: capture the K launches of one eager step once, instantiate, upload. */
static int capture_graph(uf_ctx *ctx, ls_state *st)
{
    int rc = UF_OK, enqueued;
    cudaError_t ended;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    UF_CUDA_OR_GOTO(rc, cudaStreamBeginCapture(ctx->stream, cudaStreamCaptureModeThreadLocal),
                    out);
    enqueued = enqueue_eager(st, ctx->stream);
    /* End the capture even when a launch failed, so that the stream leaves capture mode. */
    ended = cudaStreamEndCapture(ctx->stream, &graph);
    UF_STATUS_OR_GOTO(rc, enqueued, out_destroy_graph);
    UF_CUDA_OR_GOTO(rc, ended, out_destroy_graph);
    UF_CUDA_OR_GOTO(rc, cudaGraphInstantiate(&exec, graph, 0), out_destroy_graph);
    UF_CUDA_OR_GOTO(rc, cudaGraphUpload(exec, ctx->stream), out_destroy_exec);
    st->graph_exec = exec;
    exec = NULL;
out_destroy_exec:
    if (exec)
        UF_CUDA_OR_GOTO(rc, cudaGraphExecDestroy(exec), out_destroy_graph);
out_destroy_graph:
    if (graph)
        UF_CUDA_OR_GOTO(rc, cudaGraphDestroy(graph), out);
out:
    return rc;
}

static int destroy_graph(ls_state *st)
{
    int rc = UF_OK;
    if (st->graph_exec)
        UF_CUDA_OR_GOTO(rc, cudaGraphExecDestroy(st->graph_exec), out_forget);
out_forget:
    st->graph_exec = NULL;
    return rc;
}

static int ls_begin_variant(uf_ctx *ctx, int variant)
{
    ls_state *st = (ls_state *)ctx->state;
    if (variant != V_GRAPH)
        return UF_OK;
    int rc = destroy_graph(st);
    if (rc != UF_OK)
        return rc;
    return capture_graph(ctx, st);
}

static int ls_end_variant(uf_ctx *ctx, int variant)
{
    (void)variant;
    return destroy_graph((ls_state *)ctx->state);
}

static int ls_run_step(uf_ctx *ctx, int variant)
{
    return enqueue_variant(ctx, variant);
}

#include "launch_storm_verify.cuh"

/* ---- what the scenario counts ------------------------------------------------------------- */

enum { X_LAUNCHES, X_BYTES_MOVED };

/* flops: one per op per element (GELU costs more instructions, a scale fewer: this is a count
 * of ops, the same for every variant). min_bytes: one read and one write of the tensor, the
 * least any step must move. bytes_moved: what the variant moves (the fused kernel's reads of
 * the 8-byte op table hit in cache and are left out). */
static int ls_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    const ls_state *st = (const ls_state *)ctx->state;
    double n = (double)st->n, k = (double)st->n_ops;
    double tensor_pass_bytes = 2.0 * n * sizeof(float);
    row->executed_flops = k * n;
    row->useful_flops = k * n;
    row->min_bytes = tensor_pass_bytes;
    row->peak_mem_bytes = (double)st->device_bytes;
    row->extra[X_LAUNCHES] = variant == V_EAGER ? k : 1.0;
    row->extra[X_BYTES_MOVED] = variant == V_FUSED ? tensor_pass_bytes : k * tensor_pass_bytes;
    return UF_OK;
}

static void ls_teardown(uf_ctx *ctx)
{
    ls_state *st = (ls_state *)ctx->state;
    if (!st)
        return;
    cudaError_t e = cudaStreamSynchronize(ctx->stream);
    if (e != cudaSuccess)
        uf_report_failure(__FILE__, __LINE__, "cudaStreamSynchronize(stream)",
                          cudaGetErrorString(e));
    (void)destroy_graph(st); /* reports its own failure */
    free_device(st->ops_dev, "cudaFree(ops_dev)");
    free_device(st->x_out, "cudaFree(x_out)");
    free_device(st->x_in, "cudaFree(x_in)");
    free(st->ops);
    free(st);
    ctx->state = NULL;
}

/* ---- the expectation ---------------------------------------------------------------------- */

/* The harness prefixes each claim with "variant metric @ point <= bound: ". */
static void ls_expect(const uf_report *rep, uf_expectations *ex)
{
    /* At 4K elements (batch 1, hidden 4096), K = 1000 ops. */
    uf_expect_metric(ex, rep, "eager", "elems=4K", "busy_pct", UF_LE, 30.0,
                     "each tiny kernel runs ~1-2 us but the CPU needs ~4-6 us to launch the "
                     "next, so the GPU idles in launch gaps");
    uf_expect_metric(ex, rep, "eager", "elems=4K", "idle_host_pct", UF_GE, 50.0,
                     "the idle time is the GPU waiting for the host's next launch, not "
                     "something else");
    uf_expect_metric(ex, rep, "graph", "elems=4K", "busy_pct", UF_GE, 60.0,
                     "a replayed graph submits its K kernel nodes back to back from the device "
                     "side, with no CPU launch per kernel");
    uf_expect_ratio(ex, rep, "fused", "eager", "elems=4K", "step_ms", UF_LE, 0.1,
                    "one launch and one pass over the tensor replace K launches");
    /* At the largest tensor. The issue says "the three converge"; fused cannot: it moves K
     * times fewer bytes than eager and graph. The physical claim is that launch cost stops
     * mattering: eager and graph converge and both keep the GPU busy. */
    const char *converge = "each kernel is long, launch cost stops mattering and eager and graph "
                           "converge (within 25 %; fused cannot: it moves K times fewer bytes)";
    uf_expect_ratio(ex, rep, "eager", "graph", "elems=max", "step_ms", UF_GE, 0.8, converge);
    uf_expect_ratio(ex, rep, "eager", "graph", "elems=max", "step_ms", UF_LE, 1.25, converge);
    uf_expect_metric(ex, rep, "eager", "elems=max", "busy_pct", UF_GE, 90.0,
                     "launches queue up ahead of long kernels, so the GPU never waits for the "
                     "CPU");
    uf_expect_metric(ex, rep, "graph", "elems=max", "busy_pct", UF_GE, 90.0,
                     "the GPU is saturated, as with eager");
}

/* ---- the table ---------------------------------------------------------------------------- */

static const uf_variant_desc ls_variants[] = {
    {.name = "eager", .role = UF_BROKEN,
     .summary = "K separate kernel launches per step, each reading and writing the tensor"},
    {.name = "graph", .role = UF_FIXED,
     .summary = "the same K kernels captured once in a CUDA graph, replayed by one launch"},
    {.name = "fused", .role = UF_FIXED,
     .summary = "one kernel applies the K ops in registers: one read, one write"},
};

static const double elems_values[] = {4096, 16384, 65536, 262144,
                                      1048576, 4194304, 16777216, 67108864};
static const double elems_quick[] = {4096, 16777216};
static const double ops_values[] = {100, 1000};
static const double ops_quick[] = {1000};

static const uf_axis_desc ls_axes[] = {
    {.name = "elems", .unit = "elements",
     .summary = "tensor elements (4K = batch 1 x hidden 4096)", UF_AXIS_INTS(1, LS_MAX_ELEMS),
     .default_value = 4096,
     .values = elems_values, .n_values = sizeof elems_values / sizeof elems_values[0],
     .quick_values = elems_quick, .n_quick_values = sizeof elems_quick / sizeof elems_quick[0]},
    {.name = "ops", .unit = "kernels", .summary = "K: elementwise ops (kernels) per step",
     UF_AXIS_INTS(1, LS_MAX_OPS),
     .default_value = 1000, .values = ops_values,
     .n_values = sizeof ops_values / sizeof ops_values[0], .quick_values = ops_quick,
     .n_quick_values = sizeof ops_quick / sizeof ops_quick[0]},
};

static const uf_extra_desc ls_extras[] = {
    {.name = "launches_per_step", .unit = "launches",
     .summary = "host launch calls per step: K for eager, 1 for graph and fused"},
    {.name = "bytes_moved", .unit = "bytes",
     .summary = "tensor bytes the variant reads and writes per step: 2*K*elems*4 or 2*elems*4"},
};

static const uf_scenario launch_storm = {
    .name = "launch_storm",
    .title = "thousands of tiny elementwise kernels: the GPU waits for the CPU to launch them",
    .failure = "Each step launches K tiny elementwise kernels over a 4K-element tensor; every "
               "kernel finishes in a microsecond or two while the CPU needs several to launch "
               "the next, so the GPU sits idle between kernels although NVML reports it busy.",
    .fix = "Capture the K launches once in a CUDA graph and replay it with one launch, or fuse "
           "the K ops into one kernel that keeps the values in registers.",
    .variants = ls_variants,
    .n_variants = sizeof ls_variants / sizeof ls_variants[0],
    .axes = ls_axes,
    .n_axes = sizeof ls_axes / sizeof ls_axes[0],
    .extras = ls_extras,
    .n_extras = sizeof ls_extras / sizeof ls_extras[0],
    .min_gpus = 1,
    .repeat = 30,
    .quick_repeat = 10,
    .warmup = 3,
    .step_stat = UF_STAT_MEDIAN,
    .setup = ls_setup,
    .begin_variant = ls_begin_variant,
    .end_variant = ls_end_variant,
    .run_step = ls_run_step,
    .verify = ls_verify,
    .describe = ls_describe,
    .teardown = ls_teardown,
    .expect = ls_expect,
};

int main(int argc, char **argv) { return uf_main(&launch_storm, argc, argv); }

/* tensor_alignment: one cublasLt GEMM (buffers, layouts, cuBLAS's algorithm and what it says
 * about it), the names of the kernels it launches, setup/teardown and each variant's GEMM
 * (begin/end_variant). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cublasLt.h>
#include <cudaTypedefs.h>   /* the driver's function types, fetched at run time (no libcuda link) */

#include "underfed.h"
#include "uf_cublas.h"
#include "uf_cublaslt.h"
#include "tensor_alignment_ref.h"
#include "tensor_alignment_kernels.h"
#include "tensor_alignment_state.h"
#include "tensor_alignment_setup.h"

static cudaDataType_t ta_data_type(int precision)
{
    return precision == TA_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* fp32 storage computes in fp32 unless TF32 is asked for: the precision ladder's one switch. */
static cublasComputeType_t ta_compute_type(int precision)
{
    return precision == TA_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

/* What cuBLAS says about the algorithm it chose: its configuration and required alignment.
 * Facts, not the measurement: where cuBLAS will not tell (an algorithm without these
 * attributes), g->facts stays 0 and the columns stay empty; the run goes on. */
static void ta_algo_facts(ta_gemm *g)
{
    size_t written = 0;
    unsigned int align = 0;
    int ok = 1;
    const cublasLtMatmulAlgoCapAttributes_t caps[4] = {
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES};
    ok &= cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_ID, &g->algo_id,
                                               sizeof g->algo_id, &written) ==
          CUBLAS_STATUS_SUCCESS;
    ok &= cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                               &g->tile_id, sizeof g->tile_id, &written) ==
          CUBLAS_STATUS_SUCCESS;
    ok &= cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                               &g->stages_id, sizeof g->stages_id, &written) ==
          CUBLAS_STATUS_SUCCESS;
    ok &= cublasLtMatmulAlgoConfigGetAttribute(&g->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                               &g->splitk, sizeof g->splitk, &written) ==
          CUBLAS_STATUS_SUCCESS;
    g->align_bytes = UINT_MAX;
    for (int i = 0; i < 4; i++) {
        ok &= cublasLtMatmulAlgoCapGetAttribute(&g->algo, caps[i], &align, sizeof align,
                                                &written) == CUBLAS_STATUS_SUCCESS;
        if (align < g->align_bytes)
            g->align_bytes = align;
    }
    g->facts = ok;
}

/* The layouts of the shape and cuBLAS's choice for them (what cublasGemmEx would run). */
static int ta_gemm_plan(uf_ctx *ctx, ta_state *st, ta_gemm *g)
{
    int rc = UF_OK;
    const ta_shape *s = &g->shape;
    const cudaDataType_t type = ta_data_type(s->precision);
    const cublasOperation_t op_a = s->w_kn ? CUBLAS_OP_N : CUBLAS_OP_T, op_n = CUBLAS_OP_N;
    const ta_dims wd = ta_w_dims(s);
    int found = 0;
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulDescCreate(&g->op, ta_compute_type(s->precision),
                                                   CUDA_R_32F), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                         &op_a, sizeof op_a), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB,
                                                         &op_n, sizeof op_n), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatrixLayoutCreate(&g->a_layout, type, wd.ld, wd.rows_alloc,
                                                     wd.ld), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatrixLayoutCreate(&g->b_layout, type, s->k_run, s->m,
                                                     s->k_run), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatrixLayoutCreate(&g->d_layout, type, s->n_run, s->m,
                                                     s->n_run), out);
    UF_STATUS_OR_GOTO(rc, uf_lt_first_algo(st->lt, g->op, g->a_layout, g->b_layout,
                                           g->d_layout, TA_WS_BYTES, &g->algo, &found), out);
    if (found < 1) {
        rc = uf_fail(ctx, UF_ERR, "cuBLAS offers no algorithm for %d x %d x %d", s->m, s->n_run,
                     s->k_run);
        goto out;
    }
    ta_algo_facts(g);
out:
    return rc;
}

void ta_gemm_free(ta_gemm *g)
{
    if (g->d_layout)
        cublasLtMatrixLayoutDestroy(g->d_layout);
    if (g->b_layout)
        cublasLtMatrixLayoutDestroy(g->b_layout);
    if (g->a_layout)
        cublasLtMatrixLayoutDestroy(g->a_layout);
    if (g->op)
        cublasLtMatmulDescDestroy(g->op);
    cudaFree(g->y);
    cudaFree(g->w);
    cudaFree(g->x);
    memset(g, 0, sizeof *g);
}

/* Allocate the shape's tensors and plan its GEMM; on failure g is freed. */
int ta_gemm_create(uf_ctx *ctx, ta_state *st, const ta_shape *s, ta_gemm *g)
{
    int rc = UF_OK;
    const size_t eb = ta_elem_bytes(s->precision);
    memset(g, 0, sizeof *g);
    g->shape = *s;
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&g->x, (size_t)s->m * s->k_run * eb), fail);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&g->w, (size_t)s->n_run * s->k_run * eb), fail);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&g->y, (size_t)s->m * s->n_run * eb), fail);
    UF_STATUS_OR_GOTO(rc, ta_gemm_plan(ctx, st, g), fail);
    return UF_OK;
fail:
    ta_gemm_free(g);
    return rc;
}

/* X and W from seed: the real part random (the same values whatever the padding), pads zero. */
int ta_gemm_fill(const ta_gemm *g, uint64_t seed, cudaStream_t stream)
{
    int rc = UF_OK;
    const ta_shape *s = &g->shape;
    const ta_dims wd = ta_w_dims(s);
    uint32_t key_x = 0, key_w = 0;
    ta_keys(seed, &key_x, &key_w);
    ta_fill_kernel<<<TA_GRID, TA_BLOCK, 0, stream>>>(g->x, s->precision, s->m, s->k, s->m,
                                                     s->k_run, key_x);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    ta_fill_kernel<<<TA_GRID, TA_BLOCK, 0, stream>>>(g->w, s->precision, wd.rows, wd.cols,
                                                     wd.rows_alloc, wd.ld, key_w);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Y = X·Wᵀ on stream: one cublasLtMatmul with the algorithm cuBLAS chose (beta 0, C = D). */
int ta_gemm_enqueue(const ta_state *st, const ta_gemm *g, cudaStream_t stream)
{
    int rc = UF_OK;
    const float alpha = 1.0f, beta = 0.0f;
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmul(st->lt, g->op, &alpha, g->w, g->a_layout, g->x,
                                         g->b_layout, &beta, g->y, g->d_layout, g->y,
                                         g->d_layout, &g->algo, st->ws, TA_WS_BYTES, stream),
                      out);
out:
    return rc;
}

/* ---- the kernels cuBLAS launches, by name --------------------------------------------------
 * The GEMM captured into a graph (nothing runs) and each kernel node's function asked for its
 * name through the driver (cuFuncGetName / cuKernelGetName, CUDA 12.3+), fetched with
 * cudaGetDriverEntryPointByVersion so that the program does not link libcuda. The same names
 * are in the trace (--trace FILE.json); this puts them beside the row without CUPTI. */

typedef struct ta_driver {
    PFN_cuGraphKernelNodeGetParams_v12000 node_params;
    PFN_cuFuncGetName_v12030 func_name;
    PFN_cuKernelGetName_v12030 kernel_name;
} ta_driver;

static int ta_driver_entry(const char *symbol, void **fn, char *why, size_t len)
{
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, fn, 12030, cudaEnableDefault, &found) !=
            cudaSuccess || found != cudaDriverEntryPointSuccess || !*fn) {
        cudaGetLastError();
        snprintf(why, len, "the driver has no %s (CUDA 12.3+ needed)", symbol);
        return UF_SKIP;
    }
    return UF_OK;
}

static int ta_driver_open(ta_driver *d, char *why, size_t len)
{
    int rc = ta_driver_entry("cuGraphKernelNodeGetParams", (void **)&d->node_params, why, len);
    if (rc == UF_OK)
        rc = ta_driver_entry("cuFuncGetName", (void **)&d->func_name, why, len);
    if (rc == UF_OK)
        rc = ta_driver_entry("cuKernelGetName", (void **)&d->kernel_name, why, len);
    return rc;
}

/* Append the name of kernel node `node` to st->kernels. */
static void ta_name_node(ta_state *st, const ta_driver *d, cudaGraphNode_t node)
{
    CUDA_KERNEL_NODE_PARAMS p;
    const char *name = NULL;
    size_t used = strlen(st->kernels);
    memset(&p, 0, sizeof p);
    if (d->node_params((CUgraphNode)node, &p) == CUDA_SUCCESS) {
        if (p.func)
            d->func_name(&name, p.func);
        else if (p.kern)
            d->kernel_name(&name, p.kern);
    }
    if (st->n_kernels == 0)
        st->kernel_id = ta_name_id(name);
    snprintf(st->kernels + used, sizeof st->kernels - used, "%s%s", used ? " + " : "",
             name ? name : "(unnamed)");
    st->n_kernels++;
}

/* Capture one GEMM on a stream of its own and name its kernel nodes into st. Never fails the
 * run: where the names cannot be had, st->kernels says why and the counts stay unknown. */
int ta_name_kernels(ta_state *st, const ta_gemm *g)
{
    int rc = UF_OK;
    cudaStream_t cap = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphNode_t *nodes = NULL;
    size_t n_nodes = 0;
    int enqueued = UF_ERR;
    cudaError_t ended = cudaErrorUnknown;
    ta_driver d;
    char why[UF_REASON_LEN] = "";
    st->kernels[0] = '\0';
    st->n_kernels = 0;
    st->kernel_id = 0;
    if (ta_driver_open(&d, why, sizeof why) != UF_OK)
        goto out;
    UF_CUDA_OR_GOTO(rc, cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking), out);
    if (cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        snprintf(why, sizeof why, "stream capture refused");
        goto out;
    }
    /* the capture is ended whatever the enqueue did: the stream must leave capture mode */
    enqueued = ta_gemm_enqueue(st, g, cap);
    ended = cudaStreamEndCapture(cap, &graph);
    if (enqueued != UF_OK || ended != cudaSuccess ||
        cudaGraphGetNodes(graph, NULL, &n_nodes) != cudaSuccess) {
        snprintf(why, sizeof why, "the GEMM could not be captured into a graph");
        goto out;
    }
    nodes = (cudaGraphNode_t *)calloc(n_nodes ? n_nodes : 1, sizeof *nodes);
    if (!nodes || cudaGraphGetNodes(graph, nodes, &n_nodes) != cudaSuccess) {
        snprintf(why, sizeof why, "the graph's nodes could not be listed");
        goto out;
    }
    for (size_t i = 0; i < n_nodes; i++) {
        cudaGraphNodeType type;
        if (cudaGraphNodeGetType(nodes[i], &type) == cudaSuccess && type == cudaGraphNodeTypeKernel)
            ta_name_node(st, &d, nodes[i]);
    }
out:
    if (why[0]) {
        cudaGetLastError();     /* a refused capture leaves its error behind: not ours to keep */
        snprintf(st->kernels, sizeof st->kernels, "unknown: %s", why);
        st->n_kernels = 0;
    }
    free(nodes);
    if (graph)
        cudaGraphDestroy(graph);
    if (cap)
        cudaStreamDestroy(cap);
    return rc;
}

/* The axis the variant's layer does not use that is away from its default (the variant is
 * measured once, at the default), or NULL. */
static const char *ta_ignored_axis_moved(const uf_ctx *ctx, int variant)
{
    const uf_scenario *s = ctx->scenario;
    const int layer = ((const ta_state *)ctx->state)->plans[variant].layer;
    for (int a = 0; a < s->n_axes; a++) {
        const char *name = s->axes[a].name;
        const int used = strcmp(name, "tokens") == 0 || strcmp(name, "layout") == 0 ||
                         (strcmp(name, "vocab") == 0 && layer == TA_LOGITS) ||
                         (strcmp(name, "dim") == 0 && layer == TA_HIDDEN);
        if (!used && ctx->axis[a] != s->axes[a].default_value)
            return name;
    }
    return NULL;
}

/* ---- callbacks --------------------------------------------------------------------------- */

void ta_teardown(uf_ctx *ctx)
{
    ta_state *st = (ta_state *)ctx->state;
    if (!st)
        return;
    ta_gemm_free(&st->gemm);
    cudaFree(st->ws);
    if (st->lt)
        cublasLtDestroy(st->lt);
    free(st);
    ctx->state = NULL;
}

/* The plans and ta_variant_shape are the story's. */
int ta_setup_plans(uf_ctx *ctx, const ta_plan *plans, ta_shape_fn variant_shape)
{
    int rc = UF_OK;
    ta_state *st = (ta_state *)calloc(1, sizeof *st);
    if (!st)
        return uf_fail(ctx, UF_ERR, "out of host memory");
    ctx->state = st;
    st->pair_rel_err = NAN;
    st->plans = plans;
    st->variant_shape = variant_shape;
    UF_CUBLAS_OR_GOTO(rc, cublasLtCreate(&st->lt), out);
    UF_CUDA_OR_GOTO(rc, cudaMalloc(&st->ws, TA_WS_BYTES), out);
out:
    return rc; /* on failure the harness calls teardown, which frees what was made */
}

/* The variant's GEMM at this point, its inputs drawn from the run's seed. A variant measured
 * at one point of an axis it does not use is skipped at the others. */
int ta_begin_variant(uf_ctx *ctx, int variant)
{
    int rc = UF_OK;
    ta_state *st = (ta_state *)ctx->state;
    const char *ignored = ta_ignored_axis_moved(ctx, variant);
    if (ignored) {
        snprintf(ctx->reason, sizeof ctx->reason, "%s does not depend on %s: measured at its "
                 "default only", ctx->scenario->variants[variant].name, ignored);
        return UF_SKIP;
    }
    const ta_shape s = st->variant_shape(ctx, variant);
    size_t need = ta_device_bytes(&s);
    if (st->plans[variant].partner >= 0) {   /* verify runs the partner beside it */
        const ta_shape p = st->variant_shape(ctx, st->plans[variant].partner);
        need += ta_device_bytes(&p);
    }
    UF_STATUS_OR_GOTO(rc, uf_check_fits(ctx, need, "the GEMM's tensors and its partner's"), out);
    UF_STATUS_OR_GOTO(rc, ta_gemm_create(ctx, st, &s, &st->gemm), out);
    st->pair_rel_err = NAN;
    UF_STATUS_OR_GOTO(rc, ta_gemm_fill(&st->gemm, ctx->seed, ctx->stream), out);
    UF_STATUS_OR_GOTO(rc, uf_wait_stream(ctx, ctx->stream, "filling the GEMM's inputs"), out);
out:
    return rc;
}

int ta_end_variant(uf_ctx *ctx, int variant)
{
    ta_state *st = (ta_state *)ctx->state;
    (void)variant;
    ta_gemm_free(&st->gemm);
    return UF_OK;
}

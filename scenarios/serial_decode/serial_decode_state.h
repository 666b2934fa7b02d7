/* serial_decode's host side: the variants, the scenario's state, and the callbacks each unit
 * defines: the story (serial_decode.cu: the steps, sd_enqueue, the claims), setup
 * (serial_decode_setup.cu: the model, the graphs, the persistent plan, what a row counts) and
 * verification (serial_decode_verify.cu). For CUDA translation units. */
#ifndef SD_STATE_H
#define SD_STATE_H

#include <cublas_v2.h>

#include "serial_decode_kernels.h"
#include "underfed.h"

enum { V_EAGER_B1, V_GRAPH_B1, V_PERSISTENT, V_BATCHED, SD_N_VARIANTS };

/* The model every point shares: its layers, vocabulary, cache and batch (d is the axis). */
#define SD_LAYERS 16
#define SD_VOCAB 32768
#define SD_CACHE 256
#define SD_BATCH 64
#define SD_BLAS_WS_BYTES ((size_t)32 << 20) /* cuBLAS workspace, set explicitly (Hopper) */

/* The scenario's columns (describe). */
enum { X_TOKENS_PER_S, X_BATCH, X_WEIGHT_BYTES, X_CACHE_BYTES, X_LAUNCHES, X_GEMV_CHAIN_MS,
       X_GEMV_CHAIN_PCT, X_BITWISE_DIFF, X_STEPS_COMPARED, X_P_STAGES, X_P_GRID, X_P_BULK,
       SD_N_EXTRAS };

/* The persistent kernel's ring is filled by 16-byte cp.async copies of every lane (0), or by
 * one bulk copy (TMA) per stage (1): a compile-time variant, -DSD_P_BULK=1, recorded in the
 * results (p_bulk). */
#ifndef SD_P_BULK
#define SD_P_BULK 0
#endif
/* The per-op attention spreads each KV head over SD_ATTN_SPLITS blocks (a divisor of the
 * cache's 8 chunks): 1, one block of 8 warps whose partials meet in shared memory; more, as
 * many blocks of fewer warps whose partials meet in memory, combined by the last block to
 * finish (a counter). The same bits either way. A compile-time variant, -DSD_ATTN_SPLITS=8
 * (the results have no column left for it: the build's git describe names it). */
#ifndef SD_ATTN_SPLITS
#define SD_ATTN_SPLITS 1
#endif

typedef struct sd_state {
    sd_model m;                 /* SD_BATCH sequences; the batch-1 variants decode sequence 0 */
    int bps, warps, ring_kib;   /* the persistent kernel's tunables at this point */
    sd_pconfig plan;            /* ... and its launch (begin_variant) */
    cublasHandle_t blas;        /* batched's GEMMs, bound to ctx->stream */
    void *blas_ws;
    cudaGraphExec_t graph;      /* graph_b1's or batched's step (begin_variant) */
    double chain_ms;            /* describe: graph_b1's GEMVs alone, replayed (ms per step) */
    /* verify's findings, for describe */
    double bitwise_diff, steps_compared;
} sd_state;

/* ---- serial_decode.cu: the steps ------------------------------------------------------------ */

/* One decode step of the variant on stream (graph_b1, batched: their graph). */
int sd_enqueue(sd_state *st, int variant, cudaStream_t stream);
/* The step's launches as eager_b1 (and graph_b1's capture) makes them; only_gemv: its GEMVs
 * alone (describe's chain). */
int sd_enqueue_ops(const sd_model *m, int only_gemv, cudaStream_t stream);
int sd_enqueue_batched(sd_state *st, cudaStream_t stream);
/* A graph of `enqueue`'s launches, instantiated and uploaded. */
int sd_capture(sd_state *st, int variant, int only_gemv, cudaStream_t stream,
               cudaGraphExec_t *exec);

/* ---- serial_decode_setup.cu ------------------------------------------------------------------ */

int sd_setup(uf_ctx *ctx);
void sd_teardown(uf_ctx *ctx);
int sd_begin_variant(uf_ctx *ctx, int variant);
int sd_end_variant(uf_ctx *ctx, int variant);
int sd_describe(uf_ctx *ctx, int variant, uf_row *row);

/* ---- serial_decode_verify.cu ---------------------------------------------------------------- */

/* Steps each verification decodes, and the tolerances (serial_decode_verify.cu says why). */
#define SD_VERIFY_STEPS 8
#define SD_TOL_HOST 2e-2        /* eager_b1 against the fp64 host reference */
#define SD_TOL_DEVICE 2e-2      /* persistent and batched against eager_b1 */
int sd_verify(uf_ctx *ctx, int variant, uint64_t seed, double *max_rel_err);

#endif

/* serial_decode's device side (serial_decode_kernels.cu): one decoder instance in device
 * memory, the kernels one decode step is made of, and the host calls that launch each. The
 * arithmetic of a matrix row, of an attention work item and of its combine is one device
 * function each, shared by the per-op kernels and by the persistent kernel, so that every
 * variant of batch 1 computes the same bits. For CUDA translation units. */
#ifndef SD_KERNELS_H
#define SD_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include <cuda_bf16.h>

#include "serial_decode_ref.h"

typedef __nv_bfloat16 bf16;

/* Attention's partial of one chunk (SD_CHUNK positions of a KV head): each of the group's
 * heads' max score and sum of exponentials (SD_GROUP pairs), then each head's SD_HEAD_DIM
 * weighted values; floats, 16-byte aligned. */
#define SD_PART_FLOATS (2 * SD_GROUP + SD_GROUP * SD_HEAD_DIM)
/* A block's attention scratch in shared memory: every chunk's partial and the group's
 * queries (9,472 bytes). */
#define SD_ATTN_SCRATCH_BYTES ((SD_MAX_CHUNKS * SD_PART_FLOATS + SD_GROUP * SD_HEAD_DIM) * 4)
/* Logits a block of the argmax's first stage reduces. */
#define SD_ARGMAX_SLICE 1024

/* One decoder and its decode state on the device, for `s.batch` sequences. Batch 1 variants
 * use sequence 0's slices. */
typedef struct sd_model {
    sd_shape s;
    int sms;                    /* the GPU's SMs: the per-op GEMV's grid is a whole wave */
    int pdl;                    /* programmatic dependent launch available (sm_90 and up) */
    bf16 *layers;               /* layers x sd_layer_elems */
    bf16 *embed, *head;         /* vocab x d each */
    bf16 *cache;                /* sd_cache_elems: K and V of every sequence, layer, position */
    float *x;                   /* batch x d: the residual stream (fp32) */
    float *q;                   /* batch x d: the step's queries */
    float *logits;              /* batch x vocab */
    float *part;                /* attention partials: batch x kv_heads x chunks x
                                 * SD_PART_FLOATS (through memory where attn_splits > 1) */
    bf16 *a;                    /* batch x d: attention output */
    bf16 *u;                    /* batch x ffn: MLP activation */
    float *qkv, *upf;           /* batched: the GEMMs' fp32 outputs (batch x qkv_rows, x ffn) */
    bf16 *h;                    /* batched: the normed input (batch x d) */
    int *tok;                   /* batch: each sequence's current token */
    unsigned *attn_count;       /* batch x kv_heads: attention blocks done (the last combines) */
    int2 *amax_part;            /* batch x sd_argmax_blocks: each slice's (value's bits, index) */
    unsigned *amax_count;       /* batch: argmax blocks done (the last reduces the slices) */
    int attn_splits;            /* per-op attention: blocks per KV head (SD_ATTN_SPLITS) */
    unsigned long long *step;   /* tokens decoded: the cache position is step % cache */
    unsigned long long *bar;    /* persistent: the grid barrier's arrivals */
    unsigned long long *pstep;  /* persistent: its launches (the barrier's epoch) */
} sd_model;

/* Device bytes of a model of shape s (sd_model_alloc's allocations). */
size_t sd_model_bytes(const sd_shape *s);
/* Allocate every buffer (NULL pointers on failure: sd_model_free frees what was made). */
int sd_model_alloc(sd_model *m, const sd_shape *s, int device);
void sd_model_free(sd_model *m);
/* Draw the weights from seed (the host reference redraws them), then sd_model_restart. */
int sd_model_fill(sd_model *m, uint64_t seed, cudaStream_t stream);
/* The decode state from seed: every cache position drawn (the prompt's K and V), each
 * sequence's first token, step 0, the counters cleared. */
int sd_model_restart(sd_model *m, uint64_t seed, cudaStream_t stream);

/* ---- one decode step, op by op (eager_b1, graph_b1; batched's small kernels) -------------
 * `pdl`: launched with programmatic stream serialization (where m->pdl), so that the kernel
 * starts during its predecessor's tail, issues its first weight loads and only then waits
 * for the predecessor's results (griddepcontrol.wait). */

/* A kernel's launch on stream; pdl: with programmatic stream serialization (the kernel starts
 * in its predecessor's tail and waits for its results where it says). */
int sd_launch_kernel(const void *kernel, dim3 grid, dim3 block, size_t smem, int pdl,
                     void **args, cudaStream_t stream);

/* Phases of a step: 4 per layer (SD_QKV .. SD_DOWN of layer ph / 4), then the LM head. */
static inline UF_HOST_DEVICE int sd_phases(const sd_shape *s)
{
    return 4 * s->layers + 1;
}

/* Sequence b's view of a model: the same weights, its own slices of every per-sequence buffer,
 * batch 1. The batch-1 variants decode sequence 0's view: a kernel whose grid spans the batch
 * (embedding, attention, argmax) must not run all SD_BATCH sequences for one token. */
sd_model sd_sequence_view(const sd_model *m, int b);

/* x[b] = embed[tok[b]] (fp32), every sequence. */
int sd_launch_embed(const sd_model *m, cudaStream_t stream);
/* Batch 1: phase ph's matrix times its input (RMSNorm of x, the attention output or the MLP
 * activation), with its epilogue: q and the cache's K and V at the step's position; x += ; the
 * GELU into u; the logits. One warp per row, rows strided over a one-wave grid. */
int sd_launch_gemv(const sd_model *m, int ph, int pdl, cudaStream_t stream);
/* Attention of layer l for every sequence: one warp per (sequence, KV head, SD_CHUNK
 * positions), a KV head's chunks spread over m->attn_splits blocks; one warp combines them
 * into a: in shared memory (1 split), or, through memory, the last of the KV head's blocks
 * to finish. The same bits for every split. */
int sd_launch_attention(const sd_model *m, int l, int pdl, cudaStream_t stream);
/* 1 when `splits` blocks per KV head divide its cache's chunks (1 .. cache / SD_CHUNK). */
int sd_attn_splits_valid(const sd_shape *s, int splits);
/* tok[b] = argmax of logits[b] (lowest index on ties), every sequence; step + 1. Two stages in
 * one kernel: a block per SD_ARGMAX_SLICE logits, the last of a sequence's over the slices. */
int sd_launch_argmax(const sd_model *m, int pdl, cudaStream_t stream);

/* Blocks of the argmax's first stage per sequence. */
static inline UF_HOST_DEVICE int sd_argmax_blocks(const sd_shape *s)
{
    return (s->vocab + SD_ARGMAX_SLICE - 1) / SD_ARGMAX_SLICE;
}
/* Batched: h = bf16(RMSNorm(x)) for every sequence (the GEMV's staging, into memory). */
int sd_launch_rmsnorm(const sd_model *m, cudaStream_t stream);
/* Batched: the QKV GEMM's rows into q and layer l's cache at the step's position. */
int sd_launch_scatter(const sd_model *m, int l, cudaStream_t stream);
/* Batched: u = bf16(GELU(upf)). */
int sd_launch_gelu(const sd_model *m, cudaStream_t stream);

/* ---- one decode step in one kernel (persistent) -------------------------------------------- */

#define SD_P_MAX_WARPS 16       /* warps per block of the persistent kernel, at most */
#define SD_P_MAX_STAGES 16      /* ring stages per warp, at most */
#define SD_P_STAGE_BYTES 2048   /* a warp's ring stage: 4 chunks of 16 bytes per lane */

/* The persistent kernel's shared memory before the rings, in 16-byte chunks: a phase's input
 * (ffn bf16 at most) or, between the QKV and O phases, attention's scratch: the larger. */
static inline UF_HOST_DEVICE int sd_p_act_chunks(const sd_shape *s)
{
    const int input = s->ffn / 8, scratch = SD_ATTN_SCRATCH_BYTES / 16;
    return input > scratch ? input : scratch;
}

typedef struct sd_pconfig {
    int bps, warps, stages;     /* blocks per SM, warps per block, ring stages per warp */
    int bulk;                   /* each stage one bulk copy by lane 0 (TMA), not 16 bytes per
                                 * lane (cp.async) */
    int grid;                   /* blocks: bps x SMs, all resident (cooperative launch) */
    size_t smem_bytes;          /* per block: the input vector (or attention's scratch) and the
                                 * warps' rings */
} sd_pconfig;

/* The persistent kernel's launch for bps blocks per SM of `warps` warps with ring_kib KiB of
 * weight ring per SM, filled by cp.async or (bulk) by bulk copies. 0, or -1 with why (the GPU cannot hold it: shared memory, co-residency,
 * no cooperative launch; or a value out of range). */
int sd_persistent_plan(const sd_model *m, int bps, int warps, int ring_kib, int bulk,
                       sd_pconfig *p, char *why, size_t len);
/* One decode step of sequence 0 (batch 1) in one cooperative kernel: every phase of every
 * layer, grid barriers between dependent phases, weights streamed through each warp's ring
 * of 16-byte cp.async copies that runs ahead across the barriers. */
int sd_launch_persistent(const sd_model *m, const sd_pconfig *p, cudaStream_t stream);

#endif

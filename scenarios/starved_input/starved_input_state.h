/* starved_input: the step's shape, the variant ids, a variant's feed and the scenario's state,
 * shared by the story and its units. */
#ifndef SI_STATE_H
#define SI_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "tokenizer.h"
#include "starved_input_source.h"
#include "starved_input_pipeline.h"

/* The step's shape and the corpus size (the story's SI_FULL and SI_QUICK). */
typedef struct si_shape {
    int rows;               /* documents (sequences) per batch */
    int seq_len;            /* tokens per sequence, after truncation and padding */
    int hidden;             /* model width d */
    int ffn;                /* feed-forward width f */
    int corpus_batches;     /* batches in the corpus; steps cycle over them (epochs) */
} si_shape;

/* The variants, in table order. */
enum { SI_SYNC = 0, SI_WORKERS = 1, SI_PRETOKENIZED = 2 };

/* The batch being fed to the steps of one variant: the sync path's buffers, or a pipeline. */
typedef struct si_feed {
    int variant;
    si_source src;
    si_pipeline *pipe;          /* workers, pretokenized */
    int32_t *pageable_ids;      /* sync: the batch in ordinary (pageable) malloc'd memory */
    si_scratch scratch;         /* sync: the step thread's tokenizer buffers */
    int64_t next_batch;         /* sync: the batch the next step tokenizes */
    int64_t cpu_ns, batches;    /* sync: CPU time the step thread spent producing batches */
    int64_t steps, wait_ns;     /* steps fed; host time they spent getting their batch */
    int open;
} si_feed;

struct si_state;

/* The story's feed_step: take or make the feed's next batch and enqueue a step on it
 * (d_checksum, verify only: also add the checksum of the ids it read). */
typedef int (*si_feed_step_fn)(struct si_state *st, si_feed *f, cudaStream_t stream,
                               unsigned long long *d_checksum, char *err, size_t errlen);

typedef struct si_state {
    si_shape shape;
    int device, workers, tok_cost;
    int64_t tokens;             /* rows * seq_len: positions per step */
    /* The tokenizing work per batch, calibrated at setup (si_setup_shape): */
    double first_pass_ms;       /* one thread's CPU time for one pass over a batch's documents */
    double next_pass_ms;        /* ... and for each further pass over them */
    double gpu_step_ms;         /* the step back to back, nothing in its way (median, events) */
    int batch_passes;           /* tokenizer passes over a batch's documents in all: tok_cost x
                                 * those that take one thread the story's multiple of the step */
    size_t batch_bytes;         /* the ids of one batch */
    si_vocab vocab;
    si_tokenizer tok;
    si_corpus corpus;
    int32_t *pretok;            /* the mapped pretokenized corpus, built when first needed */
    size_t pretok_bytes;
    uint16_t *h_emb, *h_w1, *h_w2;  /* the weights as bf16 bits, for the host reference */
    __nv_bfloat16 *d_emb, *d_w1, *d_w2, *d_x, *d_h, *d_y;
    int32_t *d_ids[2];          /* double-buffered device input */
    cudaEvent_t step_done[2];   /* recorded after the last step that read d_ids[k] */
    int parity;                 /* the d_ids the next prefetched step uses */
    cudaStream_t copy_stream;
    cublasHandle_t blas;
    size_t device_bytes;        /* what the scenario allocated on the device */
    si_feed feed;               /* the variant between begin_variant and end_variant */
    si_feed_step_fn feed_step;  /* the story's: feed one step (verify feeds its own steps) */
} si_state;

#endif

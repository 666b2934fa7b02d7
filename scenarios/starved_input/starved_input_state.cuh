/* starved_input: the state (a variant's feed, the scenario's state) and the model step every
 * variant enqueues (embedding, two cuBLAS GEMMs, GELU). Included once by starved_input.cu, at
 * this point of its text. */
/* ---- the GPU step --------------------------------------------------------------------- */

static unsigned int grid_for(int64_t n_threads)
{
    return (unsigned int)((n_threads + SI_BLOCK - 1) / SI_BLOCK);
}

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

typedef struct si_state {
    si_shape shape;
    int device, workers, tok_cost;
    int64_t tokens;             /* rows * seq_len: positions per step */
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
} si_state;

/* One step on `stream`: x = embed(ids); h = gelu(x W1); y = h W2 (bf16, fp32 accumulation).
 * d_checksum (verify only): also add the checksum of the ids the step read. */
static int enqueue_step(si_state *st, cudaStream_t stream, const int32_t *d_ids,
                        unsigned long long *d_checksum)
{
    int rc = UF_OK;
    const float one = 1.0f, zero = 0.0f;
    int d = st->shape.hidden, f = st->shape.ffn, n_tokens = (int)st->tokens;
    int64_t x_vec = st->tokens * d / 8, h_vec = st->tokens * f / 8;
    embed_kernel<<<grid_for(x_vec), SI_BLOCK, 0, stream>>>(d_ids, st->d_emb, st->d_x, x_vec, d / 8,
                                                           st->tok.vocab_size);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    if (d_checksum) {
        checksum_kernel<<<grid_for(st->tokens), SI_BLOCK, 0, stream>>>(d_ids, st->tokens,
                                                                      d_checksum);
        UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    }
    /* row-major h[T][f] = x[T][d] W1[d][f] is column-major h^T = W1^T x^T */
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(st->blas, CUBLAS_OP_N, CUBLAS_OP_N, f, n_tokens, d, &one,
                                    st->d_w1, CUDA_R_16BF, f, st->d_x, CUDA_R_16BF, d, &zero,
                                    st->d_h, CUDA_R_16BF, f, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT), out);
    gelu_kernel<<<grid_for(h_vec), SI_BLOCK, 0, stream>>>(st->d_h, h_vec);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(st->blas, CUBLAS_OP_N, CUBLAS_OP_N, d, n_tokens, f, &one,
                                    st->d_w2, CUDA_R_16BF, d, st->d_h, CUDA_R_16BF, f, &zero,
                                    st->d_y, CUDA_R_16BF, d, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT), out);
out:
    return rc;
}

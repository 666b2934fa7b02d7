/* allreduce_overlap: the run's state (shape, jobs, ranks), the deterministic inputs and
 * their kernels, a rank's fill and (watched) stream wait, and the layer GEMM dW = dYᵀ·X both
 * variants run. Included once by allreduce_overlap.cu, at this point of its text: the story
 * keeps the schedule (rank_enqueue_*), the claims and the tables. */
typedef struct ar_shape {
    int layers, rows, cols, tokens;     /* L, N, K, T */
    size_t layer_elems;                 /* N × K: one layer's gradient */
    size_t grad_elems, grad_bytes;      /* all L gradients: one flat buffer, backward order */
    size_t x_elems, dy_elems;           /* one layer's inputs: X is T × K, dY is T × N */
    size_t bucket_elems;                /* bucketed variant: elements per bucket */
    int n_buckets;
} ar_shape;

/* A gemm mark's place in its pair. */
enum { GEMM_BEGIN = 0, GEMM_END = 1 };

/* The jobs each rank's worker runs (multigpu.h). STEP only enqueues; every other job waits
 * for its own GPU work. */
enum { JOB_FILL = 1, JOB_STEP, JOB_BACKWARD, JOB_ALLREDUCE, JOB_CHECKSUM, JOB_REFERENCE };

typedef struct ar_job {
    int kind;
    int variant;                /* JOB_STEP; JOB_ALLREDUCE: whose communicator */
    int target;                 /* local index of the one worker that runs it, -1: all */
    uint64_t seed;              /* JOB_FILL, JOB_REFERENCE */
    int mark;                   /* JOB_STEP, JOB_BACKWARD: 1 + index of the pair of gemm marks
                                 * recorded around the GEMMs; 0: none */
} ar_job;

/* What a verify job found on one rank. */
typedef struct ar_check {
    double max_err;             /* max_rel_err (verify.h), the largest over the gradients */
    size_t n_bad, n_nan, n_spot_bad;    /* n_bad: gradients out of tolerance */
    int bad_slot;               /* first gradient out of tolerance, and its element */
    size_t bad_index;
    float bad_got, bad_want;
    unsigned long long checksum, checksum_min, checksum_max;
} ar_check;

struct ar_state;

/* The communicators of a rank (uf_mg_rank.comm): NCCL's defaults, and bucketed's own. */
enum { AR_COMM_DEFAULT = 0, AR_COMM_OVERLAP = 1 };

/* One NCCL rank driven by this process: one GPU, its streams and buffers; the runner's rank
 * (mg) holds its worker thread and communicators. */
typedef struct ar_rank {
    struct ar_state *st;
    uf_mg_rank *mg;
    int local;                  /* index among this process's ranks */
    int rank;                   /* global NCCL rank */
    int device;
    cudaStream_t compute_stream, comm_stream;   /* comm_stream has the highest priority */
    int sm_count;               /* SMs of this GPU */
    cublasHandle_t cublas;      /* cuBLAS's defaults: every GEMM but bucketed's overlapped ones */
    cublasHandle_t cublas_overlap;  /* sm_margin > 0: SM count target sm_count - sm_margin, for
                                     * bucketed's GEMMs that may run beside an all-reduce */
    __nv_bfloat16 *grads;       /* L gradients, slot j = j-th produced by backward */
    __nv_bfloat16 *x, *dy;      /* L layers of inputs */
    unsigned long long *checksum_dev;           /* [0] mine, [1] max over ranks, [2] min */
    cudaEvent_t layer_done[AR_LAYERS];
    cudaEvent_t comm_done, step_done;
    /* timed, on compute_stream: pair i (marks 2i + GEMM_BEGIN, 2i + GEMM_END) the i-th timed
     * job's start and the end of its last GEMM (setup) */
    uf_marks gemm;
    ar_check check;
} ar_rank;

typedef struct ar_state {
    ar_shape shape;
    uf_mg *mg;                  /* the multi-GPU runner: workers, communicators, watched waits */
    int n_ranks;                /* global */
    int n_local;                /* ranks (GPUs) this process drives */
    int comm_ctas;              /* CTAs (channels) per collective of bucketed's communicator
                                 * (minCTAs = maxCTAs); 0: NCCL's default, bucketed uses comm */
    int sm_margin;              /* SMs bucketed's overlapped GEMMs leave free; 0: no target */
    int broken_overlap;         /* UF_AR_BROKEN_OVERLAP=1: bucketed's all-reduces on the compute
                                 * stream (a check of the claims, not the fix) */
    ar_rank *ranks;

    cudaEvent_t step_begin;     /* on ctx->stream: every rank's step waits on it */
    uf_marks timing;            /* on ctx->stream: mark i before timed job i, i + 1 after it */

    double compute_ms;          /* backward alone (median, setup) */
    double comm_ms[2];          /* the all-reduce alone on each variant's communicator (median,
                                 * setup); equal when bucketed shares comm (comm_ctas = 0) */
    double in_step_ms[2];       /* the GEMMs' span inside each variant's step (median, setup) */
    double held_bytes;          /* device memory this point holds on the primary GPU */
} ar_state;

/* ---- deterministic inputs (host and device agree) --------------------------------------- */

__host__ __device__ static inline uint64_t ar_mix64(uint64_t x)
{
    return uf_mix64(x + UF_GOLDEN64);
}

/* Element i of an input tensor: an integer in [-64, 64]; the value is that / 64, exact in bf16,
 * so that every product is a multiple of 2^-12 and the host can recompute any dW element. */
__host__ __device__ static inline int ar_input_int(uint64_t key, size_t i)
{
    return (int)(uf_hash_at(key, i) % 129u) - 64;
}

enum { TENSOR_X = 1, TENSOR_DY = 2 };

static uint64_t ar_input_key(uint64_t seed, int rank, int slot, int tensor)
{
    uint64_t k = ar_mix64(seed);
    k = ar_mix64(k ^ (uint64_t)(unsigned)rank);
    return ar_mix64(k ^ ((uint64_t)(unsigned)slot << 8 | (uint64_t)tensor));
}

__global__ void ar_fill_kernel(__nv_bfloat16 *p, size_t n, uint64_t key)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = __float2bfloat16_rn((float)ar_input_int(key, i) / 64.0f);
}

/* Order-independent 64-bit checksum of the bit patterns: equal on two ranks iff (but for a
 * 2^-64 chance) their buffers are bitwise equal. */
__global__ void ar_checksum_kernel(const unsigned short *p, size_t n, unsigned long long *out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += ar_mix64(((uint64_t)i << 16) ^ p[i]);
    atomicAdd(out, acc);
}


/* ---- one rank's GPU work (runs on its worker thread, its device current) --------------- */

/* Fill a device tensor with the inputs of `key` on the compute stream. */
static int rank_fill(ar_rank *rk, __nv_bfloat16 *p, size_t n, uint64_t key)
{
    int rc = UF_OK;
    size_t blocks = (n + AR_THREADS - 1) / AR_THREADS;
    if (blocks > AR_FILL_BLOCKS)
        blocks = AR_FILL_BLOCKS;
    ar_fill_kernel<<<(unsigned)blocks, AR_THREADS, 0, rk->compute_stream>>>(p, n, key);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}

/* Fill layer `slot`'s X and dY with the inputs rank `rank` draws from `seed`. */
static int rank_fill_layer(ar_rank *rk, uint64_t seed, int rank, int slot)
{
    const ar_shape *sh = &rk->st->shape;
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, rank_fill(rk, rk->x + (size_t)slot * sh->x_elems, sh->x_elems,
                                    ar_input_key(seed, rank, slot, TENSOR_X)), out);
    UF_STATUS_OR_GOTO(rc, rank_fill(rk, rk->dy + (size_t)slot * sh->dy_elems, sh->dy_elems,
                                    ar_input_key(seed, rank, slot, TENSOR_DY)), out);
out:
    return rc;
}

/* Wait for a stream on this rank's worker, watched (multigpu.h: a deadline, NCCL's async
 * errors, lost ranks, another local rank's failure). */
static int rank_wait(ar_rank *rk, cudaStream_t s, const char *what)
{
    return uf_mg_wait(rk->mg, s, what);
}

/* dW_slot = dYᵀ · X for one layer, on the compute stream, through `handle` (rk->cublas, or
 * rk->cublas_overlap with its SM count target; both on the compute stream). Row-major dW (N × K)
 * is column-major K × N = Xᵀ(col-major K × T) · dY(col-major N × T)ᵀ, so cuBLAS sees C = A · Bᵀ. */
static int rank_layer_gemm(ar_rank *rk, cublasHandle_t handle, int slot)
{
    const ar_shape *sh = &rk->st->shape;
    const float alpha = 1.0f, beta = 0.0f;
    int rc = UF_OK;
    UF_CUBLAS_OR_GOTO(rc, cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, sh->cols, sh->rows,
                                    sh->tokens, &alpha, rk->x + (size_t)slot * sh->x_elems,
                                    CUDA_R_16BF, sh->cols, rk->dy + (size_t)slot * sh->dy_elems,
                                    CUDA_R_16BF, sh->rows, &beta,
                                    rk->grads + (size_t)slot * sh->layer_elems, CUDA_R_16BF,
                                    sh->cols, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), out);
out:
    return rc;
}

/* starved_input: clock and core-count helpers, and where batches come from (text tokenized on
 * the fly, or the pretokenized map). Included once by starved_input.cu, at this point of its
 * text. */
/* ---- small helpers -------------------------------------------------------------------- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of the calling thread: what tokenizing a batch really cost, not wall time. */
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}


static long online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* ---- batch sources -------------------------------------------------------------------- */

/* Where batches come from: text tokenized on the fly, or a pretokenized map. Batch k is
 * corpus batch k mod n_batches (steps cycle over the corpus, epoch after epoch). */
typedef struct si_source {
    const si_tokenizer *tok;
    const si_corpus *corpus;    /* text; NULL when pretokenized */
    const int32_t *pretok;      /* n_batches * rows * seq_len ids; NULL when text */
    int n_batches, rows, seq_len;
} si_source;

static int produce_batch(const si_source *src, int64_t batch, int32_t *out, si_scratch *s,
                         char *err, size_t errlen)
{
    int64_t b = batch % src->n_batches;
    size_t batch_elems = (size_t)src->rows * (size_t)src->seq_len;
    if (src->pretok) {
        memcpy(out, src->pretok + (size_t)b * batch_elems, batch_elems * sizeof(int32_t));
        return UF_OK;
    }
    for (int r = 0; r < src->rows; r++) {
        int64_t doc = b * src->rows + r;
        const char *text = src->corpus->text + src->corpus->off[doc];
        int rc = encode_row(src->tok, text, (int)src->corpus->len[doc], src->seq_len,
                            out + (size_t)r * src->seq_len, s, err, errlen);
        if (rc != UF_OK)
            return rc;
    }
    return UF_OK;
}

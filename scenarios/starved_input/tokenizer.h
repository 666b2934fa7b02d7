/* starved_input's CPU workload (tokenizer.c): the synthetic language, the corpus and the
 * byte-level BPE tokenizer. Plain C, usable from C and CUDA. Functions that allocate return
 * UF_OK or UF_ERR (out of memory, or passes of the tokenizer that disagree). */
#ifndef SI_TOKENIZER_H
#define SI_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "random.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Its calls return UF_OK or UF_ERR (status.h: plain C, no CUDA headers). */

enum {
    SI_MAX_DOC_BYTES = 32768,   /* longest document (the log-normal tail is cut here) */
    SI_MAX_PIECE = 32           /* longest pre-tokenized piece (bounds the O(n^2) merge loop) */
};
#define SI_DOC_MEDIAN_BYTES 1200.0  /* median document length */
#define SI_DOC_SIGMA 1.0        /* log-normal sigma of document lengths: a long tail */
#define SI_ZIPF_S 1.07          /* word frequencies ~ 1 / rank^s */

static inline double rng_unit(uint64_t *state)     /* [0, 1) */
{
    return uf_unit(uf_splitmix64(state), 53);
}

static inline uint32_t rng_below(uint64_t *state, uint32_t n)   /* [0, n) */
{
    return (uint32_t)(((uf_splitmix64(state) >> 32) * (uint64_t)n) >> 32);
}

/* Words of a generated language: letters drawn with English frequencies, short words most
 * frequent (Zipf). */
typedef struct si_vocab {
    int n_words;
    char *chars;            /* every word, concatenated */
    uint32_t *off;          /* word i is chars[off[i] .. off[i] + len[i]) */
    uint8_t *len;
    double *cdf;            /* cumulative Zipf probabilities; cdf[n_words - 1] == 1 */
} si_vocab;

/* The corpus: documents as text in memory (as if read from disk). */
typedef struct si_corpus {
    int n_docs;
    char *text;
    size_t *off;            /* document i is text[off[i] .. off[i] + len[i]) */
    uint32_t *len;
} si_corpus;

/* Token ids: 0..255 are bytes, 256 + r is the result of merge r (lower r = applied first),
 * then BOS, EOS and PAD. */
typedef struct si_pair_map {    /* open addressing: (left, right) -> merge rank */
    uint64_t *keys;             /* (left << 32 | right) + 1; 0 marks an empty entry */
    int32_t *ranks;
    uint32_t mask;
} si_pair_map;

typedef struct si_tokenizer {
    int n_merges;
    int vocab_size;             /* 256 + n_merges + 3 */
    int32_t bos_id, eos_id, pad_id;
    int passes;                 /* times encode_row runs the whole tokenizer over a document
                                 * (encode_row_passes is given its own count) */
    si_pair_map merges;
} si_tokenizer;

/* A tokenizing thread's buffers, sized for the longest document. */
typedef struct si_scratch {
    unsigned char *norm;
    int32_t *ids, *ids_again;
} si_scratch;

/* The language of `seed`: n_words words, short ones most frequent. */
int vocab_build(si_vocab *v, uint64_t seed, int n_words);
void vocab_free(si_vocab *v);

/* n_docs documents of the language; document d depends only on (seed, d). */
int corpus_build(si_corpus *c, const si_vocab *v, uint64_t seed, int n_docs);
void corpus_free(si_corpus *c);

/* Train up to n_merges merges on the n_train most frequent words; `passes` is encode_row's. */
int tokenizer_train(si_tokenizer *t, const si_vocab *v, int n_train, int n_merges, int passes);
void tokenizer_free(si_tokenizer *t);

/* Cleaning: fold accents, lower-case, drop control characters, collapse whitespace runs to
 * one space, strip both ends. Returns the length written to out (<= n). */
int normalize_text(const unsigned char *in, int n, unsigned char *out);

/* One run of the tokenizer over text[0..n): the cleaned text in norm, the ids in ids (both
 * at least n long); returns the number of ids. */
int encode_text(const si_tokenizer *t, const char *text, int n, unsigned char *norm,
                int32_t *ids);

int scratch_alloc(si_scratch *s);
void scratch_free(si_scratch *s);

/* One sequence: BOS, the document's ids truncated to seq_len - 2, EOS, then PAD, the whole
 * tokenizer run `passes` (>= 1) times over the document, the runs checked to agree (the ids do
 * not depend on passes). A message in err when they disagree. */
int encode_row_passes(const si_tokenizer *t, int passes, const char *text, int n, int seq_len,
                      int32_t *row, si_scratch *s, char *err, size_t errlen);

/* encode_row_passes with t->passes. */
int encode_row(const si_tokenizer *t, const char *text, int n, int seq_len, int32_t *row,
               si_scratch *s, char *err, size_t errlen);

/* ---- the work per batch: how many tokenizer passes a batch runs --------------------------- */

/* Row r's passes (0 <= r < rows) in a batch that runs batch_passes (>= rows) passes over its
 * rows' documents in all: batch_passes / rows or one more, the extra passes spread evenly
 * over the rows, adding up to batch_passes. */
int row_passes(int batch_passes, int rows, int r);

/* The passes a batch of `rows` documents runs in all so that one thread tokenizes it in
 * `multiple` x gpu_step_ms, where that thread takes first_pass_ms for one pass over every
 * document of a batch and next_pass_ms for each further pass (measured apart: a pass over a
 * document just tokenized can cost less): rows x (1 + (multiple x gpu_step_ms - first_pass_ms)
 * / next_pass_ms), rounded, at least rows (a pass a document) and at most
 * rows x max_passes_per_doc. -1 when a time or the
 * multiple is not a positive finite number, rows or max_passes_per_doc is below 1, or their
 * product exceeds an int. */
int calibrate_batch_passes(double multiple, double gpu_step_ms, double first_pass_ms,
                           double next_pass_ms, int rows, int max_passes_per_doc);

#ifdef __cplusplus
}
#endif

#endif

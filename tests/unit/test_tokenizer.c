/* Unit tests of starved_input's corpus and BPE tokenizer (scenarios/starved_input/tokenizer.c):
 * cleaning, known ids without merges, BOS/EOS/PAD and truncation, determinism, the BPE
 * round trip (the merges of the ids expand back to the cleaned text), and the work per batch
 * (passes that leave the ids alone, spread over a batch's rows, calibrated to a multiple of the
 * GPU step). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

#define SEED 0x5EEDull

/* The small language, merge table and corpus every test below builds from SEED. */
typedef struct tok_fixture {
    si_vocab vocab;
    si_tokenizer tok;
    si_corpus corpus;
} tok_fixture;

static void fixture_build(tok_fixture *f, uint64_t seed, int n_merges, int n_docs)
{
    cr_assert_eq(vocab_build(&f->vocab, seed, 512), UF_OK);
    cr_assert_eq(tokenizer_train(&f->tok, &f->vocab, 200, n_merges, 1), UF_OK);
    cr_assert_eq(corpus_build(&f->corpus, &f->vocab, seed, n_docs), UF_OK);
}

static void fixture_free(tok_fixture *f)
{
    corpus_free(&f->corpus);
    tokenizer_free(&f->tok);
    vocab_free(&f->vocab);
}

/* The (left, right) pair merge `rank` made, from the tokenizer's table. */
static void merge_of_rank(const si_tokenizer *t, int32_t rank, int32_t *left, int32_t *right)
{
    for (uint32_t h = 0; h <= t->merges.mask; h++) {
        if (t->merges.keys[h] != 0 && t->merges.ranks[h] == rank) {
            uint64_t key = t->merges.keys[h] - 1;
            *left = (int32_t)(key >> 32);
            *right = (int32_t)(key & 0xFFFFFFFFu);
            return;
        }
    }
    cr_assert_fail("merge rank %d is not in the table", rank);
}

/* Expand token id into its bytes at out; returns how many. */
static int expand(const si_tokenizer *t, int32_t id, unsigned char *out)
{
    if (id < 256) {
        out[0] = (unsigned char)id;
        return 1;
    }
    cr_assert_lt(id, 256 + t->n_merges, "id %d is not a byte or a merge", id);
    int32_t left = 0, right = 0;
    merge_of_rank(t, id - 256, &left, &right);
    int n = expand(t, left, out);
    return n + expand(t, right, out + n);
}

Test(tokenizer, normalize_folds_case_accents_and_whitespace)
{
    const char in[] = "  H\xC3\xA9llo,\t\tW\xC3\x96RLD\x01 \n\n 42's  ";
    unsigned char out[sizeof in];
    int n = normalize_text((const unsigned char *)in, (int)strlen(in), out);
    cr_assert_eq(n, (int)strlen("hello, world 42's"));
    cr_assert_arr_eq(out, "hello, world 42's", (size_t)n);
}

Test(tokenizer, no_merges_gives_bytes_between_bos_and_eos)
{
    si_vocab vocab;
    si_tokenizer tok;
    si_scratch scratch = {0};
    char err[128] = "";
    int32_t row[8];
    cr_assert_eq(vocab_build(&vocab, SEED, 64), UF_OK);
    cr_assert_eq(tokenizer_train(&tok, &vocab, 16, 0, 1), UF_OK);
    cr_assert_eq(tok.vocab_size, 259);
    cr_assert_eq(scratch_alloc(&scratch), UF_OK);

    cr_assert_eq(encode_row(&tok, "Ab c", 4, 8, row, &scratch, err, sizeof err), UF_OK);
    const int32_t want[8] = {256, 'a', 'b', ' ', 'c', 257, 258, 258};
    cr_assert_arr_eq(row, want, sizeof want);

    /* truncated to seq_len - 2 ids, then EOS */
    cr_assert_eq(encode_row(&tok, "abcdef", 6, 4, row, &scratch, err, sizeof err), UF_OK);
    const int32_t cut[4] = {256, 'a', 'b', 257};
    cr_assert_arr_eq(row, cut, sizeof cut);

    scratch_free(&scratch);
    tokenizer_free(&tok);
    vocab_free(&vocab);
}

Test(tokenizer, same_seed_same_corpus_and_merges)
{
    tok_fixture a, b, c;
    fixture_build(&a, SEED, 300, 8);
    fixture_build(&b, SEED, 300, 8);
    fixture_build(&c, SEED + 1, 300, 8);
    cr_assert_eq(a.tok.n_merges, b.tok.n_merges);
    cr_assert_gt(a.tok.n_merges, 0);
    cr_assert_eq(a.tok.merges.mask, b.tok.merges.mask);
    cr_assert_arr_eq(a.tok.merges.keys, b.tok.merges.keys,
                     (a.tok.merges.mask + 1) * sizeof(uint64_t));
    size_t bytes = a.corpus.off[7] + a.corpus.len[7];
    cr_assert_eq(bytes, b.corpus.off[7] + b.corpus.len[7]);
    cr_assert_arr_eq(a.corpus.text, b.corpus.text, bytes);
    /* another seed, another corpus */
    cr_assert(a.corpus.len[0] != c.corpus.len[0] ||
              memcmp(a.corpus.text, c.corpus.text, a.corpus.len[0]) != 0);
    fixture_free(&a);
    fixture_free(&b);
    fixture_free(&c);
}

Test(tokenizer, ids_expand_back_to_the_cleaned_text)
{
    tok_fixture f;
    fixture_build(&f, SEED, 300, 4);
    unsigned char *norm = malloc(SI_MAX_DOC_BYTES), *back = malloc(SI_MAX_DOC_BYTES);
    unsigned char *clean = malloc(SI_MAX_DOC_BYTES);
    int32_t *ids = malloc(SI_MAX_DOC_BYTES * sizeof *ids);
    cr_assert(norm && back && clean && ids);
    for (int d = 0; d < f.corpus.n_docs; d++) {
        const char *text = f.corpus.text + f.corpus.off[d];
        int n = (int)f.corpus.len[d];
        int n_ids = encode_text(&f.tok, text, n, norm, ids);
        int n_clean = normalize_text((const unsigned char *)text, n, clean);
        int n_back = 0;
        for (int i = 0; i < n_ids; i++)
            n_back += expand(&f.tok, ids[i], back + n_back);
        cr_assert_eq(n_back, n_clean, "document %d", d);
        cr_assert_arr_eq(back, clean, (size_t)n_clean, "document %d", d);
        cr_assert_lt(n_ids, n_clean, "document %d: the merges shorten nothing", d);
    }
    free(ids);
    free(clean);
    free(back);
    free(norm);
    fixture_free(&f);
}

/* ---- the work per batch (starved_input's calibration, #29) ---------------------------------- */

/* The ids of a document do not depend on how many passes the tokenizer makes over it. */
Test(tokenizer_work, passes_do_not_change_the_ids)
{
    tok_fixture f;
    fixture_build(&f, SEED, 300, 4);
    si_scratch scratch = {0};
    char err[128] = "";
    int32_t once[64], thrice[64];
    cr_assert_eq(scratch_alloc(&scratch), UF_OK);
    for (int d = 0; d < f.corpus.n_docs; d++) {
        const char *text = f.corpus.text + f.corpus.off[d];
        int n = (int)f.corpus.len[d];
        cr_assert_eq(encode_row_passes(&f.tok, 1, text, n, 64, once, &scratch, err, sizeof err),
                     UF_OK, "%s", err);
        cr_assert_eq(encode_row_passes(&f.tok, 3, text, n, 64, thrice, &scratch, err,
                                       sizeof err), UF_OK, "%s", err);
        cr_assert_arr_eq(once, thrice, sizeof once, "document %d", d);
    }
    scratch_free(&scratch);
    fixture_free(&f);
}

/* Each row runs batch_passes / rows passes or one more, evenly spread, adding up exactly. */
Test(tokenizer_work, row_passes_spread_the_batch_evenly)
{
    static const int cases[][2] = {{256, 256}, {384, 256}, {390, 256}, {1023, 256}, {64, 64},
                                   {65, 64}, {127, 64}, {7, 3}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int total = cases[c][0], rows = cases[c][1], base = total / rows;
        int sum = 0, extra_in_first_half = 0;
        for (int r = 0; r < rows; r++) {
            int p = row_passes(total, rows, r);
            cr_assert(p == base || p == base + 1, "%d passes over %d rows: row %d runs %d",
                      total, rows, r, p);
            sum += p;
            extra_in_first_half += r < rows / 2 && p > base;
        }
        cr_assert_eq(sum, total, "%d passes over %d rows add up to %d", total, rows, sum);
        /* spread, not bunched at the front: the first half holds about half of the extra */
        const int extra = total - base * rows;
        cr_assert_leq(abs(2 * extra_in_first_half - extra), 2, "%d over %d rows: %d of %d extra "
                      "passes in the first half", total, rows, extra_in_first_half, extra);
    }
    /* 1.5 passes a document: every other row runs a second pass */
    cr_assert_eq(row_passes(384, 256, 0), 1);
    cr_assert_eq(row_passes(384, 256, 1), 2);
    cr_assert_eq(row_passes(384, 256, 2), 1);
    cr_assert_eq(row_passes(384, 256, 3), 2);
}

/* The passes that make a batch take `multiple` GPU steps of one thread's time: the first pass
 * over every document, then the further passes the time left takes. */
Test(tokenizer_work, calibrated_passes_reach_the_multiple)
{
    /* further passes as costly as the first: 4 steps of 5.6 ms = 22.4 ms at 14.6 ms a pass,
     * 1.534 passes a document: 392.8 over 256 rows, 393 */
    int p = calibrate_batch_passes(4.0, 5.6, 14.6, 14.6, 256, 256);
    cr_assert_eq(p, 393);
    cr_assert_float_eq(14.6 * p / 256.0 / 5.6, 4.0, 0.01);
    /* further passes cheaper (10.2 ms): the 7.8 ms left past the first take 0.765 of one:
     * 1.765 passes a document, 451.8 over 256 rows, 452 */
    p = calibrate_batch_passes(4.0, 5.6, 14.6, 10.2, 256, 256);
    cr_assert_eq(p, 452);
    cr_assert_float_eq((14.6 + (p / 256.0 - 1.0) * 10.2) / 5.6, 4.0, 0.01);
    /* twice as fast a CPU: 3.068 passes a document, 785.5 over 256 rows, rounded to 786 */
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 7.3, 7.3, 256, 256), 786);
    /* exactly one pass a document */
    cr_assert_eq(calibrate_batch_passes(2.0, 5.0, 10.0, 3.0, 64, 256), 64);
    /* a CPU too slow for the multiple still tokenizes every document once */
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 50.0, 40.0, 256, 256), 256);
    /* a CPU far faster than the GPU stops at the ceiling a document */
    cr_assert_eq(calibrate_batch_passes(4.0, 500.0, 1.0, 1.0, 64, 256), 64 * 256);
    cr_assert_eq(calibrate_batch_passes(4.0, 1e300, 1e-300, 1e-300, 64, 256), 64 * 256);
    /* no usable measurement */
    cr_assert_eq(calibrate_batch_passes(4.0, 0.0, 14.6, 10.2, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 0.0, 10.2, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 14.6, 0.0, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 14.6, -0.3, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, NAN, 14.6, 10.2, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, INFINITY, 10.2, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(-1.0, 5.6, 14.6, 10.2, 256, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 14.6, 10.2, 0, 256), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 14.6, 10.2, 256, 0), -1);
    cr_assert_eq(calibrate_batch_passes(4.0, 5.6, 14.6, 10.2, 1 << 20, 1 << 12), -1);
}

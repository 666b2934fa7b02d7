/* Unit tests of starved_input's corpus and BPE tokenizer (scenarios/starved_input/tokenizer.c):
 * cleaning, known ids without merges, BOS/EOS/PAD and truncation, determinism, and the BPE
 * round trip (the merges of the ids expand back to the cleaned text). */
#include <criterion/criterion.h>
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

/* starved_input's workload on the CPU: a synthetic language, a corpus of documents written in
 * it, and a byte-level BPE tokenizer (training, text cleaning, GPT-2 style pre-tokenization,
 * merges, special tokens, truncation and padding). Plain C, no CUDA: unit-tested in
 * tests/unit/test_tokenizer.c. Everything depends only on the seed, so batch k of a corpus is
 * always the same batch. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random.h"
#include "tokenizer.h"

/* ---- the synthetic language and corpus ------------------------------------------------ */

static const char si_letters[] = "etaoinshrdlcumwfgypbvkjxqz";
static const int si_letter_weight[26] = {127, 91, 82, 75, 70, 67, 63, 61, 60, 43, 40, 28, 28,
                                         24, 24, 22, 20, 20, 19, 15, 10, 8, 2, 2, 1, 1};

static char random_letter(uint64_t *rng)
{
    int total = 0;
    for (int i = 0; i < 26; i++)
        total += si_letter_weight[i];
    int pick = (int)rng_below(rng, (uint32_t)total);
    for (int i = 0; i < 26; i++) {
        if (pick < si_letter_weight[i])
            return si_letters[i];
        pick -= si_letter_weight[i];
    }
    return 'e';
}

static int compare_u8(const void *a, const void *b)
{
    return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
}

void vocab_free(si_vocab *v)
{
    free(v->chars);
    free(v->off);
    free(v->len);
    free(v->cdf);
    memset(v, 0, sizeof *v);
}

int vocab_build(si_vocab *v, uint64_t seed, int n_words)
{
    memset(v, 0, sizeof *v);
    uint64_t rng = seed ^ 0xA0761D6478BD642FULL;
    v->n_words = n_words;
    v->off = (uint32_t *)malloc((size_t)n_words * sizeof *v->off);
    v->len = (uint8_t *)malloc((size_t)n_words * sizeof *v->len);
    v->cdf = (double *)malloc((size_t)n_words * sizeof *v->cdf);
    v->chars = (char *)malloc((size_t)n_words * 12);
    if (!v->off || !v->len || !v->cdf || !v->chars) {
        vocab_free(v);
        return UF_ERR;
    }
    for (int i = 0; i < n_words; i++)   /* 2..11 letters, mean ~5.5 */
        v->len[i] = (uint8_t)(2 + rng_below(&rng, 4) + rng_below(&rng, 4) + rng_below(&rng, 3));
    qsort(v->len, (size_t)n_words, sizeof *v->len, compare_u8);   /* frequent words are short */
    uint32_t at = 0;
    double total = 0;
    for (int i = 0; i < n_words; i++) {
        v->off[i] = at;
        for (int k = 0; k < v->len[i]; k++)
            v->chars[at++] = random_letter(&rng);
        total += pow((double)(i + 1), -SI_ZIPF_S);
        v->cdf[i] = total;
    }
    for (int i = 0; i < n_words; i++)
        v->cdf[i] /= total;
    v->cdf[n_words - 1] = 1.0;
    return UF_OK;
}

static int pick_word(const si_vocab *v, uint64_t *rng)
{
    double u = rng_unit(rng);
    int lo = 0, hi = v->n_words - 1;    /* the first index with cdf > u */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Accented forms (UTF-8: 0xC3 then the byte given) of a few letters, lower and upper case. */
typedef struct si_accent { char base; unsigned char lower, upper; } si_accent;
static const si_accent si_accents[] = {{'a', 0xA0, 0x80}, {'e', 0xA9, 0x89}, {'i', 0xAD, 0x8D},
                                       {'o', 0xB3, 0x93}, {'u', 0xBC, 0x9C}, {'n', 0xB1, 0x91},
                                       {'c', 0xA7, 0x87}};

/* A bounded writer: put() drops what does not fit (the caller keeps room). */
typedef struct si_text { char *buf; size_t n, cap; } si_text;

static void put(si_text *t, char c)
{
    if (t->n < t->cap)
        t->buf[t->n++] = c;
}

static void put_str(si_text *t, const char *s)
{
    while (*s)
        put(t, *s++);
}

/* One word with case, accent, contraction and punctuation noise. */
static void put_word(si_text *t, const si_vocab *v, uint64_t *rng, int sentence_start)
{
    if (rng_unit(rng) < 0.02) {             /* a number */
        int digits = 1 + (int)rng_below(rng, 6);
        for (int k = 0; k < digits; k++)
            put(t, (char)('0' + rng_below(rng, 10)));
        return;
    }
    int w = pick_word(v, rng);
    const char *s = v->chars + v->off[w];
    int len = v->len[w];
    double u = rng_unit(rng);
    int upper_all = u < 0.015, upper_first = sentence_start || u < 0.075;
    int accent_at = rng_unit(rng) < 0.03 ? (int)rng_below(rng, (uint32_t)len) : -1;
    for (int k = 0; k < len; k++) {
        int upper = upper_all || (k == 0 && upper_first);
        const si_accent *a = NULL;
        for (size_t j = 0; k == accent_at && j < sizeof si_accents / sizeof si_accents[0]; j++)
            if (si_accents[j].base == s[k])
                a = &si_accents[j];
        if (a) {
            put(t, (char)0xC3);
            put(t, (char)(upper ? a->upper : a->lower));
        } else {
            put(t, upper ? (char)(s[k] - 'a' + 'A') : s[k]);
        }
    }
    u = rng_unit(rng);
    if (u < 0.02)
        put_str(t, u < 0.01 ? "'s" : u < 0.015 ? "'t" : "'ll");
}

/* Document `doc` of the corpus `seed`: sentences of words until a log-normal length (long
 * tail, capped), with whitespace noise. Returns its length in bytes. Depends only on (seed,
 * doc), so batch k of a corpus is always the same batch. */
static size_t gen_doc(const si_vocab *v, uint64_t seed, int64_t doc, char *buf, size_t cap)
{
    uint64_t rng = seed ^ uf_mix64((uint64_t)doc * 0xD1B54A32D192ED03ULL + 1);
    double u1 = 1.0 - rng_unit(&rng), u2 = rng_unit(&rng);
    double normal = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    double target = SI_DOC_MEDIAN_BYTES * exp(SI_DOC_SIGMA * normal);
    size_t limit = cap - 64;    /* room for the last word */
    if (target < 16)
        target = 16;
    if (target > (double)limit)
        target = (double)limit;
    si_text t = {.buf = buf, .n = 0, .cap = cap};
    if (rng_unit(&rng) < 0.1)
        put_str(&t, " \n");
    int first = 1;
    while ((double)t.n < target) {
        int words = 4 + (int)rng_below(&rng, 18);
        for (int w = 0; w < words && (double)t.n < target && t.n < limit; w++) {
            if (!first) {
                double u = rng_unit(&rng);
                if (w == 0)
                    put_str(&t, u < 0.12 ? "\n\n" : " ");
                else
                    put_str(&t, u < 0.03 ? "  " : u < 0.04 ? "\t" : u < 0.045 ? "\n" : " ");
            }
            first = 0;
            put_word(&t, v, &rng, w == 0);
            if (w + 1 < words && rng_unit(&rng) < 0.06)
                put(&t, ',');
        }
        double u = rng_unit(&rng);
        put_str(&t, u < 0.8 ? "." : u < 0.88 ? "!" : u < 0.96 ? "?" : "...");
    }
    return t.n;
}

void corpus_free(si_corpus *c)
{
    free(c->text);
    free(c->off);
    free(c->len);
    memset(c, 0, sizeof *c);
}

int corpus_build(si_corpus *c, const si_vocab *v, uint64_t seed, int n_docs)
{
    memset(c, 0, sizeof *c);
    size_t cap = (size_t)n_docs * 2400 + SI_MAX_DOC_BYTES, used = 0;
    c->n_docs = n_docs;
    c->off = (size_t *)malloc((size_t)n_docs * sizeof *c->off);
    c->len = (uint32_t *)malloc((size_t)n_docs * sizeof *c->len);
    c->text = (char *)malloc(cap);
    if (!c->off || !c->len || !c->text)
        goto out_fail;
    for (int d = 0; d < n_docs; d++) {
        if (cap - used < SI_MAX_DOC_BYTES) {    /* room for the longest document */
            char *grown = (char *)realloc(c->text, cap * 2);
            if (!grown)
                goto out_fail;
            c->text = grown;
            cap *= 2;
        }
        c->off[d] = used;
        c->len[d] = (uint32_t)gen_doc(v, seed, d, c->text + used, SI_MAX_DOC_BYTES);
        used += c->len[d];
    }
    return UF_OK;
out_fail:
    corpus_free(c);
    return UF_ERR;
}

/* ---- the tokenizer -------------------------------------------------------------------- */

static uint64_t pair_key(int32_t left, int32_t right)
{
    return ((uint64_t)(uint32_t)left << 32 | (uint32_t)right) + 1;
}

/* Rank of the merge of (left, right), or -1 when there is none. */
static int32_t pair_rank(const si_pair_map *m, int32_t left, int32_t right)
{
    uint64_t key = pair_key(left, right);
    for (uint32_t h = (uint32_t)uf_mix64(key) & m->mask;; h = (h + 1) & m->mask) {
        if (m->keys[h] == key)
            return m->ranks[h];
        if (m->keys[h] == 0)
            return -1;
    }
}

static void pair_insert(si_pair_map *m, int32_t left, int32_t right, int32_t rank)
{
    uint64_t key = pair_key(left, right);
    uint32_t h = (uint32_t)uf_mix64(key) & m->mask;
    while (m->keys[h] != 0 && m->keys[h] != key)
        h = (h + 1) & m->mask;
    m->keys[h] = key;
    m->ranks[h] = rank;
}

void tokenizer_free(si_tokenizer *t)
{
    free(t->merges.keys);
    free(t->merges.ranks);
    memset(t, 0, sizeof *t);
}

/* Pair counts of one training round: open addressing with a round stamp instead of clearing,
 * and the list of keys touched this round. */
typedef struct si_pair_counts {
    uint64_t *keys, *counts;
    uint32_t *stamp, round, mask;
    uint32_t *touched;
    int n_touched;
} si_pair_counts;

static void count_pair(si_pair_counts *pc, uint64_t key, uint64_t weight)
{
    uint32_t h = (uint32_t)uf_mix64(key) & pc->mask;
    while (pc->stamp[h] == pc->round && pc->keys[h] != key)
        h = (h + 1) & pc->mask;
    if (pc->stamp[h] != pc->round) {
        pc->stamp[h] = pc->round;
        pc->keys[h] = key;
        pc->counts[h] = 0;
        pc->touched[pc->n_touched++] = h;
    }
    pc->counts[h] += weight;
}

/* Merge every (left, right) in toks[0..n) into merged, left to right; returns the new length. */
static int merge_pair(int32_t *toks, int n, int32_t left, int32_t right, int32_t merged)
{
    int w = 0;
    for (int i = 0; i < n;) {
        if (i + 1 < n && toks[i] == left && toks[i + 1] == right) {
            toks[w++] = merged;
            i += 2;
        } else {
            toks[w++] = toks[i++];
        }
    }
    return w;
}

/* The training words: the n_train most frequent words, each with its leading space, as byte
 * sequences packed in toks (word i at start[i], len[i] tokens), weighted by frequency. */
typedef struct si_train_set {
    int n;
    int32_t *toks;
    int *start, *len;
    uint64_t *weight;
} si_train_set;

/* One BPE training round: count adjacent pairs (weighted), pick the most frequent (ties: the
 * smaller key), record it as merge r and apply it to every word. 0 when nothing is left. */
static int train_round(si_tokenizer *t, si_train_set *w, si_pair_counts *pc, int r)
{
    pc->round++;
    pc->n_touched = 0;
    for (int i = 0; i < w->n; i++)
        for (int k = 0; k + 1 < w->len[i]; k++)
            count_pair(pc, pair_key(w->toks[w->start[i] + k], w->toks[w->start[i] + k + 1]),
                       w->weight[i]);
    uint64_t best_key = 0, best_count = 0;
    for (int j = 0; j < pc->n_touched; j++) {
        uint32_t h = pc->touched[j];
        if (pc->counts[h] > best_count ||
            (pc->counts[h] == best_count && pc->keys[h] < best_key)) {
            best_count = pc->counts[h];
            best_key = pc->keys[h];
        }
    }
    if (best_count == 0)
        return 0;       /* every training word is a single token */
    int32_t left = (int32_t)((best_key - 1) >> 32);
    int32_t right = (int32_t)((best_key - 1) & 0xFFFFFFFFu);
    pair_insert(&t->merges, left, right, r);
    for (int i = 0; i < w->n; i++)
        w->len[i] = merge_pair(w->toks + w->start[i], w->len[i], left, right, 256 + r);
    return 1;
}

/* Train the merge table as BPE does: on the most frequent words (with their leading space,
 * weighted by frequency), repeatedly merge the most frequent adjacent pair. */
int tokenizer_train(si_tokenizer *t, const si_vocab *v, int n_train, int n_merges,
                           int passes)
{
    int rc = UF_ERR, total = 0, at = 0, r = 0;
    uint32_t cap_counts = 1, cap_merges = 1;
    si_train_set w;
    si_pair_counts pc;
    memset(t, 0, sizeof *t);
    memset(&w, 0, sizeof w);
    memset(&pc, 0, sizeof pc);
    w.n = n_train < v->n_words ? n_train : v->n_words;
    for (int i = 0; i < w.n; i++)
        total += 1 + v->len[i];
    while (cap_counts < 2u * (uint32_t)total)
        cap_counts <<= 1;
    while (cap_merges < 2u * (uint32_t)n_merges)
        cap_merges <<= 1;
    w.toks = (int32_t *)malloc((size_t)total * sizeof(int32_t));
    w.start = (int *)malloc((size_t)w.n * sizeof(int));
    w.len = (int *)malloc((size_t)w.n * sizeof(int));
    w.weight = (uint64_t *)malloc((size_t)w.n * sizeof(uint64_t));
    pc.keys = (uint64_t *)malloc(cap_counts * sizeof(uint64_t));
    pc.counts = (uint64_t *)malloc(cap_counts * sizeof(uint64_t));
    pc.stamp = (uint32_t *)calloc(cap_counts, sizeof(uint32_t));
    pc.touched = (uint32_t *)malloc(cap_counts * sizeof(uint32_t));
    pc.mask = cap_counts - 1;
    t->merges.keys = (uint64_t *)calloc(cap_merges, sizeof(uint64_t));
    t->merges.ranks = (int32_t *)malloc(cap_merges * sizeof(int32_t));
    t->merges.mask = cap_merges - 1;
    if (!w.toks || !w.start || !w.len || !w.weight || !pc.keys || !pc.counts || !pc.stamp ||
        !pc.touched || !t->merges.keys || !t->merges.ranks)
        goto out_free;

    for (int i = 0; i < w.n; i++) {
        w.start[i] = at;
        w.len[i] = 1 + v->len[i];
        w.toks[at++] = ' ';
        for (int k = 0; k < v->len[i]; k++)
            w.toks[at++] = (unsigned char)v->chars[v->off[i] + k];
        double p = v->cdf[i] - (i > 0 ? v->cdf[i - 1] : 0.0);
        w.weight[i] = 1 + (uint64_t)(p * 1e12);
    }
    while (r < n_merges && train_round(t, &w, &pc, r))
        r++;
    t->n_merges = r;
    t->bos_id = 256 + r;
    t->eos_id = 257 + r;
    t->pad_id = 258 + r;
    t->vocab_size = 259 + r;
    t->passes = passes;
    rc = UF_OK;
out_free:
    free(w.toks);
    free(w.start);
    free(w.len);
    free(w.weight);
    free(pc.keys);
    free(pc.counts);
    free(pc.stamp);
    free(pc.touched);
    if (rc != UF_OK)
        tokenizer_free(t);
    return rc;
}

/* The ASCII letter an accented Latin-1 letter (UTF-8 0xC3 then `second`) folds to, or 0. */
static char fold_accent(unsigned char second)
{
    int c = second & 0x1F;      /* upper (0x80..0x9F) and lower (0xA0..0xBF) case alike */
    if (c <= 0x05)
        return 'a';
    if (c == 0x07)
        return 'c';
    if (c >= 0x08 && c <= 0x0B)
        return 'e';
    if (c >= 0x0C && c <= 0x0F)
        return 'i';
    if (c == 0x11)
        return 'n';
    if ((c >= 0x12 && c <= 0x16) || c == 0x18)
        return 'o';
    if (c >= 0x19 && c <= 0x1C)
        return 'u';
    if (c == 0x1D || second == 0xBF)
        return 'y';
    return 0;
}

/* Cleaning: fold accents, lower-case, drop control characters, collapse whitespace runs to
 * one space, strip both ends. Returns the length written to out (<= n). */
int normalize_text(const unsigned char *in, int n, unsigned char *out)
{
    int w = 0, space = 0;
    for (int i = 0; i < n; i++) {
        unsigned char c = in[i];
        char folded = 0;
        if (c == 0xC3 && i + 1 < n && in[i + 1] >= 0x80 && in[i + 1] <= 0xBF)
            folded = fold_accent(in[i + 1]);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            space = 1;
            continue;
        }
        if (c < 0x20 || c == 0x7F)
            continue;
        if (space && w > 0)
            out[w++] = ' ';
        space = 0;
        if (folded) {
            out[w++] = (unsigned char)folded;
            i++;
        } else {
            out[w++] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
        }
    }
    return w;
}

enum { SI_CLASS_LETTER, SI_CLASS_DIGIT, SI_CLASS_SPACE, SI_CLASS_OTHER };

static int char_class(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || c >= 0x80)
        return SI_CLASS_LETTER;
    if (c >= '0' && c <= '9')
        return SI_CLASS_DIGIT;
    return c == ' ' ? SI_CLASS_SPACE : SI_CLASS_OTHER;
}

/* Pre-tokenization (GPT-2 style): the end of the piece starting at i: a contraction ('s 't
 * 'm 'd 're 've 'll), or an optional space followed by a run of letters, of digits or of
 * other symbols, at most SI_MAX_PIECE bytes. */
static int piece_end(const unsigned char *s, int n, int i)
{
    static const char *const contractions[] = {"s", "t", "m", "d", "re", "ve", "ll"};
    if (s[i] == '\'') {
        for (size_t k = 0; k < sizeof contractions / sizeof contractions[0]; k++) {
            int len = (int)strlen(contractions[k]);
            if (i + 1 + len <= n && memcmp(s + i + 1, contractions[k], (size_t)len) == 0 &&
                (i + 1 + len == n || char_class(s[i + 1 + len]) != SI_CLASS_LETTER))
                return i + 1 + len;
        }
    }
    int j = i;
    if (s[j] == ' ' && j + 1 < n)
        j++;
    int cls = char_class(s[j]);
    int k = j + 1;
    while (k < n && k - i < SI_MAX_PIECE && cls != SI_CLASS_SPACE && char_class(s[k]) == cls)
        k++;
    return k;
}

/* Byte-level BPE of one piece: start from its bytes, repeatedly merge the adjacent pair of
 * lowest rank until no pair has a merge. Writes the ids to out; returns their count (<= n). */
static int bpe_piece(const si_tokenizer *t, const unsigned char *s, int n, int32_t *out)
{
    for (int i = 0; i < n; i++)
        out[i] = s[i];
    int m = n;
    for (;;) {
        int32_t best_rank = INT32_MAX;
        int best_at = -1;
        for (int i = 0; i + 1 < m; i++) {
            int32_t r = pair_rank(&t->merges, out[i], out[i + 1]);
            if (r >= 0 && r < best_rank) {
                best_rank = r;
                best_at = i;
            }
        }
        if (best_at < 0)
            return m;
        m = merge_pair(out, m, out[best_at], out[best_at + 1], 256 + best_rank);
    }
}

/* One run of the whole tokenizer over a document: clean, pre-tokenize, BPE. */
int encode_text(const si_tokenizer *t, const char *text, int n, unsigned char *norm,
                       int32_t *ids)
{
    int nn = normalize_text((const unsigned char *)text, n, norm);
    int n_ids = 0;
    for (int i = 0; i < nn;) {
        int end = piece_end(norm, nn, i);
        n_ids += bpe_piece(t, norm + i, end - i, ids + n_ids);
        i = end;
    }
    return n_ids;
}

void scratch_free(si_scratch *s)
{
    free(s->norm);
    free(s->ids);
    free(s->ids_again);
    memset(s, 0, sizeof *s);
}

int scratch_alloc(si_scratch *s)
{
    s->norm = (unsigned char *)malloc(SI_MAX_DOC_BYTES);
    s->ids = (int32_t *)malloc(SI_MAX_DOC_BYTES * sizeof(int32_t));
    s->ids_again = (int32_t *)malloc(SI_MAX_DOC_BYTES * sizeof(int32_t));
    if (!s->norm || !s->ids || !s->ids_again) {
        scratch_free(s);
        return UF_ERR;
    }
    return UF_OK;
}

/* One sequence: BOS, the document's ids truncated to seq_len - 2, EOS, then PAD. The tokenizer
 * runs `passes` times (at least once); the runs must agree, so the work cannot be skipped, and
 * the ids do not depend on the number of passes. */
int encode_row_passes(const si_tokenizer *t, int passes, const char *text, int n, int seq_len,
                      int32_t *row, si_scratch *s, char *err, size_t errlen)
{
    int n_ids = encode_text(t, text, n, s->norm, s->ids);
    for (int p = 1; p < passes; p++) {
        int again = encode_text(t, text, n, s->norm, s->ids_again);
        if (again != n_ids || memcmp(s->ids, s->ids_again, (size_t)n_ids * sizeof(int32_t))) {
            snprintf(err, errlen, "tokenizer pass %d of a %d-byte document disagrees with pass 0",
                     p, n);
            return UF_ERR;
        }
    }
    int keep = n_ids < seq_len - 2 ? n_ids : seq_len - 2;
    row[0] = t->bos_id;
    memcpy(row + 1, s->ids, (size_t)keep * sizeof(int32_t));
    row[keep + 1] = t->eos_id;
    for (int i = keep + 2; i < seq_len; i++)
        row[i] = t->pad_id;
    return UF_OK;
}

int encode_row(const si_tokenizer *t, const char *text, int n, int seq_len, int32_t *row,
               si_scratch *s, char *err, size_t errlen)
{
    return encode_row_passes(t, t->passes, text, n, seq_len, row, s, err, errlen);
}

/* ---- the work per batch --------------------------------------------------------------- */

/* floor((r + 1) P / rows) - floor(r P / rows): each row floor(P / rows) or one more, the extra
 * passes spread evenly over the batch, and the rows' passes add up to P exactly. */
int row_passes(int batch_passes, int rows, int r)
{
    int64_t p = batch_passes;
    return (int)(((int64_t)(r + 1) * p) / rows - ((int64_t)r * p) / rows);
}

/* rows x (1 + (multiple x gpu_step_ms - first_pass_ms) / next_pass_ms) passes in all: the first
 * pass over every document, then as many further passes as the time left takes; rounded to the
 * nearest whole pass, then kept within [rows, rows x max_passes_per_doc] (every document is
 * tokenized at least once: a host too slow for the multiple runs one pass a document and
 * reaches a larger multiple). */
int calibrate_batch_passes(double multiple, double gpu_step_ms, double first_pass_ms,
                           double next_pass_ms, int rows, int max_passes_per_doc)
{
    if (!(multiple > 0 && multiple < INFINITY) || !(gpu_step_ms > 0 && gpu_step_ms < INFINITY) ||
        !(first_pass_ms > 0 && first_pass_ms < INFINITY) ||
        !(next_pass_ms > 0 && next_pass_ms < INFINITY) || rows < 1 || max_passes_per_doc < 1 ||
        (int64_t)rows * max_passes_per_doc > INT_MAX)
        return -1;
    const double per_doc = 1.0 + (multiple * gpu_step_ms - first_pass_ms) / next_pass_ms;
    const int most = rows * max_passes_per_doc;
    if (!(per_doc < (double)max_passes_per_doc))   /* also keeps the product below in range */
        return most;
    const long want = lround(per_doc * rows);
    return want < rows ? rows : want > most ? most : (int)want;
}

/* Deterministic mutation fuzzing of the result reader and of the doctor's trace reader (not a
 * Criterion test: a plain program, run by ctest as unit.fuzz_reader and unit.fuzz_doctor).
 *
 *   fuzz_reader [--count N] [--seed S] [--first I] [--dump FILE] [--known FIGURES] PATH...
 *
 * Every .csv file and every doctor trace (underfed-trace.PID.txt) under the PATHs (folders are
 * walked) is a seed: results, ceilings, series files and traces, told apart by their first
 * line. Mutation I (I = first .. first + count - 1) picks a
 * seed and applies 1-4 edits from its own random stream (seed S and I: any mutation can be
 * replayed alone with --first I --count 1, and written out with --dump FILE): byte flips,
 * random bytes, NUL bytes, CR bytes, nasty tokens ("nan", "inf", "0x1p3", "-1", "500", quotes,
 * ...), token swaps, line drops, duplications and swaps, truncations, huge lines and fields,
 * numbers shifted (by 1 to 10^18, doubled, zeroed: a record moved in time but still well
 * formed); in a trace, tokens are space-separated and the trace's own tokens join the nasty
 * ones (UINT64_MAX, record letters, escape sequences). Each input goes through fuzz_read_one,
 * the tool's reading path (a trace's: the reader, the analysis, the report, held to the
 * bounds of tests/fuzz/fuzz_doctor.h). A crash or a sanitizer report stops the program; a refused
 * input whose message does not name the file (and line: "FILE:LINE:"; a trace: "FILE:"), and
 * an accepted trace whose diagnosis breaks a bound, are counted as failures; but a breach of
 * a figure named in --known (comma-separated: a known defect of the analysis, awaiting its
 * fix) is counted and said, not failed. Exit 0 when there was no failure, 1 otherwise, 2 on
 * bad usage.
 *
 * The doctor's 1,000,000 (#32): fuzz_reader --count 1000000 --seed S tests/data/doctor
 * tests/data/doctor-v4 (a build with ASan/UBSan: ci/sanitize.sh's), in slices with --first to
 * use several cores; after a change to uf_diagnosis, update fuzz_doctor.c's table first. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "doctor_trace.h"
#include "fuzz_read.h"

enum { MAX_SEED_BYTES = 64 << 20, WINDOW_LINES = 256, ERR_LEN = 512 };

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

typedef struct seed {
    char *path;
    char *scenario;         /* the name a result folder gives the file; NULL: none */
    fuzz_kind kind;
    size_t header_lines;    /* a trace: its header lines (before the first record) */
    buf text;
    buf results;            /* series: the text of its results file (may be empty) */
    size_t body;            /* offset of the first data line (after `#` lines and header) */
} seed;

typedef struct seeds {
    seed *s;
    int n, cap;
} seeds;

/* ---- random numbers: one splitmix64 stream per mutation ---------------------------------- */

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t below(uint64_t *state, size_t n)
{
    return n == 0 ? 0 : (size_t)(next_u64(state) % n);
}

/* ---- buffers ---------------------------------------------------------------------------- */

static int buf_reserve(buf *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    char *bigger = realloc(b->data, cap);
    if (bigger == NULL)
        return -1;
    b->data = bigger;
    b->cap = cap;
    return 0;
}

/* Replace len bytes at pos with n bytes of src (src NULL: n copies of fill). */
static int buf_splice(buf *b, size_t pos, size_t len, const char *src, size_t n, char fill)
{
    if (pos > b->len)
        pos = b->len;
    if (len > b->len - pos)
        len = b->len - pos;
    /* src may lie in b itself (a line duplicated): copy it out, as growing b may move it */
    char *copy = NULL;
    if (src != NULL && b->data != NULL && src >= b->data && src < b->data + b->len) {
        copy = malloc(n + 1);
        if (copy == NULL)
            return -1;
        memcpy(copy, src, n);
        src = copy;
    }
    if (buf_reserve(b, b->len - len + n + 1) != 0) {
        free(copy);
        return -1;
    }
    memmove(b->data + pos + n, b->data + pos + len, b->len - pos - len);
    if (src != NULL)
        memmove(b->data + pos, src, n);
    else
        memset(b->data + pos, fill, n);
    free(copy);
    b->len = b->len - len + n;
    return 0;
}

static int read_file(const char *path, buf *b)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    int rc = 0;
    char chunk[65536];
    size_t n;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = b->len + n > MAX_SEED_BYTES ? -1 : buf_splice(b, b->len, 0, chunk, n, 0);
    if (ferror(f))
        rc = -1;
    fclose(f);
    return rc;
}

/* ---- seeds ------------------------------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Offset of the first line after the `#` lines and the header line. */
static size_t body_offset(const buf *b)
{
    size_t pos = 0;
    int header_seen = 0;
    while (pos < b->len) {
        const char *nl = memchr(b->data + pos, '\n', b->len - pos);
        size_t next = nl ? (size_t)(nl - b->data) + 1 : b->len;
        if (b->data[pos] != '#') {
            if (header_seen)
                break;
            header_seen = 1;
        }
        pos = next;
    }
    return pos;
}

/* A trace's first record line: after its header lines (magic, then "key value" lines whose
 * key is a word, not a record letter). */
static size_t trace_body_offset(const buf *b)
{
    size_t pos = 0;
    for (int line = 0; pos < b->len; line++) {
        const char *nl = memchr(b->data + pos, '\n', b->len - pos);
        size_t next = nl ? (size_t)(nl - b->data) + 1 : b->len;
        if (line > 0 && next - pos >= 2 && b->data[pos + 1] == ' ')
            break;      /* "K ...", "end ..." is not: its second byte is a letter */
        if (line > 0 && next - pos >= 4 && memcmp(b->data + pos, "end ", 4) == 0)
            break;
        pos = next;
    }
    return pos;
}

/* The seed's scenario check: the file's base name when the folder reading accepts it so,
 * else none (a fixture read alone). */
static void choose_scenario(seed *s)
{
    const char *base = strrchr(s->path, '/');
    base = base ? base + 1 : s->path;
    size_t n = strlen(base) - 4;
    s->scenario = malloc(n + 1);
    if (s->scenario == NULL)
        return;
    memcpy(s->scenario, base, n);
    s->scenario[n] = '\0';
    char err[ERR_LEN];
    if (fuzz_read_one(FUZZ_RESULTS, s->path, s->scenario, s->text.data, s->text.len, NULL, 0,
                      err, sizeof err) != 0) {
        free(s->scenario);
        s->scenario = NULL;
    }
}

static int add_seed(seeds *all, const char *path)
{
    if (all->n == all->cap) {
        int cap = all->cap ? 2 * all->cap : 64;
        seed *bigger = realloc(all->s, (size_t)cap * sizeof *bigger);
        if (bigger == NULL)
            return -1;
        all->s = bigger;
        all->cap = cap;
    }
    seed *s = &all->s[all->n];
    memset(s, 0, sizeof *s);
    s->path = strdup(path);
    if (s->path == NULL || read_file(path, &s->text) != 0) {
        fprintf(stderr, "fuzz_reader: cannot read %s\n", path);
        return -1;
    }
    s->kind = fuzz_kind_of(s->text.data, s->text.len);
    s->body = s->kind == FUZZ_DOCTOR ? trace_body_offset(&s->text) : body_offset(&s->text);
    if (s->kind == FUZZ_SERIES) {
        char companion[4096];
        snprintf(companion, sizeof companion, "%.*s.csv",
                 (int)(strlen(path) - strlen(".series.csv")), path);
        if (ends_with(path, ".series.csv"))
            read_file(companion, &s->results);     /* absent: the series meets an empty table */
    } else if (s->kind == FUZZ_RESULTS) {
        choose_scenario(s);
    }
    all->n++;
    return 0;
}

static int cmp_seed_path(const void *a, const void *b)
{
    return strcmp(((const seed *)a)->path, ((const seed *)b)->path);
}

/* Every .csv under path (a file or a folder). */
static int collect(seeds *all, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_reader: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        return ends_with(path, ".csv") || uf_trace_is_name(base) ? add_seed(all, path) : 0;
    }
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        rc = collect(all, child);
    }
    closedir(d);
    return rc;
}

/* ---- mutations -------------------------------------------------------------------------- */

static const char *const nasty_tokens[] = {
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "0x1p3", "0X1A", "1e999", "-1e999",
    "1e-400", "-1", "-0", "0", "500", "100.0001", "-50", "1e308", "99999999999999999999999",
    "", " ", "\"", "\"\"", "\"a,b\"", "\"x\ny\"", "#", "# scenario: other", "# unit.x: y",
    "broken", "fixed", "role", "variant", "step_ms", "skip_reason", ",", ",,,,", "\n", "\r\n",
    "1.5.5", "--1", "+", "e5", "1e", ".", "0.5ms", "\t1", "\xff\xfe", "\xc3\x28",
    "# underfed-results v1", "# underfed-results v2", "# underfed-series v1",
    "# underfed-ceilings v1", "nccl_busbw_gbs", "copy_d2d_gbs",
};
enum { N_NASTY = sizeof nasty_tokens / sizeof nasty_tokens[0] };

/* A trace's own: the extremes of its integer fields, record letters and header keys, states,
 * escape sequences and bytes that are not UTF-8 for its names. */
static const char *const trace_tokens[] = {
    "18446744073709551615", "18446744073709551616", "9223372036854775807", "4294967295",
    "4294967296", "2147483647", "1000000000000000000", "0", "1", "00", "-1", "+1", "1e3", "nan",
    "inf", "100", "100.5", "200", "201", "?", "R", "S", "D", "Z", "RS", "K", "C", "M", "A",
    "S", "R", "P", "U", "W", "H", "X", "end", "end 0", "span", "span 0 0", "pid", "note",
    "dropped", "api_filter", "host_sampler", "record_cap", "counters_note", "", " ", "  ",
    "\x1b[2J", "\x1b]0;t\x07", "\xc2\x9b", "\xff", "\xc3\x28", "\xed\xa0\x80", "\t",
    "underfed-doctor-trace 4", "underfed-doctor-trace 3", "underfed-doctor-trace 1",
    "cudaStreamSynchronize_v3020", "cudaLaunchKernel_v7000", "cudaEventRecord_v3020",
    "cudaFree_v3020", "ncclDevKernel_AllReduce", "sm90_xmma_gemm_f16f16_align1",
    "gemv2T_kernel_val", "vectorized_elementwise_kernel", "nvjet_sm90_tst_128x8_64x12",
};
enum { N_TRACE_TOKENS = sizeof trace_tokens / sizeof trace_tokens[0] };

/* The separators of tokens: a CSV's, or a trace's (space-separated fields). */
static const char *separators = ",\n\"";

/* The bounds [*start, *end) of the token (between separators) around pos. */
static void token_at(const buf *b, size_t pos, size_t *start, size_t *end)
{
    size_t s = pos, e = pos;
    while (s > 0 && !strchr(separators, b->data[s - 1]))
        s--;
    while (e < b->len && !strchr(separators, b->data[e]))
        e++;
    *start = s;
    *end = e;
}

/* A decimal number's digits at [s, e)? */
static int all_digits(const buf *b, size_t s, size_t e)
{
    for (size_t i = s; i < e; i++)
        if (b->data[i] < '0' || b->data[i] > '9')
            return 0;
    return e > s && e - s < 21;
}

/* The number token around pos shifted: +-1 .. +-10^18, doubled, zeroed (well formed, moved). */
static int shift_number(buf *b, size_t pos, uint64_t *rng)
{
    size_t s, e;
    token_at(b, pos, &s, &e);
    if (!all_digits(b, s, e))
        return 0;
    char digits[24];
    memcpy(digits, b->data + s, e - s);
    digits[e - s] = '\0';
    unsigned long long v = strtoull(digits, NULL, 10), delta = 1;
    for (uint64_t k = below(rng, 19); k > 0; k--)
        delta *= 10;
    switch (below(rng, 4)) {
    case 0: v += delta; break;
    case 1: v = v > delta ? v - delta : 0; break;
    case 2: v *= 2; break;
    default: v = 0; break;
    }
    int n = snprintf(digits, sizeof digits, "%llu", v);
    return buf_splice(b, s, e - s, digits, (size_t)n, 0);
}

/* The bounds [*start, *end) of the line around pos, its line break included. */
static void line_at(const buf *b, size_t pos, size_t *start, size_t *end)
{
    size_t s = pos, e = pos;
    while (s > 0 && b->data[s - 1] != '\n')
        s--;
    while (e < b->len && b->data[e] != '\n')
        e++;
    *start = s;
    *end = e < b->len ? e + 1 : e;
}

static int swap_ranges(buf *b, size_t s1, size_t e1, size_t s2, size_t e2)
{
    if (s1 > s2) {
        size_t t = s1; s1 = s2; s2 = t;
        t = e1; e1 = e2; e2 = t;
    }
    if (e1 > s2)
        return 0;       /* overlapping: leave it */
    size_t n1 = e1 - s1, n2 = e2 - s2;
    char *a = malloc(n1 + 1), *c = malloc(n2 + 1);
    int rc = -1;
    if (a && c) {
        memcpy(a, b->data + s1, n1);
        memcpy(c, b->data + s2, n2);
        rc = buf_splice(b, s2, n2, a, n1, 0) || buf_splice(b, s1, n1, c, n2, 0) ? -1 : 0;
    }
    free(a);
    free(c);
    return rc;
}

/* One random edit of b. */
static int mutate_once(buf *b, uint64_t *rng, int trace)
{
    size_t pos = below(rng, b->len + 1), s1, e1, s2, e2;
    switch (below(rng, trace ? 16 : 14)) {
    case 0:     /* flip one bit */
        if (b->len)
            b->data[pos % b->len] ^= (char)(1u << below(rng, 8));
        return 0;
    case 1: {   /* a random byte */
        char c = (char)below(rng, 256);
        return buf_splice(b, pos, below(rng, 2), &c, 1, 0);
    }
    case 2:     /* a NUL byte, often in a `#` line */
        if (below(rng, 2) && b->len) {
            line_at(b, below(rng, b->len < 2048 ? b->len : 2048), &s1, &e1);
            pos = s1 + below(rng, e1 - s1 + 1);
        }
        return buf_splice(b, pos, 0, "", 1, 0);
    case 3:     /* a bare CR */
        return buf_splice(b, pos, 0, "\r", 1, 0);
    case 4: {   /* a token replaced by a nasty one */
        const char *t = trace && below(rng, 3) != 0 ? trace_tokens[below(rng, N_TRACE_TOKENS)]
                                                     : nasty_tokens[below(rng, N_NASTY)];
        token_at(b, pos, &s1, &e1);
        return buf_splice(b, s1, e1 - s1, t, strlen(t), 0);
    }
    case 5:     /* two tokens swapped */
        token_at(b, pos, &s1, &e1);
        token_at(b, below(rng, b->len + 1), &s2, &e2);
        return swap_ranges(b, s1, e1, s2, e2);
    case 6:     /* a line dropped */
        line_at(b, pos, &s1, &e1);
        return buf_splice(b, s1, e1 - s1, NULL, 0, 0);
    case 7:     /* a line duplicated (duplicate rows, ceilings, metadata) */
        line_at(b, pos, &s1, &e1);
        return buf_splice(b, e1, 0, b->data + s1, e1 - s1, 0);
    case 8:     /* two lines swapped */
        line_at(b, pos, &s1, &e1);
        line_at(b, below(rng, b->len + 1), &s2, &e2);
        return swap_ranges(b, s1, e1, s2, e2);
    case 9:     /* truncated */
        b->len = pos;
        return 0;
    case 10: {  /* a huge line or field */
        static const char fills[] = "a,9#\"\n ";
        size_t n = 1 + below(rng, below(rng, 8) == 0 ? 300000 : 5000);
        return buf_splice(b, pos, 0, NULL, n, fills[below(rng, sizeof fills - 1)]);
    }
    case 11:    /* a byte deleted */
        return buf_splice(b, pos, 1, NULL, 0, 0);
    case 12: {  /* a number's digits changed */
        token_at(b, pos, &s1, &e1);
        char digits[32];
        int n = snprintf(digits, sizeof digits, "%s%llu%s", below(rng, 2) ? "-" : "",
                         (unsigned long long)below(rng, 1000000),
                         below(rng, 3) == 0 ? "e300" : "");
        return buf_splice(b, s1, e1 - s1, digits, (size_t)n, 0);
    }
    case 13:    /* a field added or removed */
        return below(rng, 2) ? buf_splice(b, pos, 0, separators, 1, 0)
                             : (pos < b->len && b->data[pos] == separators[0]
                                    ? buf_splice(b, pos, 1, NULL, 0, 0) : 0);
    default:    /* a trace's number shifted (twice as likely: its records are numbers) */
        return shift_number(b, pos, rng);
    }
}

/* The record lines of b[start, end): a trace's lines whose second byte is a space. */
static size_t record_lines(const buf *b, size_t start, size_t end)
{
    size_t n = 0;
    for (size_t p = start; p < end;) {
        const char *nl = memchr(b->data + p, '\n', end - p);
        size_t next = nl ? (size_t)(nl - b->data) + 1 : end;
        n += next - p >= 2 && b->data[p + 1] == ' ';
        p = next;
    }
    return n;
}

/* The input of mutation i: a seed (large ones cut to their header and a window of lines, so
 * that a run stays fast), then 1-4 edits. */
static int make_input(const seeds *all, uint64_t seed_value, uint64_t i, buf *out,
                      const seed **from)
{
    uint64_t rng = seed_value ^ (i * 0xD1B54A32D192ED03ull);
    next_u64(&rng);
    const seed *s = &all->s[below(&rng, (size_t)all->n)];
    *from = s;
    out->len = 0;
    const buf *t = &s->text;
    int trace = s->kind == FUZZ_DOCTOR;
    if (t->len > 65536 && below(&rng, 64) != 0 && s->body < t->len) {
        size_t start = s->body + below(&rng, t->len - s->body), end = start;
        while (start > s->body && t->data[start - 1] != '\n')
            start--;
        for (int lines = 0; end < t->len && lines < WINDOW_LINES; end++)
            lines += t->data[end] == '\n';
        if (buf_splice(out, 0, 0, t->data, s->body, 0) != 0 ||
            buf_splice(out, out->len, 0, t->data + start, end - start, 0) != 0)
            return -1;
        if (trace) {    /* the window's records, counted by its own end line */
            size_t n = record_lines(t, start, end);
            if (end < t->len && n > 0 && strncmp(t->data + end, "end ", 4) != 0) {
                char line[40];
                int k = snprintf(line, sizeof line, "end %zu\n", n);
                if (buf_splice(out, out->len, 0, line, (size_t)k, 0) != 0)
                    return -1;
            }
        }
    } else if (buf_splice(out, 0, 0, t->data, t->len, 0) != 0) {
        return -1;
    }
    separators = trace ? " \n" : ",\n\"";
    int edits = 1 + (int)below(&rng, 4);
    for (int e = 0; e < edits; e++)
        if (mutate_once(out, &rng, trace) != 0)
            return -1;
    return 0;
}

/* ---- the driver ------------------------------------------------------------------------- */

typedef struct options {
    uint64_t count, seed, first;
    const char *dump, *known;
    int n_paths;
    char **paths;
} options;

static int parse_u64(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->count = 20000;
    o->seed = 1;
    o->paths = calloc((size_t)argc, sizeof *o->paths);
    if (o->paths == NULL)
        return -1;
    for (int i = 1; i < argc; i++) {
        uint64_t *slot = strcmp(argv[i], "--count") == 0   ? &o->count
                         : strcmp(argv[i], "--seed") == 0  ? &o->seed
                         : strcmp(argv[i], "--first") == 0 ? &o->first
                                                           : NULL;
        int text = strcmp(argv[i], "--dump") == 0 || strcmp(argv[i], "--known") == 0;
        if (slot != NULL || text) {
            if (i + 1 >= argc || (slot != NULL && parse_u64(argv[i + 1], slot) != 0)) {
                fprintf(stderr, "fuzz_reader: %s takes %s\n", argv[i],
                        slot != NULL ? "a number" : "a value");
                return -1;
            }
            if (slot == NULL && strcmp(argv[i], "--dump") == 0)
                o->dump = argv[i + 1];
            else if (slot == NULL)
                o->known = argv[i + 1];
            i++;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "fuzz_reader: unknown option %s\n", argv[i]);
            return -1;
        } else {
            o->paths[o->n_paths++] = argv[i];
        }
    }
    if (o->n_paths == 0) {
        fprintf(stderr, "usage: fuzz_reader [--count N] [--seed S] [--first I] [--dump FILE] "
                        "[--known FIGURES] PATH...\n");
        return -1;
    }
    return 0;
}

static int dump_input(const char *path, const buf *b)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b->data, 1, b->len, f) != b->len) {
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f);
}

int main(int argc, char **argv)
{
    options o;
    seeds all = {0};
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    for (int p = 0; p < o.n_paths; p++)
        if (collect(&all, o.paths[p]) != 0)
            return 2;
    if (all.n == 0) {
        fprintf(stderr, "fuzz_reader: no .csv files or doctor traces under the paths given\n");
        return 2;
    }
    qsort(all.s, (size_t)all.n, sizeof *all.s, cmp_seed_path);   /* readdir order varies */
    fuzz_doctor_set_known(o.known);
    uint64_t by_kind[FUZZ_N_KINDS][2] = {{0}}, bad_messages = 0, broken_bounds = 0;
    buf input = {0};
    char err[ERR_LEN];
    clock_t start = clock();
    for (uint64_t i = o.first; i < o.first + o.count; i++) {
        const seed *s;
        if (make_input(&all, o.seed, i, &input, &s) != 0) {
            fprintf(stderr, "fuzz_reader: out of memory\n");
            return 2;
        }
        if (o.dump != NULL && dump_input(o.dump, &input) != 0)
            fprintf(stderr, "fuzz_reader: cannot write %s\n", o.dump);
        int rc = fuzz_read_one(s->kind, s->path, s->scenario, input.data, input.len,
                               s->results.data, s->results.len, err, sizeof err);
        by_kind[s->kind][rc > 0 || rc == -1]++;
        if (rc == -2) {
            broken_bounds++;
            fprintf(stderr, "fuzz_reader: mutation %llu of %s: accepted, and its diagnosis "
                    "breaks a bound: %s (replay: --seed %llu --first %llu --count 1 --dump "
                    "FILE)\n", (unsigned long long)i, s->path, err,
                    (unsigned long long)o.seed, (unsigned long long)i);
        } else if (rc < 0) {
            bad_messages++;
            fprintf(stderr, "fuzz_reader: mutation %llu of %s: refused without FILE:LINE: %s "
                    "(replay: --seed %llu --first %llu --count 1 --dump FILE)\n",
                    (unsigned long long)i, s->path, err, (unsigned long long)o.seed,
                    (unsigned long long)i);
        }
    }
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    static const char *const names[] = {"results", "ceilings", "series", "doctor traces"};
    printf("fuzz_reader: %llu mutations of %d seed files (seed %llu, from %llu) in %.1f s CPU: ",
           (unsigned long long)o.count, all.n, (unsigned long long)o.seed,
           (unsigned long long)o.first, seconds);
    for (int k = 0; k < FUZZ_N_KINDS; k++)
        printf("%s%s %llu accepted / %llu refused", k ? ", " : "", names[k],
               (unsigned long long)by_kind[k][0], (unsigned long long)by_kind[k][1]);
    printf("; 0 crashes, %llu refusals without FILE:LINE, %llu accepted traces with a figure "
           "beyond its bounds", (unsigned long long)bad_messages,
           (unsigned long long)broken_bounds);
    if (o.known != NULL)
        printf(", %llu breaches of the known defects (%s)", fuzz_doctor_known_breaches(),
               o.known);
    printf("\n");
    for (int k = 0; k < all.n; k++) {
        free(all.s[k].path);
        free(all.s[k].scenario);
        free(all.s[k].text.data);
        free(all.s[k].results.data);
    }
    free(all.s);
    free(input.data);
    free(o.paths);
    return bad_messages || broken_bounds ? 1 : 0;
}

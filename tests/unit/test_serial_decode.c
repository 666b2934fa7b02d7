/* Unit tests of serial_decode's plain-C parts (scenarios/serial_decode/serial_decode_ref.c):
 * the shape and the bytes its claims divide by, the comparison verify judges decodes with
 * (top-2 margin, divergence, a wrong token), and the host reference's own properties
 * (deterministic, causal in its teacher-forced inputs, each sequence its own cache). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serial_decode_ref.h"

static sd_shape shape(int d, int layers, int vocab, int cache, int batch)
{
    sd_shape s;
    char err[256];
    cr_assert_eq(sd_shape_make(d, layers, vocab, cache, batch, &s, err, sizeof err), 0, "%s", err);
    return s;
}

Test(serial_decode_ref, shape_at_4096)
{
    const sd_shape s = shape(4096, 16, 32768, 256, 64);
    cr_assert_eq(s.heads, 64);
    cr_assert_eq(s.kv_heads, 16);
    cr_assert_eq(s.kv_dim, 1024);
    cr_assert_eq(s.qkv_rows, 6144);
    cr_assert_eq(s.ffn, 16384);
    /* 6144 x 4096 + 4096 x 4096 + 16384 x 4096 + 4096 x 16384 */
    cr_assert_eq(sd_layer_elems(&s), (size_t)176160768);
    cr_assert_eq(sd_mat_offset(&s, SD_O), (size_t)6144 * 4096);
    cr_assert_eq(sd_mat_offset(&s, SD_DOWN), (size_t)(6144 + 4096 + 16384) * 4096);
    cr_assert_float_eq(sd_weight_bytes(&s), 2.0 * (16.0 * 176160768 + 32768.0 * 4096), 1.0);
    /* 64 sequences x 16 layers x K, V x 256 positions x 1024 features, bf16: 1 GiB */
    cr_assert_float_eq(sd_cache_bytes(&s), 1073741824.0, 1.0);
    cr_assert_eq(sd_cache_index(&s, 1, 0, 0, 0, 0), sd_cache_elems(&s) / 64);
    cr_assert_eq(sd_cache_index(&s, 0, 0, 1, 3, 5), (size_t)(256 + 3) * 1024 + 5);
}

Test(serial_decode_ref, shapes_out_of_range_are_refused)
{
    sd_shape s;
    char err[256];
    cr_assert_eq(sd_shape_make(300, 16, 32768, 256, 1, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "multiple of 256") != NULL, "%s", err);
    cr_assert_eq(sd_shape_make(128, 16, 32768, 256, 1, &s, err, sizeof err), -1);
    cr_assert_eq(sd_shape_make(256, 16, 32768, 100, 1, &s, err, sizeof err), -1);
    cr_assert_eq(sd_shape_make(256, 0, 32768, 256, 1, &s, err, sizeof err), -1);
    cr_assert_eq(sd_shape_make(256, 16, 32768, 288, 1, &s, err, sizeof err), -1); /* 9 chunks */
    /* a cache tensor of 2^32 elements or more: the draws index with 32 bits */
    cr_assert_eq(sd_shape_make(16384, 128, 32768, 256, 1024, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "2^32") != NULL, "%s", err);
}

Test(serial_decode_ref, top2_margin_ties_and_nan)
{
    double v[5] = {0.5, 2.0, NAN, 1.25, -3.0}, m;
    cr_assert_eq(sd_top2(v, 5, &m), 1);
    cr_assert_float_eq(m, 0.75, 1e-15);
    v[3] = 2.0;                                 /* a tie: the first index, margin 0 */
    cr_assert_eq(sd_top2(v, 5, &m), 1);
    cr_assert_float_eq(m, 0.0, 0.0);
    double nans[2] = {NAN, NAN};
    cr_assert_eq(sd_top2(nans, 2, &m), -1);
    double one[1] = {4.0};
    cr_assert_eq(sd_top2(one, 1, &m), 0);
    cr_assert(isinf(m));
}

/* Two steps of 4 logits (exact in float): step 0's top is 3 by 0.5, step 1's 0 by 1/128. */
static const double want[8] = {0.0, 1.0, 2.0, 2.5, 3.0, 2.9921875, -1.0, 0.0};
static const int want_tok[2] = {3, 0};

static void as_floats(const double *v, float *f, int n)
{
    for (int i = 0; i < n; i++)
        f[i] = (float)v[i];
}

Test(serial_decode_ref, compare_equal_decodes)
{
    float got[8];
    int tok[2] = {3, 0};
    sd_match m;
    as_floats(want, got, 8);
    sd_compare(got, tok, want, want_tok, 2, 4, 1e-3, &m);
    cr_assert_eq(m.steps_compared, 2);
    cr_assert_eq(m.bad_step, -1);
    cr_assert_eq(m.diverged_step, -1);
    cr_assert_float_eq(m.max_rel_err, 0.0, 0.0);
    cr_assert_float_eq(m.bitwise_diff, 0.0, 0.0);
    got[5] = nextafterf(got[5], 10.0f);         /* one ulp: counted, inside the tolerance */
    sd_compare(got, tok, want, want_tok, 2, 4, 1e-3, &m);
    cr_assert_float_eq(m.bitwise_diff, 1.0, 0.0);
    cr_assert_eq(m.bad_step, -1);
}

Test(serial_decode_ref, a_wrong_token_outside_the_margin_fails)
{
    float got[8];
    int tok[2] = {2, 0};                        /* step 0: 2, though 3 leads by 0.5 */
    sd_match m;
    as_floats(want, got, 8);
    sd_compare(got, tok, want, want_tok, 2, 4, 1e-3, &m);
    cr_assert_eq(m.bad_step, 0);
    cr_assert_eq(m.steps_compared, 1);
}

Test(serial_decode_ref, a_near_tie_may_part_the_sequences)
{
    float got[8];
    int tok[2] = {3, 1};                        /* step 1: 1, where 0 leads by 1/128 */
    sd_match m;
    as_floats(want, got, 8);
    /* tolerance 1e-2 of max |want| = 0.03 > 1/128: either token is right */
    sd_compare(got, tok, want, want_tok, 2, 4, 1e-2, &m);
    cr_assert_eq(m.bad_step, -1);
    cr_assert_eq(m.diverged_step, 1);
    /* a tolerance of 1e-3 (0.003) does not excuse it */
    sd_compare(got, tok, want, want_tok, 2, 4, 1e-3, &m);
    cr_assert_eq(m.bad_step, 1);
}

Test(serial_decode_ref, free_running_decodes_stop_at_a_divergence)
{
    double w3[12];
    float got[12];
    int ref_tok[3] = {3, 0, 1}, tok[3] = {3, 1, 0};
    sd_match m;
    memcpy(w3, want, sizeof want);
    w3[8] = 0.0, w3[9] = 5.0, w3[10] = 0.0, w3[11] = 0.0;
    as_floats(w3, got, 12);
    got[8] = 9.0f;          /* step 2 is far off, but comes after the sequences parted */
    sd_compare(got, tok, w3, ref_tok, 3, 4, 1e-2, &m);
    cr_assert_eq(m.diverged_step, 1);
    cr_assert_eq(m.steps_compared, 2);
    cr_assert_float_eq(m.max_rel_err, 0.0, 0.0);
    /* teacher-forced (no reference tokens): the steps after a divergence still count */
    sd_compare(got, tok, w3, NULL, 3, 4, 1e-2, &m);
    cr_assert_eq(m.diverged_step, 1);
    cr_assert_eq(m.steps_compared, 3);
    cr_assert(m.max_rel_err > 1.0);
}

Test(serial_decode_ref, a_nan_logit_is_not_finite)
{
    float got[8];
    int tok[2] = {3, 0};
    sd_match m;
    as_floats(want, got, 8);
    got[6] = NAN;                               /* a row no kernel wrote: still poisoned */
    sd_compare(got, tok, want, want_tok, 2, 4, 1e-3, &m);
    cr_assert_eq(m.nonfinite, 1);
    cr_assert(isinf(m.max_rel_err));
}

/* ---- the host reference on a tiny model ------------------------------------------------------ */

#define T 3

static double *decode(const sd_shape *s, uint64_t seed, int b, const int *inputs)
{
    double *logits = malloc((size_t)T * s->vocab * sizeof *logits);
    cr_assert_not_null(logits);
    cr_assert_eq(sd_ref_decode(s, seed, b, T, inputs, logits), 0);
    return logits;
}

Test(serial_decode_ref, reference_is_deterministic_and_finite)
{
    const sd_shape s = shape(256, 2, 64, 32, 2);
    const int inputs[T] = {5, 17, 40};
    double *a = decode(&s, 7, 0, inputs), *b = decode(&s, 7, 0, inputs);
    double spread = 0.0;
    cr_assert_eq(memcmp(a, b, (size_t)T * s.vocab * sizeof *a), 0);
    for (int i = 0; i < T * s.vocab; i++) {
        cr_assert(isfinite(a[i]));
        spread = fmax(spread, fabs(a[i] - a[0]));
    }
    /* RMSNorm'd input, weights of variance 1/d: logits of order 1, not a constant */
    cr_assert(spread > 0.1 && spread < 50.0, "spread %g", spread);
    free(a);
    free(b);
}

Test(serial_decode_ref, reference_is_causal_in_its_inputs)
{
    const sd_shape s = shape(256, 2, 64, 32, 1);
    const int in1[T] = {5, 17, 40}, in2[T] = {5, 17, 41};
    double *a = decode(&s, 3, 0, in1), *b = decode(&s, 3, 0, in2);
    const size_t two = (size_t)2 * s.vocab;
    cr_assert_eq(memcmp(a, b, two * sizeof *a), 0);            /* steps 0, 1: the same */
    cr_assert_neq(memcmp(a + two, b + two, (size_t)s.vocab * sizeof *a), 0);
    free(a);
    free(b);
}

Test(serial_decode_ref, each_sequence_attends_its_own_cache)
{
    const sd_shape s = shape(256, 2, 64, 32, 2);
    const int inputs[T] = {5, 17, 40};
    double *a = decode(&s, 3, 0, inputs), *b = decode(&s, 3, 1, inputs), *c = decode(&s, 4, 0, inputs);
    cr_assert_neq(memcmp(a, b, (size_t)s.vocab * sizeof *a), 0);
    cr_assert_neq(memcmp(a, c, (size_t)s.vocab * sizeof *a), 0);   /* another seed */
    free(a);
    free(b);
    free(c);
}

Test(serial_decode_ref, start_tokens_are_in_range)
{
    for (int b = 0; b < 100; b++) {
        const int t = sd_start_token(1, b, 32768);
        cr_assert(t >= 0 && t < 32768);
    }
    cr_assert_neq(sd_start_token(1, 0, 32768), sd_start_token(1, 1, 32768));
}

/* serial_decode's plain-C parts (serial_decode_ref.c): the decoder's shape and its byte counts,
 * the random values host and device draw alike, the fp64 host reference of a greedy decode
 * (teacher-forced on the tokens a variant chose, so that every step stays comparable), and the
 * comparison of a variant's logits and tokens with a reference's. Plain C, usable from C and
 * CUDA, tested by tests/unit/test_serial_decode.c. */
#ifndef SD_REF_H
#define SD_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the decoder ------------------------------------------------------------------------ */

#define SD_HEAD_DIM 64      /* features per attention head */
#define SD_GROUP 4          /* query heads per KV head (grouped-query attention) */
#define SD_CHUNK 32         /* cache positions per attention work item: one per lane */
#define SD_MAX_CHUNKS 8     /* work items per KV head at most (a cache of 256 positions): the
                             * combine holds them in registers */
#define SD_RMS_EPS 1e-6f    /* RMSNorm's epsilon */

/* A decoder of `layers` pre-norm blocks of width d: RMSNorm, QKV projection (d query features,
 * d / SD_GROUP key and as many value features), attention of each query head over the KV
 * cache of its group (`cache` positions, a ring), output projection and residual; RMSNorm,
 * MLP up (4d, GELU) and down, residual. Then RMSNorm, the LM head (vocab x d) and the argmax.
 * No norm weights, biases or positional rotation: they move no bytes worth counting. */
typedef struct sd_shape {
    int d, layers, vocab, cache, batch;
    int heads, kv_heads, kv_dim, ffn, qkv_rows;
} sd_shape;

/* The shape of width d (a multiple of 256: whole heads, whole KV groups, whole 16-byte chunks
 * per lane of a warp) with the given layers, vocabulary, cache length (a multiple of
 * SD_CHUNK, at most SD_MAX_CHUNKS of them) and batch (sequences decoded in lockstep). 0, or -1 with why in err when a value
 * is out of range or a tensor would hold 2^32 elements or more (the random draws index with
 * 32 bits). */
int sd_shape_make(int d, int layers, int vocab, int cache, int batch, sd_shape *s, char *err,
                  size_t errlen);

/* A layer's four matrices (row-major, rows x cols bf16, one after the other in the layer's
 * block): their rows and columns, where each starts, and the elements of the block. */
enum { SD_QKV = 0, SD_O, SD_UP, SD_DOWN, SD_N_MATS };

static inline UF_HOST_DEVICE int sd_mat_rows(const sd_shape *s, int mat)
{
    return mat == SD_QKV ? s->qkv_rows : mat == SD_UP ? s->ffn : s->d;
}

static inline UF_HOST_DEVICE int sd_mat_cols(const sd_shape *s, int mat)
{
    return mat == SD_DOWN ? s->ffn : s->d;
}

static inline UF_HOST_DEVICE size_t sd_mat_offset(const sd_shape *s, int mat)
{
    size_t off = 0;
    for (int j = 0; j < mat && j < SD_N_MATS; j++)
        off += (size_t)sd_mat_rows(s, j) * (size_t)sd_mat_cols(s, j);
    return off;
}

static inline UF_HOST_DEVICE size_t sd_layer_elems(const sd_shape *s)
{
    return sd_mat_offset(s, SD_N_MATS);
}

/* Bytes one decode step must read at least: every layer's weights and the LM head once (the
 * embedding gives one row per sequence: not counted), and the KV cache of every sequence. */
double sd_weight_bytes(const sd_shape *s);
double sd_cache_bytes(const sd_shape *s);      /* all `batch` sequences */
/* Elements of the KV cache of all sequences: batch x layers x {K, V} x cache x kv_dim. */
size_t sd_cache_elems(const sd_shape *s);
/* Index of element (seq b, layer l, K or V, position p, feature f) of the cache. */
static inline UF_HOST_DEVICE size_t sd_cache_index(const sd_shape *s, int b, int l, int kv,
                                                   int p, int f)
{
    return ((((size_t)b * s->layers + l) * 2 + kv) * s->cache + p) * s->kv_dim + f;
}

/* ---- the random inputs -------------------------------------------------------------------- */

/* Tensor ids of the counter-based random inputs. */
enum { SD_T_EMBED = 1, SD_T_HEAD = 2, SD_T_CACHE = 3, SD_T_TOKENS = 4, SD_T_LAYER = 16 };

static inline UF_HOST_DEVICE uint32_t sd_key(uint64_t seed, uint32_t tensor)
{
    return (uint32_t)uf_hash_at(seed, tensor);
}

/* The key of matrix `mat` of layer l. */
static inline UF_HOST_DEVICE uint32_t sd_mat_key(uint64_t seed, int l, int mat)
{
    return sd_key(seed, SD_T_LAYER + 4u * (uint32_t)l + (uint32_t)mat);
}

/* Element i of a uniform tensor of [-amplitude, amplitude), before its bf16 rounding (exact
 * in fp32: u has 24 bits). */
static inline UF_HOST_DEVICE float sd_uniform(uint32_t key, uint32_t i, float amplitude)
{
    return amplitude * (2.0f * uf_uniform32_at(key, i) - 1.0f);
}

/* A matrix's amplitude: U(±sqrt(3/cols)) keeps an activation's variance through it. The
 * embedding and the cache are U(±1). */
static inline UF_HOST_DEVICE float sd_amplitude(int cols)
{
    return sqrtf(3.0f / (float)cols);
}

/* The first token of sequence b. */
static inline UF_HOST_DEVICE int sd_start_token(uint64_t seed, int b, int vocab)
{
    return (int)(uf_hash_at(seed ^ SD_T_TOKENS, (uint64_t)b) % (uint64_t)vocab);
}

/* GELU (erf form), as the device applies it. */
static inline UF_HOST_DEVICE float sd_gelu(float v)
{
    return 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

/* ---- the host reference --------------------------------------------------------------------- */

/* `steps` decode steps of sequence b of the model drawn from seed, in fp64 with the device's
 * bf16 roundings (the normed inputs, K and V, the attention output, the MLP activation) and
 * fp32 residual, teacher-forced: step t is fed inputs[t] (inputs[0] the sequence's first
 * token, inputs[t] the token the variant chose at step t - 1) and writes K and V at cache
 * position t % cache, from a cache drawn from seed. logits: steps x vocab. 0, or 1 when out of
 * host memory. Cost: steps x (layers x layer_elems + vocab x d) multiply-adds. */
int sd_ref_decode(const sd_shape *s, uint64_t seed, int b, int steps, const int *inputs,
                  double *logits);

/* ---- comparing decodes ------------------------------------------------------------------------ */

/* The largest value of v[0..n) and its first index (NaN never wins), and its margin over the
 * second largest (0 with ties; infinity when n is 1). -1 when no value is a number. */
int sd_top2(const double *v, int n, double *margin);

/* A variant's decode against a reference's over `steps` steps of one sequence. */
typedef struct sd_match {
    int steps_compared;     /* steps whose logits were compared */
    int bad_step;           /* the first step with a token other than the reference's although
                             * its top-2 margin exceeds the tolerance; -1: none */
    int diverged_step;      /* the first step whose tokens differ inside the margin (-1:
                             * none); two free-running decodes part there, so the steps after
                             * it are not compared */
    double max_rel_err;     /* the largest step's max_rel_err of logits (verify.h) */
    double bitwise_diff;    /* compared logits not equal bit for bit to the reference's (float) */
    int nonfinite;          /* 1 when a compared logit was not finite */
} sd_match;

/* got (steps x vocab floats) and got_tok against want (doubles) and want_tok. At step t the
 * tokens must be equal, unless the reference's top-2 margin is within tol x max|want| (a
 * rounding may then pick either: diverged_step); a token other than the reference's outside
 * that margin ends the comparison (bad_step). want_tok NULL: the reference's own argmax stands
 * in, and the reference was teacher-forced on got_tok, so the comparison goes on past a
 * divergence; with want_tok it ends there, because two free-running decodes part. */
void sd_compare(const float *got, const int *got_tok, const double *want, const int *want_tok,
                int steps, int vocab, double tol, sd_match *m);

#ifdef __cplusplus
}
#endif

#endif

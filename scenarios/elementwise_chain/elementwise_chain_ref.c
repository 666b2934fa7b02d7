/* elementwise_chain's op table as data and its host reference: the same IEEE operations in the
 * same order as the device ops (elementwise_chain_kernels.cu). Plain C, no CUDA: unit-tested
 * in tests/unit/test_refs.c. */
#include <assert.h>
#include <math.h>
#include <stdint.h>

#include "elementwise_chain_ref.h"

/* In ew_kind order. */
const ew_kind_desc ew_kinds[EW_N_KINDS] = {
    {.name = "bias_add", .flops = 1, .reads_residual = 0, .reads_bias = 1},
    {.name = "gelu", .flops = 16, .reads_residual = 0, .reads_bias = 0},
    {.name = "dropout", .flops = 1, .reads_residual = 0, .reads_bias = 0},
    {.name = "scale", .flops = 1, .reads_residual = 0, .reads_bias = 0},
    {.name = "residual_add", .flops = 1, .reads_residual = 1, .reads_bias = 0},
    {.name = "clamp", .flops = 2, .reads_residual = 0, .reads_bias = 0},
    {.name = "leaky_relu", .flops = 2, .reads_residual = 0, .reads_bias = 0},
    {.name = "shift", .flops = 1, .reads_residual = 0, .reads_bias = 0},
};

#define EW_HOST_ROW(i, k, a_, c_) {.index = (i), .kind = (k), .a = (a_), .c = (c_)},
const ew_op ew_ops[] = {EW_OP_TABLE(EW_HOST_ROW)};
#undef EW_HOST_ROW
static_assert(sizeof ew_ops / sizeof ew_ops[0] == EW_MAX_OPS, "the op table has EW_MAX_OPS rows");

/* Does any op in [first, end) read the residual (what = 0) or the bias (what = 1)? */
int ew_ops_read(int first, int end, int what)
{
    for (int k = first; k < end; ++k) {
        const ew_kind_desc *d = &ew_kinds[ew_ops[k].kind];
        if (what == 0 ? d->reads_residual : d->reads_bias)
            return 1;
    }
    return 0;
}

int ew_flops_per_element(int n_ops)
{
    int flops = 0;
    for (int k = 0; k < n_ops; ++k)
        flops += ew_kinds[ew_ops[k].kind].flops;
    return flops;
}

/* ---- host reference -------------------------------------------------------------------- */
/* The same IEEE operations in the same order as the device ops. Each is its own non-inlined
 * function so that the host compiler cannot contract a multiply and an add into an FMA
 * (it would on targets with FMA, e.g. aarch64), which would change the rounding. */

__attribute__((noinline)) static float ew_h_add(float a, float b) { return a + b; }
__attribute__((noinline)) static float ew_h_mul(float a, float b) { return a * b; }
__attribute__((noinline)) static float ew_h_div(float a, float b) { return a / b; }

/* num x (1/den), both correctly rounded, as on the device (ew_tanh_pade). */
static float ew_host_tanh_pade(float u)
{
    float uc = fminf(fmaxf(u, -3.0f), 3.0f);
    float uc2 = ew_h_mul(uc, uc);
    float num = ew_h_mul(uc, ew_h_add(27.0f, uc2));
    float den = ew_h_add(27.0f, ew_h_mul(9.0f, uc2));
    return ew_h_mul(num, ew_h_div(1.0f, den));
}

static float ew_host_gelu(float x)
{
    float x3 = ew_h_mul(ew_h_mul(x, x), x);
    float inner = ew_h_add(x, ew_h_mul(0.044715f, x3));
    float t = ew_host_tanh_pade(ew_h_mul(0.7978845608f, inner));
    return ew_h_mul(ew_h_mul(0.5f, x), ew_h_add(1.0f, t));
}

static float ew_host_apply(const ew_op *op, float x, float r, float b, size_t e, uint32_t seed)
{
    switch (op->kind) {
    case EW_BIAS_ADD: return ew_h_add(x, b);
    case EW_GELU: return ew_host_gelu(x);
    case EW_DROPOUT:
        return ew_dropout_keep(seed, op->index, (uint32_t)e, op->a) ? ew_h_mul(x, op->c) : 0.0f;
    case EW_SCALE: return ew_h_mul(x, op->a);
    case EW_RESIDUAL_ADD: return ew_h_add(x, r);
    case EW_CLAMP: return fminf(fmaxf(x, -op->a), op->a);
    case EW_LEAKY_RELU: return x > 0.0f ? x : ew_h_mul(x, op->a);
    case EW_SHIFT: return ew_h_add(x, op->a);
    default: return x;
    }
}

/* The storage bits of x: fp32 as is, or bf16 rounded to nearest even. */
uint32_t ew_host_storage_bits(float x, int bits)
{
    return bits == 32 ? uf_float_bits(x) : uf_bf16_bits(x);
}

float ew_host_storage_value(uint32_t stored, int bits)
{
    return uf_bits_float(bits == 16 ? stored << 16 : stored);
}

uint32_t ew_host_load_bits(const void *p, size_t i, int bits)
{
    return bits == 16 ? ((const uint16_t *)p)[i] : ((const uint32_t *)p)[i];
}
/* The variant's result for element e from its inputs x, r, b (fp32 values of the storage):
 * ops 0..n_ops-1 in order, rounded to the storage type after each op (round_each, unfused) or
 * once at the end (fused). Returns the storage bits. */
uint32_t ew_host_chain_bits(float x, float r, float b, size_t e, int n_ops, uint32_t seed,
                            int round_each, int bits)
{
    for (int k = 0; k < n_ops; ++k) {
        x = ew_host_apply(&ew_ops[k], x, r, b, e, seed);
        if (round_each)
            x = ew_host_storage_value(ew_host_storage_bits(x, bits), bits);
    }
    return ew_host_storage_bits(x, bits);
}

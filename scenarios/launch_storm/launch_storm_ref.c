/* launch_storm: the host side of the workload: the double reference op (verification's), the
 * inputs (from the run's seed), the op table (from a fixed seed). Plain C, no CUDA. */
#include <math.h>
#include <stdint.h>

#include "random.h"
#include "launch_storm_ref.h"

#define LS_TABLE_SEED 0x5eedull      /* the op constants are part of the program, not the data */

/* How c_k is derived from a = sign_k * amplitude * (1 + jitter_k / 4): offset + a, exp(a) (a
 * multiplicative scale whose passes cancel in log space), or expm1(a) (the same for x + c*x). */
enum const_form { FORM_OFFSET, FORM_EXP, FORM_EXPM1 };

typedef struct op_desc {
    const char *name;
    const char *formula;        /* what apply_op computes, for the reader */
    int form;                   /* enum const_form */
    double offset, amplitude;
} op_desc;

/* The table, in enum op_kind order. Amplitudes are small and the sign of every constant flips
 * on each pass over the table, so consecutive passes nearly undo each other: through 1000 ops
 * the values stay within +-2.3 (the clamp at +-4 is a safety net that never triggers), and every
 * output still depends on its own input (host simulation at K = 1000: d out / d in between
 * 0.12 and 1.33). Each op still moves the larger values by 0.75-6 %, far above the
 * verification tolerance. */
static const op_desc op_descs[OP_KINDS] = {
    {"scale", "y = c*x", FORM_EXP, 0.0, 0.05},
    {"bias", "y = x + c", FORM_OFFSET, 0.0, 0.05},
    {"gelu", "y = x + c*GELU_tanh(x)", FORM_OFFSET, 0.0, 0.02},
    {"silu", "y = x + c*x/(1 + exp(-x))", FORM_OFFSET, 0.0, 0.02},
    {"residual", "y = x + c*x", FORM_EXPM1, 0.0, 0.05},
    {"clamp", "y = min(max(x, -c), c)", FORM_OFFSET, 4.0, 0.0},
    {"norm", "y = x + c*x*(1 - x*x)  (square-root-free pull towards |x| = 1)", FORM_OFFSET, 0.0,
     0.01},
};

double ls_reference_op(int kind, double x, double c)
{
    switch (kind) {
    case OP_SCALE:
        return c * x;
    case OP_BIAS:
        return x + c;
    case OP_GELU: {
        double inner = (double)LS_GELU_K0 * (x + (double)LS_GELU_K1 * x * x * x);
        return x + c * (0.5 * x * (1.0 + tanh(inner)));
    }
    case OP_SILU:
        return x + c * (x / (1.0 + exp(-x)));
    case OP_RESIDUAL:
        return x + c * x;
    case OP_CLAMP:
        return fmin(fmax(x, -c), c);
    case OP_NORM:
        return x + c * x * (1.0 - x * x);
    default:
        return NAN;
    }
}

/* ---- host-side random numbers (counter-based: value i depends only on seed and i) -------- */

/* Inputs uniform in [-2, 2): the range where GELU and SiLU are nonlinear. 24 bits, so that
 * 4u - 2 is exact in float. */
void ls_fill_inputs(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(4.0 * uf_uniform_at(seed, i, 24) - 2.0);
}

/* Op k: kind k % OP_KINDS; constant with a sign that flips on every pass over the table and
 * a magnitude jittered by up to +-25 % per k. */
void ls_build_op_table(ls_op *ops, int n_ops)
{
    for (int k = 0; k < n_ops; ++k) {
        int kind = k % OP_KINDS;
        const op_desc *d = &op_descs[kind];
        double sign = (k / OP_KINDS) % 2 == 0 ? 1.0 : -1.0;
        double jitter = 2.0 * uf_uniform_at(LS_TABLE_SEED, (uint64_t)k, 24) - 1.0;
        double a = sign * d->amplitude * (1.0 + 0.25 * jitter);
        double c = d->form == FORM_EXP     ? exp(a)
                   : d->form == FORM_EXPM1 ? expm1(a)
                                           : d->offset + a;
        ops[k].kind = kind;
        ops[k].c = (float)c;
    }
}

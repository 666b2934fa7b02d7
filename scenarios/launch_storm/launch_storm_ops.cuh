/* launch_storm: the ops every variant applies (kinds, forms of their constants, apply_op on the
 * device) and the build's constants (block size, table seed, reference budget, axis limits).
 * Included once by launch_storm.cu, at this point of its text (before the kernels). */

/* ---- the ops: data, not branches ----------------------------------------------------------
 * Op k of a step is kind k % OP_KINDS with its own constant c_k (see build_op_table). All
 * variants evaluate the same apply_op with explicitly rounded intrinsics (no contraction the
 * compiler could choose differently per kernel), so eager, graph and fused are bitwise equal. */
enum op_kind { OP_SCALE, OP_BIAS, OP_GELU, OP_SILU, OP_RESIDUAL, OP_CLAMP, OP_NORM, OP_KINDS };

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

typedef struct ls_op {
    int kind;
    float c;
} ls_op;

#define LS_GELU_K0 0.7978845608f    /* sqrt(2/pi), rounded to float */
#define LS_GELU_K1 0.044715f
#define LS_BLOCK 256                 /* threads per block, one element per thread */
#define LS_TABLE_SEED 0x5eedull      /* the op constants are part of the program, not the data */
#define LS_REF_WORK 16777216.0       /* host reference budget: elements checked x ops */
#define LS_MAX_OPS 100000            /* beyond this one step is most of a second of launches */
#define LS_MAX_ELEMS 68719476736.0   /* 2^36: keeps the grid within 2^31 blocks */

/* One op on one value. Every rounding is explicit (__f*_rn), so the compiler cannot contract
 * differently in the per-op kernel and in the fused loop; tanhf and expf are the same calls. */
__device__ __forceinline__ float apply_op(int kind, float x, float c)
{
    switch (kind) {
    case OP_SCALE:
        return __fmul_rn(c, x);
    case OP_BIAS:
        return __fadd_rn(x, c);
    case OP_GELU: {
        float x3 = __fmul_rn(__fmul_rn(x, x), x);
        float inner = __fmul_rn(LS_GELU_K0, __fmaf_rn(LS_GELU_K1, x3, x));
        float gelu = __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, tanhf(inner)));
        return __fmaf_rn(c, gelu, x);
    }
    case OP_SILU: {
        float silu = __fdiv_rn(x, __fadd_rn(1.0f, expf(-x)));
        return __fmaf_rn(c, silu, x);
    }
    case OP_RESIDUAL:
        return __fmaf_rn(c, x, x);
    case OP_CLAMP:
        return fminf(fmaxf(x, -c), c);
    case OP_NORM:
        return __fmaf_rn(__fmul_rn(c, x), __fmaf_rn(-x, x, 1.0f), x);
    default:
        return __int_as_float(0x7fc00000); /* an unknown kind poisons the output: verify fails */
    }
}

/* launch_storm: the host side of the workload: the double reference op (verification's), the
 * inputs (from the run's seed), the op table (from a fixed seed). Included once by launch_storm.cu,
 * at this point of its text (after the kernels). */

/* The same op in double on the host: the reference. Same float constants, exact math. */
static double reference_op(int kind, double x, double c)
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
static void fill_inputs(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(4.0 * uf_uniform_at(seed, i, 24) - 2.0);
}

/* Op k: kind k % OP_KINDS; constant with a sign that flips on every pass over the table and
 * a magnitude jittered by up to +-25 % per k. */
static void build_op_table(ls_op *ops, int n_ops)
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

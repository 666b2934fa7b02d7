/* launch_storm's ops as data (their kinds, one op of a step, the constants the device and the
 * host share) and the host side of the workload (launch_storm_ref.c): the double reference op,
 * the inputs, the op table. Plain C, usable from C and CUDA; the device's apply_op is in
 * launch_storm_ops.cuh. */
#ifndef LS_REF_H
#define LS_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the ops: data, not branches ----------------------------------------------------------
 * Op k of a step is kind k % OP_KINDS with its own constant c_k (see ls_build_op_table). All
 * variants evaluate the same apply_op with explicitly rounded intrinsics (no contraction the
 * compiler could choose differently per kernel), so eager, graph and fused are bitwise equal. */
enum op_kind { OP_SCALE, OP_BIAS, OP_GELU, OP_SILU, OP_RESIDUAL, OP_CLAMP, OP_NORM, OP_KINDS };

typedef struct ls_op {
    int kind;
    float c;
} ls_op;

#define LS_GELU_K0 0.7978845608f    /* sqrt(2/pi), rounded to float */
#define LS_GELU_K1 0.044715f

/* The same op as apply_op, in double on the host: the reference. Same float constants, exact
 * math. */
double ls_reference_op(int kind, double x, double c);

/* Inputs uniform in [-2, 2) from `seed` (value i depends only on seed and i). */
void ls_fill_inputs(float *x, size_t n, uint64_t seed);

/* The first n_ops ops of the table: op k is kind k % OP_KINDS with its constant c_k, from a
 * fixed seed (the op constants are part of the program, not the data). */
void ls_build_op_table(ls_op *ops, int n_ops);

#ifdef __cplusplus
}
#endif

#endif

/* tensor_alignment: what describe counts for a variant (FLOPs, bytes, shares of the measured
 * ceilings), what cuBLAS chose for its GEMM, and the kernels that GEMM launches, by name. */

#include <math.h>
#include <stdio.h>

#include "underfed.h"
#include "tensor_alignment_ref.h"
#include "tensor_alignment_state.h"
#include "tensor_alignment_setup.h"
#include "tensor_alignment_describe.h"

/* The measured ceiling of the variant's own precision (NaN where not measured). */
static double ta_own_ceiling_tflops(const uf_ctx *ctx, int precision)
{
    const uf_ceilings *c = ctx->ceilings;
    if (!c)
        return NAN;
    return precision == TA_BF16 ? c->gemm_bf16_tflops
           : precision == TA_TF32 ? c->gemm_tf32_tflops : c->gemm_fp32_tflops;
}

static const char *ta_precision_name(int precision)
{
    return precision == TA_BF16 ? "bf16" : precision == TA_TF32 ? "fp32 (TF32 math)" : "fp32";
}

/* What the GEMM counts, what cuBLAS chose for it, and the kernels it launches (on stderr too:
 * the names are strings, the results' columns numbers). */
int ta_describe(uf_ctx *ctx, int variant, uf_row *row)
{
    int rc = UF_OK;
    ta_state *st = (ta_state *)ctx->state;
    const ta_gemm *g = &st->gemm;
    const ta_shape *s = &g->shape;
    const double step_ms = uf_step_ms(ctx, row);
    const double step_s = step_ms > 0 ? step_ms * 1e-3 : NAN;
    const double executed = ta_executed_flops(s);
    UF_STATUS_OR_GOTO(rc, ta_name_kernels(st, g), out);
    row->useful_flops = ta_useful_flops(s);
    row->executed_flops = executed;
    row->min_bytes = ta_min_bytes(s);
    row->peak_mem_bytes = (double)(ta_device_bytes(s) + TA_WS_BYTES);
    row->extra[X_TFLOPS_EXEC] = executed / step_s / 1e12;
    row->extra[X_PCT_OWN] = 100.0 * row->useful_flops / step_s / 1e12 /
                            ta_own_ceiling_tflops(ctx, s->precision);
    row->extra[X_LD_ALIGNED] = ta_shape_aligned(s);
    row->extra[X_PAD_PCT] = 100.0 * (executed / row->useful_flops - 1.0);
    row->extra[X_ALGO_ID] = g->facts ? (double)g->algo_id : NAN;
    row->extra[X_TILE_ID] = g->facts ? (double)g->tile_id : NAN;
    row->extra[X_STAGES_ID] = g->facts ? (double)g->stages_id : NAN;
    row->extra[X_SPLITK] = g->facts ? (double)g->splitk : NAN;
    row->extra[X_ALIGN_BYTES] = g->facts ? (double)g->align_bytes : NAN;
    row->extra[X_KERNEL_ID] = st->n_kernels ? (double)st->kernel_id : NAN;
    row->extra[X_KERNELS] = st->n_kernels ? (double)st->n_kernels : NAN;
    row->extra[X_PAIR_ERR] = st->pair_rel_err;
    fprintf(stderr, "[tensor_alignment] %s: %d x %d x %d %s, W %s, leading dims X %d W %d Y %d "
            "(%s); cuBLAS algo %d tile %u stages %u split-k %u, needs %u-byte alignment; "
            "kernels: %s\n",
            ctx->scenario->variants[variant].name, s->m, s->n_run, s->k_run,
            ta_precision_name(s->precision), s->w_kn ? "k x n" : "n x k", s->k_run,
            ta_w_dims(s).ld, s->n_run, ta_shape_aligned(s) ? "16-byte rows" : "misaligned rows",
            g->algo_id, g->tile_id, g->stages_id, g->splitk, g->align_bytes, st->kernels);
out:
    return rc;
}

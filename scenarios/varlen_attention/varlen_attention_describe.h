/* varlen_attention: describe (varlen_attention_describe.cu) and the extras it fills. */
#ifndef VA_DESCRIBE_H
#define VA_DESCRIBE_H

#include "underfed.h"

/* The extras, in va_extras order. */
enum { VA_X_PADDING, VA_X_TOKEN_PADDING, VA_X_EXEC_RATIO, VA_X_TFLOPS_EXEC, VA_X_SEQS,
       VA_X_REAL_TOKENS, VA_X_STORED_TOKENS, VA_X_WARP_ROWS, VA_X_SM_CLOCK_KERNEL, VA_N_EXTRAS };

/* The scenario's describe: useful and executed FLOPs, the least bytes, the variant's memory and
 * the extras, the SM clock of the timed steps from the clock probe (empty, with the reason in
 * the row's notes, where it counted nothing). */
int va_describe(uf_ctx *ctx, int variant, uf_row *row);

#endif

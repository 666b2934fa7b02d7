/* What every scenario's verify uses to compare a variant's output with its reference
 * (BabelStream's check_solution): a finite check, a bitwise check, and the norm-wise relative
 * error, which is the one definition of the results' max_rel_err column:
 *
 *     max_rel_err = max_i |got_i − want_i| / max_i |want_i|        (the max norm)
 *
 * over one checked tensor (or row, or sample of a tensor); a scenario that checks several
 * reports the largest. 0 when got equals want everywhere (also when want is all zero);
 * infinite when an element of got or want is not finite, or when want is all zero and got is
 * not. Why the max norm: an error that is small next to the tensor's largest values passes
 * even where the reference cancels to near zero (an element-wise ratio would blow up there),
 * and one wrong element is not averaged away (as ‖·‖₂ over millions of elements would).
 * Every failure message names the element: the first bad one (finite, bitwise), or the one
 * where the norm-wise error is attained. Tolerances are each scenario's own. Plain C, no CUDA. */
#ifndef UF_VERIFY_H
#define UF_VERIFY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The norm-wise error of one checked tensor, accumulated element by element. */
typedef struct uf_err {
    double max_diff;            /* max |got − want| over elements where both are finite */
    double max_ref;             /* max |want| over finite want */
    size_t count;               /* elements added */
    size_t nonfinite;           /* elements where got or want is not finite */
    size_t first_nonfinite;     /* index of the first of them */
    size_t worst;               /* index where max_diff is attained */
    double worst_got, worst_want;
} uf_err;

/* The definition above, on maxima reduced elsewhere (a GPU kernel's max |got − want| and
 * max |want|): max_diff / max_ref, 0 when both are 0, infinite when only max_ref is 0. */
double uf_rel_err(double max_diff, double max_ref);

void uf_err_init(uf_err *e);
/* Add element `index` (used in messages) with the variant's value and the reference's. */
void uf_err_add(uf_err *e, size_t index, double got, double want);
/* max_rel_err of what was added: uf_rel_err of the maxima, infinite if any was not finite. */
double uf_err_value(const uf_err *e);
/* 0 when uf_err_value(e) <= tol; else 1, with a message in msg: the error, the tolerance and
 * the element (first non-finite one, or where the largest difference is). */
int uf_err_check(const uf_err *e, double tol, char *msg, size_t len);

/* 0 when x[0..n) are all finite; else 1, with "K of N values are not finite (first: element
 * I, bits 0x...)" in msg. */
int uf_check_finite_f32(const float *x, size_t n, char *msg, size_t len);

/* 0 when got and want (n elements of elem_bytes each: 1, 2, 4 or 8) are equal bit for bit; else
 * 1, with "K of N elements differ bitwise (first: element I, 0x... vs 0x...)" in msg. */
int uf_check_bitwise(const void *got, const void *want, size_t n, size_t elem_bytes, char *msg,
                     size_t len);

#ifdef __cplusplus
}
#endif
#endif

/* Unit tests of common/core/verify.c: the one definition of max_rel_err (max norm), its edge cases
 * (all zero, non-finite), and the messages naming the element. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "verify.h"

static uf_err err_of(const double *got, const double *want, size_t n)
{
    uf_err e;
    uf_err_init(&e);
    for (size_t i = 0; i < n; ++i)
        uf_err_add(&e, i, got[i], want[i]);
    return e;
}

Test(verify, max_rel_err_is_the_max_norm_ratio)
{
    /* max |diff| = 0.05 (element 1), max |want| = 4: 0.0125, not the 2-norm's 0.01 nor the
     * element-wise 0.05 / 0.5 = 0.1 of element 2 */
    const double want[3] = {3.0, 4.0, 0.5}, got[3] = {3.0, 4.05, 0.54};
    uf_err e = err_of(got, want, 3);
    cr_assert_float_eq(uf_err_value(&e), 0.05 / 4.0, 1e-12);
    cr_assert_eq(e.worst, 1u);
    cr_assert_float_eq(uf_rel_err(0.05, 4.0), 0.0125, 1e-15);
}

Test(verify, zero_and_nonfinite)
{
    cr_assert_eq(uf_rel_err(0.0, 0.0), 0.0);
    cr_assert(isinf(uf_rel_err(1e-30, 0.0)));
    cr_assert(isinf(uf_rel_err(NAN, 1.0)));
    const double want[3] = {1.0, 2.0, 3.0}, got[3] = {1.0, NAN, 3.0};
    uf_err e = err_of(got, want, 3);
    cr_assert(isinf(uf_err_value(&e)));
    cr_assert_eq(e.nonfinite, 1u);
    cr_assert_eq(e.first_nonfinite, 1u);
    const double same[2] = {0.0, -0.0};
    e = err_of(same, same, 2);
    cr_assert_eq(uf_err_value(&e), 0.0);
}

Test(verify, check_names_the_element)
{
    char msg[256] = "";
    const double want[4] = {1.0, -8.0, 2.0, 0.0}, got[4] = {1.0, -8.0, 2.5, 0.0};
    uf_err e = err_of(got, want, 4);
    cr_assert_eq(uf_err_check(&e, 0.1, msg, sizeof msg), 0, "0.5 / 8 = 0.0625 <= 0.1");
    cr_assert_eq(uf_err_check(&e, 0.05, msg, sizeof msg), 1);
    cr_assert(strstr(msg, "element 2") != NULL, "%s", msg);
    const double nan_got[4] = {1.0, -8.0, INFINITY, NAN};
    e = err_of(nan_got, want, 4);
    cr_assert_eq(uf_err_check(&e, 1e9, msg, sizeof msg), 1);
    cr_assert(strstr(msg, "2 of 4") != NULL && strstr(msg, "element 2") != NULL, "%s", msg);
}

Test(verify, finite_check)
{
    char msg[256] = "";
    float x[5] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
    cr_assert_eq(uf_check_finite_f32(x, 5, msg, sizeof msg), 0);
    memset(&x[3], 0xFF, sizeof x[3]);   /* the poison: NaN */
    x[4] = INFINITY;
    cr_assert_eq(uf_check_finite_f32(x, 5, msg, sizeof msg), 1);
    cr_assert(strstr(msg, "2 of 5") && strstr(msg, "element 3") && strstr(msg, "0xffffffff"),
              "%s", msg);
}

Test(verify, bitwise_check)
{
    char msg[256] = "";
    uint16_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    cr_assert_eq(uf_check_bitwise(a, b, 4, sizeof a[0], msg, sizeof msg), 0);
    b[2] = 0x8003;
    b[3] = 5;
    cr_assert_eq(uf_check_bitwise(a, b, 4, sizeof a[0], msg, sizeof msg), 1);
    cr_assert(strstr(msg, "2 of 4") && strstr(msg, "element 2") && strstr(msg, "0x0003 vs 0x8003"),
              "%s", msg);
    /* -0.0 and 0.0 are equal numbers but not equal bits */
    float z[1] = {0.0f}, nz[1] = {-0.0f};
    cr_assert_eq(uf_check_bitwise(z, nz, 1, sizeof z[0], msg, sizeof msg), 1);
}

/* Verification helpers: the one definition of max_rel_err (verify.h says which and why), the
 * finite and the bitwise checks, each failure naming its element. */
#include "verify.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

double uf_rel_err(double max_diff, double max_ref)
{
    if (isnan(max_diff) || isnan(max_ref))
        return INFINITY;
    if (max_ref > 0.0)
        return max_diff / max_ref;
    return max_diff > 0.0 ? INFINITY : 0.0;
}

void uf_err_init(uf_err *e)
{
    memset(e, 0, sizeof *e);
}

void uf_err_add(uf_err *e, size_t index, double got, double want)
{
    e->count++;
    if (!isfinite(got) || !isfinite(want)) {
        if (e->nonfinite++ == 0)
            e->first_nonfinite = index;
        return;
    }
    const double diff = fabs(got - want);
    if (diff > e->max_diff || e->count == 1) {
        e->max_diff = diff;
        e->worst = index;
        e->worst_got = got;
        e->worst_want = want;
    }
    if (fabs(want) > e->max_ref)
        e->max_ref = fabs(want);
}

double uf_err_value(const uf_err *e)
{
    return e->nonfinite > 0 ? INFINITY : uf_rel_err(e->max_diff, e->max_ref);
}

int uf_err_check(const uf_err *e, double tol, char *msg, size_t len)
{
    const double rel = uf_err_value(e);
    if (rel <= tol)
        return 0;
    if (e->nonfinite > 0)
        snprintf(msg, len, "%zu of %zu values are not finite (first: element %zu): unwritten or "
                 "overflowed", e->nonfinite, e->count, e->first_nonfinite);
    else
        snprintf(msg, len, "max_rel_err %.3g > tolerance %.3g (max |got - want| / max |want|; "
                 "largest difference at element %zu: got %.9g, want %.9g; %zu checked)", rel, tol,
                 e->worst, e->worst_got, e->worst_want, e->count);
    return 1;
}

int uf_check_finite_f32(const float *x, size_t n, char *msg, size_t len)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(x[i]) && bad++ == 0)
            first = i;
    if (bad == 0)
        return 0;
    uint32_t bits;
    memcpy(&bits, &x[first], sizeof bits);
    snprintf(msg, len, "%zu of %zu values are not finite (first: element %zu, bits 0x%08" PRIx32
             "): unwritten or overflowed", bad, n, first, bits);
    return 1;
}

/* Element i of an array of elem_bytes-wide elements, as an integer of its bits. */
static uint64_t element_bits(const void *p, size_t i, size_t elem_bytes)
{
    uint64_t v = 0;
    const unsigned char *at = (const unsigned char *)p + i * elem_bytes;
    switch (elem_bytes) {
    case 1: v = *at; break;
    case 2: { uint16_t u; memcpy(&u, at, 2); v = u; break; }
    case 4: { uint32_t u; memcpy(&u, at, 4); v = u; break; }
    default: memcpy(&v, at, sizeof v); break;
    }
    return v;
}

int uf_check_bitwise(const void *got, const void *want, size_t n, size_t elem_bytes, char *msg,
                     size_t len)
{
    if (memcmp(got, want, n * elem_bytes) == 0)
        return 0;
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (element_bits(got, i, elem_bytes) != element_bits(want, i, elem_bytes) &&
            differ++ == 0)
            first = i;
    const int digits = (int)(2 * elem_bytes);
    snprintf(msg, len, "%zu of %zu elements differ bitwise (first: element %zu, 0x%0*" PRIx64
             " vs 0x%0*" PRIx64 ")", differ, n, first, digits, element_bits(got, first, elem_bytes),
             digits, element_bits(want, first, elem_bytes));
    return 1;
}

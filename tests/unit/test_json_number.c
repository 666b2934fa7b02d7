/* The one JSON number writer (strbuf.h, uf_sb_json_number): null for what JSON cannot hold,
 * the digits asked for, and the doctor's 15 digits for a whole number write it as %.0f does
 * (doctor_report.c's old rule, so that its files keep their bytes). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

static void expect_written(double v, int digits, const char *want)
{
    uf_strbuf b = {0};
    uf_sb_json_number(&b, v, digits);
    cr_assert(!b.failed);
    cr_assert_str_eq(b.data, want, "%.17g at %d digits", v, digits);
    free(b.data);
}

Test(json_number, not_finite_is_null)
{
    expect_written(NAN, 10, "null");
    expect_written(INFINITY, 6, "null");
    expect_written(-INFINITY, 15, "null");
}

Test(json_number, the_digits_asked_for)
{
    expect_written(0.12345678901234, 10, "0.123456789");
    expect_written(0.12345678901234, 6, "0.123457");
    expect_written(2.5e-7, 6, "2.5e-07");
    expect_written(1234567.0, 6, "1.23457e+06");
    expect_written(1234567.0, 10, "1234567");
    expect_written(-3.0, 10, "-3");
    expect_written(17179869184.0, 10, "1.717986918e+10");
}

/* Whole numbers below 10^15 at 15 digits: exactly %.0f's text, at every magnitude and sign. */
Test(json_number, whole_numbers_at_15_digits_are_every_digit)
{
    char want[64];
    uint64_t x = 0x9e3779b97f4a7c15u;
    const double edges[] = {0.0, -0.0, 1.0, 999999.0, 1000000.0, 1e14, 999999999999999.0,
                            -999999999999999.0, 123456789012345.0};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        snprintf(want, sizeof want, "%.0f", edges[i]);
        expect_written(edges[i], 15, want);
    }
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v = (double)(x % 1000000000000000u) / pow(10.0, (double)((x >> 60) % 15));
        v = floor(v) * ((x >> 59) & 1 ? -1 : 1);
        snprintf(want, sizeof want, "%.0f", v);
        expect_written(v, 15, want);
    }
}

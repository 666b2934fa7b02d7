/* Unit tests of tensor_alignment's plain-C side (scenarios/tensor_alignment/tensor_alignment_ref.c):
 * the padding rule, which leading dimensions are aligned, the FLOP counts, the random inputs,
 * the two weight layouts (W n x k and k x n) indexing one matrix,
 * the fp64 reference's independence of the padding (the aligned and the misaligned GEMM
 * compute one product), the sampled points, the tolerances against emulated TF32 and bf16
 * errors, and the kernel-name id. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tensor_alignment_ref.h"
#include "verify.h"

Test(tensor_alignment, pads_up_to_a_multiple_of_64)
{
    cr_assert_eq(ta_pad_up(50257, TA_PAD), 50304);
    cr_assert_eq(ta_pad_up(4095, TA_PAD), 4096);
    cr_assert_eq(ta_pad_up(4096, TA_PAD), 4096);
    cr_assert_eq(ta_pad_up(4097, TA_PAD), 4160);
    cr_assert_eq(ta_pad_up(768, TA_PAD), 768);
    cr_assert_eq(ta_pad_up(1, TA_PAD), 64);
}

Test(tensor_alignment, shapes_pad_only_when_asked)
{
    const ta_shape odd = ta_shape_make(8192, 50257, 768, 0, TA_BF16);
    const ta_shape pad = ta_shape_make(8192, 50257, 768, 1, TA_BF16);
    cr_assert_eq(odd.n_run, 50257);
    cr_assert_eq(odd.k_run, 768);
    cr_assert_eq(pad.n, 50257);
    cr_assert_eq(pad.n_run, 50304);
    cr_assert_eq(pad.k_run, 768);
    const ta_shape hid = ta_shape_make(8192, 4096, 4095, 1, TA_BF16);
    cr_assert_eq(hid.k, 4095);
    cr_assert_eq(hid.k_run, 4096);
    cr_assert_eq(hid.n_run, 4096);
}

/* 16-byte rows: a multiple of 8 bf16 or of 4 fp32 elements. */
Test(tensor_alignment, sixteen_byte_rows)
{
    cr_assert(ta_ld_aligned(4096, TA_BF16));
    cr_assert(ta_ld_aligned(4088, TA_BF16));
    cr_assert(ta_ld_aligned(4104, TA_BF16));
    cr_assert_not(ta_ld_aligned(4095, TA_BF16));
    cr_assert_not(ta_ld_aligned(4092, TA_BF16));   /* 8 bytes: not enough */
    cr_assert_not(ta_ld_aligned(50257, TA_BF16));
    cr_assert(ta_ld_aligned(50304, TA_BF16));
    cr_assert(ta_ld_aligned(4092, TA_FP32));
    cr_assert_not(ta_ld_aligned(4094, TA_TF32));
    const ta_shape odd = ta_shape_make(8192, 50257, 768, 0, TA_BF16);
    const ta_shape pad = ta_shape_make(8192, 50257, 768, 1, TA_BF16);
    const ta_shape hid = ta_shape_make(8192, 4096, 4095, 0, TA_BF16);
    cr_assert_not(ta_shape_aligned(&odd));        /* Y's rows */
    cr_assert(ta_shape_aligned(&pad));
    cr_assert_not(ta_shape_aligned(&hid));        /* X's and W's rows */
}

Test(tensor_alignment, useful_flops_count_the_real_layer)
{
    const ta_shape pad = ta_shape_make(8192, 50257, 768, 1, TA_BF16);
    cr_assert_float_eq(ta_useful_flops(&pad), 2.0 * 8192 * 50257.0 * 768, 1.0);
    cr_assert_float_eq(ta_executed_flops(&pad), 2.0 * 8192 * 50304.0 * 768, 1.0);
    cr_assert_float_eq(ta_executed_flops(&pad) / ta_useful_flops(&pad) - 1.0, 47.0 / 50257.0,
                       1e-12);
    const ta_shape odd = ta_shape_make(8192, 50257, 768, 0, TA_BF16);
    cr_assert_float_eq(ta_executed_flops(&odd), ta_useful_flops(&odd), 0.0);
    cr_assert_float_eq(ta_min_bytes(&pad), ta_min_bytes(&odd), 0.0);
    cr_assert_eq(ta_device_bytes(&pad),
                 ((size_t)8192 * 768 + (size_t)50304 * 768 + (size_t)8192 * 50304) * 2);
    const ta_shape f32 = ta_shape_make(16, 8, 4, 0, TA_FP32);
    cr_assert_float_eq(ta_min_bytes(&f32), (16.0 * 4 + 8.0 * 4 + 16.0 * 8) * 4, 0.0);
}

Test(tensor_alignment, inputs_in_range_and_stored_as_the_device_stores_them)
{
    uint32_t kx = 0, kw = 0;
    ta_keys(7, &kx, &kw);
    cr_assert_neq(kx, kw);
    for (uint32_t i = 0; i < 10000; i++) {
        const float v = ta_uniform(kx, i);
        cr_assert(v >= -1.0f && v < 1.0f);
        cr_assert_eq(ta_input(kx, i, TA_FP32), v);
        const float b = ta_input(kx, i, TA_BF16);
        cr_assert_eq(b, uf_bf16_round(b));           /* a bf16 value */
        cr_assert(fabsf(b - v) <= fabsf(v) * 0x1p-8f);
    }
}

/* The reference is the layer's product: it does not depend on what the GEMM pads. */
Test(tensor_alignment, reference_ignores_padding)
{
    uint32_t kx = 0, kw = 0;
    ta_keys(3, &kx, &kw);
    const ta_shape odd = ta_shape_make(64, 100, 4095, 0, TA_BF16);
    const ta_shape pad = ta_shape_make(64, 100, 4095, 1, TA_BF16);
    for (int r = 0; r < 64; r += 9)
        for (int c = 0; c < 100; c += 13)
            cr_assert_eq(ta_ref_element(&odd, kx, kw, r, c), ta_ref_element(&pad, kx, kw, r, c));
    /* and it is the dot product of row r of X and row c of W */
    const ta_shape one = ta_shape_make(4, 5, 1, 0, TA_FP32);
    cr_assert_eq(ta_ref_element(&one, kx, kw, 3, 2),
                 (double)ta_input(kx, 3, TA_FP32) * (double)ta_input(kw, 2, TA_FP32));
    const ta_shape two = ta_shape_make(4, 5, 2, 0, TA_FP32);
    cr_assert_float_eq(ta_ref_element(&two, kx, kw, 1, 4),
                       (double)ta_input(kx, 2, TA_FP32) * ta_input(kw, 8, TA_FP32) +
                           (double)ta_input(kx, 3, TA_FP32) * ta_input(kw, 9, TA_FP32),
                       1e-15);
}

/* The fill draws W's element (r, c) as index r·cols + c of its stored dimensions: the
 * reference's index must name the same element in both layouts, and the pads lie outside. */
Test(tensor_alignment, weight_layouts_index_one_matrix)
{
    for (int w_kn = 0; w_kn <= 1; w_kn++) {
        ta_shape s = ta_shape_make(8, 50257, 768, 1, TA_BF16);
        s.w_kn = w_kn;
        const ta_dims d = ta_w_dims(&s);
        cr_assert_eq(d.rows * d.cols, 50257 * 768);
        cr_assert_eq(d.rows_alloc, w_kn ? 768 : 50304);
        cr_assert_eq(d.ld, w_kn ? 50304 : 768);
        for (int col = 0; col < s.n; col += 997)
            for (int j = 0; j < s.k; j += 37) {
                const int r = w_kn ? j : col, c = w_kn ? col : j;
                cr_assert_eq(ta_w_index(&s, col, j), (uint32_t)(r * d.cols + c));
            }
        cr_assert_eq(ta_shape_aligned(&s), 1);
        s = ta_shape_make(8, 50257, 768, 0, TA_BF16);
        s.w_kn = w_kn;
        cr_assert_eq(ta_shape_aligned(&s), 0);
    }
    /* x @ w and X·Wᵀ of the same weights (W k × n holding Wᵀ) are one product */
    uint32_t kx = 0, kw = 0;
    ta_keys(9, &kx, &kw);
    ta_shape lin = ta_shape_make(3, 5, 7, 0, TA_FP32), mm = lin;
    mm.w_kn = 1;
    for (int col = 0; col < 5; col++) {
        double want = 0.0;
        for (int j = 0; j < 7; j++)
            want += (double)ta_input(kx, (uint32_t)(2 * 7 + j), TA_FP32) *
                    ta_input(kw, (uint32_t)(j * 5 + col), TA_FP32);
        cr_assert_float_eq(ta_ref_element(&mm, kx, kw, 2, col), want, 1e-12);
    }
    cr_assert_neq(ta_ref_element(&lin, kx, kw, 2, 1), ta_ref_element(&mm, kx, kw, 2, 1));
}

Test(tensor_alignment, samples_start_at_the_corners_and_stay_inside)
{
    int rows[512], cols[512], rows2[512], cols2[512];
    ta_sample_points(11, 8192, 50257, 512, rows, cols);
    cr_assert_eq(rows[0], 0);
    cr_assert_eq(cols[0], 0);
    cr_assert_eq(cols[1], 50256);                    /* the last real logit */
    cr_assert_eq(rows[3], 8191);
    cr_assert_eq(cols[3], 50256);
    int distinct_rows = 0;
    for (int i = 0; i < 512; i++) {
        cr_assert(rows[i] >= 0 && rows[i] < 8192);
        cr_assert(cols[i] >= 0 && cols[i] < 50257);
        distinct_rows += i > 4 && rows[i] != rows[i - 1];
    }
    cr_assert_gt(distinct_rows, 400);
    ta_sample_points(12, 8192, 50257, 512, rows2, cols2);
    cr_assert(memcmp(rows + 4, rows2 + 4, 508 * sizeof(int)) != 0);
}

enum { NO_TF32, TF32_NEAREST, TF32_TRUNCATED };

/* x with 10 explicit mantissa bits (TF32), rounded to nearest or truncated: the tensor core
 * reads fp32 one way or the other. */
static float tf32_round(float x, int mode)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = (u + (mode == TF32_NEAREST ? 0x1000u : 0u)) & 0xFFFFE000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* max_rel_err over sampled elements of a GEMM that rounds its inputs (tf32) or its output
 * (bf16) against the fp64 reference. */
static double emulated_err(int precision, int tf32_mode, int round_output_bf16)
{
    const ta_shape s = ta_shape_make(256, 256, 4096, 0, precision);
    uint32_t kx = 0, kw = 0;
    int rows[256], cols[256];
    uf_err e;
    ta_keys(5, &kx, &kw);
    ta_sample_points(5, s.m, s.n, 256, rows, cols);
    uf_err_init(&e);
    for (int i = 0; i < 256; i++) {
        double got = 0.0;
        for (int j = 0; j < s.k; j++) {
            float x = ta_input(kx, (uint32_t)(rows[i] * s.k + j), precision);
            float w = ta_input(kw, (uint32_t)(cols[i] * s.k + j), precision);
            if (tf32_mode != NO_TF32) {
                x = tf32_round(x, tf32_mode);
                w = tf32_round(w, tf32_mode);
            }
            got += (double)x * w;
        }
        if (round_output_bf16)
            got = uf_bf16_round((float)got);
        uf_err_add(&e, (size_t)i, got, ta_ref_element(&s, kx, kw, rows[i], cols[i]));
    }
    return uf_err_value(&e);
}

/* TF32 passes TF32's tolerance and fails fp32's (the fp32 row is really fp32); bf16 output
 * rounding passes bf16's. */
Test(tensor_alignment, tolerances_separate_the_precisions)
{
    for (int mode = TF32_NEAREST; mode <= TF32_TRUNCATED; mode++) {
        const double tf32 = emulated_err(TA_TF32, mode, 0);
        cr_assert_lt(tf32, ta_tolerance(TA_TF32), "tf32 (mode %d) error %g", mode, tf32);
        cr_assert_gt(tf32, ta_tolerance(TA_FP32), "tf32 (mode %d) error %g", mode, tf32);
    }
    const double fp32 = emulated_err(TA_FP32, NO_TF32, 0);
    cr_assert_lt(fp32, ta_tolerance(TA_FP32), "fp32 error %g", fp32);
    const double bf16 = emulated_err(TA_BF16, NO_TF32, 1);
    cr_assert_lt(bf16, ta_tolerance(TA_BF16), "bf16 error %g", bf16);
    cr_assert_gt(bf16, 0.0);
}

Test(tensor_alignment, kernel_name_ids)
{
    const char *a = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1";
    const char *b = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage3_align2";
    cr_assert_eq(ta_name_id(a), ta_name_id(a));
    cr_assert_neq(ta_name_id(a), ta_name_id(b));
    cr_assert_lt(ta_name_id(a), 1u << 24);
    cr_assert_lt(ta_name_id(b), 1u << 24);
    cr_assert_eq(ta_name_id(NULL), 0u);
    cr_assert_eq(ta_name_id(""), 0u);
}

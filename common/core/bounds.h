/* The bounds of what a results, series or ceilings file may say: one place for every reader
 * (results_read.c, ceilings.c, csv.c) and for the metric table's ranges (metrics.c). A value
 * or name outside them is refused with file, line and column; nothing absurd is turned into a
 * plausible figure. The bounds follow from what the quantities are, not from the values
 * measured so far (the committed results lie far inside them):
 *
 *   a time       > 0 where it is a step (a step takes time), else >= 0; at most a day
 *                (UF_BOUND_MS, UF_BOUND_US): no step, wait or gap of a run lasts longer
 *   a count      >= 0 (steps timed >= 1), at most 2^53 - 1 (UF_BOUND_COUNT: the largest whole
 *                number a double holds exactly); a whole number where it counts things one by
 *                one (steps), a mean per step otherwise; bytes and flops per step too
 *   a share      of a window or a union of intervals, NVML's utilization: [0, 100] %;
 *                a PM-sampled counter (pct_of_peak_sustained_elapsed): [0, 1000] %, since a
 *                sample over an interval not aligned with the counter reads above 100 (the
 *                committed series reach 181 %), never tenfold; a share of a measured ceiling
 *                (pct_of_gemm, pct_of_copy): [0, 1000] %, a kernel may beat the bench (from
 *                L2, a few times DRAM's bandwidth), not tenfold
 *   a spread     (IQR / median): [0, 10000] %: a third quartile 100 x the median is no timing
 *   a ratio      of two step times (trace_overhead): (0, 10000]
 *   a rate       useful TFLOP/s [0, 1e5] (100 PFLOP/s, above any GPU's peak); GB/s [0, 1e6]
 *                (1 PB/s); a clock [0, 1e4] MHz; a board's power [0, 1e4] W
 *   an error     max_rel_err >= 0, finite (a wrong result may be wrong by any factor); the
 *                error of a result with values that are not finite is written empty, the
 *                reason in skip_reason (harness_sweep.c)
 *   an axis      value (a sweep point: a size, a count, a flag, an id, a percentage): >= 0,
 *                at most UF_BOUND_COUNT; its default (`# default.AXIS:`) too, and it names
 *                an axis of the file
 *   an extra     column (a scenario's own figure in its own unit, which may be negative: a
 *                slowdown below 0 is a speed-up): finite, |v| <= UF_BOUND_COUNT
 *   a ceiling    > 0 (a rate or a cost per operation) and at most its unit's bound: GB/s
 *                UF_BOUND_GBS, TFLOP/s UF_BOUND_TFLOPS, us UF_BOUND_US, ms UF_BOUND_MS, %
 *                UF_BOUND_COUNTER_PCT, another unit UF_BOUND_COUNT; its spread as a spread.
 *                `# ceiling.NAME: V` in a results file names a ceiling of uf_ceiling_descs,
 *                with V by the same rule
 *   step_stat    `median` or `mean` (the statistics the harness knows)
 *   a name       (variant, axis, extra, scenario, metadata key, ceiling): 1 to UF_NAME_LEN - 1
 *                characters of A-Z a-z 0-9 _ . - @, not starting with . or -: names become
 *                file names (crosscheck/SCENARIO-VARIANT), gnuplot word lists (a space would
 *                split one), Markdown table cells (a | would add a column) and command-line
 *                values (a leading - reads as an option)
 *   a text       (a metadata value, a unit, a skip reason, a ceiling's note): UTF-8 without
 *                control characters (C0, DEL, C1): no terminal escape sequence, no line break
 *                reaches a terminal or a report
 * Plain C, no CUDA, unit-tested (tests/unit/test_results.c). */
#ifndef UF_BOUNDS_H
#define UF_BOUNDS_H

#ifdef __cplusplus
extern "C" {
#endif

#define UF_BOUND_MS 86400000.0              /* a day, in ms */
#define UF_BOUND_US 86400000000.0           /* a day, in us */
#define UF_BOUND_COUNT 9007199254740991.0   /* 2^53 - 1 */
#define UF_BOUND_PCT 100.0                  /* a share of a window */
#define UF_BOUND_COUNTER_PCT 1000.0         /* a PM-sampled counter */
#define UF_BOUND_SHARE_PCT 1000.0           /* a share of a measured ceiling */
#define UF_BOUND_SPREAD_PCT 10000.0         /* IQR / median */
#define UF_BOUND_RATIO 10000.0              /* of two step times */
#define UF_BOUND_TFLOPS 1e5
#define UF_BOUND_GBS 1e6
#define UF_BOUND_MHZ 1e4
#define UF_BOUND_WATTS 1e4

/* 1 when v is a valid axis value (NaN, not measured, is not one: every row has its point). */
int uf_bound_axis(double v);
/* 1 when v is a valid extra value (NaN, not measured, is valid). */
int uf_bound_extra(double v);
/* The largest valid ceiling in `unit` (its smallest is > 0). */
double uf_bound_ceiling_max(const char *unit);
/* 1 when v is a valid ceiling in unit: > 0 and at most uf_bound_ceiling_max(unit). */
int uf_bound_ceiling(double v, const char *unit);
/* Where s breaks the rule of a name: the index of the first bad character (0 for an empty or
 * a too long name), -1 when s is a name. */
int uf_bound_name_at(const char *s);
/* Where s breaks the rule of a text: the index of the first bad byte (a control character, a
 * byte that is not UTF-8), -1 when s is a text. */
int uf_bound_text_at(const char *s);
/* The rule a name or a text broke at index i of s, in words ("character 3 (0x1b) is not a
 * letter, digit, _ . - or @"), into out. */
void uf_bound_why(const char *s, int i, int is_name, char *out, unsigned outlen);

#ifdef __cplusplus
}
#endif
#endif

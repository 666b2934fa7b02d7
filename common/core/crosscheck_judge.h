/* The cross-check of the suite's instruments against independent ones (issue 15): Nsight
 * Compute's per-kernel figures against the PM-sampled window, the traced busy share against
 * event-timed kernel sums, the scenario's all-reduce bus bandwidth against the ceilings bench.
 * Plain C, no CUDA: the parsing of `ncu --csv --page raw` output, the judging rule and the
 * crosscheck.csv format live here so that Criterion tests pin them on fixture text. */
#ifndef UF_CROSSCHECK_JUDGE_H
#define UF_CROSSCHECK_JUDGE_H

#include <stddef.h>

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UF_XC_KERNEL_LEN 256    /* kernel names are kept to this many bytes (cuBLAS's are long) */

/* One profiled kernel launch of an ncu raw page, in launch order. */
typedef struct uf_ncu_kernel {
    char name[UF_XC_KERNEL_LEN];
    char grid[32], block[32];   /* "(16384, 1, 1)": "" where the page has no such column */
    double sm_active_pct;       /* sm__cycles_active.avg.pct_of_peak_sustained_elapsed */
    double dram_pct;            /* dram__throughput.avg.pct_of_peak_sustained_elapsed */
    double tensor_active_pct;   /* sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed */
    double duration_us;         /* gpu__time_duration.sum, converted from the units row */
} uf_ncu_kernel;

/* The raw page of `ncu --csv --page raw` (or `ncu -i REPORT --csv --page raw`): lines before
 * the header (`"ID",...`, e.g. ==PROF== lines or the program's own output) are skipped; the
 * line after the header holds the units (%, nsecond, usecond, msecond, second); numbers may
 * carry thousands separators ("1,171,200"). Each of the four metrics must be a column. On
 * success *out (malloc'd, free it) holds *n kernels; -1 with err naming path and line. */
int uf_ncu_parse(const char *path, const char *data, size_t len, uf_ncu_kernel **out, int *n,
                 char *err, size_t errlen);

/* The figures of one measured step: after dropping the kernels whose name starts with any of
 * `skip` (NULL-terminated; helpers of setup and verification), the first `per_step` kernels
 * that repeat the `per_step` before them launch for launch (name, grid and block): the first
 * timed step after the warm-up one (the harness verifies after timing), not setup, not a
 * verification on other sizes. The percentages weighted by duration (what a counter averaged
 * over a window of those kernels back to back reads), the mean duration, and the first
 * kernel's name. */
typedef struct uf_ncu_step {
    int kernels;
    double sm_active_pct, dram_pct, tensor_active_pct, duration_us_mean;
    char first_name[UF_XC_KERNEL_LEN];
} uf_ncu_step;

/* 0, or -1 with err when per_step < 1 or no two consecutive steps repeat each other. */
int uf_ncu_step_of(const uf_ncu_kernel *k, int n, int per_step, const char *const *skip,
                   uf_ncu_step *step, char *err, size_t errlen);

/* How a comparison is judged: the absolute difference in points (percentages), or the
 * difference relative to the reference, in percent (durations, bandwidths). */
typedef enum { UF_XC_POINTS, UF_XC_RELATIVE } uf_xc_rule;

typedef enum { UF_XC_AGREE, UF_XC_DISAGREE, UF_XC_NA } uf_xc_verdict;

/* One comparison: a row of crosscheck.csv. */
typedef struct uf_xc_row {
    char scenario[UF_NAME_LEN], variant[UF_NAME_LEN], point[UF_NAME_LEN];
    char kernel[UF_XC_KERNEL_LEN];
    char metric[UF_NAME_LEN];       /* e.g. sm_active_pct, kernel_us_mean, busy_pct, busbw_gbs */
    char reference_of[UF_NAME_LEN]; /* the instrument compared with: "ncu", "events", "ceilings" */
    double ours, reference;
    double difference;              /* ours - reference (points), or ours / reference - 1 in % */
    double tolerance;               /* the largest |difference| that agrees */
    uf_xc_rule rule;
    uf_xc_verdict verdict;
    char note[UF_REASON_LEN];       /* why n/a, or what the comparison rests on */
} uf_xc_row;

/* The difference and the verdict of r from its ours, reference, tolerance and rule: n/a when
 * either figure is not a finite number (or the reference is 0 under the relative rule), the
 * note then saying which is missing unless it already says why. */
void uf_xc_judge(uf_xc_row *r);

const char *uf_xc_verdict_name(uf_xc_verdict v);    /* "agree", "DISAGREE", "n/a" */
const char *uf_xc_rule_unit(uf_xc_rule rule);       /* "points", "%" */

/* crosscheck.csv: "# underfed-crosscheck v1", `# key: value` metadata, then one row per
 * comparison; written to a temporary name and renamed. 0 or -1 with err. */
int uf_xc_write_csv(const char *path, const uf_meta *meta, const uf_xc_row *rows, int n,
                    char *err, size_t errlen);
/* The same file read back (len bytes of data; path names them in messages). Strict: a wrong
 * magic, header, field count, number, rule or verdict is an error naming the line. */
int uf_xc_parse_csv(const char *path, const char *data, size_t len, uf_meta *meta,
                    uf_xc_row **rows, int *n, char *err, size_t errlen);

/* NVML GPM against PM sampling over a results table: each GPU's figure of each row (the rank
 * lines of a multi-GPU row, else the row) with a gpm_agree_pts counts once. */
typedef struct uf_gpm_tally {
    int compared;               /* figures with an agreement */
    int beyond;                 /* of those, > UF_GPM_AGREE_PTS: GPM left empty */
    double median_pts, max_pts; /* NaN when none compared */
} uf_gpm_tally;
int uf_gpm_tally_of(const uf_table *t, uf_gpm_tally *out);   /* 0, or -1 out of memory */

#ifdef __cplusplus
}
#endif
#endif

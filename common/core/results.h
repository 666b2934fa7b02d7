/* Results: one row per (variant, sweep point) and the run's metadata (results_table.c), the
 * CSV/JSON writers (results_write.c: atomic, temporary name then rename), the strict CSV
 * readers (results_read.c), and the machine's ceilings file (ceilings.c); the columns are
 * metrics.h's table, the file formats csv.h's. Plain C: no CUDA here, unit-tested with
 * Criterion. */
#ifndef UF_RESULTS_H
#define UF_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UF_NAME_LEN 64
#define UF_REASON_LEN 256
#define UF_MAX_AXES 6           /* axes of a scenario, and of a file the reader accepts */
#define UF_MAX_EXTRA 12
#define UF_MAX_META 128
#define UF_META_VALUE_LEN 512
#define UF_MAX_RANKS 8          /* GPUs (ranks) of one process whose figures a row keeps */
#define UF_MAX_VARIANTS 16      /* variants of a scenario, and of a file the reader accepts */

/* One PM-sampling sample (counters pass), percentages as CUPTI evaluates them. */
typedef struct uf_pm_sample {
    uint64_t start_ns, end_ns;  /* cuptiGetTimestamp timebase */
    double sm_active_pct;       /* sm__cycles_active.avg.pct_of_peak_sustained_elapsed */
    double occupancy_pct;       /* sm__warps_active.avg.pct_of_peak_sustained_elapsed */
    double tensor_active_pct;   /* sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed */
    double dram_pct;            /* dram__throughput.avg.pct_of_peak_sustained_elapsed */
} uf_pm_sample;

/* Every metric is a double; NaN means "not measured" and is written as an empty field. */
typedef struct uf_row {
    char variant[UF_NAME_LEN];
    char role[16];                  /* "broken" or "fixed" */
    double axis[UF_MAX_AXES];       /* the sweep point, in the table's axis order */

    /* timing pass (events, no CUPTI); step_ms_mean: total time / steps (format v3) */
    double step_ms, step_ms_min, step_ms_max, step_ms_mean, spread_pct, steps_timed;
    /* trace pass (CUPTI Activity) */
    double trace_step_ms, trace_overhead;
    double busy_pct, kernels_per_step, kernel_us_mean, launch_us, idle_host_pct, idle_other_pct;
    double comm_overlap_pct, comm_exposed_ms;
    double comm_sm_pct;             /* share of SMs holding a block while communication runs,
                                     * from grid sizes: an upper bound of SM activity (format v2) */
    double copy_overlap_pct;        /* share of copy time overlapped by kernels (format v2) */
    /* the host's calls in the steps (format v5): syncs per step, by kind, pageable copies,
     * calls that drained the device, and the device's idle gap after each */
    double syncs_per_step, stream_syncs_per_step, context_syncs_per_step, event_syncs_per_step;
    double pageable_copies_per_step, drains_per_step, sync_gap_us;
    /* counters pass (CUPTI PM sampling), and the NVML GPM cross-check */
    double sm_active_pct, occupancy_pct, tensor_active_pct, dram_pct;
    double gpm_sm_active_pct, gpm_occupancy_pct, gpm_tensor_active_pct, gpm_dram_pct;
    double gpm_agree_pts;           /* largest |GPM - PM| over the window GPM describes (v4) */
    /* NVML view during the timing pass */
    double nvml_util_pct;
    double sm_clock_mhz, sm_clock_min_mhz;  /* mean and lowest SM clock sampled (format v2) */
    double power_w;                 /* mean board power sampled (format v2) */
    /* counted by the scenario (describe callback), derived by the harness */
    double useful_flops, executed_flops, tflops_useful, pct_of_gemm;
    double min_bytes, gbs, pct_of_copy;
    double peak_mem_bytes;
    double verified, max_rel_err;
    double extra[UF_MAX_EXTRA];     /* scenario-specific, named in the table */

    char skip_reason[UF_REASON_LEN];  /* why something was not measured; "" when all was */

    /* PM-sampled time series of the counters pass (owned by the row; not in the CSV) */
    uf_pm_sample *samples;
    size_t n_samples;

    /* A run on several GPUs: ranks[k] holds the per-device metrics (uf_metric_desc.per_device:
     * trace, counters, NVML) of rank k, the GPU ctx->device + k, and that GPU's notes in its
     * skip_reason; every other metric is NaN. The row's own per-device columns are rank 0's.
     * Owned by the row (format v3: the lines with a `rank`); n_ranks 0 on one GPU. */
    struct uf_row *ranks;
    int n_ranks;
} uf_row;

/* The column table (uf_metrics, uf_metric_desc: name, label, unit, direction, valid range,
 * place in uf_row) is metrics.h's. */

typedef struct uf_meta {
    int n;
    char key[UF_MAX_META][UF_NAME_LEN];
    char value[UF_MAX_META][UF_META_VALUE_LEN];
} uf_meta;

void uf_meta_set(uf_meta *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *uf_meta_get(const uf_meta *m, const char *key); /* NULL when absent */

typedef struct uf_table {
    char scenario[UF_NAME_LEN];
    int n_axes;
    char axis_names[UF_MAX_AXES][UF_NAME_LEN];
    int n_extra;
    char extra_names[UF_MAX_EXTRA][UF_NAME_LEN];
    char extra_units[UF_MAX_EXTRA][UF_NAME_LEN];
    uf_meta meta;
    uf_row *rows;
    int n_rows, cap_rows;
} uf_table;

void uf_table_init(uf_table *t, const char *scenario);
int uf_table_add_axis(uf_table *t, const char *name);                      /* 0 ok, -1 full */
int uf_table_add_extra(uf_table *t, const char *name, const char *unit);   /* 0 ok, -1 full */
uf_row *uf_table_append(uf_table *t);    /* a new row, every metric NaN; NULL on OOM */
void uf_table_free(uf_table *t);         /* frees rows, their samples and their ranks */
void uf_row_clear(uf_row *r);            /* every metric NaN, strings empty, no samples */
/* Rank r->n_ranks's figures: a cleared row with r's variant, role and axes, appended to
 * r->ranks. NULL on OOM or when r has UF_MAX_RANKS already. */
uf_row *uf_row_add_rank(uf_row *r);
/* Per-device metric `name` of rank `rank` of row r; NaN when r is NULL, has no such rank, or
 * the name is not a per-device metric. */
double uf_row_rank_value(const uf_row *r, int rank, const char *name);

/* Fixed metric i (uf_metrics[i]) of a row: its value, and its address. */
double uf_row_value(const uf_row *r, int i);
double *uf_row_value_ptr(uf_row *r, int i);

/* 1 when name is a value column of t (a fixed metric, one of its extras or an axis: what
 * uf_table_value reads), else 0. */
int uf_table_has_column(const uf_table *t, const char *name);
/* Value of a metric by column name: fixed metrics, extras, or an axis name. NaN when the
 * name is unknown or the value is empty. */
double uf_table_value(const uf_table *t, const uf_row *r, const char *name);
/* Address of a metric by name (fixed or extra); NULL when unknown. */
double *uf_row_metric(const uf_table *t, uf_row *r, const char *name);

/* Writers: CSV (`#` metadata lines, a header line, one row per line, each followed by the lines
 * of its ranks when it has any: format v3, else v2), JSON (same content),
 * series CSV (one line per PM sample: variant, axes, t_ms from the first sample, 4 metrics).
 * The CSV writer refuses a table whose scenario, axes, extras, metadata keys or variants are
 * not names (bounds.h: the reader would refuse them) and writes a text's control characters
 * as spaces. Each writes a temporary file beside PATH, then renames it: a reader never sees
 * half a file (fileutil.h: only a regular file or a new name is replaced).
 * Return 0, or -1 with a message in err. */
int uf_table_write_csv(const uf_table *t, const char *path, char *err, size_t errlen);
int uf_table_write_json(const uf_table *t, const char *path, char *err, size_t errlen);
int uf_table_write_series_csv(const uf_table *t, const char *path, char *err, size_t errlen);

/* Strict reader of a file written by uf_table_write_csv (format v5; v3 and later with a `rank`
 * column and per-rank lines attached to their row's ranks; or an older one: each version
 * without the columns of a later `since`, which then read as empty; v2 and v1 also without
 * the rank column):
 * unknown columns, wrong field counts, unparsable numbers, values, names and texts outside
 * the bounds of bounds.h, a rank line that does not follow its row in order, a missing header
 * or a truncated last line are errors naming the file and line. Fills an initialized table. Return 0, or -1 with a message in err. */
int uf_table_read_csv(uf_table *t, const char *path, char *err, size_t errlen);
/* The same reader on len bytes in memory (any content: NUL bytes are an error); path names them
 * in messages. When scenario is not NULL, the file's `# scenario:` line must name it. */
int uf_table_parse_csv(uf_table *t, const char *path, const char *data, size_t len,
                       const char *scenario, char *err, size_t errlen);
/* DIR/NAME.csv of a result folder, as `underfed report` and `compare` read it: the strict
 * reader, and `# scenario: NAME` (a folder names each file after its scenario). */
int uf_table_read_scenario(uf_table *t, const char *dir, const char *name, char *err,
                           size_t errlen);
/* Strict reader of a series file written by uf_table_write_series_csv: attaches each sample
 * to the row of t with the same variant and axes (start_ns = t_ms × 1e6). A sample whose row
 * is absent is an error. Return 0, or -1 with a message naming file and line. */
int uf_table_read_series_csv(uf_table *t, const char *path, char *err, size_t errlen);
int uf_table_parse_series_csv(uf_table *t, const char *path, const char *data, size_t len,
                              char *err, size_t errlen);

/* The machine's ceilings (benches/ceilings writes them). NaN where not measured. */
typedef struct uf_ceilings {
    double copy_d2d_gbs;        /* device-to-device copy, bytes read + written per second / 1e9 */
    double gemm_bf16_tflops, gemm_tf32_tflops, gemm_fp32_tflops;
    double launch_us;           /* empty-kernel launch cost, back-to-back launches */
    double graph_node_us;       /* cost per kernel node of a replayed graph */
    double h2d_pinned_gbs, h2d_pageable_gbs, d2h_pinned_gbs, d2h_pageable_gbs;
    double nccl_busbw_gbs;      /* all-reduce bus bandwidth at the largest size measured */
} uf_ceilings;

typedef struct uf_ceiling_desc {
    const char *name;           /* column "ceiling" in ceilings.csv, e.g. "copy_d2d_gbs" */
    const char *unit;
    size_t offset;              /* offsetof(uf_ceilings, ...) */
} uf_ceiling_desc;

extern const uf_ceiling_desc uf_ceiling_descs[];
extern const int uf_n_ceiling_descs;

void uf_ceilings_clear(uf_ceilings *c);   /* all NaN */
/* The ceilings a results file records in its metadata (`# ceiling.NAME: VALUE`, the values its
 * derived figures were computed against) into c (the rest NaN); how many it records. */
int uf_ceilings_from_meta(const uf_meta *m, uf_ceilings *c);
/* ceilings.csv: `#` metadata lines, then "ceiling,value,unit,spread_pct,note" rows. Extra rows
 * (e.g. per-size NCCL points "nccl_busbw_gbs@1048576") are allowed and kept out of the struct.
 * Strict like the results reader; a name twice, a value <= 0 or above its unit's bound, a
 * spread outside [0, 10000] % (bounds.h) is an error. */
int uf_ceilings_read(const char *path, uf_ceilings *c, char *err, size_t errlen);
/* The same, keeping the file's `# key: value` lines in *meta (NULL: not kept). */
int uf_ceilings_read_meta(const char *path, uf_ceilings *c, uf_meta *meta, char *err,
                          size_t errlen);
/* The same on len bytes in memory; path names them in messages. */
int uf_ceilings_parse(const char *path, const char *data, size_t len, uf_ceilings *c,
                      uf_meta *meta, char *err, size_t errlen);
typedef struct uf_ceiling_row {
    char name[UF_NAME_LEN];
    double value, spread_pct;
    char unit[UF_NAME_LEN];
    char note[UF_REASON_LEN];
} uf_ceiling_row;
int uf_ceilings_write(const char *path, const uf_meta *meta, const uf_ceiling_row *rows, int n,
                      char *err, size_t errlen);
/* Every row of a ceilings file as written (name, value, unit, spread, note; the rows outside
 * uf_ceiling_descs too), by name, after the strict checks of uf_ceilings_read: into *rows
 * (malloc'ed, the caller frees it; NULL when none) and *n_rows. 0, or -1 with err. */
int uf_ceilings_read_rows(const char *path, uf_ceiling_row **rows, int *n_rows, char *err,
                          size_t errlen);
/* An activity row of benches/ceilings (copy_dram_pct, gemm_bf16_tensor_pct, ...): one PM
 * counter (uf_pm_counters' order: 0 SM active, 1 occupancy, 2 tensor active, 3 DRAM) over the
 * window [t0_ns, t1_ns] into row->value as the scenarios' counters columns read it (the
 * overlap-weighted mean, uf_pm_window_mean), and into row->spread_pct the relative IQR of the
 * samples that overlap the window (stats.h). Name, unit and note are the caller's. Returns how
 * many samples overlap the window; 0 (no sample, a counter index out of range, or out of
 * memory): value and spread NaN. A mean of 0 (no such activity at all) also leaves them NaN:
 * a ceilings file holds values > 0 only, and a 0 would make every reader refuse the file. */
size_t uf_ceiling_activity(uf_ceiling_row *row, const uf_pm_sample *samples, size_t n,
                           uint64_t t0_ns, uint64_t t1_ns, int counter);

#ifdef __cplusplus
}
#endif
#endif

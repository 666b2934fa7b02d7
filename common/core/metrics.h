/* The metric table: every fixed column of a results file described once (name, label, unit,
 * which way is better, the range a valid value lies in, a one-line hint, and where the value
 * sits in uf_row). The writers, the strict reader's range checks, the run comparison, the
 * harness's table and lesson, `underfed ladder` and REPORT.md all read it: a label or unit
 * is written here and nowhere else. Plain C: no CUDA here, unit-tested with Criterion. */
#ifndef UF_METRICS_H
#define UF_METRICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which way a change is an improvement; NONE for a figure that explains rather than judges. */
typedef enum { UF_DIR_NONE = 0, UF_DIR_HIGHER, UF_DIR_LOWER } uf_direction;

typedef struct uf_metric_desc {
    const char *name;           /* the CSV column */
    const char *label;          /* short, for tables and plots */
    const char *unit;
    uf_direction direction;
    double min, max;            /* valid range; max may be INFINITY (no upper bound) */
    int min_open;               /* 1: min itself is invalid (a time is > 0) */
    int integral;               /* 1: whole numbers only (counts, flags) */
    const char *hint;           /* one line: what the value is */
    size_t offset;              /* offsetof(uf_row, ...) */
    int since;                  /* results format version that introduced the column */
    int per_device;             /* measured on each GPU (trace, counters, NVML): kept per rank
                                 * in a run on several GPUs */
} uf_metric_desc;

extern const uf_metric_desc uf_metrics[];
extern const int uf_n_metrics;

/* The index of a column in uf_metrics, -1 when name is not a fixed metric. */
int uf_metric_index(const char *name);
/* The description of a column, NULL when name is not a fixed metric. */
const uf_metric_desc *uf_metric_find(const char *name);
/* 1 when v is a valid value of the metric (NaN, "not measured", is valid), else 0. */
int uf_metric_valid(const uf_metric_desc *m, double v);
/* The unit to write after a value or in a heading: "" when the metric has no dimension
 * (unit "1", "count" or "ratio") or its label names the unit already ("GB/s", "% of GEMM"). */
const char *uf_metric_unit_shown(const uf_metric_desc *m);
/* A column heading: the label, then the unit when shown ("busy %", "step ms", "GB/s"). */
void uf_metric_heading(const uf_metric_desc *m, char *out, size_t outlen);
/* The valid range in words, e.g. "[0, 100]", "> 0", "0 or 1". */
void uf_metric_range_text(const uf_metric_desc *m, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif

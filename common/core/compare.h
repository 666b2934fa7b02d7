/* Run comparison: two result tables of one scenario, metric by metric, each difference
 * labelled SAME / FASTER / SLOWER / NOISY. Plain C, unit-tested.
 *
 * The noise model. A figure's change d = |b − a| / |a| is judged in two ways:
 *  - Device-bound rows (every row that is not host-bound): SAME within the threshold, NOISY
 *    within the two rows' combined spread, else FASTER or SLOWER. The spread of step_ms,
 *    tflops_useful and gbs is the timing pass's (spread_pct, IQR / median, of each run).
 *    busy_pct is measured over the trace pass's window (kernel union / traced step), whose
 *    length carries CUPTI's overhead: trace_overhead = traced step / untraced step, which
 *    varies between runs while the kernels do not (launch_storm eager at 1M elements and
 *    100 ops: trace_overhead 1.043 and 1.150 in two runs, busy 77.4 and 72.8 %, the kernel
 *    time 362 µs in both). Its spread is that drift, |Δ trace_overhead| / the smaller
 *    (uf_trace_window_drift_pct; 0 where either side lacks it): a busy change the instrument's
 *    window explains is NOISY. A device-side idle gap lengthens the traced and the untraced
 *    step alike, leaves trace_overhead as it was, and stays SLOWER.
 *  - Host-bound rows: idle_host_pct >= UF_HOST_BOUND_IDLE_PCT on either side, i.e. the GPU
 *    spent that share of the step waiting for the CPU to launch work. Their figures follow the
 *    host CPU (launch cost, the trace pass's host overhead), which varies between runs far more
 *    than inside one: two H200 runs a day apart moved launch_storm `eager` busy by 13–40 % and
 *    starved_input busy by 20–38 % with unchanged code. They are judged against a run-to-run
 *    tolerance: threshold + the drift of the two hosts' measured launch floors (|Δ launch_us|
 *    / the smaller, from each run's ceilings bench) + UF_HOST_ALLOWANCE_PCT + the combined
 *    spread. Within it, a change beyond the device-bound rule is NOISY and the diff says why
 *    (strict != verdict); beyond it (e.g. 3×), it is FASTER or SLOWER like any other.
 * A device-side regression makes kernels longer, so it lowers idle_host_pct: it is judged by the
 * first rule unless host wait still dominates one side, and even then a change beyond the
 * tolerance is caught. Every excused verdict keeps its strict one, and `underfed compare`
 * prints both and counts the excuses. */
#ifndef UF_COMPARE_H
#define UF_COMPARE_H

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A row is host-bound when its idle_host_pct (the GPU waiting for a launch) is at least this on
 * either side. 20 %: in the committed H200 results the rows whose step the GPU sets wait at most
 * 15 % (allreduce_overlap `bucketed`), the launch- or input-bound ones mostly 28–91 %. */
#define UF_HOST_BOUND_IDLE_PCT 20.0
/* How far a host-bound figure may move between runs of one machine kind beyond the threshold,
 * the launch-floor drift and the spread: the largest run-to-run change seen on the H200 with
 * unchanged code was 40 % (launch_storm eager busy); 50 % leaves a margin and still catches a
 * doubling (+100 %) or a halving of the rate. */
#define UF_HOST_ALLOWANCE_PCT 50.0

/* MISSING: in the first table only (a lost row or value); NEW: in the second only. */
typedef enum { UF_SAME = 0, UF_FASTER, UF_SLOWER, UF_NOISY, UF_MISSING, UF_NEW } uf_verdict;

typedef struct uf_diff {
    char variant[UF_NAME_LEN];
    char where[UF_REASON_LEN];  /* "elems=4096 ops=1000" */
    const char *metric;
    double a, b;                /* the value in the first and second table */
    double change_pct;          /* (b − a) / a × 100 */
    uf_verdict verdict;         /* FASTER/SLOWER: the second run is better/worse */
    uf_verdict strict;          /* the verdict of the device-bound rule (threshold and spread
                                 * only); differs from verdict where the host-bound tolerance
                                 * excused the change */
    double idle_host_pct;       /* host-bound rows: the larger idle_host_pct of the two; else NaN */
    double tolerance_pct;       /* host-bound rows: the run-to-run tolerance applied; else NaN */
    double window_drift_pct;    /* busy_pct: the trace window's drift taken as its spread
                                 * (uf_trace_window_drift_pct); NaN for the other metrics */
} uf_diff;

/* What compare judges against: the threshold, and the launch floor (ceiling launch_us, µs) of
 * each run's host; NaN where not measured (the drift then counts as 0). */
typedef struct uf_compare_noise {
    double threshold_pct;
    double launch_us_a, launch_us_b;
} uf_compare_noise;

/* The drift between two launch floors, |b − a| / min(a, b) × 100; 0 when either is NaN. */
double uf_launch_drift_pct(double launch_us_a, double launch_us_b);

/* The drift of the trace pass's window between two runs of a row, |b − a| / min(a, b) × 100
 * of their trace_overhead; 0 when either is NaN. busy_pct's spread (the model above). */
double uf_trace_window_drift_pct(double overhead_a, double overhead_b);

/* The launch floor a results file records (`# ceiling.launch_us:`); NaN when it does not. */
double uf_table_launch_us(const uf_table *t);

/* Compare step_ms, tflops_useful, gbs (which inherit step_ms's spread) and busy_pct (whose
 * spread is its trace window's drift) of every
 * row of a with the row of b at the same variant and sweep point (axes matched by name); which
 * way is better comes from the metric table (metrics.h). A row of a absent from b gives one
 * UF_MISSING diff (metric "row"), a row of b absent from a one UF_NEW diff (variant and where
 * from b). A metric measured on one side and empty on the other is UF_MISSING (measured in a
 * only) or UF_NEW (in b only); empty on both sides, it is skipped. Each present pair is judged
 * by the noise model above. change_pct is NaN where there is no ratio (a side empty, or
 * a == 0). Writes at most max_out diffs; returns how many there were in all. */
int uf_compare_tables_noise(const uf_table *a, const uf_table *b, const uf_compare_noise *noise,
                            uf_diff *out, int max_out);

/* The same with the launch floors the two tables record in their metadata. */
int uf_compare_tables(const uf_table *a, const uf_table *b, double threshold_pct, uf_diff *out,
                      int max_out);

const char *uf_verdict_name(uf_verdict v);

#ifdef __cplusplus
}
#endif
#endif

/* underfed's CSV files, their format and the helpers that write and read them. Internal to
 * underfed_core (results_write.c, results_read.c, ceilings.c); the public API is results.h.
 *
 * Every file is UTF-8 text with '\n' line ends, written through uf_write_file_atomic
 * (a temporary beside it, fsync, rename), so a reader never sees half a file.
 *
 * Results CSV (uf_table_write_csv), version 5 (v4: the same without the host-call columns
 * syncs_per_step ... sync_gap_us; v3: also without gpm_agree_pts):
 *     # underfed-results v5                 magic line (v2: no `rank` column, no step_ms_mean,
 *                                           no rank lines; v1: neither comm_sm_pct,
 *                                           copy_overlap_pct, sm_clock_mhz, sm_clock_min_mhz,
 *                                           power_w); anything else is refused
 *     # scenario: NAME
 *     # KEY: VALUE                          the run's metadata (uf_meta), in order
 *     # unit.EXTRA: UNIT                    the unit of each scenario-specific column
 *     variant,role,AXIS...,METRIC...,EXTRA...,skip_reason        (v1, v2)
 *     variant,role,rank,AXIS...,METRIC...,EXTRA...,skip_reason   (v3)
 *     one line per row; in v3 the row's `rank` is empty and its ranks' lines follow it, rank
 *     0, 1, ... in order, with the row's variant, role and axes, the rank's per-device metrics
 *     (uf_metric_desc.per_device), every other metric and extra empty, and its own skip_reason
 *   AXIS columns are the sweep axes (the columns between `role` and `step_ms`); METRIC columns
 *   are every uf_metrics entry in table order (step_ms ... max_rel_err); EXTRA columns are those
 *   between the last fixed metric and `skip_reason`. Numbers are written with "%.10g"; NaN (not
 *   measured) is an empty field. Strings containing a comma, a quote or a line break are quoted
 *   RFC-4180 style ("" inside quotes is one quote).
 *
 * Results JSON (uf_table_write_json), the same content:
 *     {"format":"underfed-results","version":5,"scenario":..,"meta":{KEY:VALUE,..},
 *      "axes":[NAME,..],"extras":[{"name":..,"unit":..}],"metrics":[{"name":..,"unit":..}],
 *      "rows":[{"variant":..,"role":..,"axes":{..},"metrics":{..},"extras":{..},
 *               "skip_reason":..}]}
 *   A row with per-rank figures (version 3) adds "ranks":[{"rank":K,"metrics":{per-device
 *   metrics},"skip_reason":..},..]. NaN and infinities are null.
 *
 * Series CSV (uf_table_write_series_csv): `# underfed-series v1`, the metadata, then
 *     variant,AXIS...,t_ms,sm_active_pct,occupancy_pct,tensor_active_pct,dram_pct
 *   one line per PM sample of every row, t_ms from that row's first sample start.
 *
 * Ceilings CSV (uf_ceilings_write): `# underfed-ceilings v1`, the metadata, then
 *     ceiling,value,unit,spread_pct,note
 *   one line per ceiling; names outside uf_ceiling_descs (e.g. "nccl_busbw_gbs@1048576") are
 *   allowed and ignored by uf_ceilings_read.
 *
 * The readers are strict: a missing magic line, an unknown or missing column, a wrong field
 * count, an unparsable number, an unterminated quote or a last line without its newline
 * (a truncated file) is an error naming the file and line. So are: a NUL byte anywhere; a
 * number that is not plain decimal ("nan", "inf", hex floats, overflow); a value outside the
 * bounds of bounds.h (one place: the metric table's ranges, axis and extra values, ceilings,
 * `# ceiling.NAME`, `# default.AXIS`, `# step_stat`), named with line and column; a name
 * (variant, axis, extra, scenario, metadata key, ceiling) or text (metadata value, unit, skip
 * reason, note) that breaks bounds.h's rule (a control character, an escape sequence); a
 * duplicate row (same variant and sweep point), ceiling or metadata key; an empty variant; a
 * role other than broken/fixed, or a variant with two roles; more variants, metadata or unit
 * lines than the fixed limits hold (the limit is named: nothing is dropped silently). Empty
 * is the only way to say "not measured". A message never quotes a control character of the
 * file (it is shown as '?'). */
#ifndef UF_CSV_H
#define UF_CSV_H

#include <stddef.h>

#include "results.h"
#include "strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RESULTS_VERSION 5     /* v5 added syncs_per_step, stream_/context_/event_syncs_per_step,
                               * pageable_copies_per_step, drains_per_step, sync_gap_us; v4
                               * added gpm_agree_pts; v3 added step_ms_mean (the step of
                               * figures derived from the mean), the `rank` column and per-rank
                               * lines; v2 added comm_sm_pct, copy_overlap_pct, sm_clock_mhz,
                               * sm_clock_min_mhz, power_w; v1 to v4 are still read */
#define RESULTS_VERSION_RANKS 3 /* the first version with the `rank` column */
#define RESULTS_MAGIC "# underfed-results v5"
#define RESULTS_MAGIC_V4 "# underfed-results v4"
#define RESULTS_MAGIC_V3 "# underfed-results v3"
#define RESULTS_MAGIC_V2 "# underfed-results v2"
#define RESULTS_MAGIC_V1 "# underfed-results v1"
#define SERIES_MAGIC "# underfed-series v1"
#define CEILINGS_MAGIC "# underfed-ceilings v1"

/* ---- writing ---------------------------------------------------------------------------- */

/* A string field, quoted RFC-4180 style when it holds a comma or a quote; a control character
 * (a line break, a tab, an escape: a text holds none, bounds.h) is written as a space. */
void uf_csv_put_string(uf_strbuf *b, const char *s);
/* A number field: "%.10g", or nothing for NaN (not measured). */
void uf_csv_put_number(uf_strbuf *b, double v);
/* `# KEY: VALUE` with any control character of the value (a line break first) a space. */
void uf_csv_put_meta(uf_strbuf *b, const char *key, const char *value);
/* The lines every CSV flavour starts with: magic, scenario (when given), metadata. */
void uf_csv_preamble(uf_strbuf *b, const char *magic, const char *scenario, const uf_meta *m);

/* ---- the strict reader ------------------------------------------------------------------ */

typedef struct uf_csv_reader {
    const char *path;   /* the file's name in messages */
    char *buf;          /* the whole file, '\r\n' folded to '\n', NUL-terminated */
    size_t len, pos;
    int line;           /* line number of buf[pos] */
    char *rec_start;    /* the current record's first character: fields' columns count from it */
    char **fields;      /* the current record's fields, unescaped in place */
    int n_fields, cap_fields;
} uf_csv_reader;

/* "PATH:LINE: message" into err; -1. */
int uf_csv_error(const uf_csv_reader *r, int line, char *err, size_t errlen, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));
/* "PATH:LINE:COLUMN: message" (COLUMN counts characters from 1); -1. */
int uf_csv_error_at(const uf_csv_reader *r, int line, int col, char *err, size_t errlen,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The column (from 1) where field i of the current record starts. */
int uf_csv_field_col(const uf_csv_reader *r, int i);
/* The reader on a copy of data (len bytes, any content); path names it in messages. CR LF is
 * folded into LF; a NUL byte is an error. uf_csv_close frees it, also after an error. */
int uf_csv_open(uf_csv_reader *r, const char *path, const char *data, size_t len, char *err,
                size_t errlen);
void uf_csv_close(uf_csv_reader *r);
/* Does the loaded text start with the line `magic`? */
int uf_csv_has_magic(const uf_csv_reader *r, const char *magic);
/* Check that the text starts with magic (the file's kind is `what`) and ends with a line
 * break; position after the magic line. */
int uf_csv_start(uf_csv_reader *r, const char *magic, const char *what, char *err,
                 size_t errlen);
/* The next `#` line as key and value ("# KEY: VALUE"); *key NULL for a comment without ": ".
 * Returns 1 when a `#` line was consumed, 0 when the next line is not one. */
int uf_csv_meta(uf_csv_reader *r, char **key, char **value);
/* A metadata entry fits uf_meta: the key a name, the value a text (bounds.h) shorter than
 * UF_META_VALUE_LEN, the key not seen before in `seen` (NULL: not checked). Line is the
 * entry's. */
int uf_csv_check_meta(const uf_csv_reader *r, int line, const char *key, const char *value,
                      const uf_meta *seen, char *err, size_t errlen);
/* The next record into r->fields. Returns 1 with the record's first line in *line, 0 at the
 * end of the file, -1 on a format error. */
int uf_csv_record(uf_csv_reader *r, int *line, char *err, size_t errlen);
/* A number field: empty is NaN (not measured); otherwise plain decimal text of a finite
 * value. 0, or -1 when it is not one. */
int uf_csv_parse_number(const char *s, double *out);
/* Field i as a number into *out; an error naming line, column and the column's name. */
int uf_csv_number(const uf_csv_reader *r, int line, int i, const char *col, double *out,
                  char *err, size_t errlen);
/* Field i as the metric m: a number within m's valid range. */
int uf_csv_metric(const uf_csv_reader *r, int line, int i, const uf_metric_desc *m,
                  double *out, char *err, size_t errlen);
/* Field i as a name, or as a text (bounds.h), into dst (shorter than dstlen); an error naming
 * line, column and the column's name `col` otherwise. */
int uf_csv_name(const uf_csv_reader *r, int line, int i, const char *col, char *dst,
                size_t dstlen, char *err, size_t errlen);
int uf_csv_text(const uf_csv_reader *r, int line, int i, const char *col, char *dst,
                size_t dstlen, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

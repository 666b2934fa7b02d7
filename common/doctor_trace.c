/* The doctor's trace files (doctor_trace.h has the format). */
#include "doctor_trace.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "fileutil.h"

/* ---- writing ---------------------------------------------------------------------------- */

/* An H record's state: one ASCII letter (the kernel's), or '?' where unknown. */
static int is_state_letter(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* The records of every kind: what the end line counts. */
static size_t n_records(const uf_dtrace *t)
{
    return t->n_acts + t->n_apis + t->n_syncs + t->n_ranges + t->n_pm + t->n_util + t->n_clocks +
           t->n_host;
}

/* Text as the rest of a line: control characters become spaces. */
static void put_line_text(uf_strbuf *b, const char *text)
{
    for (const char *p = text; *p; p++) {
        char c = (unsigned char)*p < 0x20 ? ' ' : *p;
        uf_sb_putn(b, &c, 1);
    }
    uf_sb_puts(b, "\n");
}

/* A name as the rest of a line: as put_line_text, but NULL or "" becomes "?". */
static void put_name(uf_strbuf *b, const char *name)
{
    put_line_text(b, name == NULL || name[0] == '\0' ? "?" : name);
}

static void put_pct(uf_strbuf *b, double v)
{
    if (isnan(v))
        uf_sb_puts(b, " nan");
    else
        uf_sb_printf(b, " %.6g", v);
}

static void put_activity(uf_strbuf *b, const uf_activity *a)
{
    char kind = a->kind == UF_ACT_KERNEL ? 'K' : a->kind == UF_ACT_MEMCPY ? 'C' : 'M';
    uf_sb_printf(b, "%c %" PRIu64 " %" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu32, kind,
                 a->start_ns, a->end_ns, a->correlation_id, a->device_id, a->stream_id);
    if (a->kind == UF_ACT_KERNEL) {
        uf_sb_printf(b, " %" PRIu32 " %" PRIu32 " %d ", a->blocks, a->graph_id, a->is_comm ? 1 : 0);
        put_name(b, a->name);
    } else if (a->kind == UF_ACT_MEMCPY) {
        uf_sb_printf(b, " %d %d %" PRIu64 "\n", a->src_mem, a->dst_mem, a->bytes);
    } else {
        uf_sb_printf(b, " %" PRIu64 "\n", a->bytes);
    }
}

/* The counter series (format 3): PM samples, NVML utilization, SM clock and power. */
static void put_samples(uf_strbuf *b, const uf_dtrace *t)
{
    for (size_t i = 0; i < t->n_pm; i++) {
        const uf_pm_sample *p = &t->pm[i];
        uf_sb_printf(b, "P %" PRIu64 " %" PRIu64, p->start_ns, p->end_ns);
        put_pct(b, p->sm_active_pct);
        put_pct(b, p->occupancy_pct);
        put_pct(b, p->tensor_active_pct);
        put_pct(b, p->dram_pct);
        uf_sb_puts(b, "\n");
    }
    for (size_t i = 0; i < t->n_util; i++) {
        uf_sb_printf(b, "U %" PRIu64, t->util[i].t_ns);
        put_pct(b, t->util[i].util_pct);
        uf_sb_puts(b, "\n");
    }
    for (size_t i = 0; i < t->n_clocks; i++) {
        uf_sb_printf(b, "W %" PRIu64, t->clocks[i].t_ns);
        put_pct(b, t->clocks[i].sm_clock_mhz);
        put_pct(b, t->clocks[i].power_w);
        uf_sb_puts(b, "\n");
    }
    for (size_t i = 0; i < t->n_host; i++) {
        const uf_host_sample *h = &t->host[i];
        char state = is_state_letter(h->state) ? h->state : '?';
        uf_sb_printf(b, "H %" PRIu64 " %" PRIu64 " %" PRIu32 " %c\n", h->t_ns, h->run_ns, h->tid,
                     state);
    }
}

/* The first start and last end over an array of records with start_ns and end_ns (or t_ns). */
#define SPAN_OF(arr, n, lo, hi)                                       \
    for (size_t i_ = 0; i_ < (n); i_++) {                             \
        if ((arr)[i_].lo < first) first = (arr)[i_].lo;               \
        if ((arr)[i_].hi > last) last = (arr)[i_].hi;                 \
    }

void uf_trace_records_span(const uf_dtrace *t, uint64_t *first_ns, uint64_t *last_ns)
{
    uint64_t first = UINT64_MAX, last = 0;
    SPAN_OF(t->acts, t->n_acts, start_ns, end_ns)
    SPAN_OF(t->apis, t->n_apis, start_ns, end_ns)
    SPAN_OF(t->syncs, t->n_syncs, start_ns, end_ns)
    SPAN_OF(t->ranges, t->n_ranges, start_ns, end_ns)
    SPAN_OF(t->pm, t->n_pm, start_ns, end_ns)
    SPAN_OF(t->util, t->n_util, t_ns, t_ns)
    SPAN_OF(t->clocks, t->n_clocks, t_ns, t_ns)
    SPAN_OF(t->host, t->n_host, t_ns, t_ns)
    *first_ns = first <= last ? first : 0;
    *last_ns = first <= last ? last : 0;
}

/* Format 4's header lines after counters_note. */
static void put_info(uf_strbuf *b, const uf_dtrace *t, const uf_trace_info *info)
{
    uf_trace_info none = {0};
    if (info == NULL) {
        info = &none;
        uf_trace_records_span(t, &none.span_start_ns, &none.span_end_ns);
    }
    uf_sb_printf(b, "span %" PRIu64 " %" PRIu64 "\n", info->span_start_ns, info->span_end_ns);
    uf_sb_printf(b, "api_filter %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", info->api_min_ns,
                 info->api_left_out, info->api_left_out_ns);
    uf_sb_printf(b, "host_sampler %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu64 "\n",
                 info->host_period_us, info->host_threads, info->host_threads_over_cap,
                 info->host_left_out);
    uf_sb_printf(b, "record_cap %" PRIu64 " %" PRIu64 "\n", info->record_cap,
                 info->records_left_out);
}

void uf_trace_format(uf_strbuf *b, const uf_dtrace *t)
{
    uf_trace_format_info(b, t, NULL);
}

void uf_trace_format_info(uf_strbuf *b, const uf_dtrace *t, const uf_trace_info *info)
{
    uf_sb_printf(b, "%s\npid %d\nsm_count %d\ncounters", UF_TRACE_MAGIC, t->pid, t->sm_count);
    put_pct(b, t->sm_active_pct);
    put_pct(b, t->tensor_active_pct);
    put_pct(b, t->dram_pct);
    put_pct(b, t->nvml_util_pct);
    uf_sb_printf(b, "\ndropped %" PRIu64 "\nnote ", t->dropped);
    put_line_text(b, t->note);
    uf_sb_puts(b, "counters_note ");
    put_line_text(b, t->counters_note);
    put_info(b, t, info);
    for (size_t i = 0; i < t->n_acts; i++)
        put_activity(b, &t->acts[i]);
    for (size_t i = 0; i < t->n_apis; i++) {
        const uf_api_call *a = &t->apis[i];
        uf_sb_printf(b, "A %" PRIu64 " %" PRIu64 " %" PRIu32 " %d %" PRIu32 " ", a->start_ns,
                     a->end_ns, a->correlation_id, a->is_runtime ? 1 : 0, a->thread_id);
        put_name(b, a->name);
    }
    for (size_t i = 0; i < t->n_syncs; i++) {
        const uf_sync_record *s = &t->syncs[i];
        uf_sb_printf(b, "S %" PRIu64 " %" PRIu64 " %" PRIu32 " %" PRIu32 " %d\n", s->start_ns,
                     s->end_ns, s->correlation_id, s->stream_id, s->kind);
    }
    for (size_t i = 0; i < t->n_ranges; i++) {
        uf_sb_printf(b, "R %" PRIu64 " %" PRIu64 " ", t->ranges[i].start_ns, t->ranges[i].end_ns);
        put_name(b, t->ranges[i].name);
    }
    put_samples(b, t);
    uf_sb_printf(b, "end %zu\n", n_records(t));
}

int uf_trace_write(const char *dir, const uf_dtrace *t, char *err, size_t errlen)
{
    return uf_trace_write_info(dir, t, NULL, err, errlen);
}

int uf_trace_write_info(const char *dir, const uf_dtrace *t, const uf_trace_info *info,
                        char *err, size_t errlen)
{
    char path[1024];
    int n = snprintf(path, sizeof path, "%s/%s%d%s", dir, UF_TRACE_PREFIX, t->pid, UF_TRACE_SUFFIX);
    if (n < 0 || (size_t)n >= sizeof path)
        return uf_set_err(err, errlen, "%s: path too long", dir);
    uf_strbuf b = {0};
    uf_trace_format_info(&b, t, info);
    return uf_sb_commit(&b, path, err, errlen);
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct cursor {
    char *p;                    /* the rest of the current line */
    int version;                /* the file's format version (1..UF_TRACE_VERSION) */
    const char *path;
    int line;
    char *err;
    size_t errlen;
} cursor;

static int bad(const cursor *c, const char *what)
{
    return uf_set_err(c->err, c->errlen, "%s:%d: %s", c->path, c->line, what);
}

/* One decimal field followed by a space (or the end of the line when last). */
static int field_u64(cursor *c, uint64_t *v, int last, const char *what)
{
    char msg[128];
    if (*c->p < '0' || *c->p > '9') {
        snprintf(msg, sizeof msg, "%s: expected a decimal number", what);
        return bad(c, msg);
    }
    errno = 0;
    char *end;
    unsigned long long x = strtoull(c->p, &end, 10);
    if (errno != 0 || (last ? *end != '\0' : *end != ' ')) {
        snprintf(msg, sizeof msg, "%s: %s", what,
                 errno ? "out of range" : last ? "trailing characters" : "expected a space after it");
        return bad(c, msg);
    }
    *v = x;
    c->p = last ? end : end + 1;
    return 0;
}

static int field_u32(cursor *c, uint32_t *v, int last, const char *what)
{
    uint64_t x = 0;
    if (field_u64(c, &x, last, what) != 0)
        return -1;
    if (x > UINT32_MAX) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: out of range", what);
        return bad(c, msg);
    }
    *v = (uint32_t)x;
    return 0;
}

/* A 0/1 flag or a small enum (0..max). */
static int field_small(cursor *c, uint8_t *v, unsigned max, int last, const char *what)
{
    uint64_t x = 0;
    if (field_u64(c, &x, last, what) != 0)
        return -1;
    if (x > max) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: %" PRIu64 " is not 0..%u", what, x, max);
        return bad(c, msg);
    }
    *v = (uint8_t)x;
    return 0;
}

/* The rest of the line as a name (non-empty). */
static int field_name(cursor *c, const char **name)
{
    if (*c->p == '\0')
        return bad(c, "missing name");
    *name = c->p;
    return 0;
}

/* START END with END >= START. */
static int field_times(cursor *c, uint64_t *start, uint64_t *end, int last)
{
    if (field_u64(c, start, 0, "start") != 0 || field_u64(c, end, last, "end") != 0)
        return -1;
    return *end < *start ? bad(c, "end before start") : 0;
}

/* Version 1 wrote a copy's direction (uf_copy_kind) and whether its host side was pageable;
 * the memory kinds that give back both (uf_copy_direction, uf_copy_pageable). */
static void v1_memory_kinds(uf_activity *a, uint8_t direction, uint8_t pageable)
{
    const uint8_t host = pageable ? UF_MEM_PAGEABLE : UF_MEM_PINNED;
    a->src_mem = a->dst_mem = UF_MEM_UNKNOWN;
    if (direction == UF_COPY_HTOD) {
        a->src_mem = host;
        a->dst_mem = UF_MEM_DEVICE;
    } else if (direction == UF_COPY_DTOH) {
        a->src_mem = UF_MEM_DEVICE;
        a->dst_mem = host;
    } else if (direction == UF_COPY_DTOD) {
        a->src_mem = a->dst_mem = UF_MEM_DEVICE;
    } else if (pageable) {
        a->src_mem = UF_MEM_PAGEABLE;   /* another direction (host to host): pageable kept */
    }
}

static int parse_activity(cursor *c, char kind, uf_activity *a)
{
    memset(a, 0, sizeof *a);
    a->kind = kind == 'K' ? UF_ACT_KERNEL : kind == 'C' ? UF_ACT_MEMCPY : UF_ACT_MEMSET;
    if (field_times(c, &a->start_ns, &a->end_ns, 0) != 0 ||
        field_u32(c, &a->correlation_id, 0, "correlation id") != 0 ||
        field_u32(c, &a->device_id, 0, "device") != 0 ||
        field_u32(c, &a->stream_id, 0, "stream") != 0)
        return -1;
    if (kind == 'K')
        return field_u32(c, &a->blocks, 0, "blocks") != 0 ||
                       field_u32(c, &a->graph_id, 0, "graph id") != 0 ||
                       field_small(c, &a->is_comm, 1, 0, "comm") != 0 ||
                       field_name(c, &a->name) != 0
                   ? -1 : 0;
    if (kind == 'C' && c->version == 1) {
        uint8_t direction, pageable;
        if (field_small(c, &direction, UF_COPY_DTOD, 0, "copy kind") != 0 ||
            field_small(c, &pageable, 1, 0, "pageable") != 0)
            return -1;
        v1_memory_kinds(a, direction, pageable);
        return field_u64(c, &a->bytes, 1, "bytes");
    }
    if (kind == 'C')
        return field_small(c, &a->src_mem, UF_MEM_MANAGED_STATIC, 0, "source memory") != 0 ||
                       field_small(c, &a->dst_mem, UF_MEM_MANAGED_STATIC, 0,
                                   "destination memory") != 0 ||
                       field_u64(c, &a->bytes, 1, "bytes") != 0
                   ? -1 : 0;
    return field_u64(c, &a->bytes, 1, "bytes");
}

/* One real field: a number in 0..max or "nan", followed by a space (or the end of the line
 * when last). */
static int field_real(cursor *c, double *v, double max, int last, const char *what)
{
    char msg[128];
    char *end;
    if (strncmp(c->p, "nan", 3) == 0) {
        *v = NAN;
        end = c->p + 3;
    } else {
        errno = 0;
        *v = strtod(c->p, &end);
        if (end == c->p || errno != 0 || !(*v >= 0.0 && *v <= max)) {
            snprintf(msg, sizeof msg, "%s: expected a number 0..%g or nan", what, max);
            return bad(c, msg);
        }
    }
    if (*end != (last ? '\0' : ' ')) {
        snprintf(msg, sizeof msg, "%s: %s", what,
                 last ? "trailing characters" : "expected a space after it");
        return bad(c, msg);
    }
    c->p = last ? end : end + 1;
    return 0;
}

/* "counters SM TENSOR DRAM NVML": each a percentage 0..100 or "nan". */
static int parse_counters(cursor *c, uf_dtrace *t)
{
    double *out[4] = {&t->sm_active_pct, &t->tensor_active_pct, &t->dram_pct, &t->nvml_util_pct};
    for (int i = 0; i < 4; i++)
        if (field_real(c, out[i], 100.0, i == 3, "counters") != 0)
            return -1;
    return 0;
}

#define SAMPLE_PCT_MAX UF_TRACE_SAMPLE_PCT_MAX
#define CLOCK_MHZ_MAX 100000.0
#define POWER_W_MAX 100000.0

/* "P START END SM OCC TENSOR DRAM" */
static int parse_pm(cursor *c, uf_pm_sample *p)
{
    return field_times(c, &p->start_ns, &p->end_ns, 0) != 0 ||
                   field_real(c, &p->sm_active_pct, SAMPLE_PCT_MAX, 0, "SM active") != 0 ||
                   field_real(c, &p->occupancy_pct, SAMPLE_PCT_MAX, 0, "occupancy") != 0 ||
                   field_real(c, &p->tensor_active_pct, SAMPLE_PCT_MAX, 0, "tensor active") != 0 ||
                   field_real(c, &p->dram_pct, SAMPLE_PCT_MAX, 1, "DRAM") != 0
               ? -1 : 0;
}

/* The header lines, in order; counters_note from format 3, the last four from format 4. */
static const char *const header_keys[] = {"pid", "sm_count", "counters", "dropped", "note",
                                          "counters_note", "span", "api_filter",
                                          "host_sampler", "record_cap"};

static int n_header(int version)
{
    return version >= 4 ? 10 : version >= 3 ? 6 : 5;
}

/* Format 4's header lines (k 6..9) into info. */
static int parse_info(cursor *c, int k, uf_trace_info *info)
{
    switch (k) {
    case 6:
        info->has_span = 1;
        return field_times(c, &info->span_start_ns, &info->span_end_ns, 1);
    case 7:
        return field_u64(c, &info->api_min_ns, 0, "api_filter: threshold") != 0 ||
                       field_u64(c, &info->api_left_out, 0, "api_filter: calls left out") != 0 ||
                       field_u64(c, &info->api_left_out_ns, 1, "api_filter: their time") != 0
                   ? -1 : 0;
    case 8:
        return field_u32(c, &info->host_period_us, 0, "host_sampler: period") != 0 ||
                       field_u32(c, &info->host_threads, 0, "host_sampler: threads") != 0 ||
                       field_u32(c, &info->host_threads_over_cap, 0,
                                 "host_sampler: threads over its cap") != 0 ||
                       field_u64(c, &info->host_left_out, 1, "host_sampler: samples left out")
                   ? -1 : 0;
    default:
        return field_u64(c, &info->record_cap, 0, "record_cap: the cap") != 0 ||
                       field_u64(c, &info->records_left_out, 1, "record_cap: records left out")
                   ? -1 : 0;
    }
}

static int parse_header(cursor *c, int k, uf_dtrace *t, uf_trace_info *info)
{
    uint64_t v;
    switch (k) {
    case 0:
        if (field_u64(c, &v, 1, "pid") != 0)
            return -1;
        if (v > INT32_MAX)
            return bad(c, "pid: out of range");
        t->pid = (int)v;
        return 0;
    case 1:
        if (field_u64(c, &v, 1, "sm_count") != 0)
            return -1;
        if (v > 100000)
            return bad(c, "sm_count: out of range");
        t->sm_count = (int)v;
        return 0;
    case 2:
        return parse_counters(c, t);
    case 3:
        return field_u64(c, &t->dropped, 1, "dropped");
    case 4:
        uf_copy_str(t->note, sizeof t->note, c->p);
        return 0;
    case 5:
        uf_copy_str(t->counters_note, sizeof t->counters_note, c->p);
        return 0;
    default:
        return parse_info(c, k, info);
    }
}

/* How many records of each kind the text holds (lines starting "K ", "C ", ...). */
typedef struct record_counts {
    size_t acts, apis, syncs, ranges, pm, util, clocks, host;
} record_counts;

static void count_records(const char *text, record_counts *n)
{
    memset(n, 0, sizeof *n);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (p[0] == '\0' || p[1] != ' ')
            continue;
        n->acts += p[0] == 'K' || p[0] == 'C' || p[0] == 'M';
        n->apis += p[0] == 'A';
        n->syncs += p[0] == 'S';
        n->ranges += p[0] == 'R';
        n->pm += p[0] == 'P';
        n->util += p[0] == 'U';
        n->clocks += p[0] == 'W';
        n->host += p[0] == 'H';
    }
}

#define UNKNOWN_RECORD "unknown record (expected K, C, M, A, S, R, P, U, W, H or end)"

/* "H T RUN_NS TID STATE" (format 4) */
static int parse_host(cursor *c, uf_host_sample *h)
{
    memset(h, 0, sizeof *h);
    if (field_u64(c, &h->t_ns, 0, "time") != 0 || field_u64(c, &h->run_ns, 0, "run time") != 0 ||
        field_u32(c, &h->tid, 0, "thread") != 0)
        return -1;
    if (!(is_state_letter(c->p[0]) || c->p[0] == '?') || c->p[1] != '\0')
        return bad(c, "state: expected one letter (R, S, D, ...) or ?");
    h->state = c->p[0];
    return 0;
}

/* A sample line of format 3 or later (c->p after "X "): counters, and from format 4 the host's
 * threads. */
static int parse_sample(cursor *c, char kind, uf_dtrace *t)
{
    switch (kind) {
    case 'H':
        if (c->version < 4)
            return bad(c, UNKNOWN_RECORD);
        return parse_host(c, &t->host[t->n_host++]);
    case 'P':
        return parse_pm(c, &t->pm[t->n_pm++]);
    case 'U': {
        uf_util_sample *u = &t->util[t->n_util++];
        return field_u64(c, &u->t_ns, 0, "time") != 0 ||
                       field_real(c, &u->util_pct, 100.0, 1, "utilization") != 0 ? -1 : 0;
    }
    case 'W': {
        uf_clock_sample *w = &t->clocks[t->n_clocks++];
        return field_u64(c, &w->t_ns, 0, "time") != 0 ||
                       field_real(c, &w->sm_clock_mhz, CLOCK_MHZ_MAX, 0, "SM clock") != 0 ||
                       field_real(c, &w->power_w, POWER_W_MAX, 1, "power") != 0 ? -1 : 0;
    }
    default:
        return bad(c, UNKNOWN_RECORD);
    }
}

/* One record line (c->p after "X "). */
static int parse_record(cursor *c, char kind, uf_dtrace *t)
{
    switch (kind) {
    case 'K': case 'C': case 'M':
        return parse_activity(c, kind, &t->acts[t->n_acts++]);
    case 'A': {
        uf_api_call *a = &t->apis[t->n_apis++];
        memset(a, 0, sizeof *a);
        return field_times(c, &a->start_ns, &a->end_ns, 0) != 0 ||
                       field_u32(c, &a->correlation_id, 0, "correlation id") != 0 ||
                       field_small(c, &a->is_runtime, 1, 0, "runtime") != 0 ||
                       (c->version >= 4 && field_u32(c, &a->thread_id, 0, "thread") != 0) ||
                       field_name(c, &a->name) != 0 ? -1 : 0;
    }
    case 'S': {
        uf_sync_record *s = &t->syncs[t->n_syncs++];
        memset(s, 0, sizeof *s);
        return field_times(c, &s->start_ns, &s->end_ns, 0) != 0 ||
                       field_u32(c, &s->correlation_id, 0, "correlation id") != 0 ||
                       (c->version > 1 && field_u32(c, &s->stream_id, 0, "stream") != 0) ||
                       field_small(c, &s->kind, UF_SYNC_CONTEXT, 1, "sync kind") != 0 ? -1 : 0;
    }
    case 'R': {
        uf_range *r = &t->ranges[t->n_ranges++];
        return field_times(c, &r->start_ns, &r->end_ns, 0) != 0 || field_name(c, &r->name) != 0
                   ? -1 : 0;
    }
    default:
        return c->version >= 3 ? parse_sample(c, kind, t) : bad(c, UNKNOWN_RECORD);
    }
}

static int alloc_records(uf_dtrace *t, const char *text)
{
    record_counts n;
    count_records(text, &n);
    t->acts = calloc(n.acts + 1, sizeof *t->acts);
    t->apis = calloc(n.apis + 1, sizeof *t->apis);
    t->syncs = calloc(n.syncs + 1, sizeof *t->syncs);
    t->ranges = calloc(n.ranges + 1, sizeof *t->ranges);
    t->pm = calloc(n.pm + 1, sizeof *t->pm);
    t->util = calloc(n.util + 1, sizeof *t->util);
    t->clocks = calloc(n.clocks + 1, sizeof *t->clocks);
    t->host = calloc(n.host + 1, sizeof *t->host);
    return t->acts && t->apis && t->syncs && t->ranges && t->pm && t->util && t->clocks &&
                   t->host ? 0 : -1;
}

/* The lines of text, in place: header, records, "end N", nothing after. */
static int parse_lines(char *text, cursor *c, uf_dtrace *t, uf_trace_info *info)
{
    int header = 0, ended = 0;
    for (char *line = text; *line != '\0';) {
        char *nl = strchr(line, '\n');
        if (nl == NULL)
            return bad(c, "last line not terminated (a truncated file?)");
        *nl = '\0';
        c->line++;
        c->p = line;
        if (ended)
            return bad(c, "text after the end line");
        if (c->line == 1) {
            if (strcmp(line, UF_TRACE_MAGIC) == 0)
                c->version = UF_TRACE_VERSION;
            else if (strcmp(line, UF_TRACE_MAGIC_V3) == 0)
                c->version = 3;
            else if (strcmp(line, UF_TRACE_MAGIC_V2) == 0)
                c->version = 2;
            else if (strcmp(line, UF_TRACE_MAGIC_V1) == 0)
                c->version = 1;
            else
                return bad(c, "not an underfed doctor trace (expected \"" UF_TRACE_MAGIC "\")");
        } else if (header < n_header(c->version)) {
            size_t klen = strlen(header_keys[header]);
            if (strncmp(line, header_keys[header], klen) != 0 || line[klen] != ' ') {
                char msg[96];
                snprintf(msg, sizeof msg, "expected the header line \"%s ...\"", header_keys[header]);
                return bad(c, msg);
            }
            c->p = line + klen + 1;
            if (parse_header(c, header++, t, info) != 0)
                return -1;
        } else if (strncmp(line, "end ", 4) == 0) {
            uint64_t n;
            c->p = line + 4;
            if (field_u64(c, &n, 1, "end") != 0)
                return -1;
            if (n != n_records(t))
                return bad(c, "end: the record count does not match the records (a damaged file?)");
            ended = 1;
        } else {
            if (line[0] == '\0' || line[1] != ' ')
                return bad(c, UNKNOWN_RECORD);
            c->p = line + 2;
            if (parse_record(c, line[0], t) != 0)
                return -1;
        }
        line = nl + 1;
    }
    if (!ended)
        return bad(c, "no end line (a truncated file?)");
    return 0;
}

/* H records by time, then thread. */
static int cmp_host(const void *pa, const void *pb)
{
    const uf_host_sample *a = pa, *b = pb;
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

void uf_trace_free(uf_trace_file *f)
{
    free(f->t.acts);
    free(f->t.apis);
    free(f->t.syncs);
    free(f->t.ranges);
    free(f->t.pm);
    free(f->t.util);
    free(f->t.clocks);
    free(f->t.host);
    free(f->text);
    memset(f, 0, sizeof *f);
}

int uf_trace_parse(char *text, const char *path, uf_trace_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->text = text;
    uf_copy_str(f->path, sizeof f->path, path);
    cursor c = {.p = text, .version = UF_TRACE_VERSION, .path = path, .err = err,
                .errlen = errlen};
    if (alloc_records(&f->t, text) != 0) {
        uf_trace_free(f);
        return uf_set_err(err, errlen, "%s: out of memory", path);
    }
    if (parse_lines(text, &c, &f->t, &f->info) != 0) {
        uf_trace_free(f);
        return -1;
    }
    f->info.version = c.version;
    if (f->t.n_host > 1)
        qsort(f->t.host, f->t.n_host, sizeof *f->t.host, cmp_host);
    return 0;
}

int uf_trace_read(const char *path, uf_trace_file *f, char *err, size_t errlen)
{
    char *text;
    size_t len;
    memset(f, 0, sizeof *f);
    if (uf_read_file(path, &text, &len, err, errlen) != 0)
        return -1;
    if (strlen(text) != len) {
        free(text);
        return uf_set_err(err, errlen, "%s: a NUL byte inside (not a text trace)", path);
    }
    return uf_trace_parse(text, path, f, err, errlen);
}

/* ---- a folder of traces ------------------------------------------------------------------ */

int uf_trace_is_name(const char *name)
{
    size_t n = strlen(name), lp = strlen(UF_TRACE_PREFIX), ls = strlen(UF_TRACE_SUFFIX);
    return n > lp + ls && strncmp(name, UF_TRACE_PREFIX, lp) == 0 &&
           strcmp(name + n - ls, UF_TRACE_SUFFIX) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void uf_trace_free_all(uf_trace_file *files, int n)
{
    for (int i = 0; files != NULL && i < n; i++)
        uf_trace_free(&files[i]);
    free(files);
}

/* The trace file names of dir, sorted, into *names (malloc'ed each). */
static int list_traces(const char *dir, char ***names, int *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return uf_set_err(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
    int cap = 0, rc = 0;
    *names = NULL;
    *n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!uf_trace_is_name(e->d_name))
            continue;
        char **grown = uf_grow(*names, &cap, *n + 1, sizeof **names, 16);
        char *copy = grown != NULL ? strdup(e->d_name) : NULL;
        if (grown != NULL)
            *names = grown;
        if (copy == NULL) {
            rc = uf_set_err(err, errlen, "%s: out of memory", dir);
            break;
        }
        (*names)[(*n)++] = copy;
    }
    closedir(d);
    if (*n > 0)
        qsort(*names, (size_t)*n, sizeof **names, cmp_str);
    return rc;
}

int uf_trace_read_dir(const char *dir, uf_trace_file **files, int *n, char *err, size_t errlen)
{
    char **names = NULL;
    int n_names = 0;
    *files = NULL;
    *n = 0;
    int rc = list_traces(dir, &names, &n_names, err, errlen);
    if (rc == 0 && n_names == 0)
        rc = uf_set_err(err, errlen, "%s: no %sPID%s files (did the program use CUDA?)", dir,
                        UF_TRACE_PREFIX, UF_TRACE_SUFFIX);
    if (rc == 0 && (*files = calloc((size_t)n_names, sizeof **files)) == NULL)
        rc = uf_set_err(err, errlen, "%s: out of memory", dir);
    for (int i = 0; rc == 0 && i < n_names; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = uf_trace_read(path, &(*files)[i], err, errlen);
        if (rc == 0)
            (*n)++;
    }
    for (int i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    if (rc != 0) {
        uf_trace_free_all(*files, *n);
        *files = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- the recorder's decisions ------------------------------------------------------------ */

/* Does name start with one of the prefixes? */
static int has_prefix(const char *name, const char *const *prefixes)
{
    for (int i = 0; prefixes[i] != NULL; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

int uf_trace_api_always_kept(const char *name)
{
    /* runtime and driver: launches, copies, memsets, event records, streams waiting for an
     * event; the driver's frees and teardowns (the runtime's are uf_doctor_may_drain's) */
    static const char *const prefixes[] = {
        "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset", "cudaEventRecord",
        "cudaStreamWaitEvent", "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemsetD",
        "cuEventRecord", "cuStreamWaitEvent", "cuMemFree", "cuMemHostFree", "cuStreamDestroy",
        "cuCtxDestroy", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxReset", NULL};
    if (name == NULL)
        return 0;
    return has_prefix(name, prefixes) || strstr(name, "Synchronize") != NULL ||
           uf_doctor_is_event_record(name) || uf_doctor_may_drain(name);
}

int uf_trace_api_kept(int always_kept, uint64_t start_ns, uint64_t end_ns, uint64_t min_ns)
{
    if (start_ns == 0 || end_ns < start_ns)
        return 0;
    return always_kept || end_ns - start_ns >= min_ns;
}

int uf_proc_stat_state(const char *text, size_t len, char *state)
{
    const char *close = NULL;
    for (size_t i = 0; i < len; i++)
        if (text[i] == ')')
            close = text + i;
    if (close == NULL || memchr(text, '(', (size_t)(close - text)) == NULL)
        return -1;
    size_t at = (size_t)(close - text) + 2;     /* ") S" */
    if (at + 1 > len || close[1] != ' ' || !is_state_letter(text[at]) ||
        (at + 1 < len && text[at + 1] != ' ' && text[at + 1] != '\n'))
        return -1;
    *state = text[at];
    return 0;
}

clockid_t uf_thread_cpu_clock(uint32_t tid)
{
    /* linux/posix-timers.h: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) =
     * (~tid << 3) | CPUCLOCK_PERTHREAD_MASK (4) | CPUCLOCK_SCHED (2) */
    return (clockid_t)((~(unsigned int)tid << 3) | 4u | 2u);
}

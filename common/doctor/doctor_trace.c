/* The doctor's trace files (doctor_trace.h has the format). */
#include "doctor_trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "fileutil.h"
#include "stats.h"

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

/* The line of each record, by kind (the checks after the parse name them). */
typedef struct record_lines {
    uint32_t *acts, *apis, *syncs, *ranges, *pm, *util, *clocks, *host;
} record_lines;

typedef struct cursor {
    char *p;                    /* the rest of the current line */
    int version;                /* the file's format version (1..UF_TRACE_VERSION) */
    const char *path;
    int line;
    char *err;
    size_t errlen;
    record_lines lines;
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

/* Text as a terminal may show it, in place (it can only shrink): control characters (C0,
 * DEL, and C1 in their UTF-8 form, U+0080..U+009F: escape sequences start with them) and
 * bytes that are not UTF-8 become '?'. A name or a note from a file anyone can send reaches
 * the terminal only so. */
static void sanitize(char *text)
{
    char *w = text;
    for (const char *r = text; *r != '\0';) {
        size_t n = uf_utf8_len(r);
        unsigned char c0 = (unsigned char)r[0], c1 = (unsigned char)r[1];
        if (n == 0 || (n == 1 && (c0 < 0x20 || c0 == 0x7f)) || (n == 2 && c0 == 0xc2 && c1 < 0xa0)) {
            *w++ = '?';
            r += n ? n : 1;
        } else {
            memmove(w, r, n);
            w += n;
            r += n;
        }
    }
    *w = '\0';
}

/* The rest of the line as a name (non-empty), sanitized. */
static int field_name(cursor *c, const char **name)
{
    if (*c->p == '\0')
        return bad(c, "missing name");
    sanitize(c->p);
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
        if (field_times(c, &info->span_start_ns, &info->span_end_ns, 1) != 0)
            return -1;
        if (info->span_end_ns - info->span_start_ns > UF_TRACE_MAX_SPAN_NS)
            return bad(c, "span: longer than " UF_TRACE_MAX_SPAN_TEXT " (not a recorded run)");
        return 0;
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
        sanitize(c->p);
        uf_copy_str(t->note, sizeof t->note, c->p);
        return 0;
    case 5:
        sanitize(c->p);
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

/* (The lines are found with memchr over the known length: strchr would look for the end of
 * the whole text at each line, under a sanitizer's strict string checks.) */
static void count_records(const char *text, size_t len, record_counts *n)
{
    memset(n, 0, sizeof *n);
    const char *end = text + len;
    for (const char *p = text; p != NULL && p < end;
         p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : NULL) {
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

static void free_lines(record_lines *L)
{
    free(L->acts);
    free(L->apis);
    free(L->syncs);
    free(L->ranges);
    free(L->pm);
    free(L->util);
    free(L->clocks);
    free(L->host);
}

/* Room for the records the text holds, and for their lines. */
static int alloc_records(uf_dtrace *t, record_lines *L, const char *text, size_t len)
{
    record_counts n;
    count_records(text, len, &n);
    L->acts = malloc((n.acts + 1) * sizeof *L->acts);
    L->apis = malloc((n.apis + 1) * sizeof *L->apis);
    L->syncs = malloc((n.syncs + 1) * sizeof *L->syncs);
    L->ranges = malloc((n.ranges + 1) * sizeof *L->ranges);
    L->pm = malloc((n.pm + 1) * sizeof *L->pm);
    L->util = malloc((n.util + 1) * sizeof *L->util);
    L->clocks = malloc((n.clocks + 1) * sizeof *L->clocks);
    L->host = malloc((n.host + 1) * sizeof *L->host);
    if (!(L->acts && L->apis && L->syncs && L->ranges && L->pm && L->util && L->clocks && L->host))
        return -1;
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

/* The line of the record just parsed (of kind `kind`, the last of its array). */
static void store_line(cursor *c, char kind, const uf_dtrace *t)
{
    record_lines *L = &c->lines;
    uint32_t line = (uint32_t)c->line;
    switch (kind) {
    case 'K': case 'C': case 'M': L->acts[t->n_acts - 1] = line; break;
    case 'A': L->apis[t->n_apis - 1] = line; break;
    case 'S': L->syncs[t->n_syncs - 1] = line; break;
    case 'R': L->ranges[t->n_ranges - 1] = line; break;
    case 'P': L->pm[t->n_pm - 1] = line; break;
    case 'U': L->util[t->n_util - 1] = line; break;
    case 'W': L->clocks[t->n_clocks - 1] = line; break;
    default: L->host[t->n_host - 1] = line; break;
    }
}

/* The lines of text, in place: header, records, "end N", nothing after. */
static int parse_lines(char *text, size_t len, cursor *c, uf_dtrace *t, uf_trace_info *info)
{
    int header = 0, ended = 0;
    char *end = text + len;
    for (char *line = text; line < end && *line != '\0';) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
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
            store_line(c, line[0], t);
        }
        line = nl + 1;
    }
    if (!ended)
        return bad(c, "no end line (a truncated file?)");
    return 0;
}

/* ---- checking the records: what no line alone can tell -------------------------------------- */

/* One record's times and line. */
typedef struct timed {
    uint64_t lo, hi;
    uint32_t line;
} timed;

/* Every record's times and line (malloc'ed, *n of them; NULL when out of memory). */
static timed *all_times(const uf_dtrace *t, const record_lines *L, size_t *n)
{
    size_t k = 0;
    timed *v = malloc((n_records(t) + 1) * sizeof *v);
    if (v == NULL)
        return NULL;
#define TIMES(arr, count, lines, lo_field, hi_field)                                        \
    for (size_t i = 0; i < (count); i++)                                                     \
        v[k++] = (timed){(arr)[i].lo_field, (arr)[i].hi_field, (lines)[i]};
    TIMES(t->acts, t->n_acts, L->acts, start_ns, end_ns)
    TIMES(t->apis, t->n_apis, L->apis, start_ns, end_ns)
    TIMES(t->syncs, t->n_syncs, L->syncs, start_ns, end_ns)
    TIMES(t->ranges, t->n_ranges, L->ranges, start_ns, end_ns)
    TIMES(t->pm, t->n_pm, L->pm, start_ns, end_ns)
    TIMES(t->util, t->n_util, L->util, t_ns, t_ns)
    TIMES(t->clocks, t->n_clocks, L->clocks, t_ns, t_ns)
    TIMES(t->host, t->n_host, L->host, t_ns, t_ns)
#undef TIMES
    *n = k;
    return v;
}

/* The median start of the records (n > 0) into *m. 0, or -1 when out of memory. */
static int median_start(const timed *v, size_t n, uint64_t *m)
{
    uint64_t *starts = malloc(n * sizeof *starts);
    if (starts == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        starts[i] = v[i].lo;
    qsort(starts, n, sizeof *starts, uf_cmp_u64);
    *m = starts[n / 2];
    free(starts);
    return 0;
}

/* Every record within the run's span: format 4's span line; in older files (no span written),
 * within UF_TRACE_MAX_SPAN_NS of their median record's start, so that a record shifted by
 * years or a sentinel (UINT64_MAX) stands out from the rest. A record outside is an error
 * naming the first such line and how many there are. Older files' span is then their
 * records'. */
static int check_span(cursor *c, const uf_dtrace *t, uf_trace_info *info)
{
    size_t n = 0;
    timed *v = all_times(t, &c->lines, &n);
    if (v == NULL)
        return uf_set_err(c->err, c->errlen, "%s: out of memory", c->path);
    uint64_t lo = info->span_start_ns, hi = info->span_end_ns;
    if (!info->has_span && n > 0) {
        uint64_t m;
        if (median_start(v, n, &m) != 0) {
            free(v);
            return uf_set_err(c->err, c->errlen, "%s: out of memory", c->path);
        }
        lo = m > UF_TRACE_MAX_SPAN_NS ? m - UF_TRACE_MAX_SPAN_NS : 0;
        hi = m < UINT64_MAX - UF_TRACE_MAX_SPAN_NS ? m + UF_TRACE_MAX_SPAN_NS : UINT64_MAX;
    }
    size_t outside = 0;
    uint32_t first = 0;
    uint64_t min_lo = UINT64_MAX, max_hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].lo < lo || v[i].hi > hi) {
            outside++;
            if (first == 0 || v[i].line < first)
                first = v[i].line;
        } else {
            min_lo = v[i].lo < min_lo ? v[i].lo : min_lo;
            max_hi = v[i].hi > max_hi ? v[i].hi : max_hi;
        }
    }
    free(v);
    if (outside > 0) {
        char msg[300];
        snprintf(msg, sizeof msg, "a record outside the run's span, %" PRIu64 "..%" PRIu64
                 " ns (%s); %zu record%s outside it in all: the file is refused", lo, hi,
                 info->has_span ? "its span line" : "within " UF_TRACE_MAX_SPAN_TEXT
                 " of the median record's start", outside, outside == 1 ? "" : "s");
        c->line = (int)first;
        return bad(c, msg);
    }
    if (!info->has_span) {
        info->span_start_ns = n > 0 ? min_lo : 0;
        info->span_end_ns = n > 0 ? max_hi : 0;
    }
    return 0;
}

enum { KIND_ACT, KIND_API, KIND_SYNC, KIND_RANGE, KIND_PM, KIND_UTIL, KIND_CLOCK, KIND_HOST };

/* A record as numbers and a name: two records with the same key are one record twice. */
typedef struct record_key {
    uint64_t w[11];
    int n;
    const char *name;
} record_key;

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

#define KEY(...)                                                                             \
    do {                                                                                     \
        const uint64_t w_[] = {__VA_ARGS__};                                                 \
        memcpy(k->w, w_, sizeof w_);                                                         \
        k->n = (int)(sizeof w_ / sizeof w_[0]);                                              \
    } while (0)

static void key_of(const uf_dtrace *t, int kind, size_t i, record_key *k)
{
    k->name = NULL;
    switch (kind) {
    case KIND_ACT: {
        const uf_activity *a = &t->acts[i];
        KEY(KIND_ACT, a->kind, a->start_ns, a->end_ns, a->correlation_id, a->device_id,
            a->stream_id, a->blocks, a->graph_id,
            (uint64_t)a->is_comm << 16 | (uint64_t)a->src_mem << 8 | a->dst_mem, a->bytes);
        k->name = a->name;
        break;
    }
    case KIND_API: {
        const uf_api_call *a = &t->apis[i];
        KEY(KIND_API, a->start_ns, a->end_ns, a->correlation_id, a->is_runtime, a->thread_id);
        k->name = a->name;
        break;
    }
    case KIND_SYNC: {
        const uf_sync_record *y = &t->syncs[i];
        KEY(KIND_SYNC, y->start_ns, y->end_ns, y->correlation_id, y->stream_id, y->kind);
        break;
    }
    case KIND_RANGE:
        KEY(KIND_RANGE, t->ranges[i].start_ns, t->ranges[i].end_ns);
        k->name = t->ranges[i].name;
        break;
    case KIND_PM: {
        const uf_pm_sample *p = &t->pm[i];
        KEY(KIND_PM, p->start_ns, p->end_ns, bits_of(p->sm_active_pct), bits_of(p->occupancy_pct),
            bits_of(p->tensor_active_pct), bits_of(p->dram_pct));
        break;
    }
    case KIND_UTIL:
        KEY(KIND_UTIL, t->util[i].t_ns, bits_of(t->util[i].util_pct));
        break;
    case KIND_CLOCK:
        KEY(KIND_CLOCK, t->clocks[i].t_ns, bits_of(t->clocks[i].sm_clock_mhz),
            bits_of(t->clocks[i].power_w));
        break;
    default: {
        const uf_host_sample *h = &t->host[i];
        KEY(KIND_HOST, h->t_ns, h->run_ns, h->tid, (uint64_t)(unsigned char)h->state);
        break;
    }
    }
}
#undef KEY

static int same_key(const record_key *a, const record_key *b)
{
    if (a->n != b->n || memcmp(a->w, b->w, (size_t)a->n * sizeof a->w[0]) != 0)
        return 0;
    if (a->name == NULL || b->name == NULL)
        return a->name == b->name;
    return strcmp(a->name, b->name) == 0;
}

/* FNV-1a over the key's numbers and name. */
static uint64_t hash_key(const record_key *k)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)k->w;
    for (size_t i = 0; i < (size_t)k->n * sizeof k->w[0]; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    for (const char *q = k->name; q != NULL && *q != '\0'; q++)
        h = (h ^ (unsigned char)*q) * 1099511628211ull;
    return h;
}

typedef struct fingerprint {
    uint64_t hash;
    uint32_t line;
    uint8_t kind;
    size_t index;
} fingerprint;

static int cmp_fingerprint(const void *pa, const void *pb)
{
    const fingerprint *a = pa, *b = pb;
    if (a->hash != b->hash)
        return a->hash < b->hash ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

/* No record twice (a duplicated kernel doubles the kernels per step, and the idle parts of a
 * step would exceed their total): an error at the second line of a pair. */
static int check_duplicates(cursor *c, const uf_dtrace *t)
{
    const size_t counts[] = {t->n_acts, t->n_apis, t->n_syncs, t->n_ranges, t->n_pm,
                             t->n_util, t->n_clocks, t->n_host};
    const uint32_t *lines[] = {c->lines.acts, c->lines.apis, c->lines.syncs, c->lines.ranges,
                               c->lines.pm, c->lines.util, c->lines.clocks, c->lines.host};
    size_t n = n_records(t), k = 0;
    fingerprint *f = malloc((n + 1) * sizeof *f);
    if (f == NULL)
        return uf_set_err(c->err, c->errlen, "%s: out of memory", c->path);
    for (int kind = KIND_ACT; kind <= KIND_HOST; kind++)
        for (size_t i = 0; i < counts[kind]; i++) {
            record_key key;
            key_of(t, kind, i, &key);
            f[k++] = (fingerprint){hash_key(&key), lines[kind][i], (uint8_t)kind, i};
        }
    qsort(f, k, sizeof *f, cmp_fingerprint);
    int rc = 0;
    for (size_t j = 1, run = 0; rc == 0 && j < k; j++) {
        if (f[j].hash != f[run].hash) {
            run = j;
            continue;
        }
        record_key b;
        key_of(t, f[j].kind, f[j].index, &b);
        for (size_t i = run; rc == 0 && i < j; i++) {
            record_key a;
            key_of(t, f[i].kind, f[i].index, &a);
            if (same_key(&a, &b)) {
                char msg[96];
                snprintf(msg, sizeof msg, "the same record as line %" PRIu32
                         " (a duplicated record)", f[i].line);
                c->line = (int)f[j].line;
                rc = bad(c, msg);
            }
        }
    }
    free(f);
    return rc;
}

typedef struct host_line {
    uint32_t tid, line;
    uint64_t t_ns, run_ns;
} host_line;

static int cmp_host_line(const void *pa, const void *pb)
{
    const host_line *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

/* Each thread's samples: one at a time, and its CPU time never going back. */
static int check_host(cursor *c, const uf_dtrace *t)
{
    if (t->n_host < 2)
        return 0;
    host_line *v = malloc(t->n_host * sizeof *v);
    if (v == NULL)
        return uf_set_err(c->err, c->errlen, "%s: out of memory", c->path);
    for (size_t i = 0; i < t->n_host; i++)
        v[i] = (host_line){t->host[i].tid, c->lines.host[i], t->host[i].t_ns, t->host[i].run_ns};
    qsort(v, t->n_host, sizeof *v, cmp_host_line);
    int rc = 0;
    for (size_t i = 1; rc == 0 && i < t->n_host; i++) {
        const host_line *a = &v[i - 1], *b = &v[i];
        if (a->tid != b->tid)
            continue;
        char msg[160];
        if (a->t_ns == b->t_ns)
            snprintf(msg, sizeof msg, "thread %" PRIu32 " sampled twice at one time (line %"
                     PRIu32 ")", b->tid, a->line);
        else if (b->run_ns < a->run_ns)
            snprintf(msg, sizeof msg, "thread %" PRIu32 "'s CPU time went back (%" PRIu64
                     " ns at line %" PRIu32 ", earlier)", b->tid, a->run_ns, a->line);
        else
            continue;
        c->line = (int)(a->t_ns == b->t_ns ? (a->line > b->line ? a->line : b->line) : b->line);
        rc = bad(c, msg);
    }
    free(v);
    return rc;
}

/* What the lines alone cannot tell: every record within the run's span, none twice, each
 * thread's samples in order. */
static int check_records(cursor *c, const uf_dtrace *t, uf_trace_info *info)
{
    int rc = check_span(c, t, info);
    if (rc == 0)
        rc = check_duplicates(c, t);
    if (rc == 0)
        rc = check_host(c, t);
    return rc;
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
    int rc = 0;
    size_t len = strlen(text);
    if (alloc_records(&f->t, &c.lines, text, len) != 0)
        rc = uf_set_err(err, errlen, "%s: out of memory", path);
    if (rc == 0)
        rc = parse_lines(text, len, &c, &f->t, &f->info);
    if (rc == 0)
        rc = check_records(&c, &f->t, &f->info);
    free_lines(&c.lines);
    if (rc != 0) {
        uf_trace_free(f);
        return -1;
    }
    f->info.version = c.version;
    if (f->t.n_host > 1)
        qsort(f->t.host, f->t.n_host, sizeof *f->t.host, cmp_host);
    return 0;
}

/* A regular file's whole text (NUL-terminated, malloc'ed), at most UF_TRACE_MAX_BYTES: a FIFO
 * would block, a device (a symlink to /dev/zero) never end. O_NONBLOCK: opening a FIFO does
 * not wait for a writer (and changes nothing for a regular file). */
static int read_regular(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return uf_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    char *buf = NULL;
    size_t n = 0;
    if (fstat(fd, &st) != 0) {
        rc = uf_set_err(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = uf_set_err(err, errlen, "%s: not a regular file (%s): the doctor reads only "
                        "regular files", path, S_ISFIFO(st.st_mode) ? "a FIFO" :
                        S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
                        S_ISDIR(st.st_mode) ? "a folder" : "a socket or another special file");
    } else if ((uint64_t)st.st_size > UF_TRACE_MAX_BYTES) {
        rc = uf_set_err(err, errlen, "%s: %lld bytes, more than the reader's cap of "
                        UF_TRACE_MAX_BYTES_TEXT " (UF_TRACE_MAX_BYTES)", path,
                        (long long)st.st_size);
    } else if ((buf = malloc((size_t)st.st_size + 2)) == NULL) {
        rc = uf_set_err(err, errlen, "%s: out of memory", path);
    }
    /* up to one byte more than fstat said: a file that grows meanwhile is not read on */
    while (rc == 0 && n < (size_t)st.st_size + 1) {
        ssize_t got = read(fd, buf + n, (size_t)st.st_size + 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = uf_set_err(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        else if (got == 0)
            break;
        else
            n += (size_t)got;
    }
    close(fd);
    if (rc == 0 && n > (size_t)st.st_size)
        rc = uf_set_err(err, errlen, "%s: grew while it was read (a recording still running?)",
                        path);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* The PID in a trace file's name (underfed-trace.PID.txt, the last component of path): 1 with
 * *pid, 0 when the name is not a trace's, -1 when its PID is not a decimal number. */
static int pid_of_name(const char *path, long long *pid)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    if (!uf_trace_is_name(base))
        return 0;
    const char *p = base + strlen(UF_TRACE_PREFIX);
    size_t digits = strlen(p) - strlen(UF_TRACE_SUFFIX);
    if (digits == 0 || digits > 10)
        return -1;
    long long v = 0;
    for (size_t i = 0; i < digits; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    *pid = v;
    return 1;
}

int uf_trace_read(const char *path, uf_trace_file *f, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    memset(f, 0, sizeof *f);
    long long named = 0;
    int has_name = pid_of_name(path, &named);
    if (has_name < 0) {
        char shown[512];    /* a name anyone chose: sanitized before it reaches a terminal */
        uf_copy_str(shown, sizeof shown, path);
        sanitize(shown);
        return uf_set_err(err, errlen, "%s: not named for a process (%sPID%s, PID a decimal "
                          "number)", shown, UF_TRACE_PREFIX, UF_TRACE_SUFFIX);
    }
    if (read_regular(path, &text, &len, err, errlen) != 0)
        return -1;
    if (strlen(text) != len) {
        free(text);
        return uf_set_err(err, errlen, "%s: a NUL byte inside (not a text trace)", path);
    }
    if (uf_trace_parse(text, path, f, err, errlen) != 0)
        return -1;
    if (has_name && named != f->t.pid) {
        uf_set_err(err, errlen, "%s:2: pid %d, but the file is named for pid %lld", path,
                   f->t.pid, named);
        uf_trace_free(f);
        return -1;
    }
    return 0;
}

/* ---- what a file says of its recording ----------------------------------------------------- */

static double span_s(const uf_trace_info *info)
{
    return (double)(info->span_end_ns - info->span_start_ns) / 1e9;
}

void uf_trace_describe(uf_strbuf *b, const uf_trace_file *f)
{
    const uf_trace_info *i = &f->info;
    const uf_dtrace *t = &f->t;
    if (i->has_span)
        uf_sb_printf(b, "  recording: format %d, span %.3f s; CUPTI dropped %" PRIu64
                     " records; %zu API calls kept", i->version, span_s(i), t->dropped,
                     t->n_apis);
    else
        uf_sb_printf(b, "  recording: format %d (no span line: its records' span, %.3f s); "
                     "CUPTI dropped %" PRIu64 " records; %zu API calls kept", i->version,
                     span_s(i), t->dropped, t->n_apis);
    if (i->version < 4)
        uf_sb_puts(b, " (only the launching, event-record and may-drain calls: no calling "
                      "threads); no host sampler\n");
    if (i->version < 4)
        return;
    if (i->api_min_ns > 0)
        uf_sb_printf(b, ", %" PRIu64 " shorter than %" PRIu64 " ns of no kept kind left out "
                     "(%.3f ms in all, read as the host's own work)", i->api_left_out,
                     i->api_min_ns, (double)i->api_left_out_ns / 1e6);
    if (i->host_period_us > 0)
        uf_sb_printf(b, "; host sampler every %" PRIu32 " us: %zu samples of %" PRIu32
                     " thread%s (%" PRIu32 " more not followed, beyond its cap), %" PRIu64
                     " samples left out", i->host_period_us, t->n_host, i->host_threads,
                     i->host_threads == 1 ? "" : "s", i->host_threads_over_cap,
                     i->host_left_out);
    else
        uf_sb_puts(b, "; host sampler off");
    uf_sb_printf(b, "; record cap %" PRIu64 ", %" PRIu64 " records left out beyond it%s\n",
                 i->record_cap, i->records_left_out,
                 i->records_left_out > 0 ? " (the diagnosis covers the run's first part)" : "");
}

void uf_trace_describe_json(uf_strbuf *b, const uf_trace_file *f, const char *why_not)
{
    const uf_trace_info *i = &f->info;
    const uf_dtrace *t = &f->t;
    uf_sb_printf(b, "{\"pid\": %d, \"path\": ", t->pid);
    uf_sb_json_string(b, f->path);
    uf_sb_printf(b, ", \"format\": %d, \"span_start_ns\": %" PRIu64 ", \"span_end_ns\": %"
                 PRIu64 ", \"span_ms\": ", i->version, i->span_start_ns, i->span_end_ns);
    uf_sb_json_number(b, span_s(i) * 1e3, 6);   /* the doctor's 6 digits (doctor_report.c) */
    uf_sb_printf(b, ", \"dropped\": %" PRIu64 ", \"api_calls\": %zu, "
                 "\"api_min_ns\": %" PRIu64 ", \"api_left_out\": %" PRIu64
                 ", \"api_left_out_ns\": %" PRIu64 ", \"host_period_us\": %" PRIu32
                 ", \"host_threads\": %" PRIu32 ", \"host_threads_over_cap\": %" PRIu32
                 ", \"host_samples\": %zu, \"host_left_out\": %" PRIu64 ", \"record_cap\": %"
                 PRIu64 ", \"records_left_out\": %" PRIu64 ", \"diagnosed\": %s",
                 t->dropped, t->n_apis, i->api_min_ns, i->api_left_out, i->api_left_out_ns,
                 i->host_period_us, i->host_threads, i->host_threads_over_cap, t->n_host,
                 i->host_left_out, i->record_cap, i->records_left_out,
                 why_not == NULL ? "true" : "false");
    if (why_not != NULL) {
        uf_sb_puts(b, ", \"reason\": ");
        uf_sb_json_string(b, why_not);
    }
    uf_sb_puts(b, "}");
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
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
            rc = uf_set_err(err, errlen, "%s/%s: path too long", dir, names[i]);
        if (rc == 0)
            rc = uf_trace_read(path, &(*files)[i], err, errlen);
        if (rc == 0)
            (*n)++;
        for (int j = 0; rc == 0 && j < i; j++)     /* underfed-trace.042.txt and .42.txt */
            if ((*files)[j].t.pid == (*files)[i].t.pid)
                rc = uf_set_err(err, errlen, "%s: two files for pid %d (%s too): one process, "
                                "one file", path, (*files)[i].t.pid, (*files)[j].path);
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
    return uf_api_name_has_prefix(name, prefixes) || strstr(name, "Synchronize") != NULL ||
           uf_doctor_is_event_record(name) || uf_doctor_may_drain(name);
}

int uf_trace_api_submits(const char *name)
{
    static const char *const prefixes[] = {"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy",
                                           "cudaMemset", "cuLaunch", "cuGraphLaunch",
                                           "cuMemcpy", "cuMemsetD", NULL};
    return uf_api_name_has_prefix(name, prefixes);
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

/* Chrome trace-event JSON of traced runs (opens in ui.perfetto.dev and chrome://tracing):
 *
 *     {"traceEvents":[...],"displayTimeUnit":"ms"}
 *
 * Each section (a variant at a sweep point) is a process (pid = section index + 1) named by
 * its label. Device work goes on one thread per (device, stream), named "GPU d stream s"; host
 * API calls on one thread named "host API". Every record is a complete ("X") event with ts and
 * dur in µs (3 decimals, exact to the ns), relative to the earliest start over all sections.
 * Categories: "comm" for communication kernels, else "kernel", "memcpy", "memset"; API calls
 * are "api". args carry the correlation id, the graph id of graph kernel nodes and a kernel's
 * grid size in thread blocks ("blocks", when known). The file is built in memory and written
 * atomically. */
#include "trace_export.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"
#include "results.h"

enum { HOST_API_TID = 1, FIRST_STREAM_TID = 2 };


static void tb_event_begin(uf_strbuf *b)
{
    uf_sb_item(b, ",");
    uf_sb_puts(b, "\n{");
}

/* ns as µs with 3 decimals, exactly. */
static void tb_us(uf_strbuf *b, uint64_t ns)
{
    uf_sb_printf(b, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* ---- threads: one per (device, stream) -------------------------------------------------- */

typedef struct stream_key {
    uint32_t device_id, stream_id;
} stream_key;

static int cmp_stream_key(const void *pa, const void *pb)
{
    const stream_key *a = pa, *b = pb;
    if (a->device_id != b->device_id)
        return a->device_id < b->device_id ? -1 : 1;
    return (a->stream_id > b->stream_id) - (a->stream_id < b->stream_id);
}

/* The distinct (device, stream) pairs of a section, sorted. */
static stream_key *section_streams(const uf_trace_section *s, size_t *n_out)
{
    stream_key *keys = malloc((s->n_acts > 0 ? s->n_acts : 1) * sizeof *keys);
    if (keys == NULL)
        return NULL;
    for (size_t i = 0; i < s->n_acts; i++) {
        keys[i].device_id = s->acts[i].device_id;
        keys[i].stream_id = s->acts[i].stream_id;
    }
    qsort(keys, s->n_acts, sizeof *keys, cmp_stream_key);
    size_t n = 0;
    for (size_t i = 0; i < s->n_acts; i++)
        if (n == 0 || cmp_stream_key(&keys[n - 1], &keys[i]) != 0)
            keys[n++] = keys[i];
    *n_out = n;
    return keys;
}

static int stream_tid(const stream_key *keys, size_t n, uint32_t device_id, uint32_t stream_id)
{
    stream_key k = {device_id, stream_id};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_stream_key(&keys[mid], &k);
        if (c == 0)
            return FIRST_STREAM_TID + (int)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FIRST_STREAM_TID;    /* not reached: every activity's pair is in keys */
}

/* ---- events ----------------------------------------------------------------------------- */

static void metadata_event(uf_strbuf *b, const char *what, int pid, int tid, const char *name,
                           int sort_index)
{
    tb_event_begin(b);
    uf_sb_printf(b, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", what,
              pid, tid);
    uf_sb_json_string(b, name);
    uf_sb_puts(b, "}}");
    const char *sort_what = strcmp(what, "process_name") == 0 ? "process_sort_index"
                                                              : "thread_sort_index";
    tb_event_begin(b);
    uf_sb_printf(b, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
              sort_what, pid, tid, sort_index);
}

static void complete_event(uf_strbuf *b, const char *name, const char *cat, int pid, int tid,
                           uint64_t start_ns, uint64_t end_ns, uint64_t t0_ns)
{
    tb_event_begin(b);
    uf_sb_puts(b, "\"name\":");
    uf_sb_json_string(b, name);
    uf_sb_printf(b, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", cat, pid, tid);
    tb_us(b, start_ns >= t0_ns ? start_ns - t0_ns : 0);
    uf_sb_puts(b, ",\"dur\":");
    tb_us(b, end_ns > start_ns ? end_ns - start_ns : 0);
}

static const char *activity_category(const uf_activity *a)
{
    if (a->kind == UF_ACT_KERNEL)
        return a->is_comm ? "comm" : "kernel";
    return a->kind == UF_ACT_MEMCPY ? "memcpy" : "memset";
}

static int write_section(uf_strbuf *b, const uf_trace_section *s, int index, uint64_t t0_ns)
{
    int pid = index + 1;
    metadata_event(b, "process_name", pid, 0, s->label != NULL ? s->label : "", index);
    if (s->n_apis > 0)
        metadata_event(b, "thread_name", pid, HOST_API_TID, "host API", 0);
    size_t n_streams = 0;
    stream_key *streams = section_streams(s, &n_streams);
    if (streams == NULL)
        return -1;
    for (size_t i = 0; i < n_streams; i++) {
        char name[64];
        snprintf(name, sizeof name, "GPU %u stream %u", streams[i].device_id,
                 streams[i].stream_id);
        metadata_event(b, "thread_name", pid, FIRST_STREAM_TID + (int)i, name, 1 + (int)i);
    }
    for (size_t i = 0; i < s->n_apis; i++) {
        const uf_api_call *c = &s->apis[i];
        complete_event(b, c->name != NULL ? c->name : "api", "api", pid, HOST_API_TID,
                       c->start_ns, c->end_ns, t0_ns);
        uf_sb_printf(b, ",\"args\":{\"correlation\":%u,\"api\":\"%s\"}}", c->correlation_id,
                  c->is_runtime ? "runtime" : "driver");
    }
    for (size_t i = 0; i < s->n_acts; i++) {
        const uf_activity *a = &s->acts[i];
        const char *cat = activity_category(a);
        int tid = stream_tid(streams, n_streams, a->device_id, a->stream_id);
        complete_event(b, a->name != NULL ? a->name : cat, cat, pid, tid, a->start_ns,
                       a->end_ns, t0_ns);
        uf_sb_printf(b, ",\"args\":{\"correlation\":%u", a->correlation_id);
        if (a->graph_id != 0)
            uf_sb_printf(b, ",\"graph\":%u", a->graph_id);
        if (a->kind == UF_ACT_KERNEL && a->blocks != 0)
            uf_sb_printf(b, ",\"blocks\":%u", a->blocks);
        uf_sb_puts(b, "}}");
    }
    free(streams);
    return 0;
}

/* The earliest start of every record of every section (0 when there is none). */
static uint64_t earliest_start(const uf_trace_section *sections, int n_sections)
{
    uint64_t t0 = UINT64_MAX;
    for (int k = 0; k < n_sections; k++) {
        for (size_t i = 0; i < sections[k].n_acts; i++)
            if (sections[k].acts[i].start_ns < t0)
                t0 = sections[k].acts[i].start_ns;
        for (size_t i = 0; i < sections[k].n_apis; i++)
            if (sections[k].apis[i].start_ns < t0)
                t0 = sections[k].apis[i].start_ns;
    }
    return t0 == UINT64_MAX ? 0 : t0;
}

int uf_trace_export_chrome(const char *path, const uf_trace_section *sections, int n_sections,
                           char *err, size_t errlen)
{
    uf_strbuf b = {0};
    uint64_t t0_ns = earliest_start(sections, n_sections);
    uf_sb_puts(&b, "{\"traceEvents\":[");
    int rc = 0;
    for (int k = 0; k < n_sections && rc == 0; k++)
        rc = write_section(&b, &sections[k], k, t0_ns);
    uf_sb_puts(&b, "\n],\"displayTimeUnit\":\"ms\"}\n");
    if (rc != 0) {
        free(b.data);
        return uf_set_err(err, errlen, "%s: out of memory while formatting the trace", path);
    }
    return uf_sb_commit(&b, path, err, errlen);
}

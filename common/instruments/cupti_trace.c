/* The trace pass's instrument: CUPTI Activity records (kernels, memcpys, memsets, runtime and
 * driver API calls, synchronizations) converted to the plain uf_activity / uf_api_call /
 * uf_sync_record records of timeline.h by cupti_records.h, the recorder's converter too.
 *
 * CUPTI hands filled buffers to a completion callback that may run on its own worker thread,
 * so the records live in this file's one global state, guarded by a mutex: global mutable
 * state only where CUPTI needs it (docs/design.md, "Code"). Names (kernel and API names) are
 * interned: each distinct string is stored once, so the pointers in the records stay valid
 * until uf_trace_release, across any number of begin/end pairs. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cupti_dl.h"
#include "cupti_records.h"
#include "errors.h"
#include "instruments.h"
#include "string_intern.h"

/* Host buffer handed to CUPTI per request (8-byte aligned, as CUPTI requires). */
#define TRACE_HOST_BUFFER_BYTES ((size_t)8 << 20)
/* Device buffer per allocation: the default (~3.2 MB, ~100k records) would drop records in a
 * pass of 100k launches; 32 MiB holds about a million. */
#define TRACE_DEVICE_BUFFER_BYTES ((size_t)32 << 20)

/* What a failed CUPTI call of this file is part of (UF_CUPTI_OR_GOTO, errors.h). */
#define CUPTI_WHAT "CUPTI activity"

/* The kinds the trace pass enables. CONCURRENT_KERNEL, never KERNEL (which serializes
 * kernels). */
static const CUpti_ActivityKind trace_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
#define N_TRACE_KINDS (sizeof trace_kinds / sizeof trace_kinds[0])

static struct {
    pthread_mutex_t lock;
    int registered;             /* buffer callbacks registered (once per process) */
    int collecting;             /* between begin and end: records are kept */
    uf_activity *acts;
    size_t n_acts, cap_acts;
    uf_api_call *apis;
    size_t n_apis, cap_apis;
    uf_sync_record *syncs;
    size_t n_syncs, cap_syncs;
    size_t dropped;             /* dropped by CUPTI, plus records lost to a failed allocation */
    uf_name_table names;
    uf_cupti_api_names api_names;   /* API names by callback id, each looked up once */
} g_trace = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- records --------------------------------------------------------------------------- */

/* The array with room for count + 1 elements (capacity doubles), or NULL when out of memory
 * (the old array is then kept). */
static void *grow_for_one(void *array, size_t *capacity, size_t count, size_t elem_bytes)
{
    if (count < *capacity)
        return array;
    size_t new_capacity = *capacity ? 2 * *capacity : 4096;
    if (new_capacity > SIZE_MAX / elem_bytes)
        return NULL;
    void *p = realloc(array, new_capacity * elem_bytes);
    if (p)
        *capacity = new_capacity;
    return p;
}

/* A new activity slot, or NULL (counted as dropped) when out of memory. */
static uf_activity *push_activity(void)
{
    uf_activity *acts = grow_for_one(g_trace.acts, &g_trace.cap_acts, g_trace.n_acts,
                                     sizeof *acts);
    if (!acts) {
        g_trace.dropped++;
        return NULL;
    }
    g_trace.acts = acts;
    return &acts[g_trace.n_acts++];
}

static void store_activity(const CUpti_Activity *r)
{
    uf_activity *a = push_activity();
    if (a)
        uf_cupti_activity(r, &g_trace.names, a);
}

static void store_api(const CUpti_ActivityAPI *r)
{
    uf_api_call *apis = grow_for_one(g_trace.apis, &g_trace.cap_apis, g_trace.n_apis,
                                     sizeof *apis);
    if (!apis) {
        g_trace.dropped++;
        return;
    }
    g_trace.apis = apis;
    const char *name = uf_cupti_api_name(&g_trace.api_names, &g_trace.names,
                                         CUPTI(cuptiGetCallbackName),
                                         r->kind == CUPTI_ACTIVITY_KIND_RUNTIME, r->cbid);
    uf_cupti_api_call(r, name, 0, &apis[g_trace.n_apis++]);
}

/* A host thread's wait (stream, context or event synchronize; a stream waiting on an event). */
static void store_sync(const CUpti_ActivitySynchronization2 *r)
{
    uf_sync_record *syncs = grow_for_one(g_trace.syncs, &g_trace.cap_syncs, g_trace.n_syncs,
                                         sizeof *syncs);
    if (!syncs) {
        g_trace.dropped++;
        return;
    }
    g_trace.syncs = syncs;
    uf_cupti_sync(r, &syncs[g_trace.n_syncs++]);
}

/* Convert one record (caller holds the lock). Other kinds are ignored. */
static void store_record(const CUpti_Activity *r)
{
    switch (uf_cupti_class_of(r)) {
    case UF_CUPTI_ACTIVITY:
        store_activity(r);
        break;
    case UF_CUPTI_API:
        store_api((const CUpti_ActivityAPI *)r);
        break;
    case UF_CUPTI_SYNC:
        store_sync((const CUpti_ActivitySynchronization2 *)r);
        break;
    default:
        break;
    }
}

/* ---- CUPTI buffer callbacks ------------------------------------------------------------ */

/* A zeroed buffer (calloc: 16-byte aligned, CUPTI needs 8; its pages are the kernel's zero
 * pages until written, so nothing is touched here): CUPTI is told the buffers come zeroed
 * (trace_register), else it zeroes each itself on the thread whose call asked for it, in
 * the critical path (cupti_activity.h, CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), and
 * a thread's first call in a trace pass stalls for 8 MiB of stores (issue #29: a pipeline's
 * eight workers, each with its own buffer, in one 20-step pass). */
static void CUPTIAPI on_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = calloc(1, TRACE_HOST_BUFFER_BYTES); /* NULL: CUPTI drops records, counts them */
    *buffer = p;
    *size = p ? TRACE_HOST_BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

/* May run on CUPTI's worker thread. Records that arrive outside begin..end are discarded. */
static void CUPTIAPI on_buffer_complete(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                        size_t size, size_t valid_bytes)
{
    (void)size;
    pthread_mutex_lock(&g_trace.lock);
    CUpti_Activity *record = NULL;
    while (valid_bytes > 0 &&
           CUPTI(cuptiActivityGetNextRecord)(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
        if (g_trace.collecting)
            store_record(record);
    size_t dropped = 0;
    if (CUPTI(cuptiActivityGetNumDroppedRecords)(ctx, stream_id, &dropped) == CUPTI_SUCCESS &&
        g_trace.collecting)
        g_trace.dropped += dropped;
    pthread_mutex_unlock(&g_trace.lock);
    free(buffer);
}

/* Register the buffer callbacks and enlarge the device buffer, once per process. */
static int trace_register(char *reason, size_t reason_len)
{
    int rc = UF_OK;
    if (g_trace.registered)
        return UF_OK;
    size_t device_buffer_bytes = TRACE_DEVICE_BUFFER_BYTES;
    size_t value_bytes = sizeof device_buffer_bytes;
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT,
                     CUPTI(cuptiActivitySetAttribute)(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
                                                      &value_bytes, &device_buffer_bytes),
                     reason, reason_len, out);
    uint8_t zeroed = 1;         /* on_buffer_request's buffers come zeroed */
    size_t zeroed_bytes = sizeof zeroed;
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT,
                     CUPTI(cuptiActivitySetAttribute)(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                                                      &zeroed_bytes, &zeroed),
                     reason, reason_len, out);
    UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT,
                     CUPTI(cuptiActivityRegisterCallbacks)(on_buffer_request, on_buffer_complete),
                     reason, reason_len, out);
    g_trace.registered = 1;
out:
    return rc;
}

/* ---- the interface --------------------------------------------------------------------- */

/* UF_OK once uf_cupti_load succeeded; else UF_SKIP with the reason. */
static int cupti_loaded(char *reason, size_t reason_len)
{
    if (uf_cupti_api_get())
        return UF_OK;
    if (reason && reason_len)
        snprintf(reason, reason_len, "CUPTI activity unavailable: libcupti not loaded");
    return UF_SKIP;
}

uint64_t uf_cupti_now_ns(void)
{
    uint64_t t_ns = 0;
    if (!uf_cupti_api_get() || CUPTI(cuptiGetTimestamp)(&t_ns) != CUPTI_SUCCESS)
        return 0;
    return t_ns;
}

int uf_trace_begin(char *reason, size_t reason_len)
{
    int rc = UF_OK;
    size_t n_enabled = 0;
    if (reason && reason_len)
        reason[0] = '\0';
    UF_STATUS_OR_GOTO(rc, cupti_loaded(reason, reason_len), out);
    UF_STATUS_OR_GOTO(rc, trace_register(reason, reason_len), out);

    pthread_mutex_lock(&g_trace.lock);
    g_trace.n_acts = 0;
    g_trace.n_apis = 0;
    g_trace.n_syncs = 0;
    g_trace.dropped = 0;
    g_trace.collecting = 1;
    pthread_mutex_unlock(&g_trace.lock);

    for (n_enabled = 0; n_enabled < N_TRACE_KINDS; n_enabled++)
        UF_CUPTI_OR_GOTO(rc, CUPTI_WHAT, CUPTI(cuptiActivityEnable)(trace_kinds[n_enabled]), reason,
                         reason_len, out_disable);
    return UF_OK;

out_disable:
    while (n_enabled > 0)
        CUPTI(cuptiActivityDisable)(trace_kinds[--n_enabled]);
    pthread_mutex_lock(&g_trace.lock);
    g_trace.collecting = 0;
    pthread_mutex_unlock(&g_trace.lock);
out:
    return rc;
}

/* Keep the first failure of a sequence that must run to its end. */
static void keep_first_failure(CUptiResult r, const char *expr, CUptiResult *first,
                               const char **first_expr)
{
    if (r != CUPTI_SUCCESS && *first == CUPTI_SUCCESS) {
        *first = r;
        *first_expr = expr;
    }
}

/* Flush, disable every kind, flush again (records emitted in between), and add the global
 * queue's dropped count. Runs every step even after a failure, so that tracing ends off. */
int uf_trace_end(char *reason, size_t reason_len)
{
    CUptiResult first = CUPTI_SUCCESS;
    const char *first_expr = NULL;
    if (reason && reason_len)
        reason[0] = '\0';
    if (cupti_loaded(reason, reason_len) != UF_OK)
        return UF_SKIP;

    keep_first_failure(CUPTI(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                       "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)", &first,
                       &first_expr);
    for (size_t i = 0; i < N_TRACE_KINDS; i++)
        keep_first_failure(CUPTI(cuptiActivityDisable)(trace_kinds[i]),
                           "cuptiActivityDisable(trace_kinds[i])", &first, &first_expr);
    keep_first_failure(CUPTI(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                       "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)", &first,
                       &first_expr);

    /* Never call CUPTI while holding the lock: CUPTI may hold its own while it calls
     * on_buffer_complete, which takes ours. */
    size_t dropped = 0;
    if (CUPTI(cuptiActivityGetNumDroppedRecords)(NULL, 0, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    pthread_mutex_lock(&g_trace.lock);
    g_trace.dropped += dropped;
    g_trace.collecting = 0;
    pthread_mutex_unlock(&g_trace.lock);

    if (first == CUPTI_SUCCESS)
        return UF_OK;
    return uf_cupti_status((int)first, "CUPTI activity", first_expr, __FILE__, __LINE__,
                           reason, reason_len);
}

void uf_trace_records(const uf_activity **acts, size_t *n_acts, const uf_api_call **apis,
                      size_t *n_apis, const uf_sync_record **syncs, size_t *n_syncs,
                      size_t *dropped)
{
    pthread_mutex_lock(&g_trace.lock);
    *acts = g_trace.acts;
    *n_acts = g_trace.n_acts;
    *apis = g_trace.apis;
    *n_apis = g_trace.n_apis;
    *syncs = g_trace.syncs;
    *n_syncs = g_trace.n_syncs;
    *dropped = g_trace.dropped;
    pthread_mutex_unlock(&g_trace.lock);
}

void uf_trace_release(void)
{
    pthread_mutex_lock(&g_trace.lock);
    g_trace.collecting = 0;
    free(g_trace.acts);
    free(g_trace.apis);
    free(g_trace.syncs);
    g_trace.acts = NULL;
    g_trace.apis = NULL;
    g_trace.syncs = NULL;
    g_trace.n_acts = g_trace.cap_acts = 0;
    g_trace.n_apis = g_trace.cap_apis = 0;
    g_trace.n_syncs = g_trace.cap_syncs = 0;
    g_trace.dropped = 0;
    uf_names_free(&g_trace.names);
    memset(&g_trace.api_names, 0, sizeof g_trace.api_names);
    pthread_mutex_unlock(&g_trace.lock);
}

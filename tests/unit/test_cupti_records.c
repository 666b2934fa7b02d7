/* The CUPTI record converter (cupti_records.h) of the trace pass and the doctor's recorder, on
 * hand-made records: CUPTI's headers only, no library, no GPU. Each field a record keeps, and
 * the decisions: which kinds become what, a copy's fields, the sync kinds, the API names. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cupti_records.h"

static const CUpti_Activity *as_record(const void *p)
{
    return p;
}

Test(cupti_records, classes)
{
    static const struct { CUpti_ActivityKind kind; uf_cupti_class cls; } cases[] = {
        {CUPTI_ACTIVITY_KIND_KERNEL, UF_CUPTI_ACTIVITY},
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, UF_CUPTI_ACTIVITY},
        {CUPTI_ACTIVITY_KIND_MEMCPY, UF_CUPTI_ACTIVITY},
        {CUPTI_ACTIVITY_KIND_MEMSET, UF_CUPTI_ACTIVITY},
        {CUPTI_ACTIVITY_KIND_RUNTIME, UF_CUPTI_API},
        {CUPTI_ACTIVITY_KIND_DRIVER, UF_CUPTI_API},
        {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, UF_CUPTI_SYNC},
        {CUPTI_ACTIVITY_KIND_MARKER, UF_CUPTI_OTHER},
        {CUPTI_ACTIVITY_KIND_DEVICE, UF_CUPTI_OTHER},
        {CUPTI_ACTIVITY_KIND_MEMCPY2, UF_CUPTI_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUpti_Activity r = {.kind = cases[i].kind};
        cr_expect_eq(uf_cupti_class_of(&r), cases[i].cls, "kind %d", (int)cases[i].kind);
    }
    cr_expect(uf_cupti_is_kernel(CUPTI_ACTIVITY_KIND_KERNEL));
    cr_expect(uf_cupti_is_kernel(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    cr_expect(!uf_cupti_is_kernel(CUPTI_ACTIVITY_KIND_MEMCPY));
}

/* Both kernel kinds, every field kept; the name is the table's copy. */
Test(cupti_records, kernel)
{
    uf_name_table names = {0};
    char name[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_KERNEL};
    for (int i = 0; i < 2; i++) {
        CUpti_ActivityKernel10 k = {.kind = kinds[i], .start = 1000, .end = 2500,
                                    .correlationId = 7, .deviceId = 1, .streamId = 13,
                                    .graphId = 5, .gridX = 4, .gridY = 3, .gridZ = 2,
                                    .name = name};
        uf_activity a;
        memset(&a, 0xab, sizeof a);
        uf_cupti_activity(as_record(&k), &names, &a);
        cr_expect_eq(a.kind, UF_ACT_KERNEL);
        cr_expect_eq(a.start_ns, 1000);
        cr_expect_eq(a.end_ns, 2500);
        cr_expect_eq(a.correlation_id, 7);
        cr_expect_eq(a.device_id, 1);
        cr_expect_eq(a.stream_id, 13);
        cr_expect_eq(a.graph_id, 5);
        cr_expect_eq(a.blocks, 24);
        cr_expect_eq(a.is_comm, 1);
        cr_expect_eq(a.src_mem, 0);
        cr_expect_eq(a.dst_mem, 0);
        cr_expect_eq(a.bytes, 0);
        cr_expect_str_eq(a.name, name);
        cr_expect(a.name != name, "interned: CUPTI's buffer does not outlive the record");
        uint64_t start = 0, end = 0;
        cr_expect(uf_cupti_times(as_record(&k), &start, &end));
        cr_expect(start == 1000 && end == 2500);
    }
    CUpti_ActivityKernel10 k = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .gridX = 0,
                                .gridY = 1, .gridZ = 1, .name = "gemm"};
    uf_activity a;
    uf_cupti_activity(as_record(&k), &names, &a);
    cr_expect_eq(a.blocks, 0, "a grid dimension of 0: unknown");
    cr_expect_eq(a.is_comm, 0);
    uf_names_free(&names);
}

/* A copy keeps its bytes, graph id, memory kinds and a name for its direction. */
Test(cupti_records, memcpy)
{
    static const struct { uint8_t copy_kind; const char *name; } kinds[] = {
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "memcpy HtoD"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "memcpy DtoH"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, "memcpy DtoD"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, "memcpy HtoH"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, "memcpy PtoP"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, "memcpy"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, "memcpy"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        CUpti_ActivityMemcpy6 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
                                   .copyKind = kinds[i].copy_kind,
                                   .srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                                   .dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                   .bytes = 1ull << 40, .start = 10, .end = 20,
                                   .deviceId = 2, .streamId = 3, .correlationId = 4,
                                   .graphId = 6};
        uf_activity a;
        memset(&a, 0xab, sizeof a);
        uf_cupti_activity(as_record(&m), NULL, &a);
        cr_expect_eq(a.kind, UF_ACT_MEMCPY);
        cr_expect(a.start_ns == 10 && a.end_ns == 20);
        cr_expect(a.correlation_id == 4 && a.device_id == 2 && a.stream_id == 3);
        cr_expect_eq(a.graph_id, 6);
        cr_expect_eq(a.bytes, 1ull << 40);
        cr_expect_eq(a.src_mem, UF_MEM_PAGEABLE);
        cr_expect_eq(a.dst_mem, UF_MEM_DEVICE);
        cr_expect(uf_copy_pageable(&a));
        cr_expect_eq(a.blocks, 0);
        cr_expect_eq(a.is_comm, 0);
        cr_expect_str_eq(a.name, kinds[i].name);
    }
}

Test(cupti_records, memset)
{
    CUpti_ActivityMemset4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMSET, .bytes = 4096, .start = 5,
                               .end = 9, .deviceId = 0, .streamId = 7, .correlationId = 8,
                               .graphId = 3};
    uf_activity a;
    memset(&a, 0xab, sizeof a);
    uf_cupti_activity(as_record(&m), NULL, &a);
    cr_expect_eq(a.kind, UF_ACT_MEMSET);
    cr_expect(a.start_ns == 5 && a.end_ns == 9 && a.correlation_id == 8 && a.stream_id == 7);
    cr_expect_eq(a.device_id, 0);
    cr_expect_eq(a.graph_id, 3);
    cr_expect_eq(a.bytes, 4096);
    cr_expect(a.src_mem == 0 && a.dst_mem == 0 && a.blocks == 0 && a.is_comm == 0);
    cr_expect_str_eq(a.name, "memset");
}

Test(cupti_records, api_call)
{
    CUpti_ActivityAPI r = {.kind = CUPTI_ACTIVITY_KIND_DRIVER, .start = 100, .end = 150,
                           .correlationId = 9, .threadId = 4242};
    uf_api_call c;
    memset(&c, 0xab, sizeof c);
    uf_cupti_api_call(&r, "cuLaunchKernel", 4242, &c);
    cr_expect(c.start_ns == 100 && c.end_ns == 150 && c.correlation_id == 9);
    cr_expect_eq(c.is_runtime, 0);
    cr_expect_eq(c.thread_id, 4242);
    cr_expect_str_eq(c.name, "cuLaunchKernel");
    r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    uf_cupti_api_call(&r, NULL, 0, &c);
    cr_expect_eq(c.is_runtime, 1);
    cr_expect_eq(c.thread_id, 0, "the trace pass's calls: thread unknown");
    cr_expect_null(c.name);
    uint64_t start = 1, end = 2;
    cr_expect(!uf_cupti_times(as_record(&r), &start, &end), "an API call has no device time");
    cr_expect(start == 1 && end == 2);
}

/* The four host waits keep their CUPTI type; 0 and any later type are OTHER. */
Test(cupti_records, sync)
{
    static const struct { uint32_t type; uint8_t kind; } cases[] = {
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, UF_SYNC_OTHER},
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, UF_SYNC_EVENT},
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, UF_SYNC_STREAM_WAIT},
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, UF_SYNC_STREAM},
        {CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, UF_SYNC_CONTEXT},
        {5, UF_SYNC_OTHER}, {0x7ffffffe, UF_SYNC_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUpti_ActivitySynchronization2 r = {
            .kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
            .type = (CUpti_ActivitySynchronizationType)cases[i].type, .start = 30, .end = 0,
            .correlationId = 2, .streamId = 11};
        uf_sync_record y;
        memset(&y, 0xab, sizeof y);
        uf_cupti_sync(&r, &y);
        cr_expect_eq(y.kind, cases[i].kind, "type %u", cases[i].type);
        cr_expect(y.start_ns == 30 && y.end_ns == 0 && y.correlation_id == 2 && y.stream_id == 11);
        uint64_t start, end;
        cr_expect(uf_cupti_times(as_record(&r), &start, &end) && start == 30 && end == 0,
                  "an untimed end is given as CUPTI wrote it: the recorder leaves it out");
    }
}

static int lookups;

static CUptiResult fake_names(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    lookups++;
    if (cbid == 99)
        return CUPTI_ERROR_INVALID_PARAMETER;
    static char text[64];
    snprintf(text, sizeof text, "%s_%u", domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "rt" : "drv",
             cbid);
    *name = text;
    return CUPTI_SUCCESS;
}

/* Each id looked up once, per API; a failed lookup gives NULL and is asked again. */
Test(cupti_records, api_names)
{
    static uf_cupti_api_names cache;    /* zeroed */
    uf_name_table names = {0};
    lookups = 0;
    const char *rt = uf_cupti_api_name(&cache, &names, fake_names, 1, 7);
    const char *drv = uf_cupti_api_name(&cache, &names, fake_names, 0, 7);
    cr_expect_str_eq(rt, "rt_7");
    cr_expect_str_eq(drv, "drv_7");
    cr_expect(uf_cupti_api_name(&cache, &names, fake_names, 1, 7) == rt);
    cr_expect(uf_cupti_api_name(&cache, &names, fake_names, 0, 7) == drv);
    cr_expect_eq(lookups, 2, "each id once per API");
    cr_expect_null(uf_cupti_api_name(&cache, &names, fake_names, 1, 99));
    cr_expect_null(uf_cupti_api_name(&cache, &names, fake_names, 1, 99));
    cr_expect_eq(lookups, 4, "a failed lookup is not kept");
    const CUpti_CallbackId big = CUPTI_RUNTIME_TRACE_CBID_SIZE + 5;
    char want[64];
    snprintf(want, sizeof want, "rt_%u", (unsigned)big);
    cr_expect_str_eq(uf_cupti_api_name(&cache, &names, fake_names, 1, big), want,
                     "an id beyond the table: named, not kept");
    cr_expect_str_eq(uf_cupti_api_name(&cache, &names, fake_names, 1, big), want);
    cr_expect_eq(lookups, 6);
    uf_names_free(&names);
}

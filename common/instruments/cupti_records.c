/* CUPTI activity records as timeline.h's records: the one converter (cupti_records.h says
 * what each record keeps). */
#include "cupti_records.h"

#include <stddef.h>

uf_cupti_class uf_cupti_class_of(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return UF_CUPTI_ACTIVITY;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return UF_CUPTI_API;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return UF_CUPTI_SYNC;
    default:
        return UF_CUPTI_OTHER;
    }
}

int uf_cupti_is_kernel(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

int uf_cupti_times(const CUpti_Activity *r, uint64_t *start_ns, uint64_t *end_ns)
{
    const void *p = r;
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        *start_ns = ((const CUpti_ActivityKernel10 *)p)->start;
        *end_ns = ((const CUpti_ActivityKernel10 *)p)->end;
        return 1;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        *start_ns = ((const CUpti_ActivityMemcpy6 *)p)->start;
        *end_ns = ((const CUpti_ActivityMemcpy6 *)p)->end;
        return 1;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        *start_ns = ((const CUpti_ActivityMemset4 *)p)->start;
        *end_ns = ((const CUpti_ActivityMemset4 *)p)->end;
        return 1;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        *start_ns = ((const CUpti_ActivitySynchronization2 *)p)->start;
        *end_ns = ((const CUpti_ActivitySynchronization2 *)p)->end;
        return 1;
    default:
        return 0;
    }
}

const char *uf_cupti_memcpy_name(uint8_t copy_kind)
{
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
    }
}

/* uf_sync_kind and uf_mem_kind have the values of CUPTI's enums (timeline.h). */
#define SAME_VALUE(ours, cuptis) _Static_assert((int)(ours) == (int)(cuptis), #ours " is " #cuptis)
SAME_VALUE(UF_SYNC_EVENT, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
SAME_VALUE(UF_SYNC_STREAM_WAIT, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT);
SAME_VALUE(UF_SYNC_STREAM, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
SAME_VALUE(UF_SYNC_CONTEXT, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
SAME_VALUE(UF_MEM_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
SAME_VALUE(UF_MEM_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
SAME_VALUE(UF_MEM_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
SAME_VALUE(UF_MEM_ARRAY, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY);
SAME_VALUE(UF_MEM_MANAGED, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
SAME_VALUE(UF_MEM_DEVICE_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC);
SAME_VALUE(UF_MEM_MANAGED_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC);
#undef SAME_VALUE

uint8_t uf_cupti_sync_kind(uint32_t type)
{
    return type >= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE &&
                   type <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
               ? (uint8_t)type
               : UF_SYNC_OTHER;
}

void uf_cupti_activity(const CUpti_Activity *r, uf_name_table *names, uf_activity *a)
{
    const void *p = r;
    if (uf_cupti_is_kernel(r->kind)) {
        const CUpti_ActivityKernel10 *k = p;
        const char *name = uf_intern(names, k->name);
        *a = (uf_activity){.start_ns = k->start, .end_ns = k->end,
                           .correlation_id = k->correlationId, .device_id = k->deviceId,
                           .stream_id = k->streamId, .graph_id = k->graphId,
                           .kind = UF_ACT_KERNEL, .is_comm = (uint8_t)uf_is_comm_kernel(name),
                           .blocks = uf_grid_blocks(k->gridX, k->gridY, k->gridZ),
                           .name = name};
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const CUpti_ActivityMemcpy6 *m = p;
        *a = (uf_activity){.start_ns = m->start, .end_ns = m->end,
                           .correlation_id = m->correlationId, .device_id = m->deviceId,
                           .stream_id = m->streamId, .graph_id = m->graphId,
                           .kind = UF_ACT_MEMCPY, .src_mem = m->srcKind, .dst_mem = m->dstKind,
                           .name = uf_cupti_memcpy_name(m->copyKind), .bytes = m->bytes};
    } else {
        const CUpti_ActivityMemset4 *m = p;
        *a = (uf_activity){.start_ns = m->start, .end_ns = m->end,
                           .correlation_id = m->correlationId, .device_id = m->deviceId,
                           .stream_id = m->streamId, .graph_id = m->graphId,
                           .kind = UF_ACT_MEMSET, .name = "memset", .bytes = m->bytes};
    }
}

void uf_cupti_api_call(const CUpti_ActivityAPI *r, const char *name, uint32_t thread_id,
                       uf_api_call *c)
{
    *c = (uf_api_call){.start_ns = r->start, .end_ns = r->end,
                       .correlation_id = r->correlationId,
                       .is_runtime = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME,
                       .thread_id = thread_id, .name = name};
}

void uf_cupti_sync(const CUpti_ActivitySynchronization2 *r, uf_sync_record *y)
{
    *y = (uf_sync_record){.start_ns = r->start, .end_ns = r->end,
                          .correlation_id = r->correlationId, .stream_id = r->streamId,
                          .kind = uf_cupti_sync_kind((uint32_t)r->type)};
}

const char *uf_cupti_api_name(uf_cupti_api_names *cache, uf_name_table *names,
                              uf_cupti_name_fn lookup, int is_runtime, CUpti_CallbackId cbid)
{
    const char **ids = is_runtime ? cache->runtime : cache->driver;
    size_t n = is_runtime ? CUPTI_RUNTIME_TRACE_CBID_SIZE : CUPTI_DRIVER_TRACE_CBID_SIZE;
    if (cbid < n && ids[cbid] != NULL)
        return ids[cbid];
    const char *name = NULL;
    if (lookup(is_runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
               &name) != CUPTI_SUCCESS)
        return NULL;
    name = uf_intern(names, name);
    if (cbid < n)
        ids[cbid] = name;
    return name;
}

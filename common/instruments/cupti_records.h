/* CUPTI activity records as the plain records of timeline.h: the one converter of the trace
 * pass (cupti_trace.c) and the doctor's recorder (recorder/underfed_inject.c), so that both keep
 * the same fields of each record. What a record keeps:
 *   kernel (KERNEL or CONCURRENT_KERNEL: one record layout): times, correlation, device,
 *     stream, graph id, blocks of its grid, its name (interned), whether it is NCCL's;
 *   memcpy: times, correlation, device, stream, graph id, bytes, the memory kinds of source
 *     and destination, and a name for its direction ("memcpy HtoD", a literal);
 *   memset: times, correlation, device, stream, graph id, bytes, the name "memset";
 *   runtime or driver API call: times, correlation, which API, the caller's thread id (given:
 *     the recorder's OS ids, 0 in the trace pass), its name (given: uf_cupti_api_name);
 *   synchronization: times, correlation, stream, its uf_sync_kind (OTHER for a type CUPTI
 *     added later).
 * Needs the CUPTI headers (cupti_activity.h, the callback id headers); plain functions, no
 * CUPTI call but the name lookup the caller passes in. */
#ifndef UF_CUPTI_RECORDS_H
#define UF_CUPTI_RECORDS_H

#include <stdint.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "string_intern.h"
#include "timeline.h"

/* What a record becomes: an activity (kernel, memcpy, memset), an API call, a host sync, or
 * none of these (markers, devices, kinds neither keeps: the caller's to handle or skip). */
typedef enum {
    UF_CUPTI_OTHER = 0, UF_CUPTI_ACTIVITY, UF_CUPTI_API, UF_CUPTI_SYNC
} uf_cupti_class;

uf_cupti_class uf_cupti_class_of(const CUpti_Activity *r);

/* A kernel record's kind (KERNEL or CONCURRENT_KERNEL)? */
int uf_cupti_is_kernel(CUpti_ActivityKind kind);

/* The times of an activity or sync record into *start_ns, *end_ns: 1; 0 (untouched) for any
 * other kind. CUPTI writes 0 where it could not time a record. */
int uf_cupti_times(const CUpti_Activity *r, uint64_t *start_ns, uint64_t *end_ns);

/* An activity record (uf_cupti_class_of UF_CUPTI_ACTIVITY) into *a, every field written. A
 * kernel's name is interned into names (NULL when out of memory). */
void uf_cupti_activity(const CUpti_Activity *r, uf_name_table *names, uf_activity *a);

/* An API record into *c: name from uf_cupti_api_name, thread_id 0 when unknown. */
void uf_cupti_api_call(const CUpti_ActivityAPI *r, const char *name, uint32_t thread_id,
                       uf_api_call *c);

/* A synchronization record into *y. */
void uf_cupti_sync(const CUpti_ActivitySynchronization2 *r, uf_sync_record *y);

/* The direction name of a memcpy of CUpti_ActivityMemcpyKind copy_kind (a literal). */
const char *uf_cupti_memcpy_name(uint8_t copy_kind);

/* The uf_sync_kind of a CUpti_ActivitySynchronizationType (OTHER when not one of its four). */
uint8_t uf_cupti_sync_kind(uint32_t type);

/* API names by callback id, so that each id is looked up and interned once per id, not once
 * per record (a framework makes several runtime calls per launch). Zero-initialized. */
typedef struct uf_cupti_api_names {
    const char *runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
    const char *driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
} uf_cupti_api_names;

/* cuptiGetCallbackName, called directly (the recorder) or through the loaded table (the
 * harness). */
typedef CUptiResult (*uf_cupti_name_fn)(CUpti_CallbackDomain domain, uint32_t cbid,
                                        const char **name);

/* The interned name of a runtime (is_runtime) or driver API callback id; NULL when CUPTI has
 * no name for it or out of memory (then asked again next time). */
const char *uf_cupti_api_name(uf_cupti_api_names *cache, uf_name_table *names,
                              uf_cupti_name_fn lookup, int is_runtime, CUpti_CallbackId cbid);

#endif

/* Chrome/Perfetto trace export (JSON trace-event format, opens in ui.perfetto.dev) of traced
 * runs: one process per section (variant and sweep point), one thread per (device, stream) for
 * device work and one for host API calls. Plain C, unit-tested. */
#ifndef UF_TRACE_EXPORT_H
#define UF_TRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uf_trace_section {
    const char *label;              /* e.g. "eager @ elems=4096" */
    const uf_activity *acts;
    size_t n_acts;
    const uf_api_call *apis;
    size_t n_apis;
} uf_trace_section;

/* Write the sections to path atomically. Timestamps become µs relative to the earliest record
 * of all sections. Names are JSON-escaped. 0, or -1 with err. */
int uf_trace_export_chrome(const char *path, const uf_trace_section *sections, int n_sections,
                           char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

/* underfed: CUDA-event timing marks (timing.h). */
#include <stdio.h>
#include <stdlib.h>

#include "errors.h"
#include "timing.h"

/* UF_OK when i names a mark of m; else UF_ERR after reporting which call asked for what. */
static int check_index(const uf_marks *m, int i, const char *call)
{
    char msg[96];
    if (i >= 0 && i < m->n)
        return UF_OK;
    snprintf(msg, sizeof msg, "mark %d outside [0, %d)", i, m->n);
    uf_report_failure(__FILE__, __LINE__, call, msg);
    return UF_ERR;
}

int uf_marks_create(uf_marks *m, int n)
{
    int rc = UF_OK;
    m->n = 0;
    m->events = calloc(n > 0 ? (size_t)n : 1, sizeof *m->events);
    if (!m->events) {
        uf_report_failure(__FILE__, __LINE__, "calloc", "out of host memory for timing marks");
        return UF_ERR;
    }
    for (; m->n < n; m->n++)
        UF_CUDA_OR_GOTO(rc, cudaEventCreate(&m->events[m->n]), out_free);
    return UF_OK;

out_free:
    uf_marks_free(m);
    return rc;
}

int uf_marks_record(const uf_marks *m, int i, cudaStream_t stream)
{
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, check_index(m, i, "uf_marks_record"), out);
    UF_CUDA_OR_GOTO(rc, cudaEventRecord(m->events[i], stream), out);
out:
    return rc;
}

int uf_marks_sync(const uf_marks *m, int i)
{
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, check_index(m, i, "uf_marks_sync"), out);
    UF_CUDA_OR_GOTO(rc, cudaEventSynchronize(m->events[i]), out);
out:
    return rc;
}

int uf_marks_ms(const uf_marks *m, int from, int to, float *ms)
{
    int rc = UF_OK;
    UF_STATUS_OR_GOTO(rc, check_index(m, from, "uf_marks_ms"), out);
    UF_STATUS_OR_GOTO(rc, check_index(m, to, "uf_marks_ms"), out);
    UF_CUDA_OR_GOTO(rc, cudaEventElapsedTime(ms, m->events[from], m->events[to]), out);
out:
    return rc;
}

cudaEvent_t uf_marks_event(const uf_marks *m, int i)
{
    return i >= 0 && i < m->n ? m->events[i] : NULL;
}

void uf_marks_free(uf_marks *m)
{
    for (int i = 0; i < m->n; i++)
        cudaEventDestroy(m->events[i]);
    free(m->events);
    m->events = NULL;
    m->n = 0;
}

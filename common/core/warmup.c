/* The timing pass's warm-up: the plan and the "keep warming up?" decision (warmup.h). */
#include <math.h>
#include <stdio.h>

#include "warmup.h"

void uf_warmup_plan(int scenario_steps, double scenario_min_ms, int default_steps, int opt_steps,
                    int fixed_steps, uf_warmup *out)
{
    double asked = scenario_min_ms > 0 ? scenario_min_ms : 0;  /* NaN and negatives: none */
    out->steps = opt_steps >= 0 ? opt_steps : (scenario_steps > 0 ? scenario_steps : default_steps);
    out->asked_ms = asked;
    out->min_ms = asked;
    out->off = NULL;
    if (asked > 0 && opt_steps == 0) {
        out->min_ms = 0;
        out->off = "--warmup 0";
    } else if (asked > 0 && fixed_steps) {
        out->min_ms = 0;
        out->off = "every rank runs the same steps";
    }
}

int uf_warmup_next(const uf_warmup *w, int done, double elapsed_ms)
{
    if (done < w->steps)
        return w->steps - done;
    if (!(w->min_ms > 0) || !(elapsed_ms >= 0) || elapsed_ms >= w->min_ms)
        return 0;
    if (done <= 0)
        return 1;   /* no step time known yet: one step to learn it */
    double per_step = elapsed_ms / done;
    double need = per_step > 0 ? ceil((w->min_ms - elapsed_ms) / per_step) : (double)done;
    if (need > done)
        need = done;
    if (need > UF_WARMUP_MAX_BATCH)
        need = UF_WARMUP_MAX_BATCH;
    return (int)need;   /* >= 1: the time left and done are both positive */
}

void uf_warmup_describe(const uf_warmup *w, char *out, size_t len)
{
    if (w->min_ms > 0)
        snprintf(out, len, "%d step%s and >= %.0f ms", w->steps, w->steps == 1 ? "" : "s",
                 w->min_ms);
    else if (w->off != NULL)
        snprintf(out, len, "%d (the scenario's >= %.0f ms off: %s)", w->steps, w->asked_ms,
                 w->off);
    else
        snprintf(out, len, "%d", w->steps);
}

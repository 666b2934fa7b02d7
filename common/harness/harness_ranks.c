/* The GPUs of a multi-GPU run (harness_run.h): the launcher's world (joined from the
 * environment, the other ranks met in process mode), each rank's instruments, and the rows that
 * take each rank's per-device figures. */
#include <stdio.h>

#include "instruments.h"
#include "harness_run.h"
#include "rank_exchange.h"

enum {
    WORLD_LIMIT_S = 300         /* process mode: how long the ranks may take to meet */
};

/* Open NVML on the ranks 1.. not tried yet, and read their SM counts. At their first timing
 * pass, not at start: by then setup has said how many GPUs this process drives (one process
 * per GPU must not sample the GPUs of the others). A failure leaves that rank's instrument
 * NULL with the reason in its note. */
void uf_h_open_rank_instruments(run *r)
{
    int n = ranks_analysed(r);
    for (int k = r->n_rank_opened > 1 ? r->n_rank_opened : 1; k < n; k++) {
        int device = r->ctx.device + k;
        cudaError_t e = cudaDeviceGetAttribute(&r->rank_sm_count[k],
                                               cudaDevAttrMultiProcessorCount, device);
        if (e != cudaSuccess) {     /* unknown: that rank's comm_sm_pct stays empty */
            uf_report_failure(__FILE__, __LINE__, "cudaDeviceGetAttribute(SM count)",
                              cudaGetErrorString(e));
            r->rank_sm_count[k] = 0;
        }
        if (uf_nvml_open(device, &r->rank_nvml[k], r->rank_nvml_note[k],
                         sizeof r->rank_nvml_note[k]) != UF_OK)
            r->rank_nvml[k] = NULL;
        r->n_rank_opened = k + 1;
    }
}

/* Open PM sampling, where rank 0's opened, on the ranks 1 .. n - 1 not tried yet. Never
 * during the timing passes: CUPTI is loaded only after them (open_cupti_instruments). */
void uf_h_open_rank_pm(run *r, int n)
{
    if (!r->pm)
        return;
    for (int k = r->n_rank_pm_opened > 1 ? r->n_rank_pm_opened : 1; k < n; k++) {
        if (uf_pm_open(r->ctx.device + k, &r->rank_pm[k], r->rank_pm_note[k],
                       sizeof r->rank_pm_note[k]) != UF_OK)
            r->rank_pm[k] = NULL;
        r->n_rank_pm_opened = k + 1;
    }
}

void uf_h_close_rank_instruments(run *r)
{
    for (int k = 1; k < UF_MAX_RANKS; k++) {
        if (r->rank_pm[k])
            uf_pm_close(r->rank_pm[k]);
        if (r->rank_nvml[k])
            uf_nvml_close(r->rank_nvml[k]);
        r->rank_pm[k] = NULL;
        r->rank_nvml[k] = NULL;
    }
}

/* The rows that take rank k's per-device figures: rank 0's go to the row itself (its columns
 * are rank 0's, as on one GPU), and each rank's to its own line when the row keeps ranks.
 * Returns how many (0 to 2). */
int uf_h_rank_rows(uf_row *row, int k, uf_row *dst[2])
{
    int n = 0;
    if (k == 0)
        dst[n++] = row;
    if (k < row->n_ranks)
        dst[n++] = &row->ranks[k];
    return n;
}

void uf_h_rank_note(uf_row *row, int k, const char *text)
{
    uf_row *dst[2];
    for (int i = 0, n = uf_h_rank_rows(row, k, dst); i < n; i++)
        note_append(dst[i]->skip_reason, sizeof dst[i]->skip_reason, text);
}

/* A note for the row and each of its ranks (a pass that did not run on any GPU). */
void uf_h_note_every_rank(uf_row *row, const char *text)
{
    note_append(row->skip_reason, sizeof row->skip_reason, text);
    for (int k = 0; k < row->n_ranks; k++)
        uf_h_rank_note(row, k, text);
}

/* Row assembly on several GPUs: a line per rank for the per-device figures, and the metadata
 * that says where they are. */
int uf_h_add_rank_lines(run *r, uf_row *row)
{
    int n = ranks_analysed(r);
    for (int k = row->n_ranks; k < n; k++)
        if (!uf_row_add_rank(row))
            return uf_fail(&r->ctx, UF_ERR, "out of host memory for the per-GPU results");
    uf_meta_set(&r->table.meta, "ranks", "%d GPUs analysed%s, rank k on CUDA device %d + k: "
                "each row's trace, counter and NVML columns are rank 0's; the lines with a rank "
                "hold each GPU's own; claims are judged on the worst rank", n,
                r->ctx.n_gpus > n ? " (the first ones of the run)" : "", r->ctx.device);
    return UF_OK;
}

/* Multi-GPU scenarios: the launcher's world from the environment (UF_USAGE when it does not
 * add up); in process mode, meet the other ranks (UF_ERR when they do not come). */
int uf_h_join_world(run *r)
{
    char err[UF_REASON_LEN];
    if (r->s->min_gpus < 2)
        return UF_OK;
    if (uf_launch_from_environ(&r->launch, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", r->s->name, err);
        return UF_USAGE;
    }
    r->ctx.launch = &r->launch;
    return UF_OK;
}

int uf_h_meet_ranks(run *r)
{
    char err[UF_REASON_LEN];
    if (!process_mode(r))
        return UF_OK;
    fprintf(stderr, "[%s] rank %d of %d (%s), GPU %d: meeting the other ranks\n", r->s->name,
            r->launch.rank, r->launch.world_size, r->launch.source, r->ctx.device);
    if (uf_peers_open(&r->launch, WORLD_LIMIT_S, &r->ctx.peers, err, sizeof err) != 0)
        return uf_fail(&r->ctx, UF_ERR, "%s", err);
    return UF_OK;
}

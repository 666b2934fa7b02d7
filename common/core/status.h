/* underfed's status codes: what every layer's calls return and what a program exits with
 * (docs/design.md, "Exit codes"). Plain C, no CUDA: the core's check macros (errors.h), the
 * instruments (common/instruments/) and the scenario contract (underfed.h) share them. */
#ifndef UF_STATUS_H
#define UF_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes and callback statuses (docs/design.md, "Exit codes"). */
enum {
    UF_OK = 0,      /* reproduced and verified */
    UF_ERR = 1,     /* error or wrong result */
    UF_USAGE = 2,   /* bad usage: bad flag, size that cannot fit, zero or negative count */
    UF_UNMET = 3,   /* ran and verified, but the expectation did not hold (a claim FAILED, or
                     * was n/a without a legitimate reason: see expect.h) */
    UF_SKIP = 77,   /* not applicable here: no GPU, too few GPUs, a feature unavailable */
    UF_SKIP_POINT = 78 /* from setup only: this sweep point does not apply (the reason in
                        * ctx->reason); its rows stay empty, the run goes on. Never an exit code */
};

#ifdef __cplusplus
}
#endif
#endif

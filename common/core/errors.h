/* How underfed says that something failed, at the bottom of every layer: a failed call on
 * stderr (behind the check macros, one per library, all here), and a message into a caller's
 * buffer (the host code's `err, errlen` convention). Plain C, no CUDA: a macro expands where
 * its library's header is included (UF_OK, UF_ERR: status.h). */
#ifndef UF_ERRORS_H
#define UF_ERRORS_H

#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Report a failed call (expression, file, line, message) on stderr. */
void uf_report_failure(const char *file, int line, const char *expr, const char *msg);

/* Format an error message into err (when not NULL) and return -1. */
int uf_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

/* ---- the check macros: each names the failed expression, file and line, sets rc and jumps to
 * label (cleanup through labels; the jump is in the name) --------------------------------- */

/* The CUDA runtime check: on error, report it, set rc = UF_ERR and jump to label. */
#define UF_CUDA_OR_GOTO(rc, expr, label)                                                   \
    do {                                                                                   \
        cudaError_t uf_e_ = (expr);                                                        \
        if (uf_e_ != cudaSuccess) {                                                        \
            uf_report_failure(__FILE__, __LINE__, #expr, cudaGetErrorString(uf_e_));       \
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* The cuBLAS check (cuBLAS and cublasLt), in the shape of UF_CUDA_OR_GOTO: on an error
 * status, report the failed expression with cuBLAS's message, set rc = UF_ERR and jump to
 * label. Expands after <cublas_v2.h> or <cublas_api.h>. */
#define UF_CUBLAS_OR_GOTO(rc, expr, label)                                                 \
    do {                                                                                   \
        cublasStatus_t uf_b_ = (expr);                                                     \
        if (uf_b_ != CUBLAS_STATUS_SUCCESS) {                                              \
            uf_report_failure(__FILE__, __LINE__, #expr, cublasGetStatusString(uf_b_));    \
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* The NCCL check: NCCL's message for the code and its last error text (which names the
 * cause; uf_report_nccl_failure, multigpu.h); rc = UF_ERR, jump to label. For the programs
 * linked with NCCL; benches/ceilings, which opens it with dlopen (it starts where NCCL is
 * missing), checks its calls the same way with the opened library's message (NCCL_OR_GOTO). */
#define UF_NCCL_OR_GOTO(rc, expr, label)                                                   \
    do {                                                                                   \
        ncclResult_t uf_n_ = (expr);                                                       \
        if (uf_n_ != ncclSuccess) {                                                        \
            uf_report_nccl_failure(__FILE__, __LINE__, #expr, uf_n_);                      \
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* The CUPTI check: on failure, turn the result into a status and reason (uf_cupti_status,
 * instruments.h: UF_SKIP with "<what> unavailable: ..." where CUPTI is not available here, else
 * UF_ERR, reported) and jump to label. `what`: the part of underfed that called ("CUPTI
 * activity", "CUPTI PM sampling"). */
#define UF_CUPTI_OR_GOTO(rc, what, expr, reason, reason_len, label)                        \
    do {                                                                                   \
        CUptiResult cupti_r_ = (expr);                                                     \
        if (cupti_r_ != CUPTI_SUCCESS) {                                                   \
            (rc) = uf_cupti_status((int)cupti_r_, (what), #expr, __FILE__, __LINE__,       \
                                   (reason), (reason_len));                                \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* The status check for underfed's own helpers: a status other than UF_OK is kept in rc and
 * execution jumps to label (the callee has already reported why). */
#define UF_STATUS_OR_GOTO(rc, expr, label)                                                 \
    do {                                                                                   \
        int uf_s_ = (expr);                                                                \
        if (uf_s_ != UF_OK) {                                                              \
            (rc) = uf_s_;                                                                  \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

#endif

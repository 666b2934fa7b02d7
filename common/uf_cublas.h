/* The cuBLAS check, in the shape of UF_CUDA_OR_GOTO: on an error status, report the failed
 * expression with cuBLAS's message, set rc = UF_ERR and jump to label. Include after
 * <cublas_v2.h> or <cublas_api.h>. */
#ifndef UF_CUBLAS_H
#define UF_CUBLAS_H

#include "underfed.h"

#define UF_CUBLAS_OR_GOTO(rc, expr, label)                                                 \
    do {                                                                                   \
        cublasStatus_t uf_b_ = (expr);                                                     \
        if (uf_b_ != CUBLAS_STATUS_SUCCESS) {                                              \
            uf_report_failure(__FILE__, __LINE__, #expr, cublasGetStatusString(uf_b_));    \
            (rc) = UF_ERR;                                                                 \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

#endif

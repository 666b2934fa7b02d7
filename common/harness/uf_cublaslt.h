/* cublasLt's choice for a GEMM, asked one way: the heuristic's first algorithm (what
 * cublasGemmEx would run) for a matmul descriptor and its layouts, within a workspace. For the
 * scenarios that run or report that choice (small_batch's wave GEMM, tensor_alignment's
 * GEMMs). Header-only: a program that includes it links CUDA::cublasLt. */
#ifndef UF_CUBLASLT_H
#define UF_CUBLASLT_H

#include <stdint.h>
#include <cublasLt.h>
#include "uf_cublas.h"

/* The heuristic's first algorithm for desc with layouts a, b and c (C and D alike) and at most
 * ws_bytes of workspace: *found 1 and *algo set, or *found 0 when cuBLAS offers none (the caller
 * says what that means). UF_OK, or UF_ERR after reporting the failed call. */
static inline int uf_lt_first_algo(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc,
                                   cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                   cublasLtMatrixLayout_t c, uint64_t ws_bytes,
                                   cublasLtMatmulAlgo_t *algo, int *found)
{
    int rc = UF_OK;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t pick;
    *found = 0;
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulPreferenceCreate(&pref), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulPreferenceSetAttribute(
                              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                              sizeof ws_bytes), out);
    UF_CUBLAS_OR_GOTO(rc, cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &pick,
                                                         found), out);
    if (*found > 0)
        *algo = pick.algo;
out:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    return rc;
}

#endif

/* The cuBLAS check, UF_CUBLAS_OR_GOTO, is errors.h's (through underfed.h), with the other
 * libraries' checks. This header stays for the scenarios that include it. */
#ifndef UF_CUBLAS_H
#define UF_CUBLAS_H

#include "underfed.h"

#endif

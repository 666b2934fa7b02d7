// Probe: which cuBLAS path reaches the issue's 706 TFLOP/s on 8192 x 768 x 50304 (bf16, W [n,k]
// as nn.Linear, op T)? cublasGemmEx, and each of cublasLt's heuristic top-16 with 32 MiB workspace.
//   nvcc -O2 -arch=sm_90 -o gemm_algos benches/probes/gemm_algos.cu -lcublasLt -lcublas
// Ran on the H200, 2026-11-30, operands filled with one constant (so clocks ran higher than on
// random data: compare rows, not with the ceilings): 8192 x 768 x 50304: cublasGemmEx 790 TFLOP/s,
// cublasLt heuristic #0 (tile 209) 779, #5 (tile 201) 923, #7 (tile 197) 917; 50257 (misaligned):
// GemmEx 94, Lt #0 94, #1 103; 8192 x 4096 x 4096: GemmEx 893, Lt #0 894.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <stdio.h>
#define CK(x) do { int e_ = (int)(x); if (e_) { printf("%s:%d error %d\n", #x, __LINE__, e_); return 1; } } while (0)
static float time_it(void (*f)(void *), void *arg) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; i++) f(arg);
  cudaEventRecord(a); for (int i = 0; i < 20; i++) f(arg); cudaEventRecord(b); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b); return ms / 20;
}
struct ctx { cublasHandle_t h; cublasLtHandle_t lt; cublasLtMatmulDesc_t op; cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulAlgo_t algo; void *w, *x, *y, *ws; int m, n, k; };
static void run_ex(void *p) { struct ctx *c = (struct ctx *)p; float al = 1, be = 0;
  cublasGemmEx(c->h, CUBLAS_OP_T, CUBLAS_OP_N, c->n, c->m, c->k, &al, c->w, CUDA_R_16BF, c->k, c->x, CUDA_R_16BF, c->k, &be, c->y, CUDA_R_16BF, c->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); }
static void run_lt(void *p) { struct ctx *c = (struct ctx *)p; float al = 1, be = 0;
  cublasLtMatmul(c->lt, c->op, &al, c->w, c->la, c->x, c->lb, &be, c->y, c->ld, c->y, c->ld, &c->algo, c->ws, 32 << 20, 0); }
static int shape(int n, int k) {
  struct ctx c = {0}; c.m = 8192; c.n = n; c.k = k;
  CK(cublasCreate(&c.h)); CK(cublasLtCreate(&c.lt));
  CK(cudaMalloc(&c.w, (size_t)n * k * 2)); CK(cudaMalloc(&c.x, (size_t)c.m * k * 2)); CK(cudaMalloc(&c.y, (size_t)c.m * n * 2)); CK(cudaMalloc(&c.ws, 32 << 20));
  cudaMemset(c.w, 0x3c, (size_t)n * k * 2); cudaMemset(c.x, 0x3c, (size_t)c.m * k * 2);
  CK(cublasSetWorkspace(c.h, c.ws, 32 << 20));
  double fl = 2.0 * c.m * n * k;
  float ms = time_it(run_ex, &c); printf("n=%d k=%d cublasGemmEx: %.4f ms %.1f TFLOP/s\n", n, k, ms, fl / ms / 1e9);
  cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
  CK(cublasLtMatmulDescCreate(&c.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CK(cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  CK(cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn));
  CK(cublasLtMatrixLayoutCreate(&c.la, CUDA_R_16BF, k, n, k));
  CK(cublasLtMatrixLayoutCreate(&c.lb, CUDA_R_16BF, k, c.m, k));
  CK(cublasLtMatrixLayoutCreate(&c.ld, CUDA_R_16BF, n, c.m, n));
  cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = 32 << 20; CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t res[16]; int got = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(c.lt, c.op, c.la, c.lb, c.ld, c.ld, pref, 16, res, &got));
  for (int i = 0; i < got; i++) {
    c.algo = res[i].algo; int id = 0, tile = 0, stages = 0, splitk = 0; size_t sz;
    cublasLtMatmulAlgoConfigGetAttribute(&c.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&c.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&c.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&c.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &sz);
    ms = time_it(run_lt, &c);
    printf("  lt #%d algo %d tile %d stages %d splitk %d ws %zu: %.4f ms %.1f TFLOP/s\n", i, id, tile, stages, splitk, res[i].workspaceSize, ms, fl / ms / 1e9);
  }
  cudaFree(c.w); cudaFree(c.x); cudaFree(c.y); cudaFree(c.ws);
  return 0;
}
int main(void) { shape(50304, 768); shape(50257, 768); shape(4096, 4096); return 0; }

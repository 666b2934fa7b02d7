/* serial_decode's device primitives, shared by its kernel units (serial_decode_kernels.cu, the
 * GEMVs and the persistent kernel; serial_decode_attention.h and .cu, attention and the
 * argmax): the loads, the warp's sums, the dot products of a chunk, programmatic dependent
 * launch. For CUDA translation units. */
#ifndef SD_DEVICE_H
#define SD_DEVICE_H

#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include "serial_decode_kernels.h"

#define FULL 0xffffffffu

/* 16 bytes of a weight row, through L2 only and not kept in L1: it is read once a step. */
__device__ __forceinline__ uint4 ld_stream(const bf16 *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

/* Programmatic dependent launch: wait for the previous kernel's results; let the next start. */
__device__ __forceinline__ void wait_predecessor(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void launch_successor(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ float lo_bf16(unsigned u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float hi_bf16(unsigned u) { return __uint_as_float(u & 0xffff0000u); }

/* acc + w . x over one chunk: 8 bf16 weights and 8 bf16 inputs, element order. */
__device__ __forceinline__ float dot8(uint4 w, uint4 x, float acc)
{
    const unsigned wv[4] = {w.x, w.y, w.z, w.w}, xv[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        acc = __fmaf_rn(lo_bf16(wv[k]), lo_bf16(xv[k]), acc);
        acc = __fmaf_rn(hi_bf16(wv[k]), hi_bf16(xv[k]), acc);
    }
    return acc;
}

/* acc + k . q over 8 bf16 keys and 8 fp32 queries, element order. */
__device__ __forceinline__ float dot8f(uint4 k, float4 qa, float4 qb, float acc)
{
    acc = __fmaf_rn(lo_bf16(k.x), qa.x, acc);
    acc = __fmaf_rn(hi_bf16(k.x), qa.y, acc);
    acc = __fmaf_rn(lo_bf16(k.y), qa.z, acc);
    acc = __fmaf_rn(hi_bf16(k.y), qa.w, acc);
    acc = __fmaf_rn(lo_bf16(k.z), qb.x, acc);
    acc = __fmaf_rn(hi_bf16(k.z), qb.y, acc);
    acc = __fmaf_rn(lo_bf16(k.w), qb.z, acc);
    acc = __fmaf_rn(hi_bf16(k.w), qb.w, acc);
    return acc;
}

/* The butterfly sum and max: every lane ends with the same bits (a + b == b + a). */
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(FULL, v, off);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL, v, off));
    return v;
}

__device__ __forceinline__ unsigned pack_bf16(float a, float b)
{
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(a)) |
           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(b)) << 16);
}

/* The cache position of a step: the ring's. */
__device__ __forceinline__ int step_pos(const sd_model &m, unsigned long long step)
{
    return (int)(step % (unsigned long long)m.s.cache);
}

#endif

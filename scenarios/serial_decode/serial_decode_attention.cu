/* serial_decode's per-op attention and argmax kernels and their launches (eager_b1, graph_b1,
 * batched; serial_decode_kernels.h declares the launches). Their arithmetic is
 * serial_decode_attention.h's, which the persistent kernel calls too. */
#include <cuda_runtime.h>

#include "serial_decode_attention.h"
#include "serial_decode_device.h"
#include "serial_decode_kernels.h"
#include "underfed.h"

#define SD_ARGMAX_BLOCK 256     /* threads: SD_ARGMAX_SLICE / 256 = 4 loads each, one round */

/* Grid (splits, kv_heads, batch), blocks of chunks / splits warps: block (s, g, b) takes the
 * s-th share of KV head g's chunks of sequence b. The step's position is read before the wait
 * for the predecessor: the argmax of the step before wrote it, and the embedding kernel,
 * launched after that argmax had finished, came between. */
__global__ void __launch_bounds__(SD_MAX_CHUNKS * 32) sd_attention_kernel(sd_model m, int l)
{
    __shared__ __align__(16) float scratch[SD_ATTN_SCRATCH_BYTES / 4];
    const int pos = step_pos(m, __ldcg(m.step));
    const attn_view av = attn_view_of(m);
    attn_block(av, scratch, blockIdx.z, l, blockIdx.y, blockIdx.x, gridDim.x, pos);
}

/* Grid (sd_argmax_blocks, batch); the block that finishes sequence 0 counts the step. */
__global__ void sd_argmax_kernel(sd_model m)
{
    wait_predecessor();
    launch_successor();
    if (argmax_block(argmax_view_of(m, gridDim.x), blockIdx.y, blockIdx.x) && blockIdx.y == 0)
        *m.step += 1;
}

/* ---- host side ------------------------------------------------------------------------------ */

int sd_attn_splits_valid(const sd_shape *s, int splits)
{
    const int chunks = s->cache / SD_CHUNK;
    return splits >= 1 && splits <= chunks && chunks % splits == 0;
}

int sd_launch_attention(const sd_model *m, int l, int pdl, cudaStream_t stream)
{
    const int splits = m->attn_splits, chunks = m->s.cache / SD_CHUNK;
    void *args[] = {(void *)m, &l};
    if (!sd_attn_splits_valid(&m->s, splits)) {
        uf_report_failure(__FILE__, __LINE__, "sd_launch_attention",
                          "attn_splits does not divide the cache's chunks");
        return UF_USAGE;
    }
    return sd_launch_kernel((const void *)sd_attention_kernel,
                            dim3(splits, m->s.kv_heads, m->s.batch), dim3(chunks / splits * 32), 0,
                            pdl && m->pdl, args, stream);
}

/* A block of SD_ARGMAX_BLOCK threads per slice of SD_ARGMAX_SLICE logits. */
int sd_launch_argmax(const sd_model *m, int pdl, cudaStream_t stream)
{
    void *args[] = {(void *)m};
    return sd_launch_kernel((const void *)sd_argmax_kernel,
                            dim3(sd_argmax_blocks(&m->s), m->s.batch), dim3(SD_ARGMAX_BLOCK), 0,
                            pdl && m->pdl, args, stream);
}

/* host_sync: the step's device work, the same for every variant (they differ only in what the
 * host does around it). Included once by host_sync.cu, at this point of its text. */

/* One step's kernels on stream: per layer its small kernels, the GEMM and the activation (the
 * intermediate outputs in tmp, the last in st->y), then the loss into its history slot. */
static int enqueue_compute(hs_state *st, bf16 *const tmp[2], cudaStream_t stream)
{
    int rc = UF_OK;
    const size_t n = act_elems(st), wn = (size_t)st->d * st->d;
    const bf16 *src = st->x;
    for (int l = 0; l < HS_LAYERS; l++) {
        for (int t = 0; t < st->ticks_per_layer[l]; t++) {
            tick_kernel<<<1, HS_AUX, 0, stream>>>(st->aux);
            UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
        }
        bf16 *dst = l == HS_LAYERS - 1 ? st->y : tmp[l % 2];
        UF_STATUS_OR_GOTO(rc, gemm_bf16(st->blas, src, st->w + (size_t)l * wn, dst, st->tokens,
                                        st->d), out);
        tanh_kernel<<<elementwise_blocks(n), HS_BLOCK, 0, stream>>>(dst, n);
        UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
        src = dst;
    }
    loss_partial_kernel<<<HS_LOSS_BLOCKS, HS_BLOCK, 0, stream>>>(st->y, n, st->label_key,
                                                                 (uint64_t)st->step, st->partials);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
    loss_final_kernel<<<1, HS_BLOCK, 0, stream>>>(st->partials, HS_LOSS_BLOCKS, n,
                                                  st->losses + st->step % HS_HISTORY);
    UF_CUDA_OR_GOTO(rc, cudaGetLastError(), out);
out:
    return rc;
}


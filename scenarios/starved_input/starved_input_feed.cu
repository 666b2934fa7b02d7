/* starved_input: a variant's feed opened (the sync path's buffers, or the pipeline of its
 * workers) and closed, and the text source of a corpus. How a step is fed is the story's
 * (feed_step_* in starved_input.cu). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "underfed.h"
#include "tokenizer.h"
#include "starved_input_pipeline.h"
#include "starved_input_state.h"
#include "starved_input_feed.h"

void feed_close(si_state *st, si_feed *f)
{
    if (f->pipe)
        cudaStreamSynchronize(st->copy_stream);   /* no copy out of a staging buffer in flight */
    pipeline_destroy(f->pipe);
    free(f->pageable_ids);
    scratch_free(&f->scratch);
    memset(f, 0, sizeof *f);
}

int feed_open(si_state *st, si_feed *f, int variant, const si_source *src, char *err,
              size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->variant = variant;
    f->src = *src;
    if (variant == SI_SYNC) {
        f->pageable_ids = (int32_t *)malloc(st->batch_bytes);
        if (!f->pageable_ids || scratch_alloc(&f->scratch) != UF_OK) {
            snprintf(err, errlen, "out of host memory for the batch");
            feed_close(st, f);
            return UF_ERR;
        }
    } else if (pipeline_create(src, st->device, st->workers, &f->pipe, err, errlen) != UF_OK) {
        return UF_ERR;
    }
    f->open = 1;
    return UF_OK;
}

void text_source(const si_state *st, const si_corpus *corpus, int n_batches, si_source *src)
{
    src->tok = &st->tok;
    src->corpus = corpus;
    src->pretok = NULL;
    src->n_batches = n_batches;
    src->rows = st->shape.rows;
    src->seq_len = st->shape.seq_len;
    src->batch_passes = st->batch_passes;
}

/* starved_input: where batches come from: text tokenized on the fly, or the pretokenized map.
 * Batch k is corpus batch k mod n_batches (steps cycle over the corpus, epoch after epoch). */
#include <stdint.h>
#include <string.h>

#include "underfed.h"
#include "tokenizer.h"
#include "starved_input_source.h"

int produce_batch(const si_source *src, int64_t batch, int32_t *out, si_scratch *s, char *err,
                  size_t errlen)
{
    int64_t b = batch % src->n_batches;
    size_t batch_elems = (size_t)src->rows * (size_t)src->seq_len;
    if (src->pretok) {
        memcpy(out, src->pretok + (size_t)b * batch_elems, batch_elems * sizeof(int32_t));
        return UF_OK;
    }
    for (int r = 0; r < src->rows; r++) {
        int64_t doc = b * src->rows + r;
        const char *text = src->corpus->text + src->corpus->off[doc];
        int rc = encode_row_passes(src->tok, row_passes(src->batch_passes, src->rows, r), text,
                                   (int)src->corpus->len[doc], src->seq_len,
                                   out + (size_t)r * src->seq_len, s, err, errlen);
        if (rc != UF_OK)
            return rc;
    }
    return UF_OK;
}

/* starved_input: the pretokenized corpus: the offline step that tokenizes the corpus once into
 * a mapped file. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "underfed.h"
#include "tokenizer.h"
#include "starved_input_source.h"
#include "starved_input_pretok.h"

/* ---- the pretokenized corpus ---------------------------------------------------------- */

typedef struct si_pretok_job {
    const si_source *src;       /* the text */
    int32_t *out;               /* the file, mapped writable */
    int first, stride;          /* batches first, first + stride, ... */
    si_scratch scratch;
    pthread_t thread;
    int started, rc;
    char err[UF_REASON_LEN];
} si_pretok_job;

static void *pretok_main(void *arg)
{
    si_pretok_job *job = (si_pretok_job *)arg;
    size_t batch_elems = (size_t)job->src->rows * (size_t)job->src->seq_len;
    for (int b = job->first; b < job->src->n_batches && job->rc == UF_OK; b += job->stride)
        job->rc = produce_batch(job->src, b, job->out + (size_t)b * batch_elems, &job->scratch,
                                job->err, sizeof job->err);
    return NULL;
}

/* Tokenize every document of text once (threads over batches) into the mapped file. */
static int pretok_fill(const si_source *text, int32_t *out, char *err, size_t errlen)
{
    int rc = UF_OK;
    long cores = online_cores();
    int n_jobs = (int)(cores < 16 ? cores : 16);
    if (n_jobs > text->n_batches)
        n_jobs = text->n_batches;
    si_pretok_job *jobs = (si_pretok_job *)calloc((size_t)n_jobs, sizeof *jobs);
    if (!jobs) {
        snprintf(err, errlen, "out of host memory for pretokenizing");
        return UF_ERR;
    }
    for (int j = 0; j < n_jobs && rc == UF_OK; j++) {
        jobs[j].src = text;
        jobs[j].out = out;
        jobs[j].first = j;
        jobs[j].stride = n_jobs;
        if (scratch_alloc(&jobs[j].scratch) != UF_OK) {
            snprintf(err, errlen, "out of host memory for pretokenizing");
            rc = UF_ERR;
        } else if (pthread_create(&jobs[j].thread, NULL, pretok_main, &jobs[j]) != 0) {
            snprintf(err, errlen, "cannot start a pretokenizing thread");
            rc = UF_ERR;
        } else {
            jobs[j].started = 1;
        }
    }
    for (int j = 0; j < n_jobs; j++) {
        if (jobs[j].started)
            pthread_join(jobs[j].thread, NULL);
        if (jobs[j].rc != UF_OK && rc == UF_OK) {
            snprintf(err, errlen, "%s", jobs[j].err);
            rc = UF_ERR;
        }
        scratch_free(&jobs[j].scratch);
    }
    free(jobs);
    return rc;
}

/* The offline preprocessing step: tokenize the corpus once into a file in /tmp, then map the
 * file read-only, as a training job maps a preprocessed dataset. The file is unlinked as soon
 * as it is mapped, so nothing is left behind even if the program is killed; munmap frees it. */
int pretok_build(const si_source *text, int32_t **map_out, size_t *bytes_out, char *err,
                 size_t errlen)
{
    int rc = UF_ERR;
    char path[] = "/tmp/underfed_starved_input_XXXXXX";
    size_t bytes = (size_t)text->n_batches * (size_t)text->rows * (size_t)text->seq_len *
                   sizeof(int32_t);
    void *writable = MAP_FAILED, *readable = MAP_FAILED;
    *map_out = NULL;
    *bytes_out = 0;
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return UF_ERR;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        snprintf(err, errlen, "cannot size %s to %zu bytes: %s", path, bytes, strerror(errno));
        goto out_close;
    }
    writable = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (writable == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s: %s", path, strerror(errno));
        goto out_close;
    }
    rc = pretok_fill(text, (int32_t *)writable, err, errlen);
    munmap(writable, bytes);
    if (rc != UF_OK)
        goto out_close;
    readable = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (readable == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s read-only: %s", path, strerror(errno));
        rc = UF_ERR;
        goto out_close;
    }
    *map_out = (int32_t *)readable;
    *bytes_out = bytes;
out_close:
    close(fd);
    unlink(path);
    return rc;
}

/* File utilities below the results code: whole files written atomically (a temporary name,
 * fsync, rename: a reader never sees half a file) and read whole, folders made like
 * `mkdir -p`, and the slug of a device name. Plain C, no CUDA. */
#include "fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "errors.h"

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Flush the folder holding path so that the rename itself is durable (best effort). */
static void sync_parent(const char *path)
{
    char *dir = strdup(path);
    if (dir == NULL)
        return;
    char *slash = strrchr(dir, '/');
    const char *name = ".";
    if (slash == dir)
        name = "/";
    else if (slash != NULL) {
        *slash = '\0';
        name = dir;
    }
    int fd = open(name, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

int uf_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    size_t tmplen = strlen(path) + 32;
    char *tmp = malloc(tmplen);
    if (tmp == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    snprintf(tmp, tmplen, "%s.tmp.%ld", path, (long)getpid());
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        uf_set_err(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        goto out_free_tmp;
    }
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        uf_set_err(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
        close(fd);
        goto out_unlink_tmp;
    }
    if (close(fd) != 0) {
        uf_set_err(err, errlen, "%s: cannot close: %s", tmp, strerror(errno));
        goto out_unlink_tmp;
    }
    if (rename(tmp, path) != 0) {
        uf_set_err(err, errlen, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        goto out_unlink_tmp;
    }
    sync_parent(path);
    rc = 0;
    goto out_free_tmp;

out_unlink_tmp:
    unlink(tmp);
out_free_tmp:
    free(tmp);
    return rc;
}

/* One folder: created, or already there as a folder. */
static int mkdir_one(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0755) == 0)
        return 0;
    int saved = errno;
    struct stat st;
    if (saved == EEXIST && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        return uf_set_err(err, errlen, "%s: exists and is not a folder", path);
    }
    return uf_set_err(err, errlen, "%s: cannot create folder: %s", path, strerror(saved));
}

int uf_mkdirs(const char *path, char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0')
        return uf_set_err(err, errlen, "mkdir: empty path");
    char *p = strdup(path);
    if (p == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    int rc = 0;
    for (char *c = p + 1; *c != '\0' && rc == 0; c++) {
        if (*c != '/' || c[-1] == '/')
            continue;
        *c = '\0';
        rc = mkdir_one(p, err, errlen);
        *c = '/';
    }
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    if (rc == 0)
        rc = mkdir_one(p, err, errlen);
    free(p);
    return rc;
}

void uf_slug(const char *name, char *out, size_t outlen)
{
    if (out == NULL || outlen == 0)
        return;
    size_t n = 0;
    int pending_dash = 0;
    for (const char *c = name != NULL ? name : ""; *c != '\0' && n + 1 < outlen; c++) {
        char ch = *c;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (pending_dash && n > 0 && n + 2 < outlen)
                out[n++] = '-';
            else if (pending_dash && n > 0)
                break;      /* no room for the dash and a character after it */
            pending_dash = 0;
            out[n++] = ch;
        } else {
            pending_dash = 1;
        }
    }
    out[n] = '\0';
}

int uf_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return uf_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    if (buf == NULL)
        rc = uf_set_err(err, errlen, "%s: out of memory", path);
    else if (ferror(f)) {
        rc = uf_set_err(err, errlen, "%s: cannot read", path);
        free(buf);
    } else {
        buf[n] = '\0';
        *data = buf;
        *len = n;
    }
    fclose(f);
    return rc;
}

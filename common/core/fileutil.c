/* File utilities below the results code: whole files written atomically (a temporary file
 * created exclusively beside the target, fsync, rename: a reader never sees half a file, and
 * only a regular file or a new name is replaced) and regular files read whole, folders made
 * like `mkdir -p`, and the slug of a device name. Plain C, no CUDA. */
#include "fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
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

/* What a file's type is, in words, for the messages of the writer and the reader. */
static const char *file_kind(mode_t mode)
{
    return S_ISREG(mode)    ? "a regular file"
           : S_ISDIR(mode)  ? "a folder"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "not a regular file";
}

/* May the writer replace what is at path? Yes (0) for a new name or a regular file. Anything
 * else is refused with the reason (-1): a device (/dev/null), a FIFO, a folder or a socket
 * would be replaced by a regular file, and a symbolic link, whatever it points at, is neither
 * replaced (that would cut the link) nor followed (root writing through a link that someone
 * planted at the name overwrites the file it names). */
static int check_target(const char *path, char *err, size_t errlen)
{
    struct stat st, to;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0
                               : uf_set_err(err, errlen, "%s: cannot look at the target: %s",
                                            path, strerror(errno));
    if (S_ISREG(st.st_mode))
        return 0;
    if (S_ISLNK(st.st_mode))
        return uf_set_err(err, errlen, "%s: a symbolic link (to %s): not replaced and not "
                          "followed; write to the file it names, or remove the link", path,
                          stat(path, &to) == 0 ? file_kind(to.st_mode) : "nothing");
    return uf_set_err(err, errlen, "%s: %s, not a regular file: not replaced (only a regular "
                      "file or a new name is written)", path, file_kind(st.st_mode));
}

/* 64 bits nobody else can predict: getrandom, else the clock, the pid and a counter mixed
 * (splitmix64). The temporary file is created with O_EXCL, so a guessed name costs a retry,
 * never a file. */
static uint64_t random_bits(void)
{
    static unsigned counter;
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    x = uf_realtime_ns() ^ (uint64_t)getpid() << 32 ^ ++counter;
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* A new temporary file beside path, PATH.tmp.XXXXXXXXXX (its name part cut to keep within a
 * file name's length), created exclusively: O_EXCL (a name already there, a planted symbolic
 * link included, is never opened: another name is tried), O_NOFOLLOW, mode 0666 less the umask
 * (what any new file gets). The fd, with its name in tmp; -1 with err. */
static int create_temporary(const char *path, char *tmp, size_t tmplen, char *err,
                            size_t errlen)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    size_t name_len = strlen(path) - dir_len;
    if (name_len > 200)
        name_len = 200;     /* + ".tmp." + 10 stays within NAME_MAX (255) */
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[11];
        uint64_t bits = random_bits();
        for (int i = 0; i < 10; i++, bits /= 62)
            suffix[i] = digits[bits % 62];
        suffix[10] = '\0';
        snprintf(tmp, tmplen, "%.*s.tmp.%s", (int)(dir_len + name_len), path, suffix);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd
                           : uf_set_err(err, errlen, "%s: cannot create: %s", tmp,
                                        strerror(errno));
    }
    return uf_set_err(err, errlen, "%s: cannot create a temporary file beside it (100 names "
                      "taken)", path);
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
    int fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

int uf_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0')
        return uf_set_err(err, errlen, "an empty file name");
    if (check_target(path, err, errlen) != 0)
        return -1;
    size_t tmplen = strlen(path) + 32;
    char *tmp = malloc(tmplen);
    if (tmp == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    int rc = -1;
    int fd = create_temporary(path, tmp, tmplen, err, errlen);
    if (fd < 0)
        goto out_free_tmp;
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
    /* O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused below) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return uf_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (fstat(fd, &st) != 0) {
        rc = uf_set_err(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = uf_set_err(err, errlen, "%s: %s, not a regular file: not read", path,
                        file_kind(st.st_mode));
    } else if (st.st_size > UF_READ_MAX_BYTES) {
        rc = uf_set_err(err, errlen, "%s: %lld bytes, more than the %d MiB a file is read whole "
                        "(no results, ceilings or trace file is that large)", path,
                        (long long)st.st_size, UF_READ_MAX_BYTES >> 20);
    }
    /* Read to the end, which may come later than st_size said (a file still growing), but
     * never past the cap. */
    while (rc == 0) {
        if (n + 1 >= cap) {
            size_t bigger_cap = cap ? 2 * cap : (size_t)st.st_size + 4096;
            char *bigger = realloc(buf, bigger_cap);
            if (bigger == NULL) {
                rc = uf_set_err(err, errlen, "%s: out of memory", path);
                break;
            }
            buf = bigger;
            cap = bigger_cap;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = uf_set_err(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        else if (got == 0)
            break;
        else if ((n += (size_t)got) > UF_READ_MAX_BYTES)
            rc = uf_set_err(err, errlen, "%s: grew past the %d MiB a file is read whole", path,
                            UF_READ_MAX_BYTES >> 20);
    }
    close(fd);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

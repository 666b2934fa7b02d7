/* Unit tests of fileutil.c's writer and reader against what is not a plain file: the writer
 * replaces only a regular file or a new name (a device, a FIFO, a folder, a socket, a symbolic
 * link to any of them or to a regular file: refused, untouched, no temporary left), creates its
 * temporary exclusively (a symbolic link planted at the name the old writer used, PATH.tmp.PID,
 * is not followed) with the mode a new file gets, and leaves the old file whole when the disk
 * is full; the reader reads regular files only (a FIFO without waiting, /dev/zero without
 * reading) and refuses a file over its cap. */
#define _DEFAULT_SOURCE     /* mknod, makedev */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileutil.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/uf_fileutil_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(fileutil, .init = make_dir, .fini = remove_dir);

static void in_dir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* The file's text (at most 255 bytes), "" when it cannot be read. */
static const char *text_of(const char *path)
{
    static char text[256];
    FILE *f = fopen(path, "r");
    text[0] = '\0';
    if (f) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    return text;
}

/* Entries of the folder whose name holds ".tmp." (the writer's temporaries). */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* The writer refuses path: -1, the path and `why` in the message, nothing left behind. */
static void refused(const char *path, const char *why)
{
    char err[512] = "";
    cr_assert_eq(uf_write_file_atomic(path, "new\n", 4, err, sizeof err), -1,
                 "%s was replaced", path);
    cr_assert(strstr(err, path) != NULL, "no path in: %s", err);
    cr_assert(strstr(err, why) != NULL, "no '%s' in: %s", why, err);
    cr_assert_eq(temporaries(), 0, "a temporary left behind");
}

Test(fileutil, writer_refuses_a_fifo_a_folder_and_a_socket)
{
    char fifo[128], folder[128], sock_path[128];
    struct stat st;
    in_dir(fifo, sizeof fifo, "fifo");
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    refused(fifo, "a FIFO, not a regular file: not replaced");
    cr_assert(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");

    in_dir(folder, sizeof folder, "folder");
    cr_assert_eq(mkdir(folder, 0755), 0);
    refused(folder, "a folder, not a regular file");
    cr_assert(lstat(folder, &st) == 0 && S_ISDIR(st.st_mode));

    in_dir(sock_path, sizeof sock_path, "sock");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    cr_assert_lt(strlen(sock_path), sizeof addr.sun_path);
    memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
    cr_assert_eq(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
    refused(sock_path, "a socket, not a regular file");
    close(s);
}

/* A character device made here (the null device's numbers) where mknod is allowed (root): the
 * case of `--json /dev/null` run as root, without risking the machine's /dev/null. */
Test(fileutil, writer_refuses_a_device)
{
    char dev[128];
    struct stat st;
    in_dir(dev, sizeof dev, "null");
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) != 0)
        cr_skip_test("mknod: %s (not root): the device case is not tried here", strerror(errno));
    refused(dev, "a character device, not a regular file: not replaced");
    cr_assert(lstat(dev, &st) == 0 && S_ISCHR(st.st_mode), "the device was replaced");
}

/* A symbolic link is never replaced nor followed, whatever it names: the link and what it
 * names are left as they were. */
Test(fileutil, writer_refuses_a_symbolic_link)
{
    char file[128], fifo[128], folder[128], link[128];
    struct stat st;
    in_dir(file, sizeof file, "file");
    in_dir(fifo, sizeof fifo, "fifo");
    in_dir(folder, sizeof folder, "folder");
    put(file, "old\n");
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    cr_assert_eq(mkdir(folder, 0755), 0);
    static const struct {
        const char *name, *to, *why;
    } links[] = {
        {"to-file", "file", "a symbolic link (to a regular file): not replaced and not followed"},
        {"to-fifo", "fifo", "a symbolic link (to a FIFO)"},
        {"to-folder", "folder", "a symbolic link (to a folder)"},
        {"to-null", "/dev/null", "a symbolic link (to a character device)"},
        {"dangling", "no-such-file", "a symbolic link (to nothing)"},
    };
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        in_dir(link, sizeof link, links[i].name);
        cr_assert_eq(symlink(links[i].to, link), 0);
        refused(link, links[i].why);
        cr_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "%s: the link was replaced",
                  links[i].name);
    }
    cr_assert_str_eq(text_of(file), "old\n", "the file the link names was written");
    cr_assert(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
}

/* The old writer's temporary was PATH.tmp.PID, opened without O_EXCL: a link planted there
 * had its target overwritten. Links planted at that name (for this process and its
 * neighbours) are left alone, and so is their target. */
Test(fileutil, writer_follows_no_planted_link)
{
    char path[128], victim[128], planted[160], err[512] = "";
    in_dir(path, sizeof path, "out.json");
    in_dir(victim, sizeof victim, "victim");
    put(victim, "precious\n");
    for (long pid = getpid() - 2; pid <= getpid() + 2; pid++) {
        snprintf(planted, sizeof planted, "%s.tmp.%ld", path, pid);
        cr_assert_eq(symlink(victim, planted), 0);
    }
    cr_assert_eq(uf_write_file_atomic(path, "diagnosis\n", 10, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(text_of(path), "diagnosis\n");
    cr_assert_str_eq(text_of(victim), "precious\n", "the planted link was followed");
    struct stat st;
    cr_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    cr_assert_eq(temporaries(), 5, "only the five planted links carry .tmp.");
}

/* A regular file is replaced (a new inode: a hard link elsewhere keeps the old text); a new
 * file gets 0666 less the umask, as any program's new file does. */
Test(fileutil, writer_replaces_a_regular_file_with_a_normal_mode)
{
    char path[128], other[128], err[512] = "";
    struct stat st;
    in_dir(path, sizeof path, "f.txt");
    in_dir(other, sizeof other, "hard");
    umask(002);
    cr_assert_eq(uf_write_file_atomic(path, "first\n", 6, err, sizeof err), 0, "%s", err);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0664, "mode %o, expected 0664 (0666 less umask 002)",
                 st.st_mode & 0777);
    cr_assert_eq(link(path, other), 0);
    umask(077);
    cr_assert_eq(uf_write_file_atomic(path, "second\n", 7, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(text_of(path), "second\n");
    cr_assert_str_eq(text_of(other), "first\n");
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(temporaries(), 0);
}

/* Out of space (a file size limit: the write fails with EFBIG as on a full disk): -1 naming
 * the file, the old file whole, no temporary left. */
Test(fileutil, writer_on_a_full_disk_keeps_the_old_file)
{
    char path[128], err[512] = "", big[8192];
    in_dir(path, sizeof path, "REPORT.md");
    put(path, "old\n");
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    memset(big, 'x', sizeof big);
    cr_assert_eq(uf_write_file_atomic(path, big, sizeof big, err, sizeof err), -1);
    cr_assert(strstr(err, "REPORT.md.tmp.") != NULL && strstr(err, "cannot write") != NULL,
              "%s", err);
    cr_assert_str_eq(text_of(path), "old\n");
    cr_assert_eq(temporaries(), 0);
}

Test(fileutil, writer_refuses_an_empty_name)
{
    char err[512] = "";
    cr_assert_eq(uf_write_file_atomic("", "x", 1, err, sizeof err), -1);
    cr_assert(strstr(err, "empty file name") != NULL, "%s", err);
}

/* A FIFO is refused at once (opening it without O_NONBLOCK waits for a writer forever: the
 * test's alarm would end it), a device without reading (/dev/zero never ends), a folder too;
 * a symbolic link to a regular file is read. */
Test(fileutil, reader_reads_regular_files_only)
{
    char fifo[128], file[128], link[128], err[512] = "";
    char *data = NULL;
    size_t len = 0;
    in_dir(fifo, sizeof fifo, "underfed-trace.1.txt");
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    alarm(10);
    cr_assert_eq(uf_read_file(fifo, &data, &len, err, sizeof err), -1);
    cr_assert(strstr(err, "a FIFO, not a regular file: not read") != NULL, "%s", err);
    cr_assert_eq(uf_read_file("/dev/zero", &data, &len, err, sizeof err), -1);
    cr_assert(strstr(err, "/dev/zero: a character device") != NULL, "%s", err);
    cr_assert_eq(uf_read_file(dir, &data, &len, err, sizeof err), -1);
    cr_assert(strstr(err, "a folder") != NULL, "%s", err);
    in_dir(file, sizeof file, "a.csv");
    in_dir(link, sizeof link, "b.csv");
    put(file, "text\n");
    cr_assert_eq(symlink("a.csv", link), 0);
    cr_assert_eq(uf_read_file(link, &data, &len, err, sizeof err), 0, "%s", err);
    cr_assert_eq(len, 5);
    cr_assert_str_eq(data, "text\n");
    free(data);
    in_dir(link, sizeof link, "no-such.csv");
    cr_assert_eq(uf_read_file(link, &data, &len, err, sizeof err), -1);
    cr_assert(strstr(err, "no-such.csv: cannot open") != NULL, "%s", err);
}

/* A file over the cap is refused by its size, before anything is read (sparse: no disk used). */
Test(fileutil, reader_refuses_a_file_over_its_cap)
{
    char path[128], err[512] = "";
    char *data = NULL;
    size_t len = 0;
    in_dir(path, sizeof path, "huge.csv");
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    cr_assert(fd >= 0);
    cr_assert_eq(ftruncate(fd, (off_t)UF_READ_MAX_BYTES + 1), 0);
    close(fd);
    cr_assert_eq(uf_read_file(path, &data, &len, err, sizeof err), -1);
    cr_assert(strstr(err, "1073741825 bytes, more than the 1024 MiB") != NULL, "%s", err);
}

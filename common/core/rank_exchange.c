/* The ranks of a process-mode run (rank_exchange.h): TCP meeting, id sharing, liveness; or a
 * file. */
#include "rank_exchange.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fileutil.h"   /* uf_write_file_atomic */

enum { MSG_HELLO = 1, MSG_ID = 2, MSG_BYE = 3, MSG_LOST = 4 };
enum { FRAME_BYTES = 16 + UF_PEERS_MAX_BYTES, POLL_MS = 100 };
#define FRAME_MAGIC 0x55464944u     /* "UFID" */

/* Every message is one fixed-size frame: magic, type, id number, value (a rank), payload. */
typedef struct frame {
    uint32_t type, seq, value;
    unsigned char payload[UF_PEERS_MAX_BYTES];
} frame;

/* One connection: rank 0 holds one per other rank, the others one to rank 0. */
typedef struct conn {
    int fd;                     /* -1: closed */
    int rank;                   /* the rank at the other end */
    unsigned char buf[FRAME_BYTES];
    size_t have;                /* bytes of the next frame received so far */
    int bye;                    /* it said goodbye: its end-of-file is no loss */
} conn;

struct uf_peers {
    uf_launch l;
    pthread_mutex_t mu;
    conn *conns;
    int n_conns;
    unsigned seq;               /* ids shared so far */
    int lost_rank;              /* -1: none */
    char lost_why[256];
    int inbox_full;             /* a peer's next id, read ahead by a liveness check */
    frame inbox;
    int file_written;           /* rank 0 (file): FILE.<seq> exists */
};

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Send one frame whole (blocking); -1 when the other end is gone. */
static int send_frame(int fd, uint32_t type, uint32_t seq, uint32_t value, const void *payload,
                      size_t n)
{
    unsigned char b[FRAME_BYTES] = {0};
    size_t off = 0;
    put32(b, FRAME_MAGIC);
    put32(b + 4, type);
    put32(b + 8, seq);
    put32(b + 12, value);
    if (payload)
        memcpy(b + 16, payload, n);
    while (off < sizeof b) {
        ssize_t k = send(fd, b + off, sizeof b - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

/* Record the first loss; rank 0 tells every other rank which one it was. */
static void mark_lost(uf_peers *p, int rank, const char *how)
{
    if (p->lost_rank >= 0)
        return;
    p->lost_rank = rank;
    snprintf(p->lost_why, sizeof p->lost_why, "rank %d is lost (%s)", rank, how);
    if (p->l.rank != 0)
        return;
    for (int i = 0; i < p->n_conns; i++)
        if (p->conns[i].fd >= 0 && p->conns[i].rank != rank)
            (void)send_frame(p->conns[i].fd, MSG_LOST, 0, (uint32_t)rank, NULL, 0);
}

static void close_conn(conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* One whole frame received on c: keep an id, note a goodbye or a loss rank 0 forwards. */
static void take_frame(uf_peers *p, conn *c)
{
    frame f;
    if (get32(c->buf) != FRAME_MAGIC) {
        mark_lost(p, c->rank, "it sent something that is not underfed's");
        close_conn(c);
        return;
    }
    f.type = get32(c->buf + 4);
    f.seq = get32(c->buf + 8);
    f.value = get32(c->buf + 12);
    memcpy(f.payload, c->buf + 16, sizeof f.payload);
    if (f.type == MSG_ID) {
        p->inbox = f;
        p->inbox_full = 1;
    } else if (f.type == MSG_BYE) {
        c->bye = 1;
    } else if (f.type == MSG_LOST) {
        char how[64];
        snprintf(how, sizeof how, "rank %d saw its connection close", c->rank);
        mark_lost(p, (int)f.value, how);
    }
}

/* Read what c has (waiting up to timeout_ms for the first byte): whole frames are taken, an
 * end-of-file without goodbye is a loss. Reading stops at an id not yet taken (the next one,
 * and anything behind it, waits in the socket). */
static void pump(uf_peers *p, conn *c, int timeout_ms)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN, .revents = 0};
    if (c->fd < 0 || p->inbox_full || poll(&pfd, 1, timeout_ms) <= 0)
        return;
    for (;;) {
        ssize_t k = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have, MSG_DONTWAIT);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (k <= 0) {
            if (!c->bye)
                mark_lost(p, c->rank, "its connection closed without a goodbye: the process "
                          "died or was killed");
            close_conn(c);
            return;
        }
        c->have += (size_t)k;
        if (c->have == sizeof c->buf) {
            c->have = 0;
            take_frame(p, c);
            if (c->fd < 0 || p->inbox_full)
                return;
        }
    }
}

/* Read one whole frame from fd within the deadline (the HELLO of a new connection). */
static int read_frame_by(int fd, unsigned char *b, double deadline)
{
    size_t have = 0;
    while (have < FRAME_BYTES) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
        double left = deadline - uf_mono_s();
        ssize_t k;
        if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
            return -1;
        k = recv(fd, b + have, FRAME_BYTES - have, 0);
        if (k <= 0)
            return -1;
        have += (size_t)k;
    }
    return 0;
}

static int listen_on(int port, char *err, size_t errlen)
{
    struct sockaddr_in a;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(err, errlen, "rank 0: socket: %s", strerror(errno));
        return -1;
    }
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons((uint16_t)port);
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0) {
        snprintf(err, errlen, "rank 0 cannot listen on port %d: %s (under torchrun its own "
                 "store holds MASTER_PORT: give UNDERFED_ID_PORT a free port)", port,
                 strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Rank 0: accept every other rank and its HELLO within the deadline. */
static int accept_all(uf_peers *p, double deadline, char *err, size_t errlen)
{
    int lfd = listen_on(p->l.port, err, errlen), joined = 0, rc = -1;
    if (lfd < 0)
        return -1;
    while (joined < p->n_conns) {
        struct pollfd pfd = {.fd = lfd, .events = POLLIN, .revents = 0};
        unsigned char b[FRAME_BYTES];
        double left = deadline - uf_mono_s();
        int fd, r;
        if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0) {
            snprintf(err, errlen, "rank 0: %d of the %d other ranks connected to port %d in "
                     "time", joined, p->n_conns, p->l.port);
            goto out;
        }
        fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        r = read_frame_by(fd, b, deadline) == 0 && get32(b) == FRAME_MAGIC &&
                    get32(b + 4) == MSG_HELLO ? (int)get32(b + 12) : -1;
        if (r < 1 || r >= p->l.world_size || p->conns[r - 1].fd >= 0) {
            close(fd);      /* a stranger, or a rank twice: not one of ours */
            continue;
        }
        p->conns[r - 1].fd = fd;
        joined++;
    }
    rc = 0;
out:
    close(lfd);
    return rc;
}

/* Another rank: connect to rank 0 (retrying until the deadline), then say who it is. */
static int connect_root(uf_peers *p, double deadline, char *err, size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    char port[16];
    int gai, fd = -1;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof port, "%d", p->l.port);
    while ((gai = getaddrinfo(p->l.master_addr, port, &hints, &res)) != 0 && uf_mono_s() < deadline)
        nap_ms(POLL_MS);
    if (gai != 0) {
        snprintf(err, errlen, "rank %d: MASTER_ADDR=%s: %s", p->l.rank, p->l.master_addr,
                 gai_strerror(gai));
        return -1;
    }
    for (;;) {
        fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
        if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0)
            break;
        snprintf(err, errlen, "rank %d could not reach rank 0 at %s:%d in time: %s", p->l.rank,
                 p->l.master_addr, p->l.port, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
        if (uf_mono_s() >= deadline)
            break;
        nap_ms(POLL_MS);
    }
    freeaddrinfo(res);
    if (fd < 0)
        return -1;
    p->conns[0].fd = fd;
    if (send_frame(fd, MSG_HELLO, 0, (uint32_t)p->l.rank, NULL, 0) != 0) {
        snprintf(err, errlen, "rank %d: rank 0 closed the connection", p->l.rank);
        return -1;
    }
    return 0;
}

int uf_peers_open(const uf_launch *l, double limit_s, uf_peers **out, char *err, size_t errlen)
{
    uf_peers *p = calloc(1, sizeof *p);
    double deadline = uf_mono_s() + limit_s;
    int rc = 0;
    *out = NULL;
    if (!p) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    p->l = *l;
    p->lost_rank = -1;
    pthread_mutex_init(&p->mu, NULL);
    if (!l->id_file[0]) {
        p->n_conns = l->rank == 0 ? l->world_size - 1 : 1;
        p->conns = calloc((size_t)p->n_conns, sizeof *p->conns);
        if (!p->conns) {
            snprintf(err, errlen, "out of host memory");
            uf_peers_close(p);
            return -1;
        }
        for (int i = 0; i < p->n_conns; i++) {
            p->conns[i].fd = -1;
            p->conns[i].rank = l->rank == 0 ? i + 1 : 0;
        }
        rc = l->rank == 0 ? accept_all(p, deadline, err, errlen)
                          : connect_root(p, deadline, err, errlen);
    }
    if (rc != 0) {
        uf_peers_close(p);
        return -1;
    }
    *out = p;
    return 0;
}

/* FILE.<seq> of id number seq. */
static void id_path(const uf_peers *p, unsigned seq, char *out, size_t len)
{
    snprintf(out, len, "%s.%u", p->l.id_file, seq);
}

/* Rank 0, file mode: write id `seq` (never over a stale one), remove the previous one (every
 * rank has joined its communicator: rank 0's own creation waited for them). */
static int write_id_file(uf_peers *p, const void *bytes, size_t n, char *err, size_t errlen)
{
    char path[sizeof p->l.id_file + 16], why[256];
    id_path(p, p->seq, path, sizeof path);
    if (access(path, F_OK) == 0) {
        snprintf(err, errlen, "%s already exists: remove it (a stale id would make the other "
                 "ranks join a communicator that no longer exists)", path);
        return -1;
    }
    if (uf_write_file_atomic(path, (const char *)bytes, n, why, sizeof why) != 0) {
        snprintf(err, errlen, "writing the NCCL unique id: %s", why);
        return -1;
    }
    if (p->file_written) {
        id_path(p, p->seq - 1, path, sizeof path);
        unlink(path);
    }
    p->file_written = 1;
    return 0;
}

/* Another rank, file mode: read id `seq` once rank 0 has written it. */
static int read_id_file(uf_peers *p, void *bytes, size_t n, double deadline, char *err,
                        size_t errlen)
{
    char path[sizeof p->l.id_file + 16];
    id_path(p, p->seq, path, sizeof path);
    for (;;) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(bytes, 1, n, f);
            fclose(f);
            if (got == n)
                return 0;
            snprintf(err, errlen, "%s holds %zu bytes, not the %zu of an id", path, got, n);
            return -1;
        }
        if (uf_mono_s() > deadline) {
            snprintf(err, errlen, "rank 0 did not write %s in time", path);
            return -1;
        }
        nap_ms(POLL_MS / 10);
    }
}

/* Another rank, TCP: wait for id `seq` from rank 0. */
static int receive_id(uf_peers *p, void *bytes, size_t n, double deadline, char *err,
                      size_t errlen)
{
    while (!p->inbox_full && p->lost_rank < 0) {
        if (uf_mono_s() > deadline) {
            snprintf(err, errlen, "rank 0 did not send NCCL unique id #%u in time", p->seq);
            return -1;
        }
        pump(p, &p->conns[0], POLL_MS);
    }
    if (!p->inbox_full) {
        snprintf(err, errlen, "%s", p->lost_why);
        return -1;
    }
    p->inbox_full = 0;
    if (p->inbox.seq != p->seq) {
        snprintf(err, errlen, "rank 0 sent NCCL unique id #%u, rank %d expected #%u: the ranks "
                 "run different flags", p->inbox.seq, p->l.rank, p->seq);
        return -1;
    }
    memcpy(bytes, p->inbox.payload, n);
    return 0;
}

int uf_peers_share(uf_peers *p, void *bytes, size_t n, double limit_s, char *err, size_t errlen)
{
    double deadline = uf_mono_s() + limit_s;
    int rc = 0;
    if (n > UF_PEERS_MAX_BYTES) {
        snprintf(err, errlen, "an id of %zu bytes: at most %d", n, UF_PEERS_MAX_BYTES);
        return -1;
    }
    pthread_mutex_lock(&p->mu);
    p->seq++;
    if (p->lost_rank >= 0) {
        snprintf(err, errlen, "%s", p->lost_why);
        rc = -1;
    } else if (p->l.id_file[0]) {
        rc = p->l.rank == 0 ? write_id_file(p, bytes, n, err, errlen)
                            : read_id_file(p, bytes, n, deadline, err, errlen);
    } else if (p->l.rank != 0) {
        rc = receive_id(p, bytes, n, deadline, err, errlen);
    } else {
        for (int i = 0; i < p->n_conns && rc == 0; i++) {
            if (send_frame(p->conns[i].fd, MSG_ID, p->seq, 0, bytes, n) == 0)
                continue;
            mark_lost(p, p->conns[i].rank, "sending it the NCCL unique id failed");
            snprintf(err, errlen, "%s", p->lost_why);
            rc = -1;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int uf_peers_check(uf_peers *p, char *err, size_t errlen)
{
    int rc = 0;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->n_conns && p->lost_rank < 0; i++)
        pump(p, &p->conns[i], 0);
    if (p->lost_rank >= 0) {
        snprintf(err, errlen, "%s", p->lost_why);
        rc = -1;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int uf_peers_lost_rank(uf_peers *p)
{
    int r;
    pthread_mutex_lock(&p->mu);
    r = p->lost_rank;
    pthread_mutex_unlock(&p->mu);
    return r;
}

void uf_peers_close(uf_peers *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_conns; i++) {
        if (p->conns[i].fd >= 0)
            (void)send_frame(p->conns[i].fd, MSG_BYE, 0, (uint32_t)p->l.rank, NULL, 0);
        close_conn(&p->conns[i]);
    }
    if (p->file_written) {
        char path[sizeof p->l.id_file + 16];
        id_path(p, p->seq, path, sizeof path);
        unlink(path);
    }
    pthread_mutex_destroy(&p->mu);
    free(p->conns);
    free(p);
}

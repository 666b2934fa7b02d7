/* Unit tests of rank_exchange.c over real sockets and files, the ranks as forked processes: ids reach
 * every rank in order, a killed rank is named (directly, and forwarded by rank 0), an orderly
 * goodbye is no loss, a missing rank 0 ends in a message, and the id file. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rank_exchange.h"

/* A port nobody listens on now (bound to 0, read back, closed). */
static int free_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    cr_assert(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static uf_launch tcp_world(int rank, int world, int port)
{
    uf_launch l;
    memset(&l, 0, sizeof l);
    l.mode = UF_LAUNCH_PROCESSES;
    l.source = "test";
    l.rank = rank;
    l.world_size = world;
    l.local_rank = rank;
    snprintf(l.master_addr, sizeof l.master_addr, "127.0.0.1");
    l.port = port;
    return l;
}

static void fill_id(unsigned char *id, int seed)
{
    for (int i = 0; i < UF_PEERS_MAX_BYTES; i++)
        id[i] = (unsigned char)(seed * 31 + i);
}

static int child_exit_status(pid_t pid)
{
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/* Rank 1 in a child: receive two ids, compare, say goodbye. Exit 0 when all matched. */
static int rank1_receives_two(int port)
{
    uf_launch l = tcp_world(1, 2, port);
    uf_peers *p;
    unsigned char got[UF_PEERS_MAX_BYTES], want[UF_PEERS_MAX_BYTES];
    char err[256];
    if (uf_peers_open(&l, 10, &p, err, sizeof err) != 0)
        return 2;
    for (int k = 1; k <= 2; k++) {
        fill_id(want, k);
        if (uf_peers_share(p, got, sizeof got, 10, err, sizeof err) != 0 ||
            memcmp(got, want, sizeof got) != 0)
            return 3;
    }
    uf_peers_close(p);
    return 0;
}

Test(peers, ids_reach_the_other_rank_in_order_and_goodbye_is_no_loss)
{
    int port = free_port();
    pid_t pid = fork();
    uf_launch l = tcp_world(0, 2, port);
    uf_peers *p;
    unsigned char id[UF_PEERS_MAX_BYTES];
    char err[256] = "";
    if (pid == 0)
        _exit(rank1_receives_two(port));
    cr_assert_eq(uf_peers_open(&l, 10, &p, err, sizeof err), 0, "%s", err);
    for (int k = 1; k <= 2; k++) {
        fill_id(id, k);
        cr_assert_eq(uf_peers_share(p, id, sizeof id, 10, err, sizeof err), 0, "%s", err);
    }
    cr_assert_eq(child_exit_status(pid), 0);
    cr_assert_eq(uf_peers_check(p, err, sizeof err), 0, "a goodbye counted as a loss: %s", err);
    cr_assert_eq(uf_peers_lost_rank(p), -1);
    uf_peers_close(p);
}

Test(peers, a_killed_rank_is_named_at_once)
{
    int port = free_port();
    pid_t pid = fork();
    uf_launch l = tcp_world(0, 2, port);
    uf_peers *p;
    char err[256] = "";
    if (pid == 0) {
        uf_launch l1 = tcp_world(1, 2, port);
        uf_peers *p1;
        if (uf_peers_open(&l1, 10, &p1, err, sizeof err) != 0)
            _exit(2);
        pause();
        _exit(0);
    }
    cr_assert_eq(uf_peers_open(&l, 10, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_peers_check(p, err, sizeof err), 0, "%s", err);
    kill(pid, SIGKILL);
    cr_assert_eq(child_exit_status(pid), 100 + SIGKILL);
    cr_assert_eq(uf_peers_check(p, err, sizeof err), -1, "the killed rank went unnoticed");
    cr_assert(strstr(err, "rank 1 is lost") != NULL, "%s", err);
    cr_assert_eq(uf_peers_lost_rank(p), 1);
    uf_peers_close(p);
}

Test(peers, rank0_dying_is_named_by_the_others)
{
    int port = free_port();
    pid_t pid = fork();
    uf_launch l = tcp_world(1, 2, port);
    uf_peers *p;
    unsigned char id[UF_PEERS_MAX_BYTES];
    char err[256] = "";
    if (pid == 0) {     /* rank 0 meets rank 1, then dies without a goodbye */
        uf_launch l0 = tcp_world(0, 2, port);
        uf_peers *p0;
        _exit(uf_peers_open(&l0, 10, &p0, err, sizeof err) != 0 ? 2 : 0);
    }
    cr_assert_eq(uf_peers_open(&l, 10, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(child_exit_status(pid), 0);
    cr_assert_eq(uf_peers_share(p, id, sizeof id, 10, err, sizeof err), -1);
    cr_assert(strstr(err, "rank 0 is lost") != NULL, "%s", err);
    uf_peers_close(p);
}

/* World of three: rank 2 is killed; rank 0 sees it and rank 1 learns it from rank 0. */
Test(peers, rank0_forwards_a_loss_to_the_others)
{
    int port = free_port();
    pid_t r1, r2;
    uf_launch l = tcp_world(0, 3, port);
    uf_peers *p;
    char err[256] = "";
    r1 = fork();
    if (r1 == 0) {
        uf_launch l1 = tcp_world(1, 3, port);
        uf_peers *p1;
        double waited = 0;
        if (uf_peers_open(&l1, 10, &p1, err, sizeof err) != 0)
            _exit(2);
        struct timespec nap = {0, 10000000L};
        while (uf_peers_check(p1, err, sizeof err) == 0 && waited < 10) {
            nanosleep(&nap, NULL);
            waited += 0.01;
        }
        _exit(strstr(err, "rank 2 is lost") ? 0 : 3);
    }
    r2 = fork();
    if (r2 == 0) {
        uf_launch l2 = tcp_world(2, 3, port);
        uf_peers *p2;
        if (uf_peers_open(&l2, 10, &p2, err, sizeof err) != 0)
            _exit(2);
        pause();
        _exit(0);
    }
    cr_assert_eq(uf_peers_open(&l, 10, &p, err, sizeof err), 0, "%s", err);
    kill(r2, SIGKILL);
    cr_assert_eq(child_exit_status(r2), 100 + SIGKILL);
    cr_assert_eq(uf_peers_check(p, err, sizeof err), -1);
    cr_assert(strstr(err, "rank 2 is lost") != NULL, "%s", err);
    cr_assert_eq(child_exit_status(r1), 0, "rank 1 was not told which rank was lost");
    uf_peers_close(p);
}

Test(peers, no_rank0_ends_in_a_message_at_the_deadline)
{
    uf_launch l = tcp_world(1, 2, free_port());
    uf_peers *p = NULL;
    char err[256] = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(uf_peers_open(&l, 0.5, &p, err, sizeof err), -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert(strstr(err, "could not reach rank 0 at 127.0.0.1:") != NULL, "%s", err);
    cr_assert(t1.tv_sec - t0.tv_sec < 5, "the deadline was not kept");
    cr_assert_null(p);
}

Test(peers, rank0_waits_for_the_others_until_the_deadline)
{
    uf_launch l = tcp_world(0, 3, free_port());
    uf_peers *p = NULL;
    char err[256] = "";
    cr_assert_eq(uf_peers_open(&l, 0.3, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "0 of the 2 other ranks connected") != NULL, "%s", err);
}

Test(peers, id_file_written_atomically_read_and_removed)
{
    char dir[] = "/tmp/uf_peers_XXXXXX", path[64];
    uf_launch l0, l1;
    uf_peers *p0, *p1;
    unsigned char id[UF_PEERS_MAX_BYTES], got[UF_PEERS_MAX_BYTES];
    char err[256] = "";
    cr_assert_not_null(mkdtemp(dir));
    memset(&l0, 0, sizeof l0);
    l0.mode = UF_LAUNCH_PROCESSES;
    l0.world_size = 2;
    snprintf(l0.id_file, sizeof l0.id_file, "%s/ar.id", dir);
    l1 = l0;
    l1.rank = 1;
    cr_assert_eq(uf_peers_open(&l0, 1, &p0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_peers_open(&l1, 1, &p1, err, sizeof err), 0, "%s", err);
    fill_id(id, 7);
    cr_assert_eq(uf_peers_share(p0, id, sizeof id, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_peers_share(p1, got, sizeof got, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(memcmp(got, id, sizeof id), 0);
    /* the next id goes to ar.id.2; ar.id.1 is removed (every rank has joined) */
    cr_assert_eq(uf_peers_share(p0, id, sizeof id, 1, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/ar.id.1", dir);
    cr_assert_neq(access(path, F_OK), 0, "%s left behind", path);
    /* rank 1 expects #2 next; with nothing written it gives up at the deadline */
    cr_assert_eq(uf_peers_share(p1, got, sizeof got, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_peers_share(p1, got, sizeof got, 0.2, err, sizeof err), -1);
    cr_assert(strstr(err, "did not write") != NULL, "%s", err);
    uf_peers_close(p1);
    uf_peers_close(p0);
    snprintf(path, sizeof path, "%s/ar.id.2", dir);
    cr_assert_neq(access(path, F_OK), 0, "%s left behind", path);
    rmdir(dir);
}

Test(peers, a_stale_id_file_is_refused)
{
    char dir[] = "/tmp/uf_peers_XXXXXX", path[64];
    uf_launch l;
    uf_peers *p;
    unsigned char id[UF_PEERS_MAX_BYTES] = {0};
    char err[256] = "";
    FILE *f;
    cr_assert_not_null(mkdtemp(dir));
    memset(&l, 0, sizeof l);
    l.mode = UF_LAUNCH_PROCESSES;
    l.world_size = 2;
    snprintf(l.id_file, sizeof l.id_file, "%s/ar.id", dir);
    snprintf(path, sizeof path, "%s/ar.id.1", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(uf_peers_open(&l, 1, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(uf_peers_share(p, id, sizeof id, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "already exists") != NULL, "%s", err);
    uf_peers_close(p);
    unlink(path);
    rmdir(dir);
}

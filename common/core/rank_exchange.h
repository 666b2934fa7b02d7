/* The ranks of one process-mode run, seen from one of them: how they meet, how the NCCL unique
 * id (opaque bytes here) of each communicator reaches them, and whether one of them is gone.
 *
 * TCP (launcher_env.h, MASTER_ADDR:port): rank 0 listens, every other rank connects (retrying until
 * the deadline) and says its rank. The connections stay open for the whole run: each id goes
 * out over them, and they are the liveness watch: a peer that dies (SIGKILL included) closes
 * its socket, its peer reads end-of-file without the goodbye an orderly exit sends, and
 * uf_peers_check names it at once. Rank 0 forwards the loss to the others.
 * File (UNDERFED_ID_FILE): rank 0 writes id n to FILE.<n> (temporary name, then rename), the
 * others poll for it; no liveness watch (a lost rank is then found by the waits' deadlines).
 * Plain C, thread-safe (one lock): unit-tested without a GPU (tests/unit/test_peers.c). */
#ifndef UF_RANK_EXCHANGE_H
#define UF_RANK_EXCHANGE_H

#include <stddef.h>

#include "launcher_env.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { UF_PEERS_MAX_BYTES = 128 };  /* the largest message: an ncclUniqueId */

typedef struct uf_peers uf_peers;

/* Meet the other ranks (TCP) within limit_s. 0, or -1 with the message in err. */
int uf_peers_open(const uf_launch *l, double limit_s, uf_peers **out, char *err, size_t errlen);

/* Share the next id: rank 0 sends `bytes` (n <= UF_PEERS_MAX_BYTES), the others receive them
 * into `bytes` (waiting up to limit_s). Ids are numbered: a rank that expects another number
 * than rank 0 sent runs other flags, and fails. 0, or -1 with err. */
int uf_peers_share(uf_peers *p, void *bytes, size_t n, double limit_s, char *err, size_t errlen);

/* 0 while no rank is known lost; -1 with "rank R ..." in err once one is (it stays lost). */
int uf_peers_check(uf_peers *p, char *err, size_t errlen);

/* The rank known lost, or -1. */
int uf_peers_lost_rank(uf_peers *p);

/* Say goodbye (an orderly end: not a loss) and close; rank 0 removes its last id file. */
void uf_peers_close(uf_peers *p);

#ifdef __cplusplus
}
#endif
#endif

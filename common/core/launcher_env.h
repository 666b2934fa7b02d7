/* The launcher's world: which rank this process is, of how many, and how the ranks meet.
 * Read from the environment the launchers people run already set (torchrun, Slurm's srun,
 * Open MPI's mpirun), so that a multi-GPU scenario needs no rendezvous of its own. Plain C:
 * unit-tested without a GPU (tests/unit/test_launch.c). */
#ifndef UF_LAUNCHER_ENV_H
#define UF_LAUNCHER_ENV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    UF_LAUNCH_THREADS = 0,      /* no launcher (or a world of one): this process drives every GPU */
    UF_LAUNCH_PROCESSES = 1     /* one process per rank (GPU) */
} uf_launch_mode;

typedef struct uf_launch {
    uf_launch_mode mode;
    const char *source;         /* "torchrun", "Open MPI", "Slurm", or "none" */
    int rank, world_size, local_rank;
    /* process mode: the NCCL unique id travels over TCP to master_addr:port (rank 0 listens),
     * or, with id_file set, through id_file.<n> on a filesystem every rank sees */
    char master_addr[256];
    int port;                   /* UNDERFED_ID_PORT, else MASTER_PORT */
    char id_file[1024];         /* UNDERFED_ID_FILE; empty: TCP */
} uf_launch;

/* The environment lookup (getenv in a program, a table in a test). */
typedef const char *(*uf_getenv_fn)(const char *name, void *arg);

/* Fill *l from the environment. Precedence: torchrun's RANK / WORLD_SIZE / LOCAL_RANK, then
 * Open MPI's OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK, then Slurm's SLURM_PROCID /
 * SLURM_NTASKS / SLURM_LOCALID (only when SLURM_NTASKS is set: a batch script alone sets
 * SLURM_PROCID). A world of one is thread mode. 0, or -1 with a message in err (bad number,
 * partial set, no MASTER_ADDR / MASTER_PORT nor UNDERFED_ID_FILE in process mode). */
int uf_launch_parse(uf_getenv_fn get, void *arg, uf_launch *l, char *err, size_t errlen);

/* uf_launch_parse over the process's environment. */
int uf_launch_from_environ(uf_launch *l, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

/* The launcher's world from the environment (launcher_env.h). */
#include "launcher_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One launcher's three variables. */
typedef struct launcher {
    const char *source, *rank, *size, *local;
} launcher;

static const launcher launchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

static const char *get_set(uf_getenv_fn get, void *arg, const char *name)
{
    const char *v = get(name, arg);
    return v && *v ? v : NULL;
}

/* A whole number in [lo, hi] from variable `name`, or -1 with the message. */
static int parse_int(const char *name, const char *text, long lo, long hi, int *out, char *err,
                     size_t errlen)
{
    char *end = NULL;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) {
        snprintf(err, errlen, "%s=%s: expected a whole number in [%ld, %ld]", name, text, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Whether launcher k's variables are present: any of torchrun's or Open MPI's; Slurm's only
 * with SLURM_NTASKS (an sbatch script sets SLURM_PROCID without launching any task). */
static int present(uf_getenv_fn get, void *arg, int k)
{
    const launcher *L = &launchers[k];
    if (k == 2)
        return get_set(get, arg, L->size) != NULL;
    return get_set(get, arg, L->rank) || get_set(get, arg, L->size) || get_set(get, arg, L->local);
}

/* Rank, world size and local rank from launcher k; all three must be valid. */
static int read_world(uf_getenv_fn get, void *arg, int k, uf_launch *l, char *err, size_t errlen)
{
    const launcher *L = &launchers[k];
    const char *rank = get_set(get, arg, L->rank), *size = get_set(get, arg, L->size);
    const char *local = get_set(get, arg, L->local);
    if (!rank || !size || !local) {
        snprintf(err, errlen, "%s's environment is incomplete: %s, %s and %s must all be set "
                 "(%s is missing)", L->source, L->rank, L->size, L->local,
                 !rank ? L->rank : !size ? L->size : L->local);
        return -1;
    }
    l->source = L->source;
    if (parse_int(L->size, size, 1, 65536, &l->world_size, err, errlen) ||
        parse_int(L->rank, rank, 0, l->world_size - 1, &l->rank, err, errlen) ||
        parse_int(L->local, local, 0, l->world_size - 1, &l->local_rank, err, errlen))
        return -1;
    return 0;
}

/* Process mode: the id file, or MASTER_ADDR and a port. */
static int read_rendezvous(uf_getenv_fn get, void *arg, uf_launch *l, char *err, size_t errlen)
{
    const char *file = get_set(get, arg, "UNDERFED_ID_FILE");
    const char *addr = get_set(get, arg, "MASTER_ADDR");
    const char *port = get_set(get, arg, "UNDERFED_ID_PORT");
    const char *port_name = "UNDERFED_ID_PORT";
    if (file) {
        if (strlen(file) + 16 >= sizeof l->id_file) {
            snprintf(err, errlen, "UNDERFED_ID_FILE is too long (%zu characters)", strlen(file));
            return -1;
        }
        snprintf(l->id_file, sizeof l->id_file, "%s", file);
        return 0;
    }
    if (!port) {
        port = get_set(get, arg, "MASTER_PORT");
        port_name = "MASTER_PORT";
    }
    if (!addr || !port) {
        snprintf(err, errlen, "one process per GPU (%s: rank %d of %d) needs %s: rank 0's host "
                 "in MASTER_ADDR and a free port in MASTER_PORT, or a shared file in "
                 "UNDERFED_ID_FILE", l->source, l->rank, l->world_size,
                 !addr && !port ? "MASTER_ADDR and MASTER_PORT" : !addr ? "MASTER_ADDR"
                                                                        : "MASTER_PORT");
        return -1;
    }
    if (strlen(addr) >= sizeof l->master_addr) {
        snprintf(err, errlen, "MASTER_ADDR is too long (%zu characters)", strlen(addr));
        return -1;
    }
    snprintf(l->master_addr, sizeof l->master_addr, "%s", addr);
    return parse_int(port_name, port, 1, 65535, &l->port, err, errlen);
}

int uf_launch_parse(uf_getenv_fn get, void *arg, uf_launch *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->mode = UF_LAUNCH_THREADS;
    l->source = "none";
    l->world_size = 1;
    for (int k = 0; k < (int)(sizeof launchers / sizeof launchers[0]); k++) {
        if (!present(get, arg, k))
            continue;
        if (read_world(get, arg, k, l, err, errlen))
            return -1;
        if (l->world_size == 1)
            return 0;
        l->mode = UF_LAUNCH_PROCESSES;
        return read_rendezvous(get, arg, l, err, errlen);
    }
    return 0;
}

static const char *process_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

int uf_launch_from_environ(uf_launch *l, char *err, size_t errlen)
{
    return uf_launch_parse(process_getenv, NULL, l, err, errlen);
}

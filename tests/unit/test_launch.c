/* Unit tests of launcher_env.c: the launcher's world from torchrun's, Open MPI's or Slurm's
 * environment, their precedence, and a clear refusal of what does not add up. */
#include <criterion/criterion.h>
#include <string.h>

#include "launcher_env.h"

/* A test environment: NULL-terminated name, value pairs. */
static const char *table_getenv(const char *name, void *arg)
{
    const char *const *kv = (const char *const *)arg;
    for (int i = 0; kv[i]; i += 2)
        if (strcmp(kv[i], name) == 0)
            return kv[i + 1];
    return NULL;
}

static int parse(const char *const *env, uf_launch *l, char *err, size_t len)
{
    return uf_launch_parse(table_getenv, (void *)env, l, err, len);
}

Test(launch, no_launcher_is_thread_mode)
{
    const char *env[] = {"PATH", "/bin", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.mode, UF_LAUNCH_THREADS);
    cr_assert_str_eq(l.source, "none");
}

Test(launch, torchrun_over_tcp)
{
    const char *env[] = {"RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1", "MASTER_ADDR",
                         "127.0.0.1", "MASTER_PORT", "29500", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.mode, UF_LAUNCH_PROCESSES);
    cr_assert_str_eq(l.source, "torchrun");
    cr_assert_eq(l.rank, 1);
    cr_assert_eq(l.world_size, 2);
    cr_assert_eq(l.local_rank, 1);
    cr_assert_str_eq(l.master_addr, "127.0.0.1");
    cr_assert_eq(l.port, 29500);
    cr_assert_str_eq(l.id_file, "");
}

Test(launch, id_port_overrides_master_port)
{
    const char *env[] = {"RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0", "MASTER_ADDR", "h",
                         "MASTER_PORT", "29500", "UNDERFED_ID_PORT", "29511", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.port, 29511);
}

Test(launch, precedence_torchrun_then_openmpi_then_slurm)
{
    /* srun torchrun ...: Slurm's variables are the agent's, torchrun's the worker's */
    const char *all[] = {"RANK", "3", "WORLD_SIZE", "4", "LOCAL_RANK", "1",
                         "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "8",
                         "OMPI_COMM_WORLD_LOCAL_RANK", "0", "SLURM_PROCID", "1", "SLURM_NTASKS",
                         "2", "SLURM_LOCALID", "0", "MASTER_ADDR", "h", "MASTER_PORT", "1", NULL};
    const char *mpi_slurm[] = {"OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "8",
                               "OMPI_COMM_WORLD_LOCAL_RANK", "1", "SLURM_PROCID", "0",
                               "SLURM_NTASKS", "1", "SLURM_LOCALID", "0", "MASTER_ADDR", "h",
                               "MASTER_PORT", "1", NULL};
    const char *slurm[] = {"SLURM_PROCID", "9", "SLURM_NTASKS", "16", "SLURM_LOCALID", "1",
                           "MASTER_ADDR", "h", "MASTER_PORT", "1", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(all, &l, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(l.source, "torchrun");
    cr_assert_eq(l.rank, 3);
    cr_assert_eq(parse(mpi_slurm, &l, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(l.source, "Open MPI");
    cr_assert_eq(l.rank, 5);
    cr_assert_eq(l.world_size, 8);
    cr_assert_eq(parse(slurm, &l, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(l.source, "Slurm");
    cr_assert_eq(l.rank, 9);
    cr_assert_eq(l.world_size, 16);
    cr_assert_eq(l.local_rank, 1);
}

Test(launch, sbatch_script_alone_is_thread_mode)
{
    /* a batch script sets SLURM_PROCID without launching tasks: no SLURM_NTASKS */
    const char *env[] = {"SLURM_PROCID", "0", "SLURM_LOCALID", "0", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.mode, UF_LAUNCH_THREADS);
}

Test(launch, world_of_one_is_thread_mode)
{
    const char *env[] = {"RANK", "0", "WORLD_SIZE", "1", "LOCAL_RANK", "0", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.mode, UF_LAUNCH_THREADS);
    cr_assert_str_eq(l.source, "torchrun");
}

Test(launch, id_file_needs_no_master)
{
    const char *env[] = {"SLURM_PROCID", "1", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0",
                         "UNDERFED_ID_FILE", "/shared/ar.id", NULL};
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.mode, UF_LAUNCH_PROCESSES);
    cr_assert_str_eq(l.id_file, "/shared/ar.id");
}

/* Each bad environment is refused with a message naming what is wrong. */
static void refused(const char *const *env, const char *want)
{
    uf_launch l;
    char err[512] = "";
    cr_assert_eq(parse(env, &l, err, sizeof err), -1, "accepted; wanted: %s", want);
    cr_assert(strstr(err, want) != NULL, "message \"%s\" lacks \"%s\"", err, want);
}

Test(launch, refuses_what_does_not_add_up)
{
    const char *partial[] = {"RANK", "0", "WORLD_SIZE", "2", NULL};
    const char *no_addr[] = {"RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0", "MASTER_PORT",
                             "29500", NULL};
    const char *no_port[] = {"RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0", "MASTER_ADDR",
                             "h", NULL};
    const char *neither[] = {"OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2",
                             "OMPI_COMM_WORLD_LOCAL_RANK", "0", NULL};
    const char *rank_big[] = {"RANK", "2", "WORLD_SIZE", "2", "LOCAL_RANK", "0", NULL};
    const char *not_number[] = {"RANK", "1x", "WORLD_SIZE", "2", "LOCAL_RANK", "0", NULL};
    const char *negative[] = {"SLURM_PROCID", "-1", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0",
                              NULL};
    const char *slurm_partial[] = {"SLURM_PROCID", "1", "SLURM_NTASKS", "2", NULL};
    const char *world_zero[] = {"RANK", "0", "WORLD_SIZE", "0", "LOCAL_RANK", "0", NULL};
    const char *bad_port[] = {"RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0", "MASTER_ADDR",
                              "h", "MASTER_PORT", "70000", NULL};
    refused(partial, "LOCAL_RANK is missing");
    refused(no_addr, "needs MASTER_ADDR:");
    refused(no_port, "needs MASTER_PORT:");
    refused(neither, "needs MASTER_ADDR and MASTER_PORT");
    refused(neither, "UNDERFED_ID_FILE");
    refused(rank_big, "RANK=2: expected a whole number in [0, 1]");
    refused(not_number, "RANK=1x");
    refused(negative, "SLURM_PROCID=-1");
    refused(slurm_partial, "SLURM_LOCALID is missing");
    refused(world_zero, "WORLD_SIZE=0");
    refused(bad_port, "MASTER_PORT=70000");
}

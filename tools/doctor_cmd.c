/* `underfed doctor` (doctor_cmd.h):
 *
 *   underfed doctor --from DIR [--json FILE] [--ceilings FILE]
 *       analyse DIR/underfed-trace.PID.txt (one per process) and print the diagnosis;
 *   underfed doctor [--out DIR] [--json FILE] [--ceilings FILE] [--light | --counters]
 *                   [--inject LIB] -- COMMAND ...
 *       run COMMAND with CUDA_INJECTION64_PATH=libunderfed_inject.so (the recorder writes one
 *       file per process into DIR at exit), then analyse DIR;
 *   with --ceilings (opt-in), each diagnosis is also held against the machine's ceilings file
 *   (benches/ceilings' ceilings.csv): launch cost, pinned host-to-device copy rates, activity;
 *   underfed doctor --rules
 *       the rule table as Markdown (docs/doctor.md's table is this output);
 *   underfed doctor --help | --version.
 *
 * The JSON (default DIR/doctor.json) holds one diagnosis per process ("processes") and what
 * each file says of its recording ("recordings": uf_trace_describe_json). */
#define _XOPEN_SOURCE 700     /* realpath */
#include "doctor_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "doctor.h"
#include "doctor_trace.h"
#include "fileutil.h"
#include "strbuf.h"
#include "trace_export.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_SKIPPED = 77 };   /* and cli.h's EXIT_BAD (2) */

#define INJECT_NAME "libunderfed_inject.so"

typedef struct doctor_args {
    const char *from;           /* --from DIR */
    const char *out;            /* --out DIR (for a run) */
    const char *json;           /* --json FILE */
    const char *inject;         /* --inject LIB */
    const char *trace;          /* --trace FILE.json: the records as a Perfetto trace */
    const char *ceilings;       /* --ceilings FILE: compare with the machine's ceilings */
    int light, rules, counters;
    int help, version;          /* --help, --version: print it, exit 0 */
    char **command;             /* after "--", NULL-terminated */
} doctor_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: underfed doctor --from DIR [--json FILE] [--trace FILE.json] [--ceilings FILE]\n"
            "       underfed doctor [--out DIR] [--json FILE] [--trace FILE.json] [--light]\n"
            "                       [--counters] [--inject LIB] [--ceilings FILE]\n"
            "                       -- COMMAND [ARGS...]\n"
            "       underfed doctor --rules\n"
            "       underfed doctor --help | --version\n"
            "Diagnoses why the GPU idles: runs COMMAND with the suite's CUPTI injection library\n"
            "(or reads DIR's underfed-trace.PID.txt files), finds the steady-state steps, and rates\n"
            "each failure mode (launch storm, host sync, starved input, exposed all-reduce, ...)\n"
            "none / moderate / high with the share of each step at stake (a recompilation after\n"
            "the first steps: of the run since them), the fix and the scenario that reproduces\n"
            "it. --out: where the records go (default ./underfed-doctor);\n"
            "--json: the diagnosis as JSON (default DIR/doctor.json); --light: no driver calls,\n"
            "no NVTX ranges and no host sampler (less overhead; kernels, copies, syncs and the\n"
            "runtime calls stay); --counters: also PM sampling and NVML in the traced process\n"
            "(not with --light); --inject: the recorder (default:\n"
            "next to underfed); --trace: the records as a Perfetto/Chrome trace\n"
            "(ui.perfetto.dev), one process per pid; --ceilings: also hold each process against\n"
            "this machine's ceilings file (benches/ceilings' ceilings.csv): the launch calls'\n"
            "median against launch_us, pinned host-to-device copy rates against h2d_pinned_gbs\n"
            "(pageable copies are counted, not compared: their records time only the DMA),\n"
            "DRAM and tensor activity against copy_dram_pct and gemm_bf16_tensor_pct where the\n"
            "file has them.\n"
            "The recorder keeps every runtime and driver call with its thread, but calls shorter\n"
            "than UNDERFED_DOCTOR_API_MIN_NS (default 1000 ns) that neither launch, copy,\n"
            "synchronize, record an event nor may wait for the device (counted, in the file's\n"
            "api_filter line); it samples the CPU time and state of each CUDA-calling thread every\n"
            "UNDERFED_DOCTOR_HOST_US (default 1000 us; 0 off); it keeps at most\n"
            "UNDERFED_DOCTOR_MAX_RECORDS records (default 5000000; the rest are counted).\n"
            "Exit: 0 diagnosed, 1 COMMAND failed, 2 usage, unreadable records or ceilings, or a\n"
            "process not diagnosed (a process that only initialized CUDA, its API calls submitting\n"
            "nothing, is left out, said),\n"
            "77 COMMAND skipped (exit 77: no GPU, too few GPUs).\n");
}

static int bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, "underfed doctor: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    usage(stderr);
    return EXIT_BAD;
}

/* The value of option argv[*i] (next argument). */
static int take_value(int argc, char **argv, int *i, const char **slot)
{
    if (*slot != NULL)
        return bad_usage("given twice:", argv[*i]);
    if (*i + 1 >= argc || argv[*i + 1][0] == '\0' || strncmp(argv[*i + 1], "--", 2) == 0)
        return bad_usage("needs a value:", argv[*i]);
    *slot = argv[++*i];
    return 0;
}

static int parse(int argc, char **argv, doctor_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--") == 0) {
            if (i + 1 >= argc)
                return bad_usage("nothing to run after --", NULL);
            a->command = argv + i + 1;
            break;
        } else if (strcmp(s, "--from") == 0) {
            rc = take_value(argc, argv, &i, &a->from);
        } else if (strcmp(s, "--out") == 0) {
            rc = take_value(argc, argv, &i, &a->out);
        } else if (strcmp(s, "--json") == 0) {
            rc = take_value(argc, argv, &i, &a->json);
        } else if (strcmp(s, "--inject") == 0) {
            rc = take_value(argc, argv, &i, &a->inject);
        } else if (strcmp(s, "--trace") == 0) {
            rc = take_value(argc, argv, &i, &a->trace);
        } else if (strcmp(s, "--ceilings") == 0) {
            rc = take_value(argc, argv, &i, &a->ceilings);
        } else if (strcmp(s, "--light") == 0) {
            a->light = 1;
        } else if (strcmp(s, "--counters") == 0) {
            a->counters = 1;
        } else if (strcmp(s, "--rules") == 0) {
            a->rules = 1;
        } else if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            a->help = 1;
            return 0;
        } else if (strcmp(s, "--version") == 0) {
            a->version = 1;
            return 0;
        } else {
            return bad_usage("unknown argument", s);
        }
        if (rc != 0)
            return rc;
    }
    int modes = (a->from != NULL) + (a->command != NULL) + a->rules;
    if (modes != 1)
        return bad_usage(modes ? "give one of --from DIR, --rules, -- COMMAND"
                               : "nothing to do: --from DIR, --rules or -- COMMAND", NULL);
    if (a->from && (a->out || a->light || a->counters || a->inject))
        return bad_usage("--out, --light, --counters and --inject apply to a run (-- COMMAND)",
                         NULL);
    if (a->light && a->counters)
        return bad_usage("--light leaves the counters out: not with --counters", NULL);
    if (a->rules &&
        (a->out || a->light || a->counters || a->inject || a->json || a->trace || a->ceilings))
        return bad_usage("--rules takes no other option", NULL);
    return 0;
}

/* ---- analysing a folder ------------------------------------------------------------------ */

/* The records of every process as one Perfetto trace (the harness's exporter). */
static int export_trace(const char *path, const uf_trace_file *files, int n)
{
    char err[512];
    char (*labels)[32] = calloc((size_t)n, sizeof *labels);
    uf_trace_section *sections = calloc((size_t)n, sizeof *sections);
    int rc = EXIT_BAD;
    if (labels == NULL || sections == NULL) {
        fprintf(stderr, "underfed doctor: out of memory\n");
        goto out_free;
    }
    for (int i = 0; i < n; i++) {
        snprintf(labels[i], sizeof labels[i], "pid %d", files[i].t.pid);
        sections[i] = (uf_trace_section){labels[i], files[i].t.acts, files[i].t.n_acts,
                                         files[i].t.apis, files[i].t.n_apis};
    }
    if (uf_trace_export_chrome(path, sections, n, err, sizeof err) != 0) {
        fprintf(stderr, "underfed doctor: %s\n", err);
        goto out_free;
    }
    printf("trace: %s\n", path);
    rc = EXIT_OK;
out_free:
    free(labels);
    free(sections);
    return rc;
}

/* A process that only initialized CUDA: no device work recorded, and no API call recorded
 * that submits any (torch.compile's workers, a launcher, a Lightning helper process: the
 * recorder is loaded when CUDA initializes, so a process that then made no call at all, or
 * only calls under the filter's threshold, is one too). Not a process whose recorder CUPTI
 * refused (uf_doctor_refusal_note's "CUPTI refused ..."): it may have run anything. */
static int only_initialized_cuda(const uf_dtrace *t)
{
    if (t->n_acts > 0 || (t->n_apis == 0 && strstr(t->note, "CUPTI refused") != NULL))
        return 0;
    for (size_t i = 0; i < t->n_apis; i++)
        if (uf_trace_api_submits(t->apis[i].name))
            return 0;
    return 1;
}

/* One process: diagnosed, printed, and into the JSON's processes (b); its recording described
 * in both (rec). 1 diagnosed, 0 left out (it only initialized CUDA), -1 not diagnosed: a
 * failure. */
static int diagnose_file(const uf_trace_file *f, const uf_doctor_ceilings *ceil, uf_strbuf *b,
                         uf_strbuf *rec)
{
    char err[512];
    uf_diagnosis d;
    if (f->t.note[0])
        fprintf(stderr, "underfed doctor: pid %d: %s\n", f->t.pid, f->t.note);
    uf_sb_item(rec, ",\n");
    if (uf_doctor_analyze(&f->t, &d, err, sizeof err) != 0) {
        int idle = only_initialized_cuda(&f->t);
        fprintf(stderr, "underfed doctor: %s: %s%s\n", f->path, err,
                idle ? " (the process initialized CUDA and ran nothing on the device: left out)"
                     : "");
        uf_trace_describe_json(rec, f, err);
        return idle ? 0 : -1;
    }
    if (ceil != NULL)
        uf_doctor_compare(&d, ceil);
    uf_doctor_print(stdout, &d);
    uf_strbuf line = {0};
    uf_trace_describe(&line, f);
    if (line.data != NULL)
        fputs(line.data, stdout);
    free(line.data);
    uf_sb_item(b, ",\n");
    uf_doctor_json(b, &d);
    uf_trace_describe_json(rec, f, NULL);
    return 1;
}

/* DIR's processes diagnosed, printed and written as JSON (their diagnoses, then what each file
 * says of its recording); each against ceil when given. Exit 2 when a process could not be
 * diagnosed, even where others were. */
static int diagnose_dir(const char *dir, const char *json, const char *trace,
                        const uf_doctor_ceilings *ceil)
{
    uf_trace_file *files;
    int n;
    char err[512], json_path[PATH_MAX];
    if (uf_trace_read_dir(dir, &files, &n, err, sizeof err) != 0) {
        fprintf(stderr, "underfed doctor: %s\n", err);
        return EXIT_BAD;
    }
    uf_strbuf b = {0}, rec = {0};
    int diagnosed = 0, failed = 0;
    uf_sb_puts(&b, "{\"processes\": [\n");
    for (int i = 0; i < n; i++) {
        int r = diagnose_file(&files[i], ceil, &b, &rec);
        diagnosed += r > 0;
        failed += r < 0;
    }
    uf_sb_puts(&b, "\n], \"recordings\": [\n");
    if (rec.data != NULL)
        uf_sb_puts(&b, rec.data);
    uf_sb_puts(&b, "\n]}\n");
    b.failed |= rec.failed;
    free(rec.data);
    int trace_rc = trace != NULL ? export_trace(trace, files, n) : EXIT_OK;
    uf_trace_free_all(files, n);
    if (trace_rc != EXIT_OK) {
        free(b.data);
        return trace_rc;
    }
    if (json == NULL) {
        snprintf(json_path, sizeof json_path, "%s/doctor.json", dir);
        json = json_path;
    }
    if (uf_sb_commit(&b, json, err, sizeof err) != 0) {
        fprintf(stderr, "underfed doctor: %s\n", err);
        return EXIT_BAD;
    }
    printf("diagnosis of %d process%s: %s\n", diagnosed, diagnosed == 1 ? "" : "es", json);
    if (failed > 0) {
        fprintf(stderr, "underfed doctor: %d of %d process%s not diagnosed (the reasons above)\n",
                failed, n, n == 1 ? "" : "es");
        return EXIT_BAD;
    }
    return diagnosed > 0 ? EXIT_OK : EXIT_BAD;
}

/* ---- running a command under the recorder ------------------------------------------------ */

/* The recorder: --inject, else $UNDERFED_INJECT, else next to this program. Absolute. */
static int find_injector(const char *given, char *out, size_t len)
{
    const char *env = getenv("UNDERFED_INJECT");
    char self[PATH_MAX], candidate[PATH_MAX + sizeof INJECT_NAME + 1];
    if (given == NULL && env != NULL && env[0])
        given = env;
    if (given == NULL) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return -1;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash == NULL)
            return -1;
        *slash = '\0';
        snprintf(candidate, sizeof candidate, "%s/%s", self, INJECT_NAME);
        given = candidate;
    }
    if (realpath(given, out) == NULL || strlen(out) >= len) {
        fprintf(stderr, "underfed doctor: the recorder %s: %s (build it: cmake --build build "
                        "--target underfed_inject; or --inject LIB)\n", given, strerror(errno));
        return -1;
    }
    return 0;
}

/* DIR's trace files: counted, and removed when `remove` (an earlier run's, readable or not,
 * so that they are not merged with this one). The count, or -1 when one cannot be removed. */
static int scan_traces(const char *dir, int remove)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int rc = 0, count = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (!uf_trace_is_name(e->d_name))
            continue;
        count++;
        if (!remove)
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) {
            fprintf(stderr, "underfed doctor: cannot remove %s: %s\n", path, strerror(errno));
            rc = -1;
        }
    }
    closedir(d);
    return rc != 0 ? -1 : count;
}

/* Another profiler's injection already set: say so; the command still runs. */
static void warn_other_clients(void)
{
    const char *vars[] = {"CUDA_INJECTION64_PATH", "NSYS_PROFILING_SESSION_ID", "NV_NSIGHT_INJECTION_PORT_BASE", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i]) != NULL)
            fprintf(stderr, "underfed doctor: %s is set: another profiler may be attached; CUPTI "
                            "allows one activity client per process, so one of them will see "
                            "nothing (the recorder says which)\n", vars[i]);
}

static int run_command(char **command, const char *inject, const char *dir, int light,
                       int counters)
{
    warn_other_clients();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "underfed doctor: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setenv("CUDA_INJECTION64_PATH", inject, 1);
        /* NVTX ranges reach CUPTI through its NVTX injection entry point, which the recorder
         * re-exports (dlsym on it finds libcupti's InitializeInjectionNvtx2). */
        setenv("NVTX_INJECTION64_PATH", inject, 1);
        setenv("UNDERFED_DOCTOR_OUT", dir, 1);
        if (light)
            setenv("UNDERFED_DOCTOR_LIGHT", "1", 1);
        if (counters)
            setenv("UNDERFED_DOCTOR_COUNTERS", "1", 1);
        execvp(command[0], command);
        fprintf(stderr, "underfed doctor: cannot run %s: %s\n", command[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "underfed doctor: waitpid: %s\n", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) != 0)
            fprintf(stderr, "underfed doctor: %s exited with status %d\n", command[0],
                    WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    fprintf(stderr, "underfed doctor: %s was killed by signal %d\n", command[0],
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int doctor_run(const doctor_args *a, const uf_doctor_ceilings *ceil)
{
    char inject[PATH_MAX], dir[PATH_MAX], err[512];
    const char *out = a->out ? a->out : "underfed-doctor";
    if (find_injector(a->inject, inject, sizeof inject) != 0)
        return EXIT_BAD;
    if (uf_mkdirs(out, err, sizeof err) != 0) {
        fprintf(stderr, "underfed doctor: %s\n", err);
        return EXIT_BAD;
    }
    if (realpath(out, dir) == NULL) {
        fprintf(stderr, "underfed doctor: %s: %s\n", out, strerror(errno));
        return EXIT_BAD;
    }
    if (scan_traces(dir, 1) < 0)
        return EXIT_BAD;
    const double t0_s = uf_mono_s();
    int status = run_command(a->command, inject, dir, a->light, a->counters);
    if (status < 0)
        return EXIT_BAD;
    const double t1_s = uf_mono_s();
    /* The overhead is this against the same command run plainly (the recorder adds ~2.6 us
     * per launch with every kind on: CUPTI.md). */
    printf("%s ran %.2f s under the recorder%s\n", a->command[0],
           t1_s - t0_s,
           a->light ? " (--light)" : a->counters ? " (--counters)" : "");
    if (status == EXIT_SKIPPED) {   /* the command says it cannot run here (no GPU, too few) */
        fprintf(stderr, "underfed doctor: %s skipped (exit 77): nothing to diagnose\n",
                a->command[0]);
        return EXIT_SKIPPED;
    }
    if (scan_traces(dir, 0) == 0)     /* the recorder never ran: say the likely reasons */
        fprintf(stderr, "underfed doctor: no process of %s loaded the recorder: it used no CUDA, "
                        "or another profiler (nsys, ncu) put its own injection in "
                        "CUDA_INJECTION64_PATH; run it under one of them at a time\n",
                a->command[0]);
    int rc = diagnose_dir(dir, a->json, a->trace, ceil);
    return status != 0 ? EXIT_FAILED : rc;
}

int uf_cmd_doctor(int argc, char **argv)
{
    doctor_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc;
    if (a.help) {
        usage(stdout);
        return EXIT_OK;
    }
    if (a.version) {
        uf_print_version(stdout);
        return EXIT_OK;
    }
    if (a.rules) {
        uf_strbuf b = {0};
        uf_doctor_rules_markdown(&b);
        if (b.failed)
            return EXIT_BAD;
        fputs(b.data, stdout);
        free(b.data);
        return EXIT_OK;
    }
    /* The ceilings are read first: a bad file stops a run before it starts. */
    uf_doctor_ceilings ceil;
    char err[512];
    if (a.ceilings && uf_doctor_ceilings_read(a.ceilings, &ceil, err, sizeof err) != 0) {
        fprintf(stderr, "underfed doctor: --ceilings: %s\n", err);
        return EXIT_BAD;
    }
    const uf_doctor_ceilings *c = a.ceilings ? &ceil : NULL;
    if (a.from)
        return diagnose_dir(a.from, a.json, a.trace, c);
    return doctor_run(&a, c);
}

/* Its line in `underfed --help`; it reads its own argv and prints its own --help. */
const uf_command uf_doctor_command = {
    "doctor", "--from DIR | -- CMD...", 0, 0, "",
    "diagnoses a CUDA program: idle causes, share at stake, fix", uf_cmd_doctor, 1};

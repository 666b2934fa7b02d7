/* The options every scenario takes. Plain C, unit-tested. */
#ifndef UF_OPTIONS_H
#define UF_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UF_MAX_SWEEP 32
#define UF_PATH_LEN 1024

typedef struct uf_sweep_arg {
    char axis[UF_NAME_LEN];
    int n;
    double values[UF_MAX_SWEEP];
} uf_sweep_arg;

typedef struct uf_options {
    int n_variants;                         /* --variant NAME (repeatable); 0: all */
    char variants[UF_MAX_VARIANTS][UF_NAME_LEN];
    int quick;                              /* --quick */
    int repeat;                             /* --repeat N (>= 1); 0: default */
    int warmup;                             /* --warmup N (>= 0); -1: default */
    int n_sweeps;                           /* --sweep AXIS=v1,v2,... (repeatable, one per axis) */
    uf_sweep_arg sweeps[UF_MAX_AXES];
    char out_dir[UF_PATH_LEN];              /* --out DIR; "" : default */
    char trace_path[UF_PATH_LEN];           /* --trace FILE.json; "": none */
    int counters;                           /* 1 unless --no-counters */
    int trace_pass;                         /* 1 unless --no-trace */
    int expect;                             /* 1 unless --no-expect */
    uint64_t seed;                          /* --seed N (default 1) */
    int device;                             /* --device N (default 0) */
    int gpus;                               /* --gpus N (>= 1); 0: every visible GPU */
    int list, explain, help;                /* --list, --explain, --help */
    int check_claims;                       /* --check-claims: check the claim list's names */
} uf_options;

/* Parse argv. Returns 0, or 2 with a one-line message in err (unknown flag, missing or bad
 * value, zero or negative count, an axis given twice, too many values). The message carries
 * no "(see --help)": the program adds that hint, once. */
int uf_parse_options(int argc, char **argv, uf_options *opt, char *err, size_t errlen);

/* A number with an optional binary suffix: "4096", "4K" (4096), "64M", "1G", "0.5", "1e6".
 * Returns 0, or -1 when the text is not such a number. */
int uf_parse_number(const char *s, double *out);

/* Check names against a scenario: every --variant and every --sweep axis must exist.
 * Returns 0, or 2 with a message listing what exists. */
int uf_options_validate(const uf_options *opt, const char *const *variant_names, int n_variants,
                        const char *const *axis_names, int n_axes, char *err, size_t errlen);

/* Usage text of the common options. */
void uf_print_usage(void *file /* FILE* */, const char *prog);

#ifdef __cplusplus
}
#endif
#endif

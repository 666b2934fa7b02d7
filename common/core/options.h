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
#define UF_SWEEP_ITEM_LEN 32

/* What values an axis takes (nvbench's axis metadata): whole numbers or any number in
 * [min, max], or one of named choices, each with the number that stands for it in the results
 * (so that a choice axis's column stays numeric: the strict reader, compare and the committed
 * results read it as before). The harness checks every --sweep value, and the scenario's own
 * declared values, against it: a scenario does not check its axes' ranges itself. */
typedef enum uf_axis_kind {
    UF_AXIS_UNDECLARED = 0,     /* a programming error: the harness refuses to run */
    UF_AXIS_INT,                /* whole numbers in [min, max] */
    UF_AXIS_FLOAT,              /* numbers in [min, max] */
    UF_AXIS_CHOICE              /* one of choices[]: --sweep by name or by its value */
} uf_axis_kind;

typedef struct uf_axis_choice {
    const char *name;           /* "lognormal": what --sweep and --list say */
    double value;               /* 1: what the results' column holds */
} uf_axis_choice;

typedef struct uf_axis_rule {
    const char *name;
    uf_axis_kind kind;
    double min, max;                    /* INT, FLOAT: inclusive bounds */
    const uf_axis_choice *choices;      /* CHOICE */
    int n_choices;
} uf_axis_rule;

typedef struct uf_sweep_arg {
    char axis[UF_NAME_LEN];
    int n;
    double values[UF_MAX_SWEEP];        /* NaN for a name until uf_options_check_sweeps */
    char items[UF_MAX_SWEEP][UF_SWEEP_ITEM_LEN];    /* as given: "4K", "lognormal" */
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

/* Check one value against an axis's rule. Returns 0, or 2 with a message naming the axis, the
 * value and what the axis takes ("ops=0: a whole number from 1 to 16"). */
int uf_axis_check(const uf_axis_rule *rule, double value, char *err, size_t errlen);

/* What the axis takes, for --list: "whole numbers 1..16", "numbers 0.5..64", "lognormal (1),
 * wide (2), fixed (3)". */
void uf_axis_describe(const uf_axis_rule *rule, char *buf, size_t buflen);

/* The name of the choice whose value is v, or NULL (not a choice axis, or no such choice). */
const char *uf_axis_choice_name(const uf_axis_rule *rule, double v);

/* Resolve and check every --sweep against the rules of the scenario's axes (same names, a rule
 * for every axis swept): a choice's name becomes its value; every value must be what its axis
 * takes. Returns 0, or 2 with a message. */
int uf_options_check_sweeps(uf_options *opt, const uf_axis_rule *rules, int n_rules, char *err,
                            size_t errlen);

/* Usage text of the common options. */
void uf_print_usage(void *file /* FILE* */, const char *prog);

#ifdef __cplusplus
}
#endif
#endif

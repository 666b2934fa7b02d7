/* The options every scenario takes: one table of flags, one parser. Values come either as the
 * next argument ("--repeat 5") or after '=' ("--repeat=5"). Every error is one line naming the
 * flag, and the parser returns 2 (UF_USAGE). */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UF_OPT_USAGE 2

typedef enum {
    OPT_VARIANT, OPT_QUICK, OPT_REPEAT, OPT_WARMUP, OPT_SWEEP, OPT_OUT, OPT_TRACE,
    OPT_NO_COUNTERS, OPT_NO_TRACE, OPT_NO_EXPECT, OPT_SEED, OPT_DEVICE, OPT_GPUS,
    OPT_LIST, OPT_EXPLAIN, OPT_CHECK_CLAIMS, OPT_HELP
} opt_id;

typedef struct opt_desc {
    const char *flag;
    opt_id id;
    const char *value;      /* the value's name in the usage text; NULL: the flag takes none */
    const char *help;
} opt_desc;

static const opt_desc opt_table[] = {
    {"--variant", OPT_VARIANT, "NAME", "run this variant only (repeatable; default: all)"},
    {"--quick", OPT_QUICK, NULL, "small sizes and few steps: a smoke run in seconds"},
    {"--repeat", OPT_REPEAT, "N", "timed steps per variant and point (>= 1)"},
    {"--warmup", OPT_WARMUP, "N",
     "warm-up steps before timing (>= 0); a least warm-up time the scenario sets (--list) "
     "still applies; 0: no warm-up at all"},
    {"--sweep", OPT_SWEEP, "AXIS=v1,v2,..",
     "values of a sweep axis, suffixes K/M/G allowed (repeatable, once per axis)"},
    {"--out", OPT_OUT, "DIR",
     "results go to DIR/GPU/, GPU a slug of the device name such as nvidia-h200 "
     "(default DIR: results, with --quick results-quick)"},
    {"--trace", OPT_TRACE, "FILE.json", "write the traced runs as a Perfetto/Chrome trace"},
    {"--no-counters", OPT_NO_COUNTERS, NULL, "skip the counters pass (CUPTI PM sampling)"},
    {"--no-trace", OPT_NO_TRACE, NULL, "skip the trace pass (CUPTI Activity)"},
    {"--no-expect", OPT_NO_EXPECT, NULL, "do not check the expectation (exit 0 when verified)"},
    {"--seed", OPT_SEED, "N", "seed of the random inputs (default 1)"},
    {"--device", OPT_DEVICE, "N", "CUDA device to run on (default 0)"},
    {"--gpus", OPT_GPUS, "N", "GPUs a multi-GPU scenario may use (>= 1; default: all)"},
    {"--list", OPT_LIST, NULL, "list variants and sweep axes, then exit"},
    {"--explain", OPT_EXPLAIN, NULL, "print the scenario's page, then exit"},
    {"--check-claims", OPT_CHECK_CLAIMS, NULL,
     "check the names the claims use (full and --quick), exit 0/1; no GPU"},
    {"--help", OPT_HELP, NULL, "this text (also -h)"},
};
enum { N_OPTS = sizeof opt_table / sizeof opt_table[0] };

static int opt_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int opt_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return UF_OPT_USAGE;
}

/* A decimal or scientific number with an optional binary suffix K, M or G (either case). */
int uf_parse_number(const char *s, double *out)
{
    if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE)
        return -1;
    double scale = 1.0;
    switch (*end) {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1024.0 * 1024.0; end++; break;
    case 'g': case 'G': scale = 1024.0 * 1024.0 * 1024.0; end++; break;
    default: break;
    }
    if (*end != '\0')
        return -1;
    v *= scale;
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* An int count with a lower bound: a whole number (suffixes allowed), min_value..INT_MAX. */
static int parse_count(const char *flag, const char *text, int min_value, int *out, char *err,
                       size_t errlen)
{
    double v;
    if (uf_parse_number(text, &v) != 0)
        return opt_error(err, errlen, "%s: '%s' is not a number", flag, text);
    if (v != floor(v))
        return opt_error(err, errlen, "%s: '%s' is not a whole number", flag, text);
    if (v < (double)min_value)
        return opt_error(err, errlen, "%s: must be >= %d (got %s)", flag, min_value, text);
    if (v > (double)INT_MAX)
        return opt_error(err, errlen, "%s: '%s' is too large", flag, text);
    *out = (int)v;
    return 0;
}

/* The seed: a decimal 64-bit unsigned integer, no sign. */
static int parse_seed(const char *text, uint64_t *out, char *err, size_t errlen)
{
    if (!isdigit((unsigned char)text[0]))
        return opt_error(err, errlen, "--seed: '%s' is not a non-negative integer", text);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return opt_error(err, errlen, "--seed: '%s' is too large", text);
    if (*end != '\0')
        return opt_error(err, errlen, "--seed: '%s' is not a non-negative integer", text);
    *out = (uint64_t)v;
    return 0;
}

/* A string value into a fixed buffer: non-empty and short enough. */
static int copy_value(const char *flag, const char *text, char *dst, size_t dstlen, char *err,
                      size_t errlen)
{
    size_t len = strlen(text);
    if (len == 0)
        return opt_error(err, errlen, "%s: empty value", flag);
    if (len >= dstlen)
        return opt_error(err, errlen, "%s: value longer than %zu characters", flag, dstlen - 1);
    memcpy(dst, text, len + 1);
    return 0;
}

static int add_variant(uf_options *opt, const char *text, char *err, size_t errlen)
{
    char name[UF_NAME_LEN];
    int rc = copy_value("--variant", text, name, sizeof name, err, errlen);
    if (rc != 0)
        return rc;
    for (int i = 0; i < opt->n_variants; i++)
        if (strcmp(opt->variants[i], name) == 0)
            return 0;   /* named twice: run once */
    if (opt->n_variants >= UF_MAX_VARIANTS)
        return opt_error(err, errlen, "--variant: more than %d variants", UF_MAX_VARIANTS);
    memcpy(opt->variants[opt->n_variants++], name, sizeof name);
    return 0;
}

/* A choice's name: a letter or '_', then letters, digits and '_'. */
static int is_name(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    for (; *s != '\0'; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* "AXIS=v1,v2,...": an axis not given before, 1..UF_MAX_SWEEP numbers or names. Whether a
 * value is one its axis takes is checked against the axis's rule (uf_options_check_sweeps). */
static int add_sweep(uf_options *opt, const char *text, char *err, size_t errlen)
{
    const char *eq = strchr(text, '=');
    if (eq == NULL || eq == text)
        return opt_error(err, errlen, "--sweep: '%s' is not AXIS=v1,v2,...", text);
    size_t name_len = (size_t)(eq - text);
    if (name_len >= UF_NAME_LEN)
        return opt_error(err, errlen, "--sweep: axis name longer than %d characters",
                         UF_NAME_LEN - 1);
    uf_sweep_arg sw;
    memset(&sw, 0, sizeof sw);
    memcpy(sw.axis, text, name_len);
    for (int i = 0; i < opt->n_sweeps; i++)
        if (strcmp(opt->sweeps[i].axis, sw.axis) == 0)
            return opt_error(err, errlen, "--sweep: axis '%s' given twice", sw.axis);
    if (opt->n_sweeps >= UF_MAX_AXES)
        return opt_error(err, errlen, "--sweep: more than %d axes", UF_MAX_AXES);

    const char *p = eq + 1;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return opt_error(err, errlen, "--sweep %s: empty value in '%s'", sw.axis, eq + 1);
        if (len >= UF_SWEEP_ITEM_LEN)
            return opt_error(err, errlen, "--sweep %s: value too long", sw.axis);
        if (sw.n >= UF_MAX_SWEEP)
            return opt_error(err, errlen, "--sweep %s: more than %d values", sw.axis,
                             UF_MAX_SWEEP);
        char *item = sw.items[sw.n];
        memcpy(item, p, len);
        item[len] = '\0';
        double v = NAN;
        if (uf_parse_number(item, &v) != 0 && !is_name(item))
            return opt_error(err, errlen, "--sweep %s: '%s' is neither a number nor a name",
                             sw.axis, item);
        sw.values[sw.n++] = v;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    opt->sweeps[opt->n_sweeps++] = sw;
    return 0;
}

static void set_defaults(uf_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->repeat = 0;
    opt->warmup = -1;
    opt->counters = 1;
    opt->trace_pass = 1;
    opt->expect = 1;
    opt->seed = 1;
    opt->device = 0;
    opt->gpus = 0;
}

static const opt_desc *find_flag(const char *name, size_t len)
{
    if (len == 2 && strncmp(name, "-h", 2) == 0)
        return &opt_table[N_OPTS - 1];
    for (int i = 0; i < N_OPTS; i++)
        if (strlen(opt_table[i].flag) == len && strncmp(opt_table[i].flag, name, len) == 0)
            return &opt_table[i];
    return NULL;
}

/* Apply one flag with its value (NULL for flags that take none). */
static int apply(uf_options *opt, const opt_desc *d, const char *v, char *err, size_t errlen)
{
    switch (d->id) {
    case OPT_VARIANT: return add_variant(opt, v, err, errlen);
    case OPT_QUICK: opt->quick = 1; return 0;
    case OPT_REPEAT: return parse_count(d->flag, v, 1, &opt->repeat, err, errlen);
    case OPT_WARMUP: return parse_count(d->flag, v, 0, &opt->warmup, err, errlen);
    case OPT_SWEEP: return add_sweep(opt, v, err, errlen);
    case OPT_OUT: return copy_value(d->flag, v, opt->out_dir, sizeof opt->out_dir, err, errlen);
    case OPT_TRACE:
        return copy_value(d->flag, v, opt->trace_path, sizeof opt->trace_path, err, errlen);
    case OPT_NO_COUNTERS: opt->counters = 0; return 0;
    case OPT_NO_TRACE: opt->trace_pass = 0; return 0;
    case OPT_NO_EXPECT: opt->expect = 0; return 0;
    case OPT_SEED: return parse_seed(v, &opt->seed, err, errlen);
    case OPT_DEVICE: return parse_count(d->flag, v, 0, &opt->device, err, errlen);
    case OPT_GPUS: return parse_count(d->flag, v, 1, &opt->gpus, err, errlen);
    case OPT_LIST: opt->list = 1; return 0;
    case OPT_EXPLAIN: opt->explain = 1; return 0;
    case OPT_CHECK_CLAIMS: opt->check_claims = 1; return 0;
    case OPT_HELP: opt->help = 1; return 0;
    }
    return opt_error(err, errlen, "%s: not handled", d->flag);
}

int uf_parse_options(int argc, char **argv, uf_options *opt, char *err, size_t errlen)
{
    set_defaults(opt);
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-')
            return opt_error(err, errlen, "unexpected argument '%s'", arg);
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t name_len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        const opt_desc *d = find_flag(arg, name_len);
        if (d == NULL)
            return opt_error(err, errlen, "unknown option '%.*s'", (int)name_len, arg);
        const char *value = NULL;
        if (d->value == NULL) {
            if (eq != NULL)
                return opt_error(err, errlen, "%s takes no value", d->flag);
        } else if (eq != NULL) {
            value = eq + 1;
        } else {
            /* The next argument, unless it is missing or is itself a flag. */
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                return opt_error(err, errlen, "%s needs a value (%s)", d->flag, d->value);
            value = argv[++i];
        }
        int rc = apply(opt, d, value, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* "a, b, c" into buf. */
static void join_names(const char *const *names, int n, char *buf, size_t buflen)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < buflen; i++) {
        int w = snprintf(buf + used, buflen - used, "%s%s", i > 0 ? ", " : "", names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (n == 0)
        snprintf(buf, buflen, "none");
}

static int name_in(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

int uf_options_validate(const uf_options *opt, const char *const *variant_names, int n_variants,
                        const char *const *axis_names, int n_axes, char *err, size_t errlen)
{
    char list[512];
    for (int i = 0; i < opt->n_variants; i++) {
        if (!name_in(opt->variants[i], variant_names, n_variants)) {
            join_names(variant_names, n_variants, list, sizeof list);
            return opt_error(err, errlen, "--variant: unknown variant '%s' (variants: %s)",
                             opt->variants[i], list);
        }
    }
    for (int i = 0; i < opt->n_sweeps; i++) {
        if (!name_in(opt->sweeps[i].axis, axis_names, n_axes)) {
            join_names(axis_names, n_axes, list, sizeof list);
            return opt_error(err, errlen, "--sweep: unknown axis '%s' (axes: %s)",
                             opt->sweeps[i].axis, list);
        }
    }
    return 0;
}

/* ---- axis rules ------------------------------------------------------------------------ */

const char *uf_axis_choice_name(const uf_axis_rule *rule, double v)
{
    if (rule->kind != UF_AXIS_CHOICE)
        return NULL;
    for (int k = 0; k < rule->n_choices; k++)
        if (rule->choices[k].value == v)
            return rule->choices[k].name;
    return NULL;
}

/* "a (1), b (2)": the choices with their values. */
static void join_choices(const uf_axis_rule *rule, char *buf, size_t buflen)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < rule->n_choices && used < buflen; k++) {
        int w = snprintf(buf + used, buflen - used, "%s%s (%.10g)", k ? ", " : "",
                         rule->choices[k].name, rule->choices[k].value);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void uf_axis_describe(const uf_axis_rule *rule, char *buf, size_t buflen)
{
    switch (rule->kind) {
    case UF_AXIS_INT:
        snprintf(buf, buflen, "whole numbers %.10g..%.10g", rule->min, rule->max);
        break;
    case UF_AXIS_FLOAT:
        snprintf(buf, buflen, "numbers %.10g..%.10g", rule->min, rule->max);
        break;
    case UF_AXIS_CHOICE:
        join_choices(rule, buf, buflen);
        break;
    default:
        snprintf(buf, buflen, "undeclared");
        break;
    }
}

int uf_axis_check(const uf_axis_rule *rule, double value, char *err, size_t errlen)
{
    char list[256];
    switch (rule->kind) {
    case UF_AXIS_INT:
        if (!(value >= rule->min && value <= rule->max) || value != floor(value))
            return opt_error(err, errlen, "%s=%.10g: a whole number from %.10g to %.10g",
                             rule->name, value, rule->min, rule->max);
        return 0;
    case UF_AXIS_FLOAT:
        if (!(value >= rule->min && value <= rule->max))
            return opt_error(err, errlen, "%s=%.10g: a number from %.10g to %.10g", rule->name,
                             value, rule->min, rule->max);
        return 0;
    case UF_AXIS_CHOICE:
        if (uf_axis_choice_name(rule, value) != NULL)
            return 0;
        join_choices(rule, list, sizeof list);
        return opt_error(err, errlen, "%s=%.10g: one of %s", rule->name, value, list);
    default:
        return opt_error(err, errlen, "axis %s declares no kind (integer, float or choice)",
                         rule->name);
    }
}

/* The value of one --sweep item: a number, or a choice's name. */
static int resolve_item(const uf_axis_rule *rule, const char *item, double *v, char *err,
                        size_t errlen)
{
    char list[256];
    if (!isnan(*v))
        return uf_axis_check(rule, *v, err, errlen);
    if (rule->kind == UF_AXIS_CHOICE) {
        for (int k = 0; k < rule->n_choices; k++)
            if (strcmp(rule->choices[k].name, item) == 0) {
                *v = rule->choices[k].value;
                return 0;
            }
        join_choices(rule, list, sizeof list);
        return opt_error(err, errlen, "%s=%s: one of %s", rule->name, item, list);
    }
    return opt_error(err, errlen, "%s=%s: not a number (the axis takes %s)", rule->name, item,
                     rule->kind == UF_AXIS_INT ? "whole numbers" : "numbers");
}

int uf_options_check_sweeps(uf_options *opt, const uf_axis_rule *rules, int n_rules, char *err,
                            size_t errlen)
{
    char why[256];
    for (int i = 0; i < opt->n_sweeps; i++) {
        uf_sweep_arg *sw = &opt->sweeps[i];
        const uf_axis_rule *rule = NULL;
        for (int r = 0; r < n_rules && !rule; r++)
            if (strcmp(rules[r].name, sw->axis) == 0)
                rule = &rules[r];
        if (rule == NULL)
            return opt_error(err, errlen, "--sweep: unknown axis '%s'", sw->axis);
        for (int k = 0; k < sw->n; k++)
            if (resolve_item(rule, sw->items[k], &sw->values[k], why, sizeof why) != 0)
                return opt_error(err, errlen, "--sweep %s", why);
    }
    return 0;
}

/* text from column `indent` (the cursor is there), broken between words before column
 * `width`; continuation lines indented to `indent`. */
static void print_wrapped(FILE *f, const char *text, int indent, int width)
{
    int col = indent;
    for (const char *p = text; *p != '\0';) {
        int word = (int)strcspn(p, " ");
        if (col > indent && col + 1 + word > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", word, p);
        col += word;
        p += word;
        p += strspn(p, " ");
    }
    fputc('\n', f);
}

void uf_print_usage(void *file, const char *prog)
{
    FILE *f = file;
    fprintf(f, "usage: %s [options]\n\noptions:\n", prog != NULL ? prog : "scenario");
    for (int i = 0; i < N_OPTS; i++) {
        char left[64];
        if (opt_table[i].value != NULL)
            snprintf(left, sizeof left, "%s %s", opt_table[i].flag, opt_table[i].value);
        else
            snprintf(left, sizeof left, "%s", opt_table[i].flag);
        fprintf(f, "  %-26s ", left);
        print_wrapped(f, opt_table[i].help, 29, 96);
    }
    fprintf(f, "\nValues may also be given as --flag=value. Exit codes: 0 reproduced and "
               "verified,\n1 error or wrong result, 2 bad usage, 3 expectation not met, "
               "77 skipped (reason on stderr).\n");
}

/* The command line of an `underfed` command (cmdline.h): the common options, each once, with
 * the field of args it fills and its help; a command's synopsis and help from the options it
 * names; and the parser, which checks every option and operand (a usage error names it and
 * shows the synopsis, exit 2). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cmdline.h"
#include "options.h"

/* The options, and where each value goes. kind: a text, a percentage >= 0, or a flag that
 * takes no value (an int set to 1). */
typedef enum { VALUE_TEXT, VALUE_PERCENT, VALUE_FLAG } value_kind;

static const struct tool_option {
    const char *flag;
    const char *value;          /* the value's name in the help */
    value_kind kind;
    size_t offset;              /* of the field in args */
    const char *help;
} tool_options[] = {
    {"--where", "W", VALUE_TEXT, offsetof(args, where),
     "the point: AXIS=VALUE,... (4K, max, min); other axes at their default"},
    {"--x", "AXIS", VALUE_TEXT, offsetof(args, x), "the axis swept along"},
    {"--metrics", "m1,m2,...", VALUE_TEXT, offsetof(args, metrics),
     "columns to print; a name ending in ? may be absent (NaN then)"},
    {"--metric", "M", VALUE_TEXT, offsetof(args, metric), "the column compared (default step_ms)"},
    {"--share", "S|auto", VALUE_TEXT, offsetof(args, share),
     "share column (auto: pct_of_gemm, pct_of_copy or busy_pct)"},
    {"--variant", "V", VALUE_TEXT, offsetof(args, variant), "this variant only"},
    {"--threshold", "PCT", VALUE_PERCENT, offsetof(args, threshold_pct),
     "a change beyond PCT % and the spread counts (default 5)"},
    {"--allow-missing", "", VALUE_FLAG, offsetof(args, allow_missing),
     "rows of DIR_A absent from DIR_B are listed, not a failure"},
    {"--plots", "PLOTS", VALUE_TEXT, offsetof(args, plots_dir),
     "the images' folder (default DIR/../../plots/NAME, render.sh's)"},
    {"--plots-link", "PREFIX", VALUE_TEXT, offsetof(args, plots_link),
     "PLOTS as REPORT.md links it (default: as given)"},
};
enum { N_TOOL_OPTIONS = sizeof tool_options / sizeof tool_options[0] };

static int find_option(const char *flag, size_t len)
{
    for (int k = 0; k < N_TOOL_OPTIONS; k++)
        if (strlen(tool_options[k].flag) == len && strncmp(tool_options[k].flag, flag, len) == 0)
            return k;
    return -1;
}

/* Does the command take option k? 0 no, 1 yes, 2 yes and it is required. */
static int takes_option(const uf_command *c, int k)
{
    const char *flag = tool_options[k].flag;
    size_t len = strlen(flag);
    for (const char *p = c->options; (p = strstr(p, flag)) != NULL; p += len)
        if ((p == c->options || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' ' || p[len] == '!'))
            return p[len] == '!' ? 2 : 1;
    return 0;
}

/* "underfed points FILE.csv --x AXIS [--where W] ...": required options first. */
static void print_synopsis(FILE *f, const uf_command *c)
{
    fprintf(f, "underfed %s %s", c->name, c->operands);
    for (int required = 2; required >= 1; required--)
        for (int k = 0; k < N_TOOL_OPTIONS; k++)
            if (takes_option(c, k) == required)
                fprintf(f, required == 2 ? " %s%s%s" : " [%s%s%s]", tool_options[k].flag,
                        tool_options[k].value[0] ? " " : "", tool_options[k].value);
    fprintf(f, "\n");
}

void uf_print_command_help(FILE *f, const uf_command *c)
{
    fprintf(f, "usage: ");
    print_synopsis(f, c);
    fprintf(f, "%s\n", c->summary);
    int any = 0;
    for (int k = 0; k < N_TOOL_OPTIONS; k++) {
        if (!takes_option(c, k))
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", tool_options[k].flag,
                 tool_options[k].value[0] ? " " : "", tool_options[k].value);
        fprintf(f, "%s  %-20s %s\n", any++ ? "" : "\noptions:\n", left, tool_options[k].help);
    }
}

/* A usage error of command c: the message, the command's synopsis, exit 2. */
static int usage_error(const uf_command *c, const char *fmt, const char *what)
{
    fprintf(stderr, "underfed %s: ", c->name);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nusage: ");
    print_synopsis(stderr, c);
    fprintf(stderr, "(underfed %s --help for more)\n", c->name);
    return EXIT_BAD;
}

/* One option (argv[*i], its value after '=' or next) into a. */
static int parse_option(const uf_command *c, int argc, char **argv, int *i, args *a,
                        unsigned *given)
{
    const char *arg = argv[*i];
    size_t len = strcspn(arg, "=");
    int k = find_option(arg, len);
    char flag[64];
    snprintf(flag, sizeof flag, "%.*s", (int)(len < 63 ? len : 63), arg);
    if (k < 0 || !takes_option(c, k))
        return usage_error(c, k < 0 ? "unknown option %s" : "%s does not apply here", flag);
    if (*given & (1u << k))
        return usage_error(c, "%s given twice", flag);
    *given |= 1u << k;
    const char *value = arg[len] == '=' ? arg + len + 1 : NULL;
    if (tool_options[k].kind == VALUE_FLAG) {
        if (value)
            return usage_error(c, "%s takes no value", flag);
        *(int *)((char *)a + tool_options[k].offset) = 1;
        return 0;
    }
    if (!value) {
        if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
            return usage_error(c, "%s needs a value", flag);
        value = argv[++*i];
    }
    if (value[0] == '\0')
        return usage_error(c, "%s: empty value", flag);
    void *slot = (char *)a + tool_options[k].offset;
    if (tool_options[k].kind == VALUE_TEXT) {
        *(const char **)slot = value;
    } else if (uf_parse_number(value, (double *)slot) != 0 || *(double *)slot < 0) {
        return usage_error(c, "%s takes a percentage >= 0", flag);
    }
    return 0;
}

/* argv of command c (after its name) into a: its options and operands, each checked. */
int uf_parse_args(const uf_command *c, int argc, char **argv, args *a)
{
    unsigned given = 0;
    memset(a, 0, sizeof *a);
    a->cmd = c->name;
    a->threshold_pct = 5.0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] == '-' && arg[1] != '\0') {
            int rc = parse_option(c, argc, argv, &i, a, &given);
            if (rc != 0)
                return rc;
        } else if (a->n_pos < c->max_pos) {
            a->pos[a->n_pos++] = arg;
        } else {
            return usage_error(c, "unexpected argument \"%s\"", arg);
        }
    }
    if (a->n_pos < c->min_pos)
        return usage_error(c, "missing %s", c->operands);
    for (int k = 0; k < N_TOOL_OPTIONS; k++)
        if (takes_option(c, k) == 2 && !(given & (1u << k)))
            return usage_error(c, "%s is required", tool_options[k].flag);
    return 0;
}

int uf_run_parsed(const uf_command *c, int argc, char **argv, int (*run)(const args *a))
{
    args a;
    int rc = uf_parse_args(c, argc, argv, &a);
    return rc != 0 ? rc : run(&a);
}

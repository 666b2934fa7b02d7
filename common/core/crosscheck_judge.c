/* The cross-check's host logic: ncu raw-page parsing, one step's figures from the profiled
 * kernels, the judging rule, and the crosscheck.csv format (crosscheck_judge.h). */
#include "crosscheck_judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "strbuf.h"
#include "timeline.h"

enum { XC_MAX_FIELDS = 1024, XC_FIELD_LEN = 512 };  /* an imported report lists every metric */

/* One CSV record split into fields (each cut to XC_FIELD_LEN - 1 bytes). */
typedef struct csv_record {
    int n;
    char field[XC_MAX_FIELDS][XC_FIELD_LEN];
} csv_record;

static void field_put(csv_record *r, size_t *used, char c)
{
    if (r->n < XC_MAX_FIELDS && *used + 1 < XC_FIELD_LEN)
        r->field[r->n][(*used)++] = c;
}

/* The record starting at data[*pos] (RFC 4180 quoting, "" inside quotes) into r; *pos moves
 * past its line end. 1 a record, 0 at the end of data, -1 an unterminated quote or more than
 * XC_MAX_FIELDS fields. */
static int next_record(const char *data, size_t len, size_t *pos, csv_record *r)
{
    size_t i = *pos, used = 0;
    int quoted = 0;
    if (i >= len)
        return 0;
    r->n = 0;
    for (; i < len; i++) {
        char c = data[i];
        if (quoted) {
            if (c == '"' && i + 1 < len && data[i + 1] == '"')
                field_put(r, &used, data[i++]);
            else if (c == '"')
                quoted = 0;
            else
                field_put(r, &used, c);
        } else if (c == '"') {
            quoted = 1;
        } else if (c == ',' || c == '\n') {
            if (r->n >= XC_MAX_FIELDS)
                return -1;
            r->field[r->n++][used] = '\0';
            used = 0;
            if (c == '\n')
                break;
        } else if (c != '\r') {
            field_put(r, &used, c);
        }
    }
    if (quoted)
        return -1;
    if (i >= len) {             /* a last line without its newline */
        if (r->n >= XC_MAX_FIELDS)
            return -1;
        r->field[r->n++][used] = '\0';
    }
    *pos = i + 1;
    return 1;
}

/* ---- ncu raw page ----------------------------------------------------------------------- */

static const char *const ncu_metrics[] = {
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
};
enum { NCU_SM, NCU_DRAM, NCU_TENSOR, NCU_DURATION, NCU_N_METRICS };

static int column_of(const csv_record *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->field[i], name) == 0)
            return i;
    return -1;
}

/* A number as ncu prints it: thousands separators dropped. 0, or -1 when not a number. */
static int ncu_number(const char *text, double *out)
{
    char digits[XC_FIELD_LEN];
    size_t n = 0;
    for (const char *c = text; *c != '\0' && n + 1 < sizeof digits; c++)
        if (*c != ',')
            digits[n++] = *c;
    digits[n] = '\0';
    return n == 0 ? -1 : uf_parse_number(digits, out);
}

/* Microseconds per unit of a duration column, or NaN for a unit not known. */
static double us_per_unit(const char *unit)
{
    static const struct {
        const char *name;
        double us;
    } units[] = {{"nsecond", 1e-3}, {"ns", 1e-3}, {"usecond", 1.0}, {"us", 1.0},
                 {"msecond", 1e3},  {"ms", 1e3},  {"second", 1e6},  {"s", 1e6}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].name, unit) == 0)
            return units[i].us;
    return NAN;
}

typedef struct ncu_columns {
    int name, grid, block;      /* grid and block: -1 where the page has none */
    int metric[NCU_N_METRICS];
    double duration_scale_us;
} ncu_columns;

/* The header's columns; -1 with err naming the first column missing. */
static int ncu_header(const char *path, int line, const csv_record *r, ncu_columns *c,
                      char *err, size_t errlen)
{
    c->name = column_of(r, "Kernel Name");
    c->grid = column_of(r, "Grid Size");
    c->block = column_of(r, "Block Size");
    if (c->name < 0)
        return uf_set_err(err, errlen, "%s:%d: the ncu header has no \"Kernel Name\" column",
                          path, line);
    for (int m = 0; m < NCU_N_METRICS; m++) {
        c->metric[m] = column_of(r, ncu_metrics[m]);
        if (c->metric[m] < 0)
            return uf_set_err(err, errlen, "%s:%d: the ncu header has no column %s (profile "
                              "with --metrics naming it)", path, line, ncu_metrics[m]);
    }
    return 0;
}

/* The units row: percentages in %, the duration in a time unit (its scale into c). */
static int ncu_units(const char *path, int line, const csv_record *r, ncu_columns *c,
                     char *err, size_t errlen)
{
    for (int m = 0; m < NCU_N_METRICS; m++) {
        int col = c->metric[m];
        const char *unit = col < r->n ? r->field[col] : "";
        if (m == NCU_DURATION) {
            c->duration_scale_us = us_per_unit(unit);
            if (isnan(c->duration_scale_us))
                return uf_set_err(err, errlen, "%s:%d: %s in unit \"%s\", not a time unit",
                                  path, line, ncu_metrics[m], unit);
        } else if (strcmp(unit, "%") != 0) {
            return uf_set_err(err, errlen, "%s:%d: %s in unit \"%s\", not %%", path, line,
                              ncu_metrics[m], unit);
        }
    }
    return 0;
}

static int ncu_kernel(const char *path, int line, const csv_record *r, const ncu_columns *c,
                      uf_ncu_kernel *k, char *err, size_t errlen)
{
    double v[NCU_N_METRICS];
    int need = c->name;
    for (int m = 0; m < NCU_N_METRICS; m++)
        need = c->metric[m] > need ? c->metric[m] : need;
    if (r->n <= need)
        return uf_set_err(err, errlen, "%s:%d: %d fields, the header has more", path, line,
                          r->n);
    for (int m = 0; m < NCU_N_METRICS; m++)
        if (ncu_number(r->field[c->metric[m]], &v[m]) != 0)
            return uf_set_err(err, errlen, "%s:%d: %s is \"%s\", not a number", path, line,
                              ncu_metrics[m], r->field[c->metric[m]]);
    snprintf(k->name, sizeof k->name, "%.*s", (int)sizeof k->name - 1, r->field[c->name]);
    snprintf(k->grid, sizeof k->grid, "%.*s", (int)sizeof k->grid - 1,
             c->grid >= 0 && c->grid < r->n ? r->field[c->grid] : "");
    snprintf(k->block, sizeof k->block, "%.*s", (int)sizeof k->block - 1,
             c->block >= 0 && c->block < r->n ? r->field[c->block] : "");
    k->sm_active_pct = v[NCU_SM];
    k->dram_pct = v[NCU_DRAM];
    k->tensor_active_pct = v[NCU_TENSOR];
    k->duration_us = v[NCU_DURATION] * c->duration_scale_us;
    return 0;
}

static int ncu_append(uf_ncu_kernel **all, int *n, int *cap, const uf_ncu_kernel *k)
{
    if (*n == *cap) {
        int bigger = *cap ? 2 * *cap : 64;
        uf_ncu_kernel *grown = realloc(*all, (size_t)bigger * sizeof *grown);
        if (!grown)
            return -1;
        *all = grown;
        *cap = bigger;
    }
    (*all)[(*n)++] = *k;
    return 0;
}

int uf_ncu_parse(const char *path, const char *data, size_t len, uf_ncu_kernel **out, int *n,
                 char *err, size_t errlen)
{
    csv_record *r = malloc(sizeof *r);
    ncu_columns cols = {0};
    size_t pos = 0;
    int line = 0, state = 0, cap = 0, rc = 0, got;   /* state: 0 before header, 1 units, 2 rows */
    *out = NULL;
    *n = 0;
    if (!r)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    while (rc == 0 && (got = next_record(data, len, &pos, r)) != 0) {
        uf_ncu_kernel k;
        line++;
        if (got < 0)
            rc = uf_set_err(err, errlen, "%s:%d: an unterminated quote or too many fields",
                            path, line);
        else if (state == 0 && r->n > 1 && strcmp(r->field[0], "ID") == 0)
            state = (rc = ncu_header(path, line, r, &cols, err, errlen)) == 0 ? 1 : 0;
        else if (state == 1)
            state = (rc = ncu_units(path, line, r, &cols, err, errlen)) == 0 ? 2 : 1;
        else if (state == 2 && strncmp(r->field[0], "==", 2) != 0 &&
                 (rc = ncu_kernel(path, line, r, &cols, &k, err, errlen)) == 0 &&
                 ncu_append(out, n, &cap, &k) != 0)
            rc = uf_set_err(err, errlen, "%s: out of memory", path);
    }
    if (rc == 0 && state < 2)
        rc = uf_set_err(err, errlen, "%s: no ncu raw page (a \"ID\",... header and its units "
                        "row); was the kernel profiled?", path);
    if (rc == 0 && *n == 0)
        rc = uf_set_err(err, errlen, "%s: the ncu page lists no kernel", path);
    free(r);
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

static int skipped(const char *name, const char *const *skip)
{
    for (int i = 0; skip && skip[i]; i++)
        if (strncmp(name, skip[i], strlen(skip[i])) == 0)
            return 1;
    return 0;
}

static int same_launch(const uf_ncu_kernel *a, const uf_ncu_kernel *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->grid, b->grid) == 0 &&
           strcmp(a->block, b->block) == 0;
}

/* The start (in kept) of the first window of per_step launches equal to the one before it:
 * the first timed step after the warm-up, before any verification runs; -1 when none. */
static int first_repeated_step(const uf_ncu_kernel *k, const int *kept, int n_kept, int per_step)
{
    for (int start = per_step; start + per_step <= n_kept; start++) {
        int same = 1;
        for (int i = 0; i < per_step && same; i++)
            same = same_launch(&k[kept[start + i]], &k[kept[start - per_step + i]]);
        if (same)
            return start;
    }
    return -1;
}

int uf_ncu_step_of(const uf_ncu_kernel *k, int n, int per_step, const char *const *skip,
                   uf_ncu_step *step, char *err, size_t errlen)
{
    double time_us = 0, sm = 0, dram = 0, tensor = 0;
    int n_kept = 0, start, rc = -1;
    int *kept = malloc((size_t)(n > 0 ? n : 1) * sizeof *kept);
    memset(step, 0, sizeof *step);
    if (!kept)
        return uf_set_err(err, errlen, "out of memory");
    for (int i = 0; i < n; i++)
        if (!skipped(k[i].name, skip))
            kept[n_kept++] = i;
    if (per_step < 1) {
        uf_set_err(err, errlen, "a step of %d kernels", per_step);
        goto out;
    }
    start = first_repeated_step(k, kept, n_kept, per_step);
    if (start < 0) {
        uf_set_err(err, errlen, "no two consecutive steps of %d kernels (the trace's count) "
                   "repeat each other among the %d kernels ncu profiled", per_step, n_kept);
        goto out;
    }
    for (int i = start; i < start + per_step; i++) {
        const uf_ncu_kernel *x = &k[kept[i]];
        time_us += x->duration_us;
        sm += x->sm_active_pct * x->duration_us;
        dram += x->dram_pct * x->duration_us;
        tensor += x->tensor_active_pct * x->duration_us;
    }
    if (!(time_us > 0)) {
        uf_set_err(err, errlen, "the profiled kernels last 0 us");
        goto out;
    }
    *step = (uf_ncu_step){.kernels = per_step, .sm_active_pct = sm / time_us,
                          .dram_pct = dram / time_us, .tensor_active_pct = tensor / time_us,
                          .duration_us_mean = time_us / per_step};
    snprintf(step->first_name, sizeof step->first_name, "%s", k[kept[start]].name);
    rc = 0;
out:
    free(kept);
    return rc;
}

/* ---- judging ---------------------------------------------------------------------------- */

void uf_xc_judge(uf_xc_row *r)
{
    int relative = r->rule == UF_XC_RELATIVE;
    r->difference = NAN;
    r->verdict = UF_XC_NA;
    if (!isfinite(r->ours) || !isfinite(r->reference) || (relative && r->reference == 0)) {
        if (r->note[0] == '\0')
            snprintf(r->note, sizeof r->note, "%s not measured",
                     !isfinite(r->ours) ? "our figure" : "the reference");
        return;
    }
    r->difference = relative ? 100.0 * (r->ours / r->reference - 1.0) : r->ours - r->reference;
    r->verdict = fabs(r->difference) <= r->tolerance ? UF_XC_AGREE : UF_XC_DISAGREE;
}

static const char *const verdict_names[] = {"agree", "DISAGREE", "n/a"};
static const char *const rule_units[] = {"points", "%"};

const char *uf_xc_verdict_name(uf_xc_verdict v)
{
    return verdict_names[v];
}

const char *uf_xc_rule_unit(uf_xc_rule rule)
{
    return rule_units[rule];
}

/* ---- crosscheck.csv --------------------------------------------------------------------- */

#define XC_MAGIC "# underfed-crosscheck v1"
static const char *const xc_columns[] = {"scenario", "variant", "point", "kernel", "metric",
                                         "reference_of", "ours", "reference", "difference",
                                         "tolerance", "unit", "verdict", "note"};
enum { XC_N_COLUMNS = sizeof xc_columns / sizeof xc_columns[0] };

static void csv_text(uf_strbuf *b, const char *s)
{
    uf_sb_putn(b, "\"", 1);
    for (const char *c = s; *c != '\0'; c++) {
        if (*c == '"')
            uf_sb_putn(b, "\"", 1);
        uf_sb_putn(b, (*c == '\n' || *c == '\r') ? " " : c, 1);
    }
    uf_sb_putn(b, "\"", 1);
}

static void csv_value(uf_strbuf *b, double v)
{
    uf_sb_putn(b, ",", 1);
    if (isfinite(v))
        uf_sb_printf(b, "%.6g", v);
}

int uf_xc_write_csv(const char *path, const uf_meta *meta, const uf_xc_row *rows, int n,
                    char *err, size_t errlen)
{
    uf_strbuf b = {0};
    uf_sb_puts(&b, XC_MAGIC "\n");
    for (int i = 0; meta && i < meta->n; i++) {
        uf_sb_printf(&b, "# %s: ", meta->key[i]);
        for (const char *c = meta->value[i]; *c != '\0'; c++)
            uf_sb_putn(&b, (*c == '\n' || *c == '\r') ? " " : c, 1);
        uf_sb_putn(&b, "\n", 1);
    }
    for (int c = 0; c < XC_N_COLUMNS; c++)
        uf_sb_printf(&b, "%s%s", c ? "," : "", xc_columns[c]);
    uf_sb_putn(&b, "\n", 1);
    for (int i = 0; i < n; i++) {
        const uf_xc_row *r = &rows[i];
        const char *text[] = {r->scenario, r->variant, r->point, r->kernel, r->metric,
                              r->reference_of};
        for (size_t t = 0; t < sizeof text / sizeof text[0]; t++) {
            if (t)
                uf_sb_putn(&b, ",", 1);
            csv_text(&b, text[t]);
        }
        csv_value(&b, r->ours);
        csv_value(&b, r->reference);
        csv_value(&b, r->difference);
        csv_value(&b, r->tolerance);
        uf_sb_printf(&b, ",%s,%s,", uf_xc_rule_unit(r->rule), uf_xc_verdict_name(r->verdict));
        csv_text(&b, r->note);
        uf_sb_putn(&b, "\n", 1);
    }
    return uf_sb_commit(&b, path, err, errlen);
}

/* A number field: empty is NaN. */
static int xc_number(const char *text, double *out)
{
    if (text[0] == '\0') {
        *out = NAN;
        return 0;
    }
    return uf_parse_number(text, out);
}

static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* One data record into row; -1 with err naming the line. */
static int xc_row(const char *path, int line, const csv_record *r, uf_xc_row *row, char *err,
                  size_t errlen)
{
    double *num[] = {&row->ours, &row->reference, &row->difference, &row->tolerance};
    struct {
        char *dst;
        size_t len;
    } text[] = {{row->scenario, sizeof row->scenario}, {row->variant, sizeof row->variant},
                {row->point, sizeof row->point},       {row->kernel, sizeof row->kernel},
                {row->metric, sizeof row->metric},     {row->reference_of, sizeof row->reference_of}};
    if (r->n != XC_N_COLUMNS)
        return uf_set_err(err, errlen, "%s:%d: %d fields, not %d", path, line, r->n,
                          XC_N_COLUMNS);
    memset(row, 0, sizeof *row);
    for (int t = 0; t < 6; t++)
        snprintf(text[t].dst, text[t].len, "%.*s", (int)text[t].len - 1, r->field[t]);
    for (int k = 0; k < 4; k++)
        if (xc_number(r->field[6 + k], num[k]) != 0)
            return uf_set_err(err, errlen, "%s:%d: %s \"%s\" is not a number", path, line,
                              xc_columns[6 + k], r->field[6 + k]);
    int rule = name_index(rule_units, 2, r->field[10]);
    int verdict = name_index(verdict_names, 3, r->field[11]);
    if (rule < 0 || verdict < 0)
        return uf_set_err(err, errlen, "%s:%d: %s \"%s\" unknown", path, line,
                          rule < 0 ? "unit" : "verdict", rule < 0 ? r->field[10] : r->field[11]);
    row->rule = (uf_xc_rule)rule;
    row->verdict = (uf_xc_verdict)verdict;
    snprintf(row->note, sizeof row->note, "%.*s", (int)sizeof row->note - 1, r->field[12]);
    return 0;
}

/* A `# key: value` line into meta; 0, or -1 when it is not one. */
static int xc_meta_line(const char *line, size_t len, uf_meta *meta)
{
    const char *colon = memchr(line, ':', len);
    if (len < 3 || line[0] != '#' || line[1] != ' ' || !colon || colon - line - 2 <= 0 ||
        colon - line - 2 >= UF_NAME_LEN)
        return -1;
    char key[UF_NAME_LEN];
    snprintf(key, sizeof key, "%.*s", (int)(colon - line - 2), line + 2);
    const char *value = colon + 1 + (colon + 1 < line + len && colon[1] == ' ');
    if (meta)
        uf_meta_set(meta, key, "%.*s", (int)(line + len - value), value);
    return 0;
}

static int xc_header_ok(const csv_record *r)
{
    if (r->n != XC_N_COLUMNS)
        return 0;
    for (int c = 0; c < XC_N_COLUMNS; c++)
        if (strcmp(r->field[c], xc_columns[c]) != 0)
            return 0;
    return 1;
}

int uf_xc_parse_csv(const char *path, const char *data, size_t len, uf_meta *meta,
                    uf_xc_row **rows, int *n, char *err, size_t errlen)
{
    size_t pos = 0, magic_len = strlen(XC_MAGIC);
    int line = 1, cap = 0, rc = 0, got;
    csv_record *r = NULL;
    *rows = NULL;
    *n = 0;
    if (len <= magic_len || memcmp(data, XC_MAGIC, magic_len) != 0 || data[magic_len] != '\n')
        return uf_set_err(err, errlen, "%s:1: not a crosscheck file (\"%s\" expected)", path,
                          XC_MAGIC);
    pos = magic_len + 1;
    while (pos < len && data[pos] == '#') {                 /* metadata lines */
        const char *end = memchr(data + pos, '\n', len - pos);
        size_t line_len = end ? (size_t)(end - (data + pos)) : len - pos;
        line++;
        if (!end || xc_meta_line(data + pos, line_len, meta) != 0)
            return uf_set_err(err, errlen, "%s:%d: a metadata line is not \"# key: value\"",
                              path, line);
        pos += line_len + 1;
    }
    if ((r = malloc(sizeof *r)) == NULL)
        return uf_set_err(err, errlen, "%s: out of memory", path);
    got = next_record(data, len, &pos, r);
    line++;
    if (got != 1 || !xc_header_ok(r))
        rc = uf_set_err(err, errlen, "%s:%d: not the crosscheck header", path, line);
    while (rc == 0 && (got = next_record(data, len, &pos, r)) != 0) {
        line++;
        if (got < 0) {
            rc = uf_set_err(err, errlen, "%s:%d: an unterminated quote", path, line);
        } else if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            uf_xc_row *grown = realloc(*rows, (size_t)cap * sizeof *grown);
            if (!grown)
                rc = uf_set_err(err, errlen, "%s: out of memory", path);
            else
                *rows = grown;
        }
        if (rc == 0)
            rc = xc_row(path, line, r, &(*rows)[*n], err, errlen);
        if (rc == 0)
            (*n)++;
    }
    free(r);
    if (rc != 0) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int uf_gpm_tally_of(const uf_table *t, uf_gpm_tally *out)
{
    size_t cap = 0, n = 0;
    for (int i = 0; i < t->n_rows; i++)
        cap += t->rows[i].n_ranks > 0 ? (size_t)t->rows[i].n_ranks : 1;
    double *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return -1;
    for (int i = 0; i < t->n_rows; i++) {
        const uf_row *row = &t->rows[i];
        int each = row->n_ranks > 0 ? row->n_ranks : 1;
        for (int k = 0; k < each; k++) {
            double pts = row->n_ranks > 0 ? row->ranks[k].gpm_agree_pts : row->gpm_agree_pts;
            if (!isnan(pts))
                v[n++] = pts;
        }
    }
    out->compared = (int)n;
    out->beyond = 0;
    out->median_pts = out->max_pts = NAN;
    if (n > 0) {
        qsort(v, n, sizeof *v, by_value);
        out->median_pts = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        out->max_pts = v[n - 1];
        for (size_t i = 0; i < n; i++)
            out->beyond += v[i] > UF_GPM_AGREE_PTS;
    }
    free(v);
    return 0;
}

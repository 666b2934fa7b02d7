/* The claims of several runs side by side: see claimstats.h. */
#include "claimstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void cs_set_init(cs_set *s)
{
    memset(s, 0, sizeof *s);
}

void cs_set_free(cs_set *s)
{
    for (int i = 0; i < s->n_claims; i++)
        free(s->claims[i].values);
    free(s->claims);
    free(s->scenarios);
    cs_set_init(s);
}

/* Room for one more element of an array of `size`-byte elements: 0, or -1 out of memory. */
static int grow(void **items, int n, int *cap, size_t size)
{
    if (n < *cap)
        return 0;
    int bigger = *cap ? 2 * *cap : 16;
    void *p = realloc(*items, (size_t)bigger * size);
    if (!p)
        return -1;
    *items = p;
    *cap = bigger;
    return 0;
}

static cs_scenario *scenario_of(cs_set *s, const char *name)
{
    for (int i = 0; i < s->n_scenarios; i++)
        if (strcmp(s->scenarios[i].name, name) == 0)
            return &s->scenarios[i];
    if (grow((void **)&s->scenarios, s->n_scenarios, &s->cap_scenarios, sizeof *s->scenarios))
        return NULL;
    cs_scenario *sc = &s->scenarios[s->n_scenarios++];
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "%s", name);
    return sc;
}

static cs_claim *claim_of(cs_set *s, const char *scenario, int index)
{
    for (int i = 0; i < s->n_claims; i++)
        if (s->claims[i].index == index && strcmp(s->claims[i].scenario, scenario) == 0)
            return &s->claims[i];
    if (grow((void **)&s->claims, s->n_claims, &s->cap_claims, sizeof *s->claims))
        return NULL;
    cs_claim *c = &s->claims[s->n_claims++];
    memset(c, 0, sizeof *c);
    snprintf(c->scenario, sizeof c->scenario, "%s", scenario);
    c->index = index;
    c->bound = NAN;
    return c;
}

/* A metadata value the same in every run (mode, git): the first one kept, a differing one
 * counted. */
static void same_in_every_run(char *kept, size_t len, int first, const char *value, int *differ)
{
    if (!value)
        value = "";
    if (first)
        snprintf(kept, len, "%s", value);
    else if (strcmp(kept, value) != 0)
        (*differ)++;
}

/* The K of a key "claim.K": 1 and up, or 0 when the key is not one. -1: "claim." followed by
 * something else. */
static int claim_index(const char *key)
{
    if (strncmp(key, "claim.", 6) != 0)
        return 0;
    char *end;
    long k = strtol(key + 6, &end, 10);
    if (end == key + 6 || *end != '\0' || k < 1 || k > 1000000 || key[6] == '+' || key[6] == '-')
        return -1;
    return (int)k;
}

static int add_value(cs_claim *c, double v)
{
    if (grow((void **)&c->values, c->n_values, &c->cap_values, sizeof *c->values))
        return -1;
    c->values[c->n_values++] = v;
    return 0;
}

/* The bound one judged run states, against the first judged run's (NaN: none stated). */
static void note_bound(cs_claim *c, const uf_claim_read *r)
{
    if (c->held + c->failed == 0) {
        c->bound = r->bound;
        c->cmp = r->cmp;
    } else if (isnan(c->bound) != isnan(r->bound) ||
               (!isnan(r->bound) && (c->bound != r->bound || c->cmp != r->cmp))) {
        c->bounds_differ++;
    }
    c->bound_known = !isnan(c->bound) && c->bounds_differ == 0;
}

int cs_add_table(cs_set *s, const char *scenario, const uf_table *t, char *err, size_t errlen)
{
    cs_scenario *sc = scenario_of(s, scenario);
    if (!sc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int first = sc->runs == 0;
    sc->runs++;
    same_in_every_run(sc->mode, sizeof sc->mode, first, uf_meta_get(&t->meta, "mode"),
                      &sc->modes_differ);
    same_in_every_run(sc->git, sizeof sc->git, first, uf_meta_get(&t->meta, "git"),
                      &sc->gits_differ);
    for (int i = 0; i < t->meta.n; i++) {
        const char *key = t->meta.key[i], *line = t->meta.value[i];
        int k = claim_index(key);
        if (k == 0)
            continue;
        if (k < 0) {
            snprintf(err, errlen, "metadata key %s: claim.K needs a whole number K >= 1", key);
            return -1;
        }
        uf_claim_read r;
        char why[200];
        if (uf_claim_parse(line, &r, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s: %s", key, why);
            return -1;
        }
        cs_claim *c = claim_of(s, scenario, k);
        if (!c) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (c->runs == 0)
            snprintf(c->text, sizeof c->text, "%s", r.text);
        else if (strcmp(c->text, r.text) != 0)
            c->texts_differ++;
        c->runs++;
        if (r.verdict == UF_NA) {
            c->na++;
            c->na_legit += r.legit;
            continue;
        }
        note_bound(c, &r);
        if (r.verdict == UF_HELD)
            c->held++;
        else
            c->failed++;
        if (add_value(c, r.value) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* +1 where a larger value is the holding side (>=, >), -1 where a smaller one is. */
static double holding_side(uf_cmp cmp)
{
    return cmp == UF_GE || cmp == UF_GT ? 1.0 : -1.0;
}

/* (value - bound) / spread on the holding side; a zero spread gives +-inf, or 0 at the bound. */
static double margin_of(double value, double bound, double spread, uf_cmp cmp)
{
    double d = holding_side(cmp) * (value - bound);
    if (isnan(d) || isnan(spread))
        return NAN;
    if (spread > 0)
        return d / spread;
    return d > 0 ? INFINITY : d < 0 ? -INFINITY : 0.0;
}

void cs_summarize(const cs_claim *c, cs_summary *out)
{
    out->judged = c->n_values;
    out->min = out->median = out->max = out->spread = out->margin = out->worst_margin = NAN;
    out->room_pct = NAN;
    if (c->n_values == 0)
        return;
    uf_summary sum;
    uf_summarize(c->values, c->n_values, &sum);
    out->min = sum.min;
    out->median = sum.median;
    out->max = sum.max;
    if (c->n_values >= CS_MIN_SPREAD_RUNS) {
        double *dev = malloc((size_t)c->n_values * sizeof *dev);
        if (dev) {
            for (int i = 0; i < c->n_values; i++)
                dev[i] = fabs(c->values[i] - sum.median);
            out->spread = CS_MAD_TO_SIGMA * uf_median(dev, c->n_values);
            free(dev);
        }
    }
    if (!c->bound_known)
        return;
    double worst = holding_side(c->cmp) > 0 ? sum.min : sum.max;
    out->margin = margin_of(sum.median, c->bound, out->spread, c->cmp);
    out->worst_margin = margin_of(worst, c->bound, out->spread, c->cmp);
    if (c->bound != 0)
        out->room_pct = 100.0 * holding_side(c->cmp) * (sum.median - c->bound) / fabs(c->bound);
}

cs_standing cs_standing_of(const cs_claim *c, const cs_summary *sum, int runs, double min_margin)
{
    if (c->failed > 0 || c->na > c->na_legit || c->runs < runs)
        return CS_FLAKY;
    if (c->held == 0)
        return CS_UNJUDGED;
    if (c->held < CS_MIN_SPREAD_RUNS || !c->bound_known || isnan(sum->margin))
        return CS_LOW;
    if (sum->margin == 0 && sum->spread == 0)
        return CS_STEADY;
    return sum->margin >= min_margin ? CS_STEADY : CS_LOW;
}

const char *cs_standing_name(cs_standing s)
{
    switch (s) {
    case CS_STEADY: return "steady";
    case CS_LOW: return "LOW";
    case CS_FLAKY: return "FLAKY";
    default: return "n/a";
    }
}

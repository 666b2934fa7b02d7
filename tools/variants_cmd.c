/* underfed variants FILE.csv: the variants, one per line, in the file's order (a query on one
 * file, query.h). */
#include <stdio.h>

#include "query.h"
#include "tablequery.h"

static void print_variants(const uf_query *q, uf_strbuf *body)
{
    const char *names[UF_MAX_VARIANTS];
    int n = tq_variants(&q->t, names, UF_MAX_VARIANTS);
    (void)body;
    for (int v = 0; v < n; v++)
        printf("%s\n", names[v]);
}

static const uf_file_query variants = {.print = print_variants};

int uf_cmd_variants(int argc, char **argv)
{
    return uf_query_file(&uf_variants_command, &variants, argc, argv);
}

const uf_command uf_variants_command = {
    "variants", "FILE.csv", 1, 1, "", "the variants, one per line", uf_cmd_variants, 0};

/* unit.cupti_dl: libcupti is resolved at run time (common/instruments/cupti_dl.c), no GPU needed. A
 * plain program, not a Criterion test: it needs the toolkit's CUPTI headers, and a process of its
 * own whose mapped libraries it reads. Checks, in order: libcupti is not mapped at start (this
 * program links what the harness links of it: nothing); nothing is resolved before the load; the
 * load finds the build's libcupti and every function of UF_CUPTI_FUNCTIONS in it (as nm -D would);
 * the library is then mapped, and a second load is a no-op. Exit 77 where no libcupti can be loaded
 * at all (a toolkit without CUPTI), with the reason. */
#include <stdio.h>
#include <string.h>
#include "cupti_dl.h"
#include "instruments.h"
#include "proc_maps.h"
#include "status.h"

static int failures;

static void check(int ok, const char *what, const char *detail)
{
    printf("%s: %s%s%s\n", ok ? "ok" : "FAIL", what, detail[0] ? ": " : "", detail);
    failures += !ok;
}

/* How many functions of the table are NULL (0 after a successful load). */
static int unresolved(const uf_cupti_api *api)
{
    int n = 0;
#define UF_COUNT_NULL(name)                                                                \
    do {                                                                                   \
        if (!api->name) {                                                                  \
            printf("  %s unresolved\n", #name);                                            \
            n++;                                                                           \
        }                                                                                  \
    } while (0);
    UF_CUPTI_FUNCTIONS(UF_COUNT_NULL)
#undef UF_COUNT_NULL
    return n;
}

int main(void)
{
    char path[UF_REASON_LEN], reason[UF_REASON_LEN];
    check(uf_library_mapped("libcupti.so", path, sizeof path) == 0,
          "libcupti not mapped at start", "");
    check(uf_cupti_api_get() == NULL && uf_cupti_version() == 0,
          "nothing resolved before the load", "");
    int rc = uf_cupti_load(reason, sizeof reason);
    if (rc == UF_SKIP && strstr(reason, "neither on the loader's path") != NULL) {
        printf("skipped: %s\n", reason);
        return UF_SKIP;
    }
    check(rc == UF_OK, "uf_cupti_load", reason);
    if (rc != UF_OK)
        return 1;
    check(unresolved(uf_cupti_api_get()) == 0, "every function of UF_CUPTI_FUNCTIONS resolved",
          "");
    int mapped = uf_library_mapped("libcupti.so", path, sizeof path);
    check(mapped == 1, "libcupti mapped after the load", mapped == 1 ? path : "");
    char version[64];
    snprintf(version, sizeof version, "%u (headers: %u)", uf_cupti_version(),
             (unsigned)CUPTI_API_VERSION);
    check(uf_cupti_version() > 0, "cuptiGetVersion through the table", version);
    check(uf_cupti_load(reason, sizeof reason) == UF_OK, "a second load is a no-op", reason);
    return failures ? 1 : 0;
}

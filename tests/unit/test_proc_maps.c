/* Unit tests of proc_maps.c: a library found in a maps file by its file name, not by a folder
 * or a longer name; and in this process (which links no CUPTI). tests/unit/cupti_dl_check.c sees a
 * library mapped once loaded. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "proc_maps.h"

static const char maps_text[] =
    "55d1c0a00000-55d1c0a02000 r--p 00000000 08:01 123 /work/libcupti.so-build/launch_storm\n"
    "7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 \n"
    "7f1e2c100000-7f1e2c121000 r--p 00000000 08:01 77  /usr/lib/libcupti_extra.so.1\n"
    "7f1e30000000-7f1e30200000 r-xp 00000000 08:01 456                        "
    "/usr/local/cuda-13.0/lib/libcupti.so.13\n"
    "7ffd5c1f0000-7ffd5c211000 rw-p 00000000 00:00 0                          [stack]\n";

/* uf_maps_find_library on the text above. */
static int find_in(const char *text, const char *prefix, char *path, size_t len)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    cr_assert_not_null(f);
    int found = uf_maps_find_library(f, prefix, path, len);
    fclose(f);
    return found;
}

Test(proc_maps, finds_the_library_by_file_name)
{
    char path[256] = "";
    cr_assert_eq(find_in(maps_text, "libcupti.so", path, sizeof path), 1);
    cr_assert_str_eq(path, "/usr/local/cuda-13.0/lib/libcupti.so.13");
}

Test(proc_maps, a_folder_or_a_longer_name_is_not_the_library)
{
    char path[256] = "unchanged";
    const char *without =
        "55d1c0a00000-55d1c0a02000 r--p 00000000 08:01 123 /work/libcupti.so-build/x\n"
        "7f1e2c100000-7f1e2c121000 r--p 00000000 08:01 77  /usr/lib/libcupti_extra.so.1\n"
        "7ffd5c1f0000-7ffd5c211000 rw-p 00000000 00:00 0   [heap]\n"
        "7ffd5c1f0000-7ffd5c211000 rw-p 00000000 00:00 0\n";
    cr_assert_eq(find_in(without, "libcupti.so", path, sizeof path), 0);
    cr_assert_str_eq(path, "unchanged");
    cr_assert_eq(find_in("", "libcupti.so", path, sizeof path), 0);
}

Test(proc_maps, this_process)
{
    char path[4096];
    cr_assert_eq(uf_library_mapped("libc.so", path, sizeof path), 1, "libc is mapped");
    cr_assert(strstr(path, "/libc.so") != NULL, "%s", path);
    cr_assert_eq(uf_library_mapped("libcupti.so", path, sizeof path), 0,
                 "the unit tests link no CUPTI: %s", path);
}

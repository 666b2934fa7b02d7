/* Unit tests of no_gpu_reason.c: the skip reason tells "no driver at all" from the runtime's words. */
#include <criterion/criterion.h>
#include <string.h>

#include "no_gpu_reason.h"

Test(no_gpu, without_driver_says_no_driver)
{
    char out[256];
    uf_format_no_gpu(0, "libcuda.so.1: cannot open shared object file: No such file or directory",
                     "CUDA driver version is insufficient for CUDA runtime version", out,
                     sizeof out);
    cr_assert(strncmp(out, "no NVIDIA driver found (", 24) == 0, "%s", out);
    cr_assert(strstr(out, "libcuda.so.1: cannot open") != NULL, "%s", out);
    cr_assert(strstr(out, "insufficient") == NULL, "the runtime's misleading words: %s", out);
}

Test(no_gpu, without_driver_and_without_dlerror)
{
    char out[256];
    uf_format_no_gpu(0, "", "anything", out, sizeof out);
    cr_assert_str_eq(out, "no NVIDIA driver found (libcuda.so.1 cannot be loaded)");
}

Test(no_gpu, with_driver_keeps_the_runtime_words)
{
    char out[256];
    uf_format_no_gpu(1, "", "no CUDA-capable device is detected", out, sizeof out);
    cr_assert_str_eq(out, "no CUDA GPU is usable here (no CUDA-capable device is detected)");
    uf_format_no_gpu(1, NULL, "no device", out, sizeof out);
    cr_assert_str_eq(out, "no CUDA GPU is usable here (no device)");
}

Test(no_gpu, library_probe)
{
    char why[256] = "unchanged";
    cr_assert_eq(uf_library_loads("libc.so.6", why, sizeof why), 1);
    cr_assert_str_eq(why, "");
    cr_assert_eq(uf_library_loads("libunderfed-no-such-library.so.1", why, sizeof why), 0);
    cr_assert(strstr(why, "libunderfed-no-such-library.so.1") != NULL, "%s", why);
}

/* The probe agrees with the library's presence here, whichever machine this is. */
Test(no_gpu, reason_matches_the_machine)
{
    char out[256];
    int driver = uf_library_loads(UF_CUDA_DRIVER_LIB, NULL, 0);
    uf_no_gpu_reason("some runtime words", out, sizeof out);
    if (driver)
        cr_assert_str_eq(out, "no CUDA GPU is usable here (some runtime words)");
    else
        cr_assert(strncmp(out, "no NVIDIA driver found (", 24) == 0, "%s", out);
}

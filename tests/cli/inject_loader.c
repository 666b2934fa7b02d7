/* Loads libunderfed_inject.so as the CUDA driver would (dlopen, then InitializeInjection) and
 * exits: the recorder's exit handler must write a valid trace file, with a note where CUPTI
 * refused (no GPU here). Also checks that NVTX's look-up of InitializeInjectionNvtx2 through
 * the recorder's handle finds libcupti's (what NVTX_INJECTION64_PATH=the recorder relies on).
 * TIMES (default 1) calls InitializeInjection that many times, as a driver might: the recorder
 * must start once and write its records once.
 *   inject_loader LIB [TIMES]; exit 0 loaded and initialized, 1 otherwise, 2 usage. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int times = argc == 3 ? atoi(argv[2]) : 1;
    if ((argc != 2 && argc != 3) || times < 1 || times > 9) {
        fprintf(stderr, "usage: inject_loader LIB [TIMES 1..9]\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "inject_loader: %s\n", dlerror());
        return 1;
    }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    for (int i = 0; i < times; i++)
        if (init == NULL || init() != 1) {
            fprintf(stderr, "inject_loader: InitializeInjection missing or failed\n");
            return 1;
        }
    if (dlsym(lib, "InitializeInjectionNvtx2") == NULL) {
        fprintf(stderr, "inject_loader: InitializeInjectionNvtx2 not found through the recorder\n");
        return 1;
    }
    printf("inject_loader: initialized\n");
    return 0;   /* the recorder's exit handler writes the records */
}

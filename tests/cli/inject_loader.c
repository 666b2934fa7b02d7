/* Loads libunderfed_inject.so as the CUDA driver would (dlopen, then InitializeInjection) and
 * exits: the recorder's exit handler must write a valid trace file, with a note where CUPTI
 * refused (no GPU here). Also checks that NVTX's look-up of InitializeInjectionNvtx2 through
 * the recorder's handle finds libcupti's (what NVTX_INJECTION64_PATH=the recorder relies on).
 *   inject_loader LIB; exit 0 loaded and initialized, 1 otherwise. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: inject_loader LIB\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "inject_loader: %s\n", dlerror());
        return 1;
    }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
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

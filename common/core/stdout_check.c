/* stdout_check.h: standard output flushed, and its error flag read, once at the end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stdout_check.h"

int uf_stdout_flushed(const char *who)
{
    int flushed = fflush(stdout);
    int saved = errno;
    if (flushed == 0 && !ferror(stdout))
        return 0;
    fprintf(stderr, "%s: cannot write standard output: %s\n", who,
            flushed != 0 ? strerror(saved) : "an earlier write to it failed");
    return -1;
}

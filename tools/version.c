/* The tool's version (cli.h): the `git describe` that the build recorded, and the one line
 * `underfed --version` and `underfed doctor --version` print (cmake/git_describe.cmake writes
 * uf_git_describe into the build folder's uf_version.c). */
#include "cli.h"

#include <stdio.h>

#include "doctor_trace.h"

extern const char uf_git_describe[];

const char *uf_tool_version(void)
{
    return uf_git_describe;
}

void uf_print_version(FILE *f)
{
    fprintf(f, "underfed %s (doctor trace format %d)\n", uf_tool_version(), UF_TRACE_VERSION);
}

/* The tool's version (cli.h): the `git describe` that the build recorded
 * (cmake/git_describe.cmake writes uf_git_describe into the build folder's uf_version.c). */
#include "cli.h"

extern const char uf_git_describe[];

const char *uf_tool_version(void)
{
    return uf_git_describe;
}

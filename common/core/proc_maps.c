/* Mapped shared libraries from /proc/self/maps (proc_maps.h). */
#include "proc_maps.h"

#include <errno.h>
#include <string.h>

/* The path field of one maps line (after five fields and their blanks), or "" for an
 * anonymous mapping; the line's newline removed. */
static const char *mapping_path(char *line)
{
    line[strcspn(line, "\n")] = '\0';
    char *p = line;
    for (int field = 0; field < 5; field++) {
        p += strspn(p, " \t");
        p += strcspn(p, " \t");
    }
    return p + strspn(p, " \t");
}

int uf_maps_find_library(FILE *maps, const char *prefix, char *path, size_t path_len)
{
    char line[4096 + 128];      /* PATH_MAX and the fields before it */
    size_t prefix_len = strlen(prefix);
    while (fgets(line, sizeof line, maps)) {
        const char *mapped = mapping_path(line);
        const char *slash = strrchr(mapped, '/');
        const char *file = slash ? slash + 1 : mapped;
        if (mapped[0] == '/' && strncmp(file, prefix, prefix_len) == 0) {
            snprintf(path, path_len, "%s", mapped);
            return 1;
        }
    }
    return 0;
}

int uf_library_mapped(const char *prefix, char *path, size_t path_len)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) {
        snprintf(path, path_len, "cannot read /proc/self/maps: %s", strerror(errno));
        return -1;
    }
    int found = uf_maps_find_library(maps, prefix, path, path_len);
    fclose(maps);
    return found;
}

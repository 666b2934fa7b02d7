/* Unit tests of trace_export.c: valid JSON, processes and threads named, one event per record,
 * timestamps relative to the earliest record, names escaped. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_check.h"
#include "read_text.h"
#include "trace_export.h"

static char *make_tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/uf_trace_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static uf_activity act(uint64_t start, uint64_t end, uint32_t corr, uint32_t stream, uint8_t kind,
                       const char *name)
{
    uf_activity a = {.start_ns = start, .end_ns = end, .correlation_id = corr, .device_id = 0,
                     .stream_id = stream, .kind = kind, .name = name};
    return a;
}

static uf_api_call call(uint64_t start, uint64_t end, uint32_t corr, const char *name)
{
    uf_api_call c = {.start_ns = start, .end_ns = end, .correlation_id = corr, .is_runtime = 1,
                     .name = name};
    return c;
}

/* Write the sections to dir/trace.json and return the file's text. */
static char *export(const char *dir, const uf_trace_section *s, int n)
{
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/trace.json", dir);
    cr_assert_eq(uf_trace_export_chrome(path, s, n, err, sizeof err), 0, "%s", err);
    char *text = read_text(path);
    unlink(path);
    return text;
}

Test(trace_export, two_sections)
{
    const uint64_t t0 = 1795990656085747958ULL;  /* a CUPTI timestamp */
    uf_activity eager[] = {
        act(t0 + 1500, t0 + 1750, 11, 13, UF_ACT_KERNEL, "_Z7empty_kv"),
        act(t0 + 3000, t0 + 4000, 12, 13, UF_ACT_MEMCPY, NULL),
        act(t0 + 5000, t0 + 5100, 13, 14, UF_ACT_MEMSET, NULL),
    };
    uf_api_call eager_api[] = {call(t0, t0 + 900, 11, "cudaLaunchKernel_v7000"),
                               call(t0 + 1000, t0 + 1100, 12, "cudaMemcpyAsync_v3020")};
    uf_activity graph[] = {
        act(t0 + 10000, t0 + 12000, 20, 13, UF_ACT_KERNEL, "ker\"nel\\x"),
        act(t0 + 11000, t0 + 20000, 20, 15, UF_ACT_KERNEL, "ncclKernel_AllReduce"),
    };
    graph[0].graph_id = 4;
    graph[1].graph_id = 4;
    graph[1].is_comm = 1;
    graph[1].blocks = 32;
    graph[1].device_id = 1;
    uf_api_call graph_api[] = {call(t0 + 9000, t0 + 9500, 20, "cudaGraphLaunch_v10000")};
    uf_trace_section s[] = {
        {.label = "eager @ elems=4096", .acts = eager, .n_acts = 3, .apis = eager_api,
         .n_apis = 2},
        {.label = "graph \"fixed\" @ elems=4096", .acts = graph, .n_acts = 2, .apis = graph_api,
         .n_apis = 1},
    };
    char *dir = make_tmpdir();
    char *text = export(dir, s, 2);
    cr_assert(json_valid(text), "not valid JSON:\n%s", text);
    cr_assert(strncmp(text, "{\"traceEvents\":[", 16) == 0);
    cr_assert(strstr(text, "\"displayTimeUnit\":\"ms\"") != NULL);

    /* one complete event per record */
    cr_assert_eq(count_occurrences(text, "\"ph\":\"X\""), 3 + 2 + 2 + 1);
    /* processes and threads named */
    cr_assert_eq(count_occurrences(text, "\"process_name\""), 2);
    cr_assert(strstr(text, "\"args\":{\"name\":\"eager @ elems=4096\"}") != NULL);
    cr_assert(strstr(text, "\"args\":{\"name\":\"graph \\\"fixed\\\" @ elems=4096\"}") != NULL,
              "%s", text);
    cr_assert(strstr(text, "\"GPU 0 stream 13\"") != NULL);
    cr_assert(strstr(text, "\"GPU 0 stream 14\"") != NULL);
    cr_assert(strstr(text, "\"GPU 1 stream 15\"") != NULL);
    cr_assert_eq(count_occurrences(text, "\"host API\""), 2);
    /* names escaped */
    cr_assert(strstr(text, "\"name\":\"ker\\\"nel\\\\x\"") != NULL, "%s", text);
    /* categories */
    cr_assert_eq(count_occurrences(text, "\"cat\":\"comm\""), 1);
    cr_assert_eq(count_occurrences(text, "\"cat\":\"kernel\""), 2);
    cr_assert_eq(count_occurrences(text, "\"cat\":\"memcpy\""), 1);
    cr_assert_eq(count_occurrences(text, "\"cat\":\"memset\""), 1);
    cr_assert_eq(count_occurrences(text, "\"cat\":\"api\""), 3);
    /* µs with 3 decimals relative to the earliest record (the first API call) */
    cr_assert(strstr(text, "\"name\":\"cudaLaunchKernel_v7000\",\"cat\":\"api\",\"ph\":\"X\","
                           "\"pid\":1,\"tid\":1,\"ts\":0.000,\"dur\":0.900") != NULL, "%s", text);
    cr_assert(strstr(text, "\"name\":\"_Z7empty_kv\",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":1,"
                           "\"tid\":2,\"ts\":1.500,\"dur\":0.250,\"args\":{\"correlation\":11}")
              != NULL, "%s", text);
    cr_assert(strstr(text, "\"ts\":11.000,\"dur\":9.000,\"args\":{\"correlation\":20,"
                           "\"graph\":4,\"blocks\":32}") != NULL, "%s", text);
    cr_assert(strstr(text, "\"graph\":4}") != NULL, "a kernel of unknown size has no blocks");
    cr_assert_eq(count_entries(dir), 0, "no temporary left");
    free(text);
    rmdir(dir);
}

Test(trace_export, empty)
{
    char *dir = make_tmpdir();
    char *text = export(dir, NULL, 0);
    cr_assert(json_valid(text), "%s", text);
    cr_assert_eq(count_occurrences(text, "\"ph\""), 0);
    free(text);

    uf_trace_section s = {.label = NULL};
    text = export(dir, &s, 1);
    cr_assert(json_valid(text), "%s", text);
    cr_assert_eq(count_occurrences(text, "\"process_name\""), 1);
    cr_assert_eq(count_occurrences(text, "\"ph\":\"X\""), 0);
    free(text);
    rmdir(dir);
}

Test(trace_export, control_characters_escaped)
{
    uf_activity a[] = {act(0, 10, 1, 7, UF_ACT_KERNEL, "tab\there\nnew\x01")};
    uf_trace_section s = {.label = "l\\abel", .acts = a, .n_acts = 1};
    char *dir = make_tmpdir();
    char *text = export(dir, &s, 1);
    cr_assert(json_valid(text), "%s", text);
    cr_assert(strstr(text, "\"tab\\there\\nnew\\u0001\"") != NULL, "%s", text);
    cr_assert(strstr(text, "\"l\\\\abel\"") != NULL, "%s", text);
    free(text);
    rmdir(dir);
}

Test(trace_export, many_records)
{
    const size_t n = 50000;
    uf_activity *a = malloc(n * sizeof *a);
    cr_assert_not_null(a);
    for (size_t i = 0; i < n; i++)
        a[i] = act(1000 * i, 1000 * i + 500, (uint32_t)i, (uint32_t)(i % 4), UF_ACT_KERNEL,
                   "k");
    uf_trace_section s = {.label = "big", .acts = a, .n_acts = n};
    char *dir = make_tmpdir();
    char *text = export(dir, &s, 1);
    cr_assert(json_valid(text));
    cr_assert_eq(count_occurrences(text, "\"ph\":\"X\""), (int)n);
    cr_assert_eq(count_occurrences(text, "\"thread_name\""), 4);
    free(text);
    free(a);
    rmdir(dir);
}

Test(trace_export, unwritable_path)
{
    uf_trace_section s = {.label = "x"};
    char err[512] = "";
    cr_assert_eq(uf_trace_export_chrome("/nonexistent/dir/t.json", &s, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/dir/t.json") != NULL, "%s", err);
}

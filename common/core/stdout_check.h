/* Whether what a program printed reached standard output: a full device or a closed pipe
 * otherwise loses it silently, and the program exits 0. Each program's main calls it last
 * (the underfed tool, every scenario through uf_main, benches/ceilings). Plain C, no CUDA. */
#ifndef UF_STDOUT_CHECK_H
#define UF_STDOUT_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Flush standard output: 0 when everything printed to it was written, else -1 with
 * "WHO: cannot write standard output: REASON" on stderr (the flush's error, or "an earlier
 * write to it failed"). The caller exits 1 where it would have exited 0. */
int uf_stdout_flushed(const char *who);

#ifdef __cplusplus
}
#endif
#endif

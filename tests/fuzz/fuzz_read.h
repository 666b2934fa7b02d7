/* One fuzzed input through the reading path of the `underfed` tool: the strict results reader
 * (with the scenario check of a result folder), the ceilings reader, or the series reader on
 * top of its results table; then the comparison the tool runs on what was read; or a doctor
 * trace through the doctor's reader, analysis and report, its diagnosis held to the bounds of
 * fuzz_doctor.h. Shared by the deterministic mutation driver (fuzz_reader.c) and the libFuzzer
 * target (fuzz_libfuzzer.c). */
#ifndef UF_FUZZ_READ_H
#define UF_FUZZ_READ_H

#include <stddef.h>

#include "fuzz_doctor.h"     /* a doctor trace's reading path */

typedef enum { FUZZ_RESULTS = 0, FUZZ_CEILINGS, FUZZ_SERIES, FUZZ_DOCTOR, FUZZ_N_KINDS } fuzz_kind;

/* The kind of a file from its first line (results when it is none of them). */
fuzz_kind fuzz_kind_of(const char *data, size_t len);

/* Read data (len bytes, any content) as a file of the kind named path. scenario: the name
 * the folder gives the file (NULL: none, as `underfed ladder FILE.csv` reads). For a series,
 * results/results_len is the text of its results file. Returns 0 when accepted, 1 when refused
 * with a message that starts "PATH:LINE:" (a doctor trace: "PATH:", a line where there is
 * one), -1 when refused with any other message (a bug: the message is in err), -2 when a
 * doctor trace was accepted and its diagnosis broke a bound (a bug: err says which). */

int fuzz_read_one(fuzz_kind kind, const char *path, const char *scenario, const char *data,
                  size_t len, const char *results, size_t results_len, char *err,
                  size_t errlen);

#endif

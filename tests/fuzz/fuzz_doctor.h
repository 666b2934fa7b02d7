/* One fuzzed doctor trace through the doctor's reading path (the strict reader, then the
 * analysis, the report and its JSON), and the oracle that an accepted trace's diagnosis must
 * meet (#32): a mutant may be refused or accepted, but an accepted one's figures lie within
 * the run's span. Shared by the deterministic mutation driver (fuzz_reader.c) and the
 * libFuzzer target (fuzz_libfuzzer.c). */
#ifndef UF_FUZZ_DOCTOR_H
#define UF_FUZZ_DOCTOR_H

#include <stddef.h>

#include "doctor.h"
#include "doctor_trace.h"

/* The bounds a diagnosis d of the trace file f keeps, whatever f held: every time (ms, us) and
 * duration finite and within the run's span (f->info's span: format 4's span line, older
 * files' records), the window and what it leaves out within it together; every share of the
 * step 0..100 % (the counters' own run means 0..UF_TRACE_SAMPLE_PCT_MAX), the idle parts no
 * more than the whole; every count per step finite, >= 0 and no more than the file's records;
 * NaN allowed wherever a figure may be missing. report is uf_doctor_print's text: valid UTF-8,
 * no control character but the line break, no nan or inf printed as a figure (outside the
 * recorder's note, which is the file's text). json is uf_doctor_json's: one valid JSON value.
 * 0 when every bound holds, else -1 with the first one broken in why.
 *
 * The figures are uf_diagnosis's fields at the time of writing (fuzz_doctor.c's table):
 * after a change of the struct, update the table and re-run the driver (README of
 * tests/fuzz/fuzz_reader.c's header: fuzz_reader --count N --seed S tests/data/doctor
 * tests/data/doctor-v4). */
int fuzz_doctor_oracle(const uf_trace_file *f, const uf_diagnosis *d, const char *report,
                       const char *json, char *why, size_t why_len);

/* Figures whose breach is a known defect of the analysis, awaiting its fix: a comma-separated
 * list of figure names (fuzz_doctor.c's table: "low_sm_fill", "tl.busy_pct", ...; NULL or ""
 * none). A known figure's breach does not fail the oracle; it is counted, and the count is
 * fuzz_doctor_known_breaches(). */
void fuzz_doctor_set_known(const char *figures);
unsigned long long fuzz_doctor_known_breaches(void);

/* data (len bytes, any content) as the trace file path: 0 accepted (and the oracle held, or
 * the analysis refused it: no device activity), 1 refused by the reader with a message that
 * starts "PATH:" (a line where there is one), -1 refused without it, -2 accepted but the oracle
 * failed: err says which. */
int fuzz_doctor_one(const char *path, const char *data, size_t len, char *err, size_t errlen);

#endif

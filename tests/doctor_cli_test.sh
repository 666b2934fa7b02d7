#!/usr/bin/env bash
# `underfed doctor` through the tool, without a GPU: the recorded fixtures of tests/data/doctor
# (made by tests/test_doctor.c's simulator: pid 42 reads the loss with a sync every step, pid 43
# tokenizes on the step's thread) are diagnosed and written as JSON; damaged records, bad usage
# and a missing recorder are exit 2 with a message; a run passes the injection variables to
# the command (the recorder itself needs a GPU, so that run has no records: exit 2, said).
#   tests/doctor_cli_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: tests/doctor_cli_test.sh SOURCE_DIR BUILD_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd) || exit 2
build=$(cd "$2" && pwd) || exit 2
tool=$build/tools/underfed
data=$src/tests/data/doctor
work=$build/doctor-cli-test
failures=0
[ -x "$tool" ] || { echo "FAIL: $tool is not built" >&2; exit 1; }

# fail, expect (tests/expect.sh)
. "$src/tests/expect.sh"

rm -rf "$work"
mkdir -p "$work" || exit 1

expect 0 "pid 42: host synchronization inside the step" "the .item() loop" \
  "$tool" doctor --from "$data" --json "$work/d.json"
grep -qF "pid 43: starved input" "$work/out.txt" || fail "pid 43 not diagnosed as starved input"
grep -qF '"top_finding": "host_sync"' "$work/d.json" || fail "JSON lacks pid 42's top finding"
grep -qF '"top_finding": "starved_input"' "$work/d.json" || fail "JSON lacks pid 43's top finding"
expect 0 "trace: $work/t.json" "--trace" "$tool" doctor --from "$data" --json "$work/d2.json" \
  --trace "$work/t.json"
grep -qF '"name":"pid 43"' "$work/t.json" || fail "the trace lacks pid 43's process"
if command -v python3 > /dev/null; then
  python3 -m json.tool "$work/d.json" > /dev/null || fail "d.json is not JSON"
  python3 -m json.tool "$work/t.json" > /dev/null || fail "t.json is not JSON"
fi

# --ceilings: each process against a ceilings file (tests/data/doctor-ceilings: launch_us 3 us,
# h2d_pageable_gbs 10 GB/s, no activity rows); the fixtures' launch calls take 6 us, pid 43's
# pageable copies move 4096 bytes in 300 us: counted, held against nothing (their records time
# only the DMA of staged data). Without --ceilings the JSON has no such object.
ceil=$src/tests/data/doctor-ceilings
grep -qF '"ceilings"' "$work/d.json" && fail "the JSON compares with ceilings without --ceilings"
expect 0 "against this GPU's ceilings ($ceil/ceilings.csv): launch calls 6.0 us median (33 calls) against this machine's floor of 3.00 us for back-to-back empty kernels (2.0x; beyond the floor, the host's own cost per call" \
  "--ceilings" "$tool" doctor --from "$data" --json "$work/c.json" --ceilings "$ceil/ceilings.csv"
grep -qF "pinned none; pageable 11 copies of 4096 bytes mean, DMA at 0.0137 GB/s (their records time only the DMA of data the host had staged: no end-to-end rate to hold against h2d_pageable_gbs)" \
  "$work/out.txt" || fail "--ceilings: pid 43's pageable copies not counted, or held against h2d_pageable_gbs"
grep -qF "% of 10.00 GB/s" "$work/out.txt" && fail "--ceilings: pageable copies held against h2d_pageable_gbs"
grep -qF "activity: the ceilings file has no activity rows (copy_dram_pct, gemm_bf16_tensor_pct)" \
  "$work/out.txt" || fail "--ceilings: the missing activity rows are not said"
grep -qF '"rows": {"launch_us": 3, "h2d_pinned_gbs": 50, "copy_dram_pct": null, "gemm_bf16_tensor_pct": null}' \
  "$work/c.json" || fail "--ceilings: the JSON's rows"
grep -qF '"launch_call_us": 6, "launch_calls": 33, "graph_node_kernels": 0, "launch_x": 2,' "$work/c.json" ||
  fail "--ceilings: the JSON's launch figures"
grep -qF '"h2d_pinned_copies": 0, "h2d_pinned_mean_bytes": null, "h2d_pinned_pct": null, "h2d_pageable_copies": 11, "h2d_pageable_mean_bytes": 4096, "h2d_pageable_dma_gbs": 0.0136533, "dram_of_copy_pct"' \
  "$work/c.json" || fail "--ceilings: the JSON's pageable copies"
grep -qF 'h2d_pageable_pct' "$work/c.json" && fail "--ceilings: the JSON holds pageable copies against h2d_pageable_gbs"
expect 0 "(gemm_bf16_tensor_pct is in 'ratio', not '%')" "--ceilings, an activity row in another unit" \
  "$tool" doctor --from "$data" --json "$work/c2.json" --ceilings "$ceil/activity.csv"
grep -qF '"tensor_of_gemm_pct": null' "$work/c2.json" || fail "--ceilings: a unit mismatch is not null"
expect 2 "launch_ms.csv:4:" "--ceilings, a known ceiling in another unit (the suite's reader refuses it)" \
  "$tool" doctor --from "$data" --json "$work/c4.json" --ceilings "$ceil/launch_ms.csv"
expect 2 "underfed doctor: --ceilings: $ceil/bad.csv:4:" "--ceilings, a damaged file" \
  "$tool" doctor --from "$data" --json "$work/c3.json" --ceilings "$ceil/bad.csv"
[ -e "$work/c3.json" ] && fail "--ceilings: a damaged file still wrote a diagnosis"
expect 2 "underfed doctor: --ceilings: $ceil/none.csv" "--ceilings, a missing file" \
  "$tool" doctor --from "$data" --json "$work/c3.json" --ceilings "$ceil/none.csv"
expect 2 "--ceilings: $ceil/bad.csv:4:" "--ceilings, a damaged file before a run" \
  "$tool" doctor --ceilings "$ceil/bad.csv" --inject "$work/fake_inject.so" --out "$work/run" -- \
  sh -c 'touch "$0/ran"' "$work"
[ -e "$work/ran" ] && fail "--ceilings: a damaged file did not stop the run before it started"
expect 2 "needs a value: --ceilings" "--ceilings without a file" "$tool" doctor --from "$data" --ceilings
expect 2 "--rules takes no other option" "--ceilings with --rules" \
  "$tool" doctor --rules --ceilings "$ceil/ceilings.csv"

mkdir -p "$work/damaged"
sed 's/^K 1004000 /K x /' "$data/underfed-trace.42.txt" > "$work/damaged/underfed-trace.42.txt"
expect 2 "underfed-trace.42.txt:7: start: expected a decimal number" "a damaged record" \
  "$tool" doctor --from "$work/damaged"
head -c 3000 "$data/underfed-trace.42.txt" > "$work/damaged/underfed-trace.42.txt"
expect 2 "underfed-trace.42.txt:" "a truncated file" "$tool" doctor --from "$work/damaged"
mkdir -p "$work/empty"
expect 2 "no underfed-trace.PID.txt files" "a folder without traces" \
  "$tool" doctor --from "$work/empty"
expect 2 "cannot open" "a missing folder" "$tool" doctor --from "$work/missing"

expect 2 "nothing to do" "no arguments" "$tool" doctor
expect 2 "give one of" "two modes" "$tool" doctor --from "$data" --rules
expect 2 "nothing to run after --" "-- without a command" "$tool" doctor --
expect 2 "unknown argument" "an unknown option" "$tool" doctor --frobnicate
expect 2 "apply to a run" "--light without a run" "$tool" doctor --from "$data" --light
expect 2 "apply to a run" "--counters without a run" "$tool" doctor --from "$data" --counters
expect 2 "not with --counters" "--light with --counters" \
  "$tool" doctor --light --counters -- true
expect 0 "| \`launch_bound\` |" "--rules" "$tool" doctor --rules
expect 0 "usage: underfed doctor" "--help" "$tool" doctor --help

expect 2 "the recorder $work/none.so" "a missing recorder" \
  "$tool" doctor --inject "$work/none.so" --out "$work/run" -- true
# Any file stands in for the recorder here: the command sees the variables, records nothing.
touch "$work/fake_inject.so"
expect 2 "no underfed-trace.PID.txt files" "a run without records" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" --light -- \
  sh -c 'echo "$CUDA_INJECTION64_PATH $NVTX_INJECTION64_PATH $UNDERFED_DOCTOR_OUT $UNDERFED_DOCTOR_LIGHT" > "$0/env.txt"' "$work"
[ "$(cat "$work/env.txt" 2>/dev/null)" = "$work/fake_inject.so $work/fake_inject.so $work/run 1" ] ||
  fail "the command saw: $(cat "$work/env.txt" 2>/dev/null)"
# --counters reaches the recorder as UNDERFED_DOCTOR_COUNTERS=1; without it the variable is unset.
expect 2 "no underfed-trace.PID.txt files" "a run with --counters" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" --counters -- \
  sh -c 'echo "counters=${UNDERFED_DOCTOR_COUNTERS:-unset}" > "$0/env.txt"' "$work"
[ "$(cat "$work/env.txt" 2>/dev/null)" = "counters=1" ] ||
  fail "--counters: the command saw: $(cat "$work/env.txt" 2>/dev/null)"
expect 2 "no underfed-trace.PID.txt files" "a run without --counters" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" -- \
  sh -c 'echo "counters=${UNDERFED_DOCTOR_COUNTERS:-unset}" > "$0/env.txt"' "$work"
[ "$(cat "$work/env.txt" 2>/dev/null)" = "counters=unset" ] ||
  fail "no --counters: the command saw: $(cat "$work/env.txt" 2>/dev/null)"
# A damaged file of an earlier run in --out is removed before the run, not merged with it.
echo garbage > "$work/run/underfed-trace.1.txt"
expect 2 "no underfed-trace.PID.txt files" "an earlier run's files are cleared" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" -- true
# No process wrote records (no CUDA, or nsys/ncu replaced the injection): the likely reasons.
grep -qF "no process of true loaded the recorder" "$work/out.txt" ||
  fail "a run without records does not say why"
[ -e "$work/run/underfed-trace.1.txt" ] && fail "the earlier run's file is still there"
expect 77 "skipped (exit 77)" "a command that skips" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" -- sh -c 'exit 77'
expect 1 "exited with status 3" "a failing command" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" -- sh -c 'exit 3'
expect 1 "--help" "COMMAND's own --help is COMMAND's" \
  "$tool" doctor --inject "$work/fake_inject.so" --out "$work/run" -- sh -c 'echo "$1"; exit 4' sh --help

# The recorder itself, loaded as the driver would load it, where it was built (not in a
# host-only build): without a GPU CUPTI refuses and the file says so; with one, CUPTI records
# nothing outside CUDA. Either way a valid file with no device activity.
if [ -x "$build/tests/inject_loader" ] && [ -f "$build/tools/libunderfed_inject.so" ]; then
  mkdir -p "$work/inject"
  expect 0 "inject_loader: initialized" "the recorder loads and initializes" \
    env UNDERFED_DOCTOR_OUT="$work/inject" "$build/tests/inject_loader" "$build/tools/libunderfed_inject.so"
  grep -qF -- "-> $work/inject/underfed-trace." "$work/out.txt" || fail "the recorder wrote no file"
  expect 2 "no device activity recorded" "its empty records" "$tool" doctor --from "$work/inject"
else
  echo "skip: the recorder is not built here (host-only build)"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all doctor CLI cases passed"

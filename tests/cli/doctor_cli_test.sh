#!/usr/bin/env bash
# `underfed doctor` through the tool, without a GPU: the recorded fixtures of tests/data/doctor
# (made by tests/unit/test_doctor.c's simulator: pid 42 reads the loss with a sync every step,
# pid 43 tokenizes on the step's thread) are diagnosed and written as JSON; damaged records,
# bad usage and a missing recorder are exit 2 with a message; a run passes the injection
# variables to the command (the recorder itself needs a GPU, so that run has no records: exit 2,
# said).
#   tests/cli/doctor_cli_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/doctor_cli_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"
data=$src/tests/data/doctor
built "$tool"

fresh_work "$build/doctor-cli-test"

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

# A format 4 recording (tests/data/doctor-v4: pid 42's fixture with its calls' thread, the host
# sampler's reads and the span): the same diagnosis, and what the file says of its recording.
v4=$src/tests/data/doctor-v4
expect 0 "pid 42: host synchronization inside the step" "a format 4 recording" \
  "$tool" doctor --from "$v4" --json "$work/v4.json"
grep -qF "recording: format 4, span 0.022 s; CUPTI dropped 0 records; 60 API calls kept" \
  "$work/out.txt" || fail "format 4: the recording line"
grep -qF "host sampler every 1000 us: 22 samples of 1 thread" "$work/out.txt" ||
  fail "format 4: the host sampler's samples not said"
grep -qF '"recordings": [' "$work/v4.json" && grep -qF '"format": 4, "span_start_ns": 600000' \
  "$work/v4.json" || fail "format 4: the JSON's recordings"

# Two H200 recordings (tests/data/doctor-recorded: their README): read and diagnosed as they are.
for rec in torch_gemm cupy_sim; do
  expect 0 "recording: format 4, span" "the H200 recording $rec" \
    "$tool" doctor --from "$src/tests/data/doctor-recorded/$rec" --json "$work/rec.json"
  grep -qF "host sampler every 1000 us" "$work/out.txt" || fail "$rec: its host samples not said"
done

# Hostile and careless files (#32): each is exit 2 with a one-line reason naming the file, and
# the line where there is one; nothing is diagnosed from them.
# refused FOLDER MESSAGE WHAT: the tool on FOLDER, exit 2, MESSAGE in its one line, no JSON
refused() {
  rm -f "$work/refused.json"
  expect 2 "$2" "$3" timeout 20 "$tool" doctor --from "$1" --json "$work/refused.json"
  [ "$(grep -c . "$work/out.txt")" = 1 ] || fail "$3: not a one-line reason"
  [ -e "$work/refused.json" ] && fail "$3: a diagnosis was written"
}
hostile() { rm -rf "$work/h"; mkdir -p "$work/h"; }
hostile
sed 's/^K 1004000 1404000 /K 1004000 18446744073709551615 /' "$v4/underfed-trace.42.txt" \
  > "$work/h/underfed-trace.42.txt"
refused "$work/h" "underfed-trace.42.txt:12: a record outside the run's span, 600000..22996000 ns (its span line); 1 record outside it in all" \
  "a kernel ending at 2^64-1"
hostile
sed 's/^K 1404000 2204000 /K 1000000000001404000 1000000000002204000 /' \
  "$data/underfed-trace.42.txt" > "$work/h/underfed-trace.42.txt"
refused "$work/h" "underfed-trace.42.txt:8: a record outside the run's span" \
  "a format 1 record shifted by 10^18 ns (7 days from its median record)"
hostile
sed 's/^span 600000 22996000$/span 0 18446744073709551615/' "$v4/underfed-trace.42.txt" \
  > "$work/h/underfed-trace.42.txt"
refused "$work/h" "underfed-trace.42.txt:8: span: longer than 7 days" "a span of 2^64-1 ns"
hostile
awk 'NR == 13 { print } /^end / { $2 += 1 } { print }' "$v4/underfed-trace.42.txt" \
  > "$work/h/underfed-trace.42.txt"
refused "$work/h" "underfed-trace.42.txt:14: the same record as line 13 (a duplicated record)" \
  "a duplicated kernel record"
hostile
cp "$v4/underfed-trace.42.txt" "$work/h/underfed-trace.7.txt"
refused "$work/h" "underfed-trace.7.txt:2: pid 42, but the file is named for pid 7" \
  "a file named for pid 7 that says pid 42"
hostile
cp "$v4/underfed-trace.42.txt" "$work/h/underfed-trace.42.txt"
cp "$v4/underfed-trace.42.txt" "$work/h/underfed-trace.042.txt"
refused "$work/h" "two files for pid 42" "two files for one pid"
hostile
mkfifo "$work/h/underfed-trace.1.txt"
refused "$work/h" "underfed-trace.1.txt: not a regular file (a FIFO)" "a FIFO (not waited on)"
hostile
ln -s /dev/zero "$work/h/underfed-trace.1.txt"
refused "$work/h" "underfed-trace.1.txt: not a regular file (a device)" "a symlink to /dev/zero"
hostile
truncate -s 2147483649 "$work/h/underfed-trace.1.txt"
refused "$work/h" "underfed-trace.1.txt: 2147483649 bytes, more than the reader's cap of 2 GiB" \
  "a file over the size cap"
# CUPTI's dropped records are said, even where the recorder's note does not say it
hostile
sed 's/^dropped 0$/dropped 5/' "$v4/underfed-trace.42.txt" > "$work/h/underfed-trace.42.txt"
expect 0 "CUPTI dropped 5 records" "dropped N reported" "$tool" doctor --from "$work/h" \
  --json "$work/h.json"
grep -qF '"dropped": 5' "$work/h.json" || fail "dropped N: not in the JSON"
# A process that cannot be diagnosed fails the run, even where another one was diagnosed (pid
# 45: nothing recorded at all, CUPTI refused); a process that only initialized CUDA (API calls
# recorded, none submitting device work: torch.compile's workers) is left out, said.
hostile
cp "$v4/underfed-trace.42.txt" "$work/h/"
printf '%s\n' "underfed-doctor-trace 4" "pid 45" "sm_count 132" "counters nan nan nan nan" \
  "dropped 0" "note CUPTI refused its activity records" "counters_note " "span 10 20" \
  "api_filter 1000 0 0" "host_sampler 0 0 0 0" "record_cap 5000000 0" "end 0" \
  > "$work/h/underfed-trace.45.txt"
expect 2 "1 of 2 processes not diagnosed" "a process not diagnosed beside one that is" \
  "$tool" doctor --from "$work/h" --json "$work/h.json"
grep -qF "underfed-trace.45.txt: pid 45: no device activity recorded" "$work/out.txt" ||
  fail "the process not diagnosed: no reason"
grep -qF '"pid": 45, "path": ' "$work/h.json" && grep -qF '"diagnosed": false, "reason": ' \
  "$work/h.json" || fail "the process not diagnosed: not in the JSON's recordings"
# ... and one that recorded no call at all, CUPTI refusing nothing (Lightning's helper process
# on the H200: its recorder loaded when CUDA initialized, and it made no call of 1 µs or more)
sed -i 's/^note CUPTI refused its activity records$/note counters: off/' "$work/h/underfed-trace.45.txt"
expect 0 "the process initialized CUDA and ran nothing on the device: left out" \
  "a process that initialized CUDA and recorded no call" "$tool" doctor --from "$work/h"
sed -i -e 's/^end 0$/A 12 14 1 0 45 cuModuleGetLoadingMode\nA 15 17 2 1 45 cudaGetDeviceCount_v3020\nend 2/' \
  "$work/h/underfed-trace.45.txt"
expect 0 "the process initialized CUDA and ran nothing on the device: left out" \
  "a process that only initialized CUDA" "$tool" doctor --from "$work/h" --json "$work/h.json"
sed -i 's/^A 15 17 2 1 45 cudaGetDeviceCount_v3020$/A 15 17 2 1 45 cudaLaunchKernel_v7000/' \
  "$work/h/underfed-trace.45.txt"
expect 2 "1 of 2 processes not diagnosed" "a process that launched and recorded no device work" \
  "$tool" doctor --from "$work/h" --json "$work/h.json"
# The traces the fuzzer found a defect with (tests/data/doctor-fuzzed/README.md): every share of
# every finding within 0..100 % of the step.
expect 0 "diagnosis of 1 process" "the fuzzer's mutants" "$tool" doctor \
  --from "$src/tests/data/doctor-fuzzed" --json "$work/fuzzed.json"
over=$(grep -oE '"share_pct": -?[0-9][0-9.e+-]*' "$work/fuzzed.json" | awk '$2 > 100 || $2 < 0' | head -1)
[ -z "$over" ] || fail "the fuzzer's mutants: a share out of 0..100 ($over)"
# Escape sequences in names and notes never reach the terminal; bytes that are not UTF-8 do not
# reach the JSON (the --trace export included).
hostile
sed -e 's/^note $/note \x1b]0;owned\x07 \xc2\x9b2J/' \
    -e 's/^K \(1004000 1404000 .*\) sm90_xmma_gemm_fwd$/K \1 sm90_xmma\x1b[31m_gemm\xff_fwd/' \
  "$v4/underfed-trace.42.txt" > "$work/h/underfed-trace.42.txt"
expect 0 "pid 42: ?]0;owned? ?2J" "escape sequences in a note" \
  "$tool" doctor --from "$work/h" --json "$work/h.json" --trace "$work/h-trace.json"
LC_ALL=C grep -q "$(printf '\033')" "$work/out.txt" && fail "an escape sequence reached the terminal"
LC_ALL=C grep -q "$(printf '\302\233')" "$work/out.txt" && fail "a C1 control reached the terminal"
grep -qF 'sm90_xmma?[31m_gemm?_fwd' "$work/h-trace.json" || fail "the kernel's name not sanitized in --trace"
if command -v python3 > /dev/null; then
  for j in "$work/h.json" "$work/h-trace.json"; do
    python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$j" ||
      fail "$j is not UTF-8 JSON"
  done
fi
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
expect 0 "Exit: 0 diagnosed" "--help: the full usage" "$tool" doctor --help
[ "$("$tool" doctor --help 2> /dev/null | head -1 | cut -c1-22)" = "usage: underfed doctor" ] ||
  fail "--help: the usage is not on stdout"
expect 0 "Exit: 0 diagnosed" "underfed help doctor: the same" "$tool" help doctor
expect 0 "(doctor trace format 4)" "--version" "$tool" doctor --version
[ "$("$tool" doctor --version)" = "$("$tool" --version)" ] || fail "two versions"

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
  # called twice, as a driver has done in Lightning programs: one start, one write
  mkdir -p "$work/inject2"
  expect 0 "inject_loader: initialized" "the recorder initialized twice" \
    env UNDERFED_DOCTOR_OUT="$work/inject2" "$build/tests/inject_loader" "$build/tools/libunderfed_inject.so" 2
  writes=$(grep -cF -- "-> $work/inject2/underfed-trace." "$work/out.txt")
  [ "$writes" = 1 ] || fail "initialized twice, the recorder wrote its records $writes times (once expected)"
else
  echo "skip: the recorder is not built here (host-only build)"
fi

finish "failure(s)" "all doctor CLI cases passed"

#!/usr/bin/env bash
# Hostile input through the `underfed` tool, each case with its expected exit status and
# message (the reader's own cases are Criterion tests in tests/unit/test_results.c):
#   - NUL bytes in metadata (the crash of the first fuzzing: SIGSEGV, exit 139) and impossible
#     values: exit 2 naming file, line and column, from report, compare, ladder, series, ceiling;
#   - metadata and names out of bounds.h's bounds (a ceiling 'abc' or negative, step_ms 1e308,
#     elems -4096, an escape in a variant, an unknown step_stat): exit 2 naming file and line;
#   - folders of more than 64 files: every file read, none dropped;
#   - empty folders, an empty or truncated ceilings.csv: exit 2, no REPORT.md written;
#   - compare: one-sided folders are errors, lost rows are MISSING and fail unless
#     --allow-missing, new rows are NEW, a file whose `# scenario:` is not its name is refused;
#   - compare's noise model: a planted device-side slowdown fails, a host-bound change within
#     the run-to-run tolerance passes and says why, one beyond it fails;
#   - writers: REPORT.md and --json as a FIFO, a link to /dev/null or a device are refused and
#     left as they were; plotdata on a full disk leaves its data set as it was;
#   - report: the committed REPORT.md from `underfed report results/GPU` (images by default
#     from plots/GPU), and no rewrite that would drop its image links.
#   tests/cli/reader_cli_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/reader_cli_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"
data=$src/tests/data
built "$tool"

fresh_work "$build/reader-cli-test"
mkdir -p "$work/empty" "$work/a" "$work/b" || exit 1
cp "$data/gpu-a/launch_storm.csv" "$data/gpu-a/ceilings.csv" "$work/a/"
cp "$data/gpu-a/launch_storm.csv" "$data/gpu-a/ceilings.csv" "$work/b/"

# ---- NUL bytes: an error naming file, line and column, never a crash ----------------------
nul=$work/nul
cp -R "$data/nul" "$nul"
where='nul/launch_storm.csv:9:11: NUL byte'
expect 2 "$where" "report on a NUL in metadata" "$tool" report "$nul"
[ ! -e "$nul/REPORT.md" ] || fail "report wrote REPORT.md from a malformed folder"
expect 2 "$where" "compare on a NUL in metadata" "$tool" compare "$work/a" "$nul"
expect 2 "$where" "ladder on a NUL in metadata" "$tool" ladder "$nul/launch_storm.csv"
expect 2 'nul/ceilings.csv:3:11: NUL byte' "ceiling on a NUL in metadata" \
  "$tool" ceiling copy_d2d_gbs "$nul"
mkdir -p "$work/nul-series"
cp "$data/gpu-a/launch_storm.csv" "$data/nul/launch_storm.series.csv" "$work/nul-series/"
expect 2 'nul-series/launch_storm.series.csv:9:11: NUL byte' "series on a NUL in metadata" \
  "$tool" series "$work/nul-series/launch_storm.csv"
mkdir -p "$work/nul-name"
cp "$data/nul_name.csv" "$work/nul-name/launch_storm.csv"
expect 2 'launch_storm.csv:8:3: NUL byte' "report on a NUL inside a variant name" \
  "$tool" report "$work/nul-name"

# ---- impossible values ---------------------------------------------------------------------
mkdir -p "$work/nan" "$work/busy"
sed 's/^eager,broken,4096,1000,[0-9.]*,/eager,broken,4096,1000,nan,/' \
  "$data/gpu-a/launch_storm.csv" > "$work/nan/launch_storm.csv"
expect 2 "nan/launch_storm.csv:30:24: column 'step_ms': 'nan' is not a number" \
  "compare on a NaN step_ms" "$tool" compare "$work/a" "$work/nan"
awk -F, -v OFS=, 'NR == 27 { $12 = 500 } { print }' "$data/gpu-a/launch_storm.csv" \
  > "$work/busy/launch_storm.csv"
expect 2 "launch_storm.csv:27:" "report on busy_pct 500" "$tool" report "$work/busy"
grep -qF "column 'busy_pct': 500 is outside its valid range [0, 100]" "$work/out.txt" ||
  fail "busy_pct 500: no range in the message"

# ---- metadata and names read strictly, within bounds.h's bounds (#32) ----------------------
# Each edit of gpu-a's file: exit 2 naming file and line, from the command named.
strict() {  # strict SED_EDIT MESSAGE WHAT COMMAND [ARGS...]: COMMAND on DIR with the edited file
  local edit=$1 message=$2 what=$3 cmd=$4; shift 4
  local d=$work/strict-$((++strict_n))
  mkdir -p "$d"
  sed "$edit" "$data/gpu-a/launch_storm.csv" > "$d/launch_storm.csv"
  cp "$data/gpu-a/ceilings.csv" "$d/"
  case $cmd in
    report) expect 2 "$d/launch_storm.csv:$message" "$what" "$tool" report "$d" ;;
    compare) expect 2 "$d/launch_storm.csv:$message" "$what" "$tool" compare "$work/a" "$d" ;;
    *) expect 2 "$d/launch_storm.csv:$message" "$what" "$tool" "$cmd" "$d/launch_storm.csv" "$@" ;;
  esac
}
strict_n=0
strict 's/^# gpu: .*/&\n# ceiling.gemm_bf16_tflops: abc/' "10: metadata 'ceiling.gemm_bf16_tflops': 'abc' is not a ceiling" \
  "report on ceiling.gemm_bf16_tflops abc" report
strict 's/^# gpu: .*/&\n# ceiling.gemm_bf16_tflops: -804/' "10: metadata 'ceiling.gemm_bf16_tflops': '-804' is not a ceiling" \
  "compare on a negative ceiling" compare
strict 's/^eager,broken,4096,1000,[0-9.]*,/eager,broken,4096,1000,1e308,/' "30:24: column 'step_ms': 1e308 is outside its valid range (0, 86400000]" \
  "ladder on step_ms 1e308" ladder
strict 's/^eager,broken,4096,1000,/eager,broken,-4096,1000,/' "30:14: column 'elems': -4096 is not an axis value" \
  "values on elems -4096" values --metrics step_ms
strict 's/^graph,fixed,4096,1000,/gr\x1b[31maph,fixed,4096,1000,/' "31:3: column 'variant': character 3 (byte 0x1b)" \
  "variants on an escape in a variant" variants
grep -q $'\x1b' "$work/out.txt" && fail "a message printed the escape character"
strict 's/^# gpu: .*/&\n# step_stat: trimmed/' "10: unknown step_stat 'trimmed'" "report on step_stat trimmed" report

# ---- no fixed limit drops files: 70 result files ---------------------------------------------
mkdir -p "$work/many-a" "$work/many-b"
for i in $(seq -w 0 69); do
  for side in many-a many-b; do
    sed "s/^# scenario: launch_storm$/# scenario: s$i/" "$data/gpu-a/launch_storm.csv" \
      > "$work/$side/s$i.csv"
  done
done
expect 0 "wrote" "report on 70 files" "$tool" report "$work/many-a"
sections=$(grep -c '^## s[0-9]' "$work/many-a/REPORT.md")
[ "$sections" = 70 ] || fail "report on 70 files has $sections sections"
expect 0 "0 MISSING" "compare of 70 files" "$tool" compare "$work/many-a" "$work/many-b"
compared=$(grep -oE '^s[0-9]+ ' "$work/out.txt" | sort -u | wc -l)
[ "$compared" = 70 ] || fail "compare of 70 files compared $compared"

# ---- empty input, broken ceilings -------------------------------------------------------------
expect 2 "no result files" "report on an empty folder" "$tool" report "$work/empty"
[ ! -e "$work/empty/REPORT.md" ] || fail "report wrote REPORT.md into an empty folder"
expect 2 "no result files in $work/empty" "compare GOOD EMPTY" \
  "$tool" compare "$work/a" "$work/empty"
expect 2 "no result files in $work/empty" "compare EMPTY GOOD" \
  "$tool" compare "$work/empty" "$work/a"
mkdir -p "$work/ceil-empty" "$work/ceil-cut"
cp "$data/gpu-a/launch_storm.csv" "$work/ceil-empty/"
cp "$data/gpu-a/launch_storm.csv" "$work/ceil-cut/"
: > "$work/ceil-empty/ceilings.csv"
expect 2 "ceil-empty/ceilings.csv:1: not an underfed ceilings file" \
  "report with an empty ceilings.csv" "$tool" report "$work/ceil-empty"
[ ! -e "$work/ceil-empty/REPORT.md" ] || fail "report wrote REPORT.md with an empty ceilings.csv"
head -c 500 "$data/gpu-a/ceilings.csv" > "$work/ceil-cut/ceilings.csv"
expect 2 "truncated" "report with a truncated ceilings.csv" "$tool" report "$work/ceil-cut"
grep -qE 'ceil-cut/ceilings.csv:[0-9]+: truncated' "$work/out.txt" ||
  fail "truncated ceilings: no file:line"
mkdir -p "$work/no-ceil"
cp "$data/gpu-a/launch_storm.csv" "$work/no-ceil/"
expect 0 "wrote" "report without ceilings.csv" "$tool" report "$work/no-ceil"
grep -q '^Ceilings: not available' "$work/no-ceil/REPORT.md" ||
  fail "report without ceilings does not say so"

# ---- compare: missing and new rows, files, names -----------------------------------------------
mkdir -p "$work/lost" "$work/renamed" "$work/extra"
sed '$d' "$data/gpu-a/launch_storm.csv" > "$work/lost/launch_storm.csv"   # the last row lost
expect 1 "1 MISSING from $work/lost" "compare with a lost row" \
  "$tool" compare "$work/a" "$work/lost"
grep -qE '^launch_storm +fused +elems=16777216 ops=1000 +row .* MISSING$' "$work/out.txt" ||
  fail "the lost row is not listed MISSING"
grep -qF -- "--allow-missing" "$work/out.txt" || fail "a lost row does not point at --allow-missing"
expect 0 "(allowed: --allow-missing)" "compare with a lost row, --allow-missing" \
  "$tool" compare "$work/a" "$work/lost" --allow-missing
expect 0 "" "compare with a new row" "$tool" compare "$work/lost" "$work/a"
grep -qE '^launch_storm +fused +elems=16777216 ops=1000 +row .* NEW$' "$work/out.txt" ||
  fail "the new row is not listed NEW"
cp "$data/gpu-a/launch_storm.csv" "$work/extra/launch_storm.csv"
sed 's/^# scenario: launch_storm$/# scenario: other/' "$data/gpu-a/launch_storm.csv" \
  > "$work/extra/other.csv"
expect 1 "other                  MISSING (only in" "compare with a file lost" \
  "$tool" compare "$work/extra" "$work/a"
expect 0 "other                  NEW (only in" "compare with a file added" \
  "$tool" compare "$work/a" "$work/extra"
sed 's/^# scenario: launch_storm$/# scenario: elementwise_chain/' "$data/gpu-a/launch_storm.csv" \
  > "$work/renamed/launch_storm.csv"
expect 2 "renamed/launch_storm.csv:2: scenario 'elementwise_chain' does not match the file" \
  "compare with a file of another scenario" "$tool" compare "$work/a" "$work/renamed"
expect 2 "renamed/launch_storm.csv:2: scenario 'elementwise_chain' does not match the file" \
  "report with a file of another scenario" "$tool" report "$work/renamed"

# ---- compare: the noise model (compare.h) through the tool's exit status ---------------------
expect 1 "3 regression(s)" "compare: a fixed variant planted 10 % slower" \
  "$tool" compare "$data/noise-a" "$data/noise-fixed-slower"
grep -qE '^launch_storm +fused +elems=4096 ops=1000 +step_ms .* SLOWER$' "$work/out.txt" ||
  fail "the planted slowdown is not SLOWER"
expect 0 "4 host-bound change(s) excused as NOISY" "compare: a host-bound row 10 % slower" \
  "$tool" compare "$data/noise-a" "$data/noise-host-10"
excuse='NOISY \(host-bound: idle_host 85 %, strict SLOWER, tolerance 55 %\)$'
grep -qE "^launch_storm +eager +elems=4096 ops=1000 +busy_pct .* $excuse" "$work/out.txt" ||
  fail "the excused host-bound change does not say why"
expect 1 "beyond its tolerance" "compare: a host-bound row 3x slower" \
  "$tool" compare "$data/noise-a" "$data/noise-host-3x"
# busy_pct's spread is its trace window's drift: the instrument moving (trace_overhead up 7 %)
# is NOISY and says so; an idle gap on the device (trace_overhead unchanged) is SLOWER.
expect 0 "busy_pct            91.4919      85.5065     -6.5% NOISY (trace window drift 7.0 %" \
  "compare: busy lower by the trace window's drift" \
  "$tool" compare "$data/noise-a" "$data/noise-busy-window"
expect 1 "4 regression(s)" "compare: busy lower by a device-side idle gap" \
  "$tool" compare "$data/noise-a" "$data/noise-busy-idle"
grep -qE '^launch_storm +graph +elems=4096 ops=1000 +busy_pct .* SLOWER$' "$work/out.txt" ||
  fail "busy lower by a device-side idle gap is not SLOWER"
# a6395d5's launch_storm run against 69b5b7c's: eager at 1M elements and 100 ops, busy
# 77.4 -> 72.8 % while trace_overhead went 1.043 -> 1.150 (its kernels unchanged): NOISY.
expect 0 "0 regression(s) beyond 5.0 %" "compare: a6395d5's launch_storm against 69b5b7c's" \
  "$tool" compare "$src/results/nvidia-h200/history/69b5b7c" "$src/results/nvidia-h200/history/a6395d5" \
  --threshold 5 --allow-missing
grep -qE '^launch_storm +eager +elems=1048576 ops=100 +busy_pct .* -5\.9% NOISY \(trace window drift 10\.3 %' \
  "$work/out.txt" || fail "launch_storm eager 1M/100 busy -5.9 % is not NOISY by its trace window"
expect 2 "ceil-cut/ceilings.csv" "compare: a launch floor from a truncated ceilings.csv" \
  "$tool" compare "$work/a" "$work/ceil-cut"
expect 0 "0 regression(s) beyond 5.0 % and the measured spread; 0 host-bound" \
  "compare: the committed H200 results against themselves" \
  "$tool" compare "$src/results/nvidia-h200" "$src/results/nvidia-h200" --threshold 5

# ---- writers: only a regular file or a new name is replaced (common/core/fileutil.c) --------
# REPORT.md or --json as a FIFO, a symbolic link to /dev/null, a device: exit 2 with the reason,
# and the thing is left as it was (a device made here, where mknod is allowed, rather than the
# machine's /dev/null).
for kind in fifo null-link device; do
  w=$work/writer-$kind
  mkdir -p "$w"
  cp "$data/gpu-a/launch_storm.csv" "$w/"
  case $kind in
    fifo) mkfifo "$w/REPORT.md" && mkfifo "$w/doctor.json"; test=-p why="a FIFO, not a regular file: not replaced" ;;
    null-link) ln -s /dev/null "$w/REPORT.md" && ln -s /dev/null "$w/doctor.json"; test=-L
               why="a symbolic link (to a character device): not replaced and not followed" ;;
    device) mknod "$w/REPORT.md" c 1 3 2>/dev/null && mknod "$w/doctor.json" c 1 3 || continue
            test=-c why="a character device, not a regular file: not replaced" ;;
  esac
  expect 2 "$w/REPORT.md: $why" "report onto a $kind REPORT.md" "$tool" report "$w"
  expect 2 "$w/doctor.json: $why" "doctor --json onto a $kind" \
    "$tool" doctor --from "$data/doctor" --json "$w/doctor.json"
  for f in REPORT.md doctor.json; do
    [ $test "$w/$f" ] || fail "$kind $f was replaced"
  done
  [ -z "$(find "$w" -name '*.tmp.*')" ] || fail "a temporary file left in $w"
done
[ -c /dev/null ] || fail "/dev/null is no longer a character device"

# Reading: a FIFO named like a results file or a page is refused at once (it blocked forever).
mkfifo "$work/fifo.csv" "$work/fifo.md"
expect 2 "fifo.csv: a FIFO, not a regular file: not read" "ladder on a FIFO" \
  timeout 10 "$tool" ladder "$work/fifo.csv"
expect 2 "fifo.md: a FIFO, not a regular file: not read" "readme --check on a FIFO page" \
  timeout 10 "$tool" readme --check "$data/gpu-a" "$work/fifo.md"

# A full disk (a file size limit: writes fail as on a full device) while plotdata writes its
# data set: exit 2, and OUT/data left as it was (gpu-b's set), no stage left beside it.
pd=$work/plotdata-full
"$tool" plotdata "$data/gpu-b" "$pd" > /dev/null 2>&1 || fail "plotdata gpu-b failed"
cp -R "$pd/data" "$work/plotdata-before"
expect 2 "$pd/data left as it was (the data set is written whole or not at all)" \
  "plotdata on a full disk" bash -c 'ulimit -f 2; trap "" XFSZ; exec "$@"' - \
  "$tool" plotdata "$data/gpu-a" "$pd"
grep -qE 'launch_storm_series.dat.tmp.[A-Za-z0-9]+: cannot write: File too large' "$work/out.txt" ||
  fail "plotdata on a full disk does not say which file it could not write"
diff -r "$work/plotdata-before" "$pd/data" > /dev/null || fail "plotdata on a full disk changed $pd/data"
[ -z "$(find "$pd" -name '.plotdata.*')" ] || fail "plotdata on a full disk left its stage"
expect 0 "ladder data/launch_storm_ladder.gp" "plotdata gpu-a without the limit" \
  "$tool" plotdata "$data/gpu-a" "$pd"
grep -q '^# names: eager graph fused$' "$pd/data/launch_storm_ladder.dat" ||
  fail "plotdata did not replace the data set"
mkdir -p "$work/plotdata-file" && : > "$work/plotdata-file/data"
expect 2 "plotdata-file/data: not a folder: not replaced" "plotdata onto a file named data" \
  "$tool" plotdata "$data/gpu-a" "$work/plotdata-file"

# ---- report: its images by default where render.sh draws them; never dropped silently --------
# results/GPU and plots/GPU side by side, as in the repository: `underfed report results/GPU`
# writes the committed REPORT.md, image links included.
repo=$work/repo
mkdir -p "$repo/results" "$repo/plots"
cp -R "$src/results/nvidia-h200" "$repo/results/" && cp -R "$src/plots/nvidia-h200" "$repo/plots/"
expect 0 "wrote" "report results/nvidia-h200 as its help shows" \
  "$tool" report "$repo/results/nvidia-h200"
cmp -s "$repo/results/nvidia-h200/REPORT.md" "$src/results/nvidia-h200/REPORT.md" ||
  fail "underfed report results/nvidia-h200 does not write the committed REPORT.md"
# Without its images' folder: refused, naming the line that links one; the file unchanged.
history=$repo/results/nvidia-h200/history/69b5b7c
expect 2 "$history/REPORT.md:49 links an image, and this report would link none" \
  "report of a folder without its images" "$tool" report "$history"
cmp -s "$history/REPORT.md" "$src/results/nvidia-h200/history/69b5b7c/REPORT.md" ||
  fail "report without images rewrote $history/REPORT.md"
expect 2 "--plots $work/no-such-plots: no such folder" "report --plots of a missing folder" \
  "$tool" report "$work/a" --plots "$work/no-such-plots"

finish "check(s) failed (files in $work)" "all reader checks of the tool passed"

#!/usr/bin/env bash
# The command lines, as a table of invocations with their expected exit status and a piece of
# their message: the underfed tool (help, unknown command, extra arguments, option values that
# match nothing), the scenario binaries' usage errors and --help, and ceilings (options it does
# not use, --list, --explain, the skip reason). No GPU needed: nothing here measures (the skip
# cases hide every GPU with CUDA_VISIBLE_DEVICES=). Fixtures: tests/data (read only).
#   tests/cli/cli_test.sh SOURCE_DIR BUILD_DIR [HOST_ONLY]
# HOST_ONLY (a build without CUDA targets, e.g. ci/sanitize.sh's): the tool's cases only.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || [ $# -eq 3 ] || usage "tests/cli/cli_test.sh SOURCE_DIR BUILD_DIR [HOST_ONLY]"
host_only=0
[ "${3-}" = HOST_ONLY ] && host_only=1
src_build "$1" "$2"
scenario=$build/scenarios/launch_storm
ceilings=$build/benches/ceilings
data=$src/tests/data
csv=$data/gpu-a/launch_storm.csv
programs=("$tool")
[ $host_only = 1 ] || programs+=("$scenario" "$ceilings")
for program in "${programs[@]}"; do
  built "$program" "cmake --build $build"
done
fresh_work "$build/cli-test"

# run_case STATUS STREAM NEEDLE COMMAND...: COMMAND exits STATUS, and NEEDLE (a fixed string;
# "" for none) is in its stdout (STREAM out) or stderr (STREAM err).
run_case() {
  local want=$1 stream=$2 needle=$3; shift 3
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  local shown="${*#"$build"/}"
  if [ "$got" != "$want" ]; then
    fail "$shown: exit $got, expected $want"; sed 's/^/  | /' "$work/out" "$work/err" | head -20 >&2
  elif [ -n "$needle" ] && ! grep -qF -- "$needle" "$work/$stream"; then
    fail "$shown: no '$needle' on std$stream:"; sed 's/^/  | /' "$work/$stream" | head -20 >&2
  else
    echo "ok: $shown -> $got"
  fi
}

# ---- underfed: help -------------------------------------------------------------------------
commands="ladder values points series axes variants ceiling across compare report readme"
for help in --help -h help; do
  run_case 0 out "commands:" "$tool" $help
done
"$tool" --help > "$work/help.txt" 2>&1
for cmd in $commands; do
  # "  NAME  OPERANDS  a description of three words or more"
  grep -qE "^  $cmd +[^ ].* {2,}[^ ]+ [^ ]+ [^ ]+" "$work/help.txt" ||
    fail "underfed --help has no one-line description of $cmd"
  run_case 0 out "usage: underfed $cmd " "$tool" "$cmd" --help
done
awk 'length > 100 { print "FAIL: underfed --help line over 100 columns: " $0; bad = 1 } END { exit bad }' \
  "$work/help.txt" >&2 || failures=$((failures + 1))
run_case 0 out "usage: underfed points FILE.csv --x AXIS" "$tool" help points
run_case 0 out "--where W" "$tool" ladder "$csv" --help
run_case 2 err "usage: underfed COMMAND" "$tool"

# ---- underfed: commands, operands and options ----------------------------------------------
run_case 2 err "unknown command nosuch" "$tool" nosuch
run_case 2 err "unknown command --bogus" "$tool" --bogus
run_case 2 err "missing FILE.csv" "$tool" ladder
run_case 2 err 'unexpected argument "extra"' "$tool" ladder "$csv" extra
run_case 2 err 'unexpected argument "extra"' "$tool" variants "$csv" extra
run_case 2 err 'unexpected argument "extra"' "$tool" compare "$data/gpu-a" "$data/gpu-b" extra
run_case 2 err 'unexpected argument "extra"' "$tool" ceiling copy_d2d_gbs "$data/gpu-a" extra
run_case 2 err "missing NAME DIR..." "$tool" across launch_storm
run_case 2 err "unknown option --bogus" "$tool" ladder "$csv" --bogus
run_case 2 err "unknown option -x" "$tool" ladder "$csv" -x
run_case 2 err "--where does not apply" "$tool" axes "$csv" --where elems=4096
run_case 2 err "--threshold does not apply" "$tool" ladder "$csv" --threshold 5
run_case 2 err "--where needs a value" "$tool" ladder "$csv" --where
run_case 2 err "--where: empty value" "$tool" ladder "$csv" --where=
run_case 2 err "--where given twice" "$tool" ladder "$csv" --where elems=4096 --where ops=100
run_case 2 err "--metrics is required" "$tool" values "$csv"
run_case 2 err "--x is required" "$tool" points "$csv"
run_case 2 err "--threshold takes a percentage" "$tool" compare "$data/gpu-a" "$data/gpu-b" --threshold -1
run_case 2 err 'unknown ceiling "nosuch"' "$tool" ceiling nosuch "$data/gpu-a"
# rows outside the ceilings table (benches/ceilings' activity rows): read as written, empty: NaN
run_case 0 out "88.5" "$tool" ceiling copy_dram_pct "$data/ceilings-activity"
run_case 0 out "NaN" "$tool" ceiling gemm_bf16_tensor_pct "$data/ceilings-activity"
run_case 2 err "or a row of" "$tool" ceiling gemm_bf16_tensor_pc "$data/ceilings-activity"

# ---- underfed: a value that matches nothing is an error, never NaN or empty output ---------
run_case 2 err '--metrics "nosuch": ' "$tool" values "$csv" --metrics step_ms,nosuch
run_case 2 err '--metrics "nosuch": ' "$tool" points "$csv" --x elems --metrics nosuch
run_case 2 err "an empty name" "$tool" values "$csv" --metrics step_ms,,busy_pct
run_case 0 out '"eager" 6 NaN' "$tool" values "$csv" --metrics step_ms,nosuch?
run_case 0 out '# variant step_ms launches_per_step elems' "$tool" values "$csv" --metrics step_ms,launches_per_step,elems
run_case 2 err '--variant "nosuch": ' "$tool" points "$csv" --x elems --variant nosuch
run_case 0 out 'elems "eager" step_ms busy_pct' "$tool" points "$csv" --x elems --variant eager
grep -q '"graph"' "$work/out" && fail "points --variant eager printed graph"
run_case 2 err '--x "nosuch": ' "$tool" points "$csv" --x nosuch
run_case 2 err '--metric "nosuch": ' "$tool" across launch_storm --metric nosuch "$data/gpu-a" "$data/gpu-b"
run_case 2 err '--share "bogus": ' "$tool" across launch_storm --share bogus "$data/gpu-a" "$data/gpu-b"
run_case 0 out '"step_ms" "Test GPU A" "Test GPU B"' "$tool" across launch_storm --share auto "$data/gpu-a" "$data/gpu-b"
run_case 0 out '"busy_pct"' "$tool" across launch_storm --share busy_pct "$data/gpu-a" "$data/gpu-b"
run_case 2 err 'no row at --where "elems=12345"' "$tool" ladder "$csv" --where elems=12345
run_case 2 err 'no row at --where "elems=12345"' "$tool" values "$csv" --metrics step_ms --where elems=12345
run_case 2 err 'no row at --where "ops=7"' "$tool" points "$csv" --x elems --where ops=7
run_case 2 err 'no row at --where "elems=3"' "$tool" series "$csv" --where elems=3
run_case 2 err "--where" "$tool" ladder "$csv" --where nosuch=1
run_case 0 out '"eager" 100 25' "$tool" ladder "$csv" --where elems=4096
run_case 0 out '4096 ' "$tool" points "$csv" --x elems --where ops=max

# ---- underfed: the version, and standard output that cannot be written -------------------
run_case 0 out "underfed " "$tool" --version
version=$(cat "$work/out")
[[ $version =~ ^underfed\ [^\ ]+ ]] || fail "underfed --version printed '$version'"
run_case 0 out "$version" "$tool" -V
# Every command that prints: exit 1 with the reason when its output is lost (a full device),
# 0 when it prints nothing there (report and readme write files and say so on stderr).
mkdir -p "$work/report" "$work/plots" && cp "$csv" "$work/report/"
full() {  # full COMMAND...: COMMAND > /dev/full exits 1 and says why on stderr
  "$@" > /dev/full 2> "$work/err"
  local got=$? name
  name=$(basename "$1")
  if [ $got != 1 ] || ! grep -q "^$name: cannot write standard output: " "$work/err"; then
    fail "${*#"$build"/} > /dev/full: exit $got (expected 1 and the reason):"; sed 's/^/  | /' "$work/err" >&2
  else
    echo "ok: ${*#"$build"/} > /dev/full -> 1"
  fi
}
full "$tool" --help
full "$tool" --version
full "$tool" ladder --help
full "$tool" ladder "$csv"
full "$tool" values "$csv" --metrics step_ms
full "$tool" points "$csv" --x elems
full "$tool" series "$csv"
full "$tool" axes "$csv"
full "$tool" variants "$csv"
full "$tool" ceiling copy_d2d_gbs "$data/gpu-a"
full "$tool" across launch_storm "$data/gpu-a" "$data/gpu-b"
full "$tool" compare "$data/gpu-a" "$data/gpu-a"
full "$tool" plotdata "$data/gpu-a" "$work/plots"
full "$tool" crosscheck plan
full "$tool" doctor --from "$data/doctor" --json "$work/doctor.json"
"$tool" report "$work/report" > /dev/full 2> "$work/err" ||
  fail "report > /dev/full (it prints nothing on stdout) exited $?"
# a regression found, and the output lost: still 1
"$tool" compare "$data/gpu-a" "$data/gpu-b" > /dev/full 2> "$work/err"
[ $? = 1 ] || fail "compare gpu-a gpu-b > /dev/full did not exit 1"
# a usage error stays 2
"$tool" ladder "$csv" --bogus > /dev/full 2> "$work/err"
[ $? = 2 ] || fail "ladder --bogus > /dev/full did not exit 2"

if [ $host_only = 1 ]; then
  [ $failures = 0 ] || { echo "$failures command-line check(s) failed" >&2; exit 1; }
  echo "every command-line check of the tool passed (host-only build: no scenario binaries)"
  exit 0
fi

# ---- scenario binaries: the hint once, --help says where --out writes ---------------------
for bad in --bogus stray "--repeat 0" --quick=1; do
  # shellcheck disable=SC2086
  run_case 2 err "(see --help)" "$scenario" $bad
  hints=$(grep -o 'see --help' "$work/err" | wc -l)
  [ "$hints" = 1 ] || fail "launch_storm $bad: the hint printed $hints times"
done
run_case 0 out "DIR/GPU/" "$scenario" --help
# what a scenario prints must reach standard output: exit 1 with the reason where it cannot
for args in --list --explain --help "--check-claims --quick"; do
  # shellcheck disable=SC2086
  full "$scenario" $args
done
"$scenario" --bogus > /dev/full 2> "$work/err"
[ $? = 2 ] || fail "launch_storm --bogus > /dev/full did not exit 2"
run_case 0 out "slug of the device name" "$scenario" --help
run_case 2 err "unknown variant 'nosuch'" "$scenario" --variant nosuch
# the axes' rules (options.h): every --sweep value checked before anything runs, exit 2
run_case 2 err "--sweep ops=0: a whole number from 1 to 100000" "$scenario" --sweep ops=0
run_case 2 err "--sweep elems=4.5: a whole number" "$scenario" --sweep elems=4.5
run_case 2 err "--sweep ops=many: not a number" "$scenario" --sweep ops=many
run_case 0 out "takes whole numbers 1..100000" "$scenario" --list
run_case 2 err "--sweep dist=gaussian: one of lognormal (1), wide (2), fixed (3)" \
  "$build/scenarios/varlen_attention" --sweep dist=gaussian
run_case 0 out "default lognormal; full: lognormal,wide,fixed" "$build/scenarios/varlen_attention" --list
run_case 0 out "3 step(s) and >= 1000 ms of wall time" "$build/scenarios/varlen_attention" --list
# a multi-GPU scenario under a launcher: a bad or incomplete environment, before any GPU work
multigpu=$build/scenarios/allreduce_overlap
if [ -x "$multigpu" ]; then
  run_case 2 err "LOCAL_RANK is missing" env RANK=0 WORLD_SIZE=2 "$multigpu" --quick
  run_case 2 err "needs MASTER_ADDR and MASTER_PORT" \
    env RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 "$multigpu" --quick
  run_case 2 err "SLURM_PROCID=x: expected a whole number" \
    env SLURM_PROCID=x SLURM_NTASKS=2 SLURM_LOCALID=0 "$multigpu" --quick
fi

# ---- ceilings: the options it uses, --list and --explain without running ------------------
for unused in "--sweep elems=4K" "--variant eager" "--trace t.json" "--seed 3" "--gpus 2" \
              --no-trace --no-expect "--sweep=x=1"; do
  # shellcheck disable=SC2086
  run_case 2 err "${unused%%[ =]*} does not apply" "$ceilings" $unused
done
run_case 2 err "(see --help)" "$ceilings" --bogus
run_case 0 out "DIR/GPU/ceilings.csv" "$ceilings" --help
# --no-counters is its own: the activity rows stay empty, CUPTI is never loaded
run_case 0 out "--no-counters: no CUPTI" "$ceilings" --no-counters --help
run_case 0 out "no variants, no sweep axes" "$ceilings" --list
for name in copy_d2d_gbs gemm_bf16_tflops launch_us graph_node_us h2d_pinned_gbs nccl_busbw_gbs \
            copy_dram_pct gemm_bf16_tensor_pct gemm_bf16_sm_active_pct; do
  grep -q "^  $name " "$work/out" || fail "ceilings --list does not name $name"
done
run_case 0 out "# benches: the machine's ceilings" "$ceilings" --explain
grep -q 'cublasGemmEx' "$work/out" || fail "ceilings --explain does not say how the GEMM is measured"
# what it prints must reach standard output: exit 1 with the reason where it cannot
for args in --list --explain --help; do
  full "$ceilings" "$args"
done

# ---- the skip reason: no driver at all, or the runtime's words -----------------------------
# Every GPU hidden: 77 on any machine. Where libcuda.so.1 is nowhere to be loaded, the reason
# must say so rather than quote the runtime ("driver version is insufficient").
driver=1
# (the cache read whole first: `ldconfig -p | grep -q` under pipefail fails when grep stops early
# and ldconfig dies of SIGPIPE, which would read as no driver on a machine that has one)
libs=$(ldconfig -p 2>/dev/null)
if ! grep -q 'libcuda\.so\.1 ' <<< "$libs"; then
  driver=0
  IFS=: read -r -a lib_dirs <<< "${LD_LIBRARY_PATH:-}"
  for d in "${lib_dirs[@]}"; do [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && driver=1; done
fi
for program in "$ceilings" "$scenario"; do
  run_case 77 err "skipped: no " env -u UNDERFED_REQUIRE_GPU CUDA_VISIBLE_DEVICES= \
    "$program" --quick --out "$work/results"
  if [ $driver = 0 ]; then
    grep -q "skipped: no NVIDIA driver found (" "$work/err" ||
      fail "$(basename "$program") without a driver: $(cat "$work/err")"
  else
    grep -qE "skipped: (no CUDA GPU is usable here|no NVIDIA driver found) \(" "$work/err" ||
      fail "$(basename "$program") with every GPU hidden: $(cat "$work/err")"
  fi
done

finish "command-line check(s) failed" "every command-line check passed"

#!/usr/bin/env bash
# The recorder on one H200: trace format 4 (API calls with their threads, the host sampler,
# the span) recorded from real programs. Expected wall time: build ~2 min (underfed,
# libunderfed_inject.so, host_sync), then ~130 s of runs (14 traced, 6 not: 3 plain, 3 under torch.profiler).
#   bash ci/gpu-checks/recorder.sh OUTDIR   (from the repository root)
# Runs, each under `underfed doctor` (its own --out folder):
#   a) ci/gpu-checks/recorder_eager.py: 300 tiny elementwise ops a step, 150 steps (launch-bound eager);
#      15 runs interleaved: UNDERFED_DOCTOR_HOST_US=0 / 1000 (the sampler off / on: its
#      cost), 1000 with UNDERFED_DOCTOR_LAUNCH_CALLBACKS=0 (what the launch callbacks cost),
#      plain (no doctor), and under torch.profiler (--profile: what the corpus's truth
#      instrument costs a launch, beside the recorder), three each; one with UNDERFED_DOCTOR_API_MIN_NS=0 (every call kept: what the filter saves),
#      one with it at 1e12 (only the kinds always kept, about format 3's selection: does the
#      diagnosis move with the calls kept?), one plain (no doctor) for reference
#   b) ci/gpu-checks/recorder_loader.py: DataLoader num_workers=2 pin_memory, .item() each step
#   c) build/scenarios/host_sync --quick --variant item (a C program), and again with only the
#      kinds always kept
# Prints per trace: records by kind, size, span, records and bytes per second, API calls
# kept / left out, H samples per thread and their states, whether every H tid is an A tid,
# records outside the span; then the sampler's cost (median ms/step off vs on, CPU seconds).
# OUTDIR gets every log, JSON and the raw trace folders (OUTDIR/rec4.tar.gz: the files under
# 3 MB: logs, JSON, the small traces).
set -u
out=${1:?usage: bash ci/gpu-checks/recorder.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
src=$(pwd)
build=${BUILD_DIR:-/tmp/build-gpu-checks}
export NCCL_NVLS_ENABLE=0
log() { echo "[rec4] $*" >&2; }

log "build into $build"
t0=$(date +%s)
# a build folder configured already keeps its settings (its UNDERFED_GIT_DESCRIBE above all:
# changing it rebuilds everything)
describe=()
[ -f "$build/CMakeCache.txt" ] ||
  describe=("-DUNDERFED_GIT_DESCRIBE=gpu-checks $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo copy)")
{ timeout 300 cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release "${describe[@]}" &&
  timeout 600 cmake --build "$build" -j16 --target underfed underfed_inject host_sync; } \
  > "$out/build.log" 2>&1 || { log "build failed:"; tail -30 "$out/build.log" >&2; }
log "build took $(( $(date +%s) - t0 )) s"
tool=$build/tools/underfed
[ -x "$tool" ] && [ -f "$build/tools/libunderfed_inject.so" ] || { log "no tool or recorder: stop"; exit 1; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2> "$out/torch.err" && have_torch=1 || have_torch=0
[ $have_torch = 1 ] || log "no torch with CUDA: PyTorch runs skipped ($(tail -1 "$out/torch.err"))"

# doctor TAG TIMEOUT_S [ENV=V ...] -- COMMAND...: one run under the doctor, logged
doctor() {
  local tag=$1 limit=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  log "$tag: ${envs[*]} $*"
  local s=$(date +%s.%N)
  env "${envs[@]}" timeout -k 10 "$limit" "$tool" doctor --out "$out/$tag" --json "$out/$tag.json" -- "$@" \
    > "$out/$tag.log" 2>&1
  local rc=$?
  echo "$tag rc=$rc wall_s=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" >> "$out/runs.txt"
  [ $rc -eq 0 ] || log "$tag: exit $rc (see $out/$tag.log)"
}
: > "$out/runs.txt"

if [ $have_torch = 1 ]; then
  for r in 1 2 3; do
    doctor "a_host0_$r" 90 UNDERFED_DOCTOR_HOST_US=0 -- python3 "$src/ci/gpu-checks/recorder_eager.py"
    doctor "a_host1000_$r" 90 UNDERFED_DOCTOR_HOST_US=1000 -- python3 "$src/ci/gpu-checks/recorder_eager.py"
    doctor "a_nolaunchcb_$r" 90 UNDERFED_DOCTOR_HOST_US=1000 UNDERFED_DOCTOR_LAUNCH_CALLBACKS=0 -- \
      python3 "$src/ci/gpu-checks/recorder_eager.py"
    log "a_plain_$r"; timeout -k 10 90 python3 "$src/ci/gpu-checks/recorder_eager.py" > "$out/a_plain_$r.log" 2>&1
    log "a_profiler_$r"
    timeout -k 10 90 python3 "$src/ci/gpu-checks/recorder_eager.py" --profile > "$out/a_profiler_$r.log" 2>&1
  done
  doctor a_allcalls 90 UNDERFED_DOCTOR_API_MIN_NS=0 -- python3 "$src/ci/gpu-checks/recorder_eager.py"
  # only the kinds always kept (about format 3's selection): does the diagnosis move?
  doctor a_keptonly 90 UNDERFED_DOCTOR_API_MIN_NS=1000000000000 -- python3 "$src/ci/gpu-checks/recorder_eager.py"
  doctor b_loader 120 UNDERFED_DOCTOR_HOST_US=1000 -- python3 "$src/ci/gpu-checks/recorder_loader.py"
fi
doctor c_host_sync 120 UNDERFED_DOCTOR_HOST_US=1000 -- "$build/scenarios/host_sync" --quick \
  --variant item --no-trace --no-counters --no-expect --out "$out/c_results"
doctor c_keptonly 120 UNDERFED_DOCTOR_API_MIN_NS=1000000000000 -- "$build/scenarios/host_sync" \
  --quick --variant item --no-trace --no-counters --no-expect --out "$out/c_results"

# ---- summary ------------------------------------------------------------------------------
tid_of() { grep -o 'main_tid=[0-9]*' "$out/$1.log" 2>/dev/null | head -1 | cut -d= -f2; }
{
  echo "== recorder summary (commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo ?))"
  cat "$out/runs.txt"
  for tag in a_host1000_1 a_host0_1 a_allcalls a_keptonly b_loader c_host_sync c_keptonly; do
    [ -d "$out/$tag" ] || continue
    echo "-- $tag: $(grep -hoE '(eager|loader): [0-9.]+ ms/step' "$out/$tag.log" | head -1)"
    python3 "$src/ci/gpu-checks/recorder_stats.py" "$out/$tag" "$(tid_of "$tag")"
    grep -F '[underfed doctor] pid' "$out/$tag.log" | head -4
    grep -A3 '^pid ' "$out/$tag.log" | head -8
  done
  echo "-- cost per op (recorder_eager.py, 300 ops/step, 150 steps; interleaved runs): plain, under"
  echo "   the recorder without its sampler (host0), with it (host1000), with it but no launch"
  echo "   callbacks (nolaunchcb), and under torch.profiler (profiler, no recorder)"
  for mode in plain host0 host1000 nolaunchcb profiler; do
    ms=$(for r in 1 2 3; do grep -oE 'eager: [0-9.]+' "$out/a_${mode}_$r.log" 2>/dev/null | cut -d' ' -f2; done | tr '\n' ' ')
    cpu=$(for r in 1 2 3; do grep -oE 'cpu_s=[0-9.]+ wall_s=[0-9.]+' "$out/a_${mode}_$r.log" 2>/dev/null; done | tr '\n' ' ')
    med=$(echo "$ms" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
    per_op=$(awk -v m="${med:-}" 'BEGIN { if (m != "") printf "%.2f", m * 1000 / 300; else print "?" }')
    echo "$mode: ms/step $ms(median ${med:-?}, ${per_op} us an op); $cpu"
  done
  echo "-- the sampler's own CPU time (its cost in CPU, whatever the step-time noise)"
  grep -h 'host sampler used' "$out"/a_host1000_*.log "$out"/b_loader.log "$out"/c_host_sync.log 2>/dev/null
} | tee "$out/summary.txt"
# the logs and the small traces only (the eager storm's are ~26 MB each: their figures are in
# the summary); the big ones stay in OUTDIR
( cd "$out" && find . -type f -size -3M ! -name rec4.tar.gz -print0 |
  tar --null -czf /tmp/rec4-out.tar.gz -T - ) 2> "$out/tar.err" &&
  mv /tmp/rec4-out.tar.gz "$out/rec4.tar.gz" || log "tar failed: $(tail -1 "$out/tar.err")"
log "done: $out/summary.txt, $out/rec4.tar.gz"

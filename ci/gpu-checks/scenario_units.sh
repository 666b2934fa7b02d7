#!/usr/bin/env bash
# lay33a: the eight scenarios split into units (#33 part 5) run on the GPU: each --quick with
# verification on, the timing pass only (no trace, no counters, no claims), so that every
# variant's kernels launch across translation units and verify passes. Expected wall time:
# ~3 min build (-j16) + ~3 min runs; every run is under its own timeout.
# Usage: bash ci/gpu-checks/scenario_units.sh OUTDIR   (from the repository root)
set -u
out=${1:?usage: lay33a.sh OUTDIR}
mkdir -p "$out"
build=${BUILD_DIR:-/tmp/build-gpu-checks}
export NCCL_NVLS_ENABLE=0
scen="launch_storm elementwise_chain varlen_attention checkpoint_recompute starved_input small_batch tensor_alignment allreduce_overlap"
echo "lay33a: configure + build ($scen)" >&2
{ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$build" -j16 --target $scen; } > "$out/build.log" 2>&1
echo "build rc=$?" >> "$out/build.log"
tail -1 "$out/build.log" >&2
printf '%-22s %4s %8s  %s\n' scenario rc wall_s "last line of stderr" > "$out/summary.txt"
for s in $scen; do
  bin=$build/scenarios/$s
  if [ ! -x "$bin" ]; then
    printf '%-22s %4s %8s  %s\n' "$s" - - "not built" >> "$out/summary.txt"; continue
  fi
  echo "lay33a: $s --quick (timing pass + verify)" >&2
  t0=$(date +%s)
  timeout 240 "$bin" --quick --no-trace --no-counters --no-expect --repeat 3 --warmup 1 \
    --out "$out/results" > "$out/$s.stdout" 2> "$out/$s.stderr"
  rc=$?
  t1=$(date +%s)
  last=$(grep -v '^\s*$' "$out/$s.stderr" | tail -1 | cut -c1-90)
  printf '%-22s %4s %8s  %s\n' "$s" "$rc" "$((t1 - t0))" "$last" >> "$out/summary.txt"
done
cat "$out/summary.txt"

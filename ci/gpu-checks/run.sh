#!/usr/bin/env bash
# The measurements this project still owes, on one GPU machine: build everything once into
# BUILD_DIR (default /tmp/build-gpu-checks), then run the named checks in order, each under its
# own time limit, each writing into OUT/NAME; at the end OUT/all.tar.gz.partNN (15 MiB pieces).
#   bash ci/gpu-checks/run.sh OUT NAME:SECONDS ...   (from the repository root)
#   e.g. bash ci/gpu-checks/run.sh /tmp/out serial_decode:300 recorder:200
# NAME is a script of this folder (README.md says what each measures and what it must show).
set -u
[ $# -ge 2 ] || { echo "usage: bash ci/gpu-checks/run.sh OUT NAME:SECONDS ..." >&2; exit 2; }
out=$1; shift
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 BUILD_DIR=${BUILD_DIR:-/tmp/build-gpu-checks}
t0=$(date +%s)
o=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv > "$o/gpu.txt" 2>&1
git log -1 --oneline >> "$o/gpu.txt" 2>&1
{ cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release && cmake --build "$BUILD_DIR" -j "$(nproc)"; } \
  > "$o/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
for spec in "$@"; do
  n=${spec%%:*}; limit=${spec#*:}; mkdir -p "$o/$n"; ts=$(date +%s)
  timeout -k 10 "$limit" bash "ci/gpu-checks/$n.sh" "$o/$n" > "$o/$n/stdout.txt" 2> "$o/$n/stderr.txt"
  echo "== $n rc=$? $(( $(date +%s) - ts )) s (total $(( $(date +%s) - t0 )) s)"
  tail -n 25 "$o/$n/stdout.txt"
done
tar czf "$o.tar.gz" -C "$o" . && split -b 15M -d "$o.tar.gz" "$out/all.tar.gz.part" && ls -la "$out"

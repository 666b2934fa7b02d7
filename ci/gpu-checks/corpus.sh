#!/usr/bin/env bash
# The doctor's corpus on one H200 (issue #31, helper `corpus`).
# Expected wall time: build ~60 s (underfed + underfed_inject only) + the corpus <= 470 s
# (run.py's budget: it starts no process past it and records the rest as "not run") + ~10 s of
# packing: <= ~550 s.
#   bash ci/gpu-checks/corpus.sh OUTDIR        (from the repository root)
# Writes into OUTDIR: corpus.tar.gz (every program's folder: plain.log, truth.log, truth.json,
# doctor.txt, doctor.json, the doctor's trace folder, row.json; split into corpus.tar.gz.partNN
# if it would pass 15 MiB), corpus.md and corpus.csv (the table), corpus-run.log (progress),
# corpus-build.log. Prints the table on stdout at the end.
# Environment: CORPUS_BUDGET_S (default 470), CORPUS_NAMES (a subset, space-separated),
# CORPUS_MANIFEST (another manifest: examples/heldout/heldout.json, the held-out programs).
set -u
out=${1:?usage: bash ci/gpu-checks/corpus.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
build=${BUILD_DIR:-/tmp/build-gpu-checks}
work=/tmp/corpus-out
export NCCL_NVLS_ENABLE=0
command -v nvcc > /dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
echo "corpus: building underfed and underfed_inject into $build" >&2
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$build" -j16 --target underfed underfed_inject; } > "$out/corpus-build.log" 2>&1; then
  echo "corpus: the build failed (tail of corpus-build.log):" >&2
  tail -20 "$out/corpus-build.log" >&2
  exit 1
fi
echo "corpus: built in $(( $(date +%s) - t0 )) s" >&2
rm -rf "$work"
mkdir -p "$work/corpus"
# No timeout around run.py: its budget is a hard end, and it must stay in this script's
# process group so that an outer timeout's SIGTERM reaches it (it then kills the program in
# flight, records the rest as not run and returns; this script still packs what ran).
trap 'echo "corpus: SIGTERM: packing what ran" >&2' TERM
# shellcheck disable=SC2086
python3 examples/corpus/run.py "$build" "$work/corpus" ${CORPUS_NAMES:-} \
  ${CORPUS_MANIFEST:+--manifest "$CORPUS_MANIFEST"} \
  --log "$out/corpus-run.log" --budget-s "${CORPUS_BUDGET_S:-470}"
rc=$?
echo "corpus: run.py exit $rc after $(( $(date +%s) - t0 )) s" >&2
if [ $rc -eq 77 ]; then
  echo "corpus: skipped (run.py exit 77: no GPU)" > "$work/table.md"
  : > "$work/table.err"
else
  python3 examples/corpus/table.py "$work/corpus" > "$work/table.md" 2> "$work/table.err"
fi
cp "$work/corpus/corpus.md" "$work/corpus/corpus.csv" "$out/" 2> /dev/null
# the libraries' versions are in corpus_run.json (run.py's import checks)
(git rev-parse HEAD 2> /dev/null; cat .gitrev 2> /dev/null; nvidia-smi -L
 nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem --format=csv,noheader
 nproc) > "$work/corpus/machine.txt" 2>&1
tar cf - -C "$work" corpus | gzip -1 > "$work/corpus.tar.gz"     # fast: maybe 10 s are left
size=$(stat -c %s "$work/corpus.tar.gz")
if [ "$size" -gt $((15 * 1024 * 1024)) ]; then
  split -b 15M -d "$work/corpus.tar.gz" "$out/corpus.tar.gz.part"
  echo "corpus: corpus.tar.gz is $size bytes: split into corpus.tar.gz.partNN (cat them)" >&2
else
  cp "$work/corpus.tar.gz" "$out/"
fi
echo "corpus: done in $(( $(date +%s) - t0 )) s" >&2
cat "$work/table.md" "$work/table.err"
exit $rc

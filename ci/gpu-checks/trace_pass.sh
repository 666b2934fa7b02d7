#!/usr/bin/env bash
# The claims read from the trace pass that failed once in three quick runs at eec9f4e (issue
# #29, docs/ci.md): starved_input's workers=8 busy (66.8 % in one run) and host_sync's deferred
# at host_pct=30 (idle_host 4.9 %, busy 3.1 points down); each held 8 of 8 when its variant ran
# alone. Does either recur in whole runs, and in which run (the per-run lines below: whether
# the trace pass or the timing pass moved)? Expected wall time ~3.5 min after the build: ten
# quick runs of each (~6 s and ~11 s a run), the ceilings once.
#   bash ci/gpu-checks/trace_pass.sh OUTDIR        (from the repository root)
# Writes OUTDIR/repeat/ (ci/repeat.sh's runs and claims.txt) and prints the claims table and,
# per run, the trace pass's figures of the two cells.
set -u
out=${1:?usage: bash ci/gpu-checks/trace_pass.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
BUILD_DIR=${BUILD_DIR:-/tmp/build-gpu-checks} bash ci/repeat.sh 10 --quick \
  --only starved_input,host_sync --out "$out/repeat"
rc=$?
python3 - "$out/repeat" <<'PY'
import csv, glob, os, sys
for path in sorted(glob.glob(sys.argv[1] + '/run-*/*/*.csv')):
    name = os.path.basename(path)
    if name not in ('starved_input.csv', 'host_sync.csv'):
        continue
    rows = csv.DictReader(l for l in open(path) if not l.startswith('#'))
    for r in rows:
        cell = ((r['variant'] == 'workers' and r.get('workers') == '8') or
                (r['variant'] == 'deferred' and r.get('host_pct') == '30'))
        if cell:
            print(path.split('/')[-3], name[:-4], r['variant'], 'step_ms', r['step_ms'][:6],
                  'trace_step_ms', r['trace_step_ms'][:6], 'busy', r['busy_pct'][:5],
                  'idle_host', r['idle_host_pct'][:5])
PY
exit $rc

#!/usr/bin/env bash
# varlen_attention claim 1 (issue #29): what moves the long tail's rate between runs at one SM
# clock. Expected wall time ~110 s after the build: 8 processes of varlen alone (~5 s each), 3
# of all four variants as ctest runs them (~15 s each), 1 traced run of varlen alone (~8 s).
#   bash ci/gpu-checks/varlen_steady.sh OUTDIR        (from the repository root)
# Writes OUTDIR/{alone-N,all-N,traced}/ (results files), OUTDIR/logs/, and prints a table: per
# process, the long tail's and the fixed length's step (median, min, max, steps timed), their
# SM clocks and the ratio claim 1 judges; then the traced run's kernel durations (quantiles).
set -u
out=${1:?usage: bash ci/gpu-checks/varlen_steady.sh OUTDIR}
mkdir -p "$out/logs" && out=$(cd "$out" && pwd) || exit 2
build=${BUILD_DIR:-/tmp/build-gpu-checks}
bin=$build/scenarios/varlen_attention
[ -x "$bin" ] || { echo "varlen_steady: no $bin (build first)" >&2; exit 1; }
log() { echo "[varlen $(date +%T)] $*" >&2; }
run() {   # run TAG ARGS...: one process into OUTDIR/TAG
  local tag=$1; shift
  log "$tag: $*"
  timeout -k 10 120 "$bin" --quick --no-counters --no-expect --out "$out/$tag" "$@" \
    > "$out/logs/$tag.log" 2>&1
  echo "$tag rc=$?" >> "$out/logs/status.txt"
}
for i in 1 2 3 4 5 6 7 8; do run "alone-$i" --variant varlen --no-trace; done
for i in 1 2 3; do run "all-$i" --no-trace; done
run traced --variant varlen --trace "$out/traced.json"
python3 - "$out" <<'EOF'
import csv, glob, json, os, statistics, sys
out = sys.argv[1]
def rows(tag):
    files = glob.glob(os.path.join(out, tag, "*", "varlen_attention.csv"))
    if not files:
        return []
    lines = [l for l in open(files[0]) if not l.startswith("#")]
    return list(csv.DictReader(lines))
print("process   dist=1 step ms (min..max, n)      MHz    dist=3 step ms (min..max, n)      MHz   ratio")
for tag in sorted(os.listdir(out)):
    r = [x for x in rows(tag) if x["variant"] == "varlen" and x["causal"] == "0"]
    by = {x["dist"]: x for x in r}
    if "1" not in by or "3" not in by:
        continue
    a, b = by["1"], by["3"]
    ratio = float(a["tflops_useful"]) / float(b["tflops_useful"])
    f = lambda x: "%.4f (%.4f..%.4f, %s)" % (float(x["step_ms"]), float(x["step_ms_min"]),
                                           float(x["step_ms_max"]), x["steps_timed"])
    print("%-9s %-33s %6s    %-33s %6s   %.4f" % (tag, f(a), a["sm_clock_mhz"][:6], f(b),
                                                 b["sm_clock_mhz"][:6], ratio))
try:
    ev = json.load(open(os.path.join(out, "traced.json")))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    k = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat", "").startswith("kernel"):
            k.setdefault((e.get("pid"), e.get("name", "?")), []).append(float(e.get("dur", 0)))
    for (pid, name), d in sorted(k.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        d.sort()
        q = lambda p: d[min(len(d) - 1, int(p * len(d)))]
        print("traced section %s kernel %s: n %d, us p0 %.1f p10 %.1f p50 %.1f p90 %.1f p100 %.1f"
              % (pid, name[:60], len(d), d[0], q(.1), q(.5), q(.9), d[-1]))
        hist = {}
        for v in d:
            hist[round(v / 5) * 5] = hist.get(round(v / 5) * 5, 0) + 1
        print("  histogram (5 us bins): " + " ".join("%d:%d" % kv for kv in sorted(hist.items())))
except Exception as e:  # the table above stands without it
    print("traced: could not read traced.json: %s" % e)
EOF

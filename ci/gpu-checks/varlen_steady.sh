#!/usr/bin/env bash
# varlen_attention claim 1 (issue #29): what moves the long tail's rate between runs at one SM
# clock. Expected wall time ~110 s after the build: 8 processes of varlen alone (~5 s each), 3
# of all four variants as ctest runs them (~15 s each), 1 traced run of varlen alone (~8 s).
#   bash ci/gpu-checks/varlen_steady.sh OUTDIR        (from the repository root)
# Writes OUTDIR/{alone-N,all-N,traced}/ (results files), OUTDIR/logs/, and prints a table: per
# process, the long tail's and the fixed length's step (median, min, max, steps timed), their
# SM clocks (NVML's sample mean; then sm_clock_kernel_mhz, what the kernel's clock probe counted
# in the timed steps), the raw TFLOP/s ratio and the per-SM-cycle ratio claim 1 judges, and the
# spread of both ratios over the processes; then the traced run's kernel durations (quantiles).
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
def num(row, key):  # NaN where the column is absent (a build before the clock probe) or empty
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return float("nan")
print("%-9s %-33s %6s %6s   %-33s %6s %6s   %-6s  %s" % (
    "process", "dist=1 step ms (min..max, n)", "NVML", "kernel", "dist=3 step ms (min..max, n)",
    "NVML", "kernel", "raw", "per-cycle (MHz: NVML's mean, the kernel's probe)"))
raws, cycles = [], []
for tag in sorted(os.listdir(out)):
    r = [x for x in rows(tag) if x["variant"] == "varlen" and x["causal"] == "0"]
    by = {x["dist"]: x for x in r}
    if "1" not in by or "3" not in by:
        continue
    a, b = by["1"], by["3"]
    ratio = num(a, "tflops_useful") / num(b, "tflops_useful")
    per_cycle = ratio / (num(a, "sm_clock_kernel_mhz") / num(b, "sm_clock_kernel_mhz"))
    raws.append(ratio)
    cycles.append(per_cycle)
    f = lambda x: "%.4f (%.4f..%.4f, %s)" % (num(x, "step_ms"), num(x, "step_ms_min"),
                                           num(x, "step_ms_max"), x["steps_timed"])
    print("%-9s %-33s %6.1f %6.1f   %-33s %6.1f %6.1f   %.4f  %.4f" % (
        tag, f(a), num(a, "sm_clock_mhz"), num(a, "sm_clock_kernel_mhz"), f(b),
        num(b, "sm_clock_mhz"), num(b, "sm_clock_kernel_mhz"), ratio, per_cycle))
for name, v in (("raw TFLOP/s ratio", raws), ("per-cycle ratio (claim 1)", cycles)):
    v = [x for x in v if x == x]
    if len(v) >= 2:
        print("%-26s over %2d processes: min %.4f max %.4f, spread (max-min)/median %.2f %%, "
              "stdev %.4f" % (name, len(v), min(v), max(v),
                              100 * (max(v) - min(v)) / statistics.median(v), statistics.stdev(v)))
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

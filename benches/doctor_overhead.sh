#!/usr/bin/env bash
# What the doctor's recorder costs the program it watches (issue #20: "report the measured
# overhead"). Each program runs plain, under `underfed doctor` and under `underfed doctor
# --light`, the three interleaved, REPEATS times each; the table gives the median of the
# program's own step time (its printed ms/step) and of the whole run's wall time, and the
# ratio to plain. Programs: the launch-bound PyTorch loop (the worst case: 400 launches a step,
# each one recorded), the .item() loop, and the suite's launch_storm eager at 1,000 ops.
#   benches/doctor_overhead.sh BUILD_DIR OUT_DIR [REPEATS]   (GPU; python3 with torch for the
#   examples, which are skipped without it) -> OUT_DIR/doctor_overhead.md
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: benches/doctor_overhead.sh BUILD_DIR OUT_DIR [REPEATS]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
out=$2
reps=${3:-3}
case $reps in '' | *[!0-9]* | 0) echo "REPEATS must be a positive integer: $reps" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
tool=$build/tools/underfed
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2

# NAME|COMMAND: the program prints "... X ms/step ..." or, for a scenario, its results table
progs=(
  "launch_storm.py broken|python3 $src/examples/pytorch/launch_storm.py --variant broken"
  "item_sync.py broken|python3 $src/examples/pytorch/item_sync.py --variant broken"
  "launch_storm eager (scenario)|$build/scenarios/launch_storm --variant eager --sweep elems=4K --sweep ops=1000 --no-trace --no-counters --no-expect --out $out/results"
)
python3 -c 'import torch' 2> /dev/null || { echo "skipped: the PyTorch examples (no torch)" >&2; progs=("${progs[2]}"); }

# step_ms LOG: the program's own step time
step_ms() {
  local v
  v=$(grep -oE '(broken|fixed): [0-9.]+ ms/step' "$1" | head -1 | cut -d' ' -f2)
  [ -n "$v" ] || v=$(awk '$1 == "eager" { print $4; exit }' "$1")
  echo "$v"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

table=$out/doctor_overhead.md
{
  echo "| program | mode | runs | ms/step (median) | x plain | wall s (median) | x plain |"
  echo "|---|---|---|---|---|---|---|"
} > "$table"
for p in "${progs[@]}"; do
  name=${p%%|*}; cmd=${p#*|}
  tag=$(echo "$name" | tr -c 'a-z0-9_\n' '_')
  rm -f "$out/$tag".{plain,doctor,light}.times    # this run's times only, not an earlier run's
  for r in $(seq "$reps"); do
    for mode in plain doctor light; do
      log=$out/$tag.$mode.$r.log
      case $mode in
        plain) pre=() ;;
        doctor) pre=("$tool" doctor --out "$out/$tag.$mode.$r" --json "$out/$tag.$mode.$r.json" --) ;;
        light) pre=("$tool" doctor --light --out "$out/$tag.$mode.$r" --json "$out/$tag.$mode.$r.json" --) ;;
      esac
      echo "[doctor_overhead] $name: $mode, run $r of $reps" >&2
      st=$(date +%s.%N)
      # shellcheck disable=SC2086
      timeout -k 10 300 "${pre[@]}" $cmd > "$log" 2>&1
      rc=$?
      en=$(date +%s.%N)
      [ $rc -eq 0 ] || { echo "FAIL: $name ($mode) exit $rc, see $log" >&2; exit 1; }
      echo "$(step_ms "$log") $(awk -v a="$st" -v b="$en" 'BEGIN { print b - a }')" >> "$out/$tag.$mode.times"
    done
  done
  base_step=$(cut -d' ' -f1 "$out/$tag.plain.times" | median)
  base_wall=$(cut -d' ' -f2 "$out/$tag.plain.times" | median)
  for mode in plain doctor light; do
    s=$(cut -d' ' -f1 "$out/$tag.$mode.times" | median)
    w=$(cut -d' ' -f2 "$out/$tag.$mode.times" | median)
    awk -v n="$name" -v m="$mode" -v r="$reps" -v s="$s" -v w="$w" -v bs="$base_step" \
      -v bw="$base_wall" 'BEGIN { printf "| %s | %s | %d | %.3f | %.2f | %.1f | %.2f |\n",
                                  n, m, r, s, s / bs, w, w / bw }' >> "$table"
  done
done
cat "$table"

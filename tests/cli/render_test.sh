#!/usr/bin/env bash
# The plots and the run comparison, end to end on the fixture result folders of tests/data
# (made for the tests, not measurements):
#   - plots/render.sh on copies of gpu-a and gpu-b in the build tree (REPORT.md is written into
#     the copies, never into tests/data): PNG and SVG of every ladder, series and sweep, the
#     comparison across the two folders, and each folder's REPORT.md;
#   - every scenario-specific plots/NAME.gp on the fixture of all six scenarios (derived-good)
#     and of small_batch, tensor_alignment and host_sync (shape), and on a file without its
#     columns: it must still draw;
#   - no plots/*.gp runs a command (system(), "< cmd"): the data and its facts come from
#     `underfed plotdata` (.dat with a `# key: value` header, .gp include), each loads lib.gp;
#   - render.sh with gnuplot hidden from PATH: exit 0, the data and REPORT.md written, no image,
#     and a message that says no image was drawn and how to draw them; with a gnuplot that
#     fails or draws nothing: exit 1, a last line that says no image was drawn, old images kept;
#   - `underfed compare`: 1 on a regression beyond the noise, 0 for a folder against itself,
#     2 naming file and line for a truncated file; render.sh fails on that file too.
#   tests/cli/render_test.sh SOURCE_DIR BUILD_DIR
# gnuplot is an optional tool: where it is missing, every check without images still runs, and
# then the test reports Skipped (exit 77) with the reason, unless CI=true, where it fails.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/render_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"

built "$tool" "cmake --build BUILD --target underfed"
images=1
no_gnuplot="gnuplot not found: the images were not checked (Debian/Ubuntu: apt-get install gnuplot-nox)"
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "note: $no_gnuplot; checking everything else" >&2
  images=0
fi

# A PNG starts with \x89PNG; an SVG holds an <svg element.
is_png() { [ -s "$1" ] && [ "$(head -c 4 "$1" | tail -c 3)" = PNG ]; }
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1"; }
check_image() {  # check_image PREFIX: PREFIX.png and PREFIX.svg
  if is_png "$1.png" && is_svg "$1.svg"; then pass "${1#"$work"/} .png .svg"; else fail "${1#"$work"/}: no valid .png and .svg"; fi
}

fresh_work "$build/render-test"
mkdir -p "$work/results" || exit 1
for fixture in gpu-a gpu-b gpu-truncated derived-good shape; do
  cp -R "$src/tests/data/$fixture" "$work/results/$fixture" || exit 1
done
results=$work/results
plots=$work/plots

# ---- render ---------------------------------------------------------------------------------
PLOTS_DIR=$plots BUILD_DIR=$build bash "$src/plots/render.sh" "$results/gpu-a" "$results/gpu-b" \
  > "$work/render.log" 2>&1
status=$?
if [ $status = 0 ]; then pass "render.sh on gpu-a gpu-b"; else fail "render.sh exited $status:"; cat "$work/render.log" >&2; fi
if [ $images = 1 ]; then
  for gpu in gpu-a gpu-b; do
    for plot in ladder series sweep_elems sweep_ops; do
      check_image "$plots/$gpu/launch_storm_$plot"
    done
  done
  check_image "$plots/compare/launch_storm_across"
fi
for gpu in gpu-a gpu-b; do
  for data in ladder series sweep_elems sweep_ops; do
    [ -s "$plots/$gpu/data/launch_storm_$data.dat" ] || fail "no plot data $gpu/data/launch_storm_$data.dat"
  done
  report=$results/$gpu/REPORT.md
  letter=${gpu#gpu-}
  if [ -s "$report" ] && grep -q "Test GPU ${letter^^}" "$report" && grep -q '^## launch_storm' "$report" &&
     grep -q 'fixture made for the tests, not a measurement' "$report"; then
    pass "$gpu/REPORT.md"
  else
    fail "$gpu/REPORT.md missing or without its GPU, scenario section and fixture note"
  fi
  if [ $images = 1 ]; then
    grep -q "](../../plots/$gpu/launch_storm_ladder.png)" "$report" ||
      fail "$gpu/REPORT.md does not link its ladder plot"
  fi
  [ ! -e "$src/tests/data/$gpu/REPORT.md" ] || fail "render wrote into tests/data/$gpu"
done

# ---- without gnuplot: the data and REPORT.md, no image, and how to draw them ----------------
# A PATH of links to every command on PATH except gnuplot.
nognuplot=$work/bin-without-gnuplot
mkdir -p "$nognuplot"
IFS=: read -r -a path_dirs <<< "$PATH"
for d in "${path_dirs[@]}"; do
  [ -d "$d" ] && find "$d" -maxdepth 1 -mindepth 1 \( -type f -o -type l \) \
    -exec ln -s -t "$nognuplot" {} + 2>/dev/null
done
rm -f "$nognuplot"/gnuplot*
cp -R "$src/tests/data/gpu-a" "$work/results/gpu-nognuplot" || exit 1
PATH=$nognuplot PLOTS_DIR=$work/plots-nognuplot BUILD_DIR=$build \
  bash "$src/plots/render.sh" "$results/gpu-nognuplot" > "$work/nognuplot.log" 2>&1
status=$?
drawn=("$work/plots-nognuplot/gpu-nognuplot"/*.png)
if [ $status != 0 ]; then
  fail "render.sh without gnuplot exited $status (expected 0):"; cat "$work/nognuplot.log" >&2
elif [ ! -s "$work/plots-nognuplot/gpu-nognuplot/data/launch_storm_ladder.dat" ] ||
     [ ! -s "$results/gpu-nognuplot/REPORT.md" ]; then
  fail "render.sh without gnuplot did not write the plot data and REPORT.md"
elif [ -e "${drawn[0]}" ]; then
  fail "render.sh without gnuplot drew ${drawn[0]}"
elif ! grep -q 'NO IMAGES WERE DRAWN' "$work/nognuplot.log" ||
     ! grep -q 'apt-get install gnuplot-nox' "$work/nognuplot.log" ||
     ! grep -q "then run: plots/render.sh $results/gpu-nognuplot" "$work/nognuplot.log"; then
  fail "render.sh without gnuplot does not say that no image was drawn and how to draw them:"
  cat "$work/nognuplot.log" >&2
else
  pass "render.sh without gnuplot: data and REPORT.md, no image, how to draw them"
fi

# ---- a gnuplot that fails, or exits 0 drawing nothing: render.sh fails, never "images in" ---
# (stand-ins first on PATH: one exits 1 after a partial image, one exits 0 without drawing).
# The images already there are left as they were.
for fake in failing silent; do
  bin=$work/bin-$fake-gnuplot
  mkdir -p "$bin"
  case $fake in
    failing) printf '#!/bin/sh\necho "line 1: plot error" >&2\n: > partial.png\nexit 1\n' > "$bin/gnuplot" ;;
    silent) printf '#!/bin/sh\nexit 0\n' > "$bin/gnuplot" ;;
  esac
  chmod +x "$bin/gnuplot"
  rm -rf "$work/results/gpu-$fake" "$work/plots-$fake"
  cp -R "$src/tests/data/gpu-a" "$work/results/gpu-$fake" || exit 1
  mkdir -p "$work/plots-$fake/gpu-$fake"
  echo old > "$work/plots-$fake/gpu-$fake/launch_storm_ladder.png"
  PATH=$bin:$PATH PLOTS_DIR=$work/plots-$fake BUILD_DIR=$build \
    bash "$src/plots/render.sh" "$results/gpu-$fake" > "$work/$fake.log" 2>&1
  status=$?
  last=$(grep "^render: $results/gpu-$fake -> " "$work/$fake.log")
  if [ $status != 1 ]; then
    fail "render.sh with a $fake gnuplot exited $status (expected 1):"; cat "$work/$fake.log" >&2
  elif [[ $last != *"NO IMAGE drawn (4 figures listed"* ]] || [[ $last == *" images of "* ]]; then
    fail "render.sh with a $fake gnuplot: last line '$last', expected NO IMAGE drawn"
  elif [ $fake = failing ] && ! grep -q 'render: gnuplot ladder.gp failed' "$work/$fake.log"; then
    fail "render.sh with a failing gnuplot does not name the figure that failed"
  elif [ $fake = silent ] && ! grep -q 'render: gnuplot ladder.gp drew no image' "$work/$fake.log"; then
    fail "render.sh with a silent gnuplot does not say the figure drew no image"
  elif [ "$(cat "$work/plots-$fake/gpu-$fake/launch_storm_ladder.png")" != old ] ||
       [ -e "$work/plots-$fake/gpu-$fake/partial.png" ]; then
    fail "render.sh with a $fake gnuplot replaced or added images"
  else
    pass "render.sh with a $fake gnuplot: exit 1, NO IMAGE drawn, the old images kept"
  fi
done

# ---- the report names each file's run, and shows power only where it was read instantly -----
report=$results/gpu-a/REPORT.md
if grep -q '^Measured with git fixture, ' "$report" && grep -q '^\*Measured with git fixture, ' "$report"; then
  pass "gpu-a/REPORT.md names its one run, in the header and the section"
else
  fail "gpu-a/REPORT.md does not name its run (git fixture) in the header and the section"
fi
! grep -q 'Board power' "$report" || fail "gpu-a/REPORT.md shows board power without a power_source"
mixed=$work/mixed
mkdir -p "$mixed"
cp "$results/gpu-a/launch_storm.csv" "$mixed/" &&
  sed 's/^# scenario: launch_storm$/# scenario: other_run/' \
    "$src/tests/data/gpu-power/launch_storm.csv" > "$mixed/other_run.csv"
if "$tool" report "$mixed" > "$work/mixed.log" 2>&1; then
  grep -q '^Measured in several runs' "$mixed/REPORT.md" ||
    fail "a report of two runs (git fixture, fixture-power) does not say so"
  grep -q '^\*Measured with git fixture-power, ' "$mixed/REPORT.md" ||
    fail "the second run's section does not name its git"
  grep -q '^Board power, mean over each timing pass: eager 689 W (NVML instant' "$mixed/REPORT.md" ||
    fail "the instant-power file's section does not show eager's 689 W"
  pass "report of two runs: provenance per section, instant power shown"
else
  fail "underfed report on two runs exited non-zero:"; cat "$work/mixed.log" >&2
fi

# ---- the report's shares: against the ceilings a file records, else the folder's, and says so --
shares=$work/shares
mkdir -p "$shares"
cp "$src/tests/data/derived-good/ceilings.csv" "$src/tests/data/derived-good/starved_input.csv" \
   "$src/tests/data/derived-good/varlen_attention.csv" "$shares/"
if "$tool" report "$shares" > "$work/shares.log" 2>&1; then
  # starved_input records gemm 795.6866472 (the folder's says 800): 613.4 TFLOP/s is 77.1 %, not 76.7
  grep -q '^| pretokenized | fixed | 5.5963 |.* 613.4 | 77.1 |' "$shares/REPORT.md" ||
    fail "starved_input's share is not against the ceilings its file records"
  grep -q 'over the mean step of each timing pass (`step_stat: mean`' "$shares/REPORT.md" ||
    fail "starved_input's section does not name its step statistic"
  grep -q 'ceilings recorded with this run: GEMM bf16 795.7 TFLOP/s, copy 4244 GB/s' "$shares/REPORT.md" ||
    fail "starved_input's section does not name the ceilings it recorded"
  # varlen_attention (v2) records none: against the folder's 800 TFLOP/s, 258.8 TFLOP/s is 32.4 %
  grep -q '^| pad_global | broken | 4.2500 |.* 258.8 | 32.4 |' "$shares/REPORT.md" ||
    fail "varlen_attention's share is not against the folder's ceilings.csv"
  grep -q "This file records no ceilings: its shares here are against the folder's" "$shares/REPORT.md" ||
    fail "varlen_attention's section does not say its shares come from the folder's ceilings"
  pass "report shares: recorded ceilings, else the folder's, each said"
else
  fail "underfed report on the derived fixtures exited non-zero:"; cat "$work/shares.log" >&2
fi

# ---- the scenario-specific plots degrade on a file without their columns -------------------
# launch_storm's file under each scenario's name: `underfed plotdata` writes that scenario's
# figure data (counts of 0), and its script must still draw, saying what is missing.
for script in "$src"/plots/*.gp; do
  name=$(basename "$script" .gp)
  case $name in ladder|series|sweep|across|lib) continue ;; esac
  degrade=$work/degrade/$name
  mkdir -p "$degrade/results" "$degrade/plots"
  sed "s/^# scenario: launch_storm\$/# scenario: $name/" "$results/gpu-a/launch_storm.csv" \
    > "$degrade/results/$name.csv"
  if ! "$tool" plotdata "$degrade/results" "$degrade/plots" > "$degrade/figures.txt" 2> "$degrade/log" ||
     ! grep -q "^$name data/$name.gp\$" "$degrade/figures.txt"; then
    fail "underfed plotdata wrote no $name figure for a file without its columns:"
    cat "$degrade/log" "$degrade/figures.txt" >&2
    continue
  fi
  [ $images = 1 ] || continue
  if (cd "$degrade/plots" && GNUPLOT_LIB=$src/plots gnuplot "data/$name.gp" "$script") >> "$degrade/log" 2>&1; then
    made=("$degrade/plots/$name"_*.png)
    if [ -e "${made[0]}" ]; then
      for png in "${made[@]}"; do check_image "${png%.png}"; done
    else
      fail "plots/$name.gp drew nothing on a file without its columns"
    fi
  else
    fail "plots/$name.gp failed on a file without its columns:"
    cat "$degrade/log" >&2
  fi
done

# ---- every scenario's own figure on the fixture of all six scenarios -----------------------
PLOTS_DIR=$work/plots-derived BUILD_DIR=$build bash "$src/plots/render.sh" "$results/derived-good" \
  > "$work/derived.log" 2>&1
status=$?
if [ $status = 0 ]; then pass "render.sh on derived-good"; else fail "render.sh on derived-good exited $status:"; cat "$work/derived.log" >&2; fi
if [ $images = 1 ]; then
  for plot in allreduce_overlap_buckets checkpoint_recompute_pareto elementwise_chain_time_bandwidth \
              elementwise_chain_roofline starved_input_workers varlen_attention_flops; do
    check_image "$work/plots-derived/derived-good/$plot"
  done
fi

# small_batch, tensor_alignment and host_sync (tests/data/shape: copy 4000 GB/s, bf16 GEMM 800
# TFLOP/s; useful_flops / min_bytes = 1000 M / (1000 + M)): the roofline's slope meets the roof
# at M = 262.6, odd_hidden's spikes are the dims 4088, 4096 and 4104; host_sync's cost is each
# broken step over deferred's at the default 18 launches (the row at 530 left out).
PLOTS_DIR=$work/plots-shape BUILD_DIR=$build bash "$src/plots/render.sh" "$results/shape" \
  > "$work/shape.log" 2>&1
status=$?
if [ $status = 0 ]; then pass "render.sh on shape"; else fail "render.sh on shape exited $status:"; cat "$work/shape.log" >&2; fi
if [ $images = 1 ]; then
  for plot in small_batch_roofline tensor_alignment_tflops host_sync_cost; do
    check_image "$work/plots-shape/shape/$plot"
  done
fi
shape=$work/plots-shape/shape/data
if grep -q '^ridge = 262\.60' "$shape/small_batch.gp" && grep -q '^copy = 4000$' "$shape/small_batch.gp" &&
   grep -q '^262\.602 800$' "$shape/small_batch_roof.dat"; then
  pass "shape small_batch roofline: copy slope from the ceilings meets the roof at M = 262.6"
else
  fail "shape small_batch.gp / _roof.dat: no ridge at M = 262.6 under copy 4000 GB/s, GEMM 800 TFLOP/s"
fi
if [ "$(grep -v '^#' "$shape/tensor_alignment_spikes.dat" | cut -d' ' -f1 | tr '\n' ' ')" = "4088 4096 4104 " ]; then
  pass "shape tensor_alignment spikes at the multiples of 8"
else
  fail "shape tensor_alignment_spikes.dat does not hold exactly the dims 4088 4096 4104"
fi

# item 0.6428 / deferred 0.47 ms at host_pct 30: 36.766 %; idle_host_pct 27.194 and 0.2
if [ "$(grep -v '^#' "$shape/host_sync_cost.dat" | cut -d' ' -f1 | tr '\n' ' ')" = "0 10 30 100 " ] &&
   grep -q '^30 36\.766 35\.9149 41\.8723 38\.2553 27\.194 0\.2$' "$shape/host_sync_cost.dat"; then
  pass "shape host_sync cost: broken step over deferred's along host_pct at 18 launches"
else
  fail "shape host_sync_cost.dat: not host_pct 0 10 30 100, or at 30 not the costs 36.766 ... and idle 27.194 0.2"
fi

# ---- plots one way: the scripts only draw, from what `underfed plotdata` wrote -------------
# No script runs a command (system(), a "< command" data source); each loads the shared look.
for script in "$src"/plots/*.gp; do
  name=$(basename "$script" .gp)
  if grep -nE "system\(|[\"']< " "$script" >&2; then
    fail "plots/$name.gp runs a command (above): its data must come from underfed plotdata"
  fi
  [ "$name" = lib ] || grep -q '^load "lib.gp"$' "$script" || fail "plots/$name.gp does not load lib.gp"
done
# The data files say what they hold; the include defines the same for gnuplot.
ladder=$plots/gpu-a/data/launch_storm_ladder
if grep -q '^# names: eager graph fused$' "$ladder.dat" && grep -q '^# counts: [0-9 ]*$' "$ladder.dat" &&
   grep -q "^names = 'eager graph fused'$" "$ladder.gp" && grep -q "^data = 'data/launch_storm_ladder.dat'$" "$ladder.gp"; then
  pass "gpu-a launch_storm_ladder .dat header and .gp include"
else
  fail "launch_storm_ladder.dat / .gp of gpu-a lack the names and counts"
fi
grep -q "^share_metric = '" "$plots/compare/data/launch_storm_across.gp" ||
  fail "compare/data/launch_storm_across.gp does not name its share's metric"

# ---- the run comparison ---------------------------------------------------------------------
expect_exit() {  # expect_exit STATUS WHAT COMMAND...
  local want=$1 what=$2; shift 2
  "$@" > "$work/out.txt" 2> "$work/err.txt"
  local got=$?
  if [ $got = "$want" ]; then pass "$what: exit $got"; else
    fail "$what: exit $got, expected $want"; cat "$work/out.txt" "$work/err.txt" >&2; fi
}
expect_exit 1 "compare gpu-a gpu-b (B regressed)" "$tool" compare "$results/gpu-a" "$results/gpu-b" --threshold 5
grep -qE ' SLOWER$' "$work/out.txt" || fail "compare gpu-a gpu-b printed no SLOWER"
expect_exit 0 "compare gpu-a gpu-a" "$tool" compare "$results/gpu-a" "$results/gpu-a" --threshold 5
if grep -qE ' (SLOWER|FASTER|NOISY|MISSING)$' "$work/out.txt" || ! grep -qE ' SAME$' "$work/out.txt"; then
  fail "gpu-a against itself is not all SAME"
fi
expect_exit 2 "compare gpu-a gpu-truncated" "$tool" compare "$results/gpu-a" "$results/gpu-truncated" --threshold 5
grep -q 'gpu-truncated/launch_storm.csv:50: truncated' "$work/err.txt" ||
  { fail "compare on the truncated file does not name file and line:"; cat "$work/err.txt" >&2; }
expect_exit 2 "compare gpu-a (missing folder)" "$tool" compare "$results/gpu-a" "$results/no-such-folder"
expect_exit 1 "render.sh gpu-truncated" env PLOTS_DIR="$plots" BUILD_DIR="$build" \
  bash "$src/plots/render.sh" "$results/gpu-truncated"
grep -q 'gpu-truncated/launch_storm.csv:50: truncated' "$work/err.txt" ||
  fail "render.sh on the truncated file does not name file and line"

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed (files in $work)" >&2
  exit 1
fi
if [ $images = 0 ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $no_gnuplot; gnuplot is required in CI (CI=true)" >&2
    exit 1
  fi
  echo "skipped: $no_gnuplot; every other render and compare check passed" >&2
  exit 77
fi
echo "all render and compare checks passed"

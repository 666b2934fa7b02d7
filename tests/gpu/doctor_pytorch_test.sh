#!/usr/bin/env bash
# The doctor on unmodified PyTorch programs (issue #20), GPU runners with torch (ctest label
# `doctor`): each example of examples/pytorch/ runs as a plain process under `underfed doctor`
# (torchrun's ranks too: one record file per pid, each diagnosed). A broken variant must get
# its rule as the top finding, rated at least NEEDS (high), in every process; a fixed variant
# must leave that rule below moderate (none) in every process. Writes OUT/doctor_pytorch.md
# (example x variant -> its rule's verdict and share, the top finding, ms/step, steps kept and
# the start-up left out) and each run's output, records and JSON under OUT/.
#   tests/gpu/doctor_pytorch_test.sh SOURCE_DIR BUILD_DIR OUT_DIR
# Exit 0 held, 1 not, 77 no python3 with torch, or no CUDA GPU (the DDP rows are skipped,
# not failed, with fewer than 2 GPUs).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 3 ] || usage "tests/gpu/doctor_pytorch_test.sh SOURCE_DIR BUILD_DIR OUT_DIR"
src_build "$1" "$2"
out_dir "$3"

# Environment: UNDERFED_DOCTOR_ROW_TIMEOUT_S (below), UNDERFED_DOCTOR_PYTORCH_FLAGS (more doctor
# options, e.g. --counters), UNDERFED_DOCTOR_PYTORCH_ONLY (an extended regex on EXAMPLE-VARIANT:
# only those rows).
# Which rule each example shows (the rule table's `reproduced by` column points back here):
# EXAMPLE VARIANT ROLE RULE NEEDS. ROLE broken: RULE is the top finding, at least NEEDS;
# fixed: RULE stays none.
matrix='
launch_storm broken broken launch_bound high
launch_storm fixed fixed launch_bound -
dataloader_tokenize broken broken starved_input high
dataloader_tokenize workers fixed starved_input -
dataloader_tokenize pretokenized fixed starved_input -
item_sync broken broken host_sync high
item_sync fixed fixed host_sync -
ddp_bucketing broken broken comm_exposed high
ddp_bucketing fixed fixed comm_exposed -
serial_decode eager broken launch_bound high
serial_decode graph broken decode_gemv high
serial_decode batched fixed decode_gemv -
'

command -v python3 > /dev/null || skip "no python3"
python3 -c 'import torch' 2> /dev/null || skip "python3 cannot import torch"
python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null ||
  skip "torch sees no CUDA GPU"

# judge JSON ROLE RULE NEEDS: prints one table row's cells "verdict|share|top|steps|startup"
# (one value per process that ran steps, joined by " / ") and exits 0 held, 1 not.
judge() {
  python3 - "$@" << 'PY'
import json, sys
path, role, rule, needs = sys.argv[1:5]
rank = {"none": 0, "moderate": 1, "high": 2, "cannot tell": -1}
procs = json.load(open(path))["processes"]
# The processes that ran the steps: every example marks them with an NVTX range "step", so a
# process without it is a helper that happened to initialize CUDA (torchrun's agent, a
# compile worker). Fixtures without NVTX: every process.
stepped = [p for p in procs if p["step_source"].startswith('nvtx "step"')]
procs = stepped or procs
held, cells = bool(procs), {k: [] for k in ("verdict", "share", "top", "steps", "startup")}
for p in procs:
    mine = next(f for f in p["findings"] if f["rule"] == rule)
    top = p["findings"][0]
    share = mine["share_pct"]
    cells["verdict"].append(mine["verdict"])
    cells["share"].append("n/a" if share is None else f"{share:.1f}")
    cells["top"].append(f'{top["rule"]} {top["verdict"]}')
    cells["steps"].append(f'{p["steps"]} ({p["steps_left_out"]} left out)')
    cells["startup"].append(f'{p["startup_ms"]:.0f}')
    if role == "broken":
        held &= top["rule"] == rule and rank[mine["verdict"]] >= rank[needs]
    else:
        held &= mine["verdict"] == "none"
print("|".join(" / ".join(v) for v in cells.values()))
sys.exit(0 if held else 1)
PY
}

# seconds one traced run may take (UNDERFED_DOCTOR_ROW_TIMEOUT_S); past it, timeout kills it
row_timeout=${UNDERFED_DOCTOR_ROW_TIMEOUT_S:-180}
table=$out/doctor_pytorch.md
{
  echo "| example | variant | role | rule | its verdict | its share % | top finding | steps kept | start-up left out, ms | ms/step (script) | held |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
while read -r name variant role rule needs; do
  [ -n "$name" ] || continue
  tag=$name-$variant
  [ -z "${UNDERFED_DOCTOR_PYTORCH_ONLY:-}" ] || [[ $tag =~ $UNDERFED_DOCTOR_PYTORCH_ONLY ]] || continue
  rm -f "$out/$tag.json"
  # each example under its own timeout: a hang fails its row with the reason, the rest go on
  "$tool" doctor ${UNDERFED_DOCTOR_PYTORCH_FLAGS:-} --out "$out/$tag" --json "$out/$tag.json" -- \
    timeout -k 10 "$row_timeout" \
    python3 "$src/examples/pytorch/$name.py" --variant "$variant" > "$out/$tag.txt" 2>&1
  rc=$?
  if [ $rc -eq 77 ]; then     # ddp_bucketing with fewer than 2 GPUs
    echo "skipped: $tag: $(grep -m1 'skipped' "$out/$tag.txt")"
    echo "| $name | $variant | $role | $rule | | | | | | | skipped (exit 77) |" >> "$table"
    continue
  fi
  ms=$(grep "^$name $variant" "$out/$tag.txt" | grep -o '[0-9.]* ms/step' |
       awk '{printf "%s%s", sep, $1; sep=" / "}')
  if [ $rc -ne 0 ] || [ ! -f "$out/$tag.json" ]; then
    grep -q "exited with status 124" "$out/$tag.txt" && rc="$rc: timed out after $row_timeout s"
    fail "$tag: underfed doctor exit $rc (see $out/$tag.txt)"
    echo "| $name | $variant | $role | $rule | | | | | | $ms | no (exit $rc) |" >> "$table"
    continue
  fi
  held=yes
  cells=$(judge "$out/$tag.json" "$role" "$rule" "$needs") || held=no
  [ "$held" = no ] && { fail "$tag: $cells"; }
  IFS='|' read -r verdict share top steps startup <<< "$cells"
  echo "| $name | $variant | $role | $rule | $verdict | $share | $top | $steps | $startup | $ms | $held |" >> "$table"
  echo "$held: $tag: $rule $verdict ($share %), top $top, $ms ms/step"
done <<< "$matrix"
cat "$table"
finish "PyTorch example(s) did not hold"

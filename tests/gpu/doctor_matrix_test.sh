#!/usr/bin/env bash
# The doctor's validation matrix (issue #20), GPU runners (ctest label `doctor`): every
# scenario's broken variant, run as a plain process under `underfed doctor` at the point its
# README quotes (--no-trace --no-counters: the scenario must not load CUPTI itself), must get
# its own failure as the top finding, rated high; every fixed variant must not get it (below
# moderate). Scenarios whose failure a trace cannot show (padding, recompute) are run and
# their top finding recorded, not judged. Writes OUT/doctor_matrix.md (scenario x variant ->
# top finding, share at stake) and each run's output and JSON under OUT/.
#   tests/gpu/doctor_matrix_test.sh BUILD_DIR OUT_DIR; exit 0 held, 1 not, 77 no GPU.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/gpu/doctor_matrix_test.sh BUILD_DIR OUT_DIR"
build=$(cd "$1" && pwd) || exit 2
tool=$build/tools/underfed
out_dir "$2"

# SCENARIO VARIANT ROLE RULE POINT: ROLE broken (RULE must be the high top finding), fixed
# (RULE must stay below moderate) or record (not judged).
# malloc_free is judged: the recorder keeps the runtime calls that may drain (cudaFree has no
# activity and no sync record of its own), so the timeline sees its drain as the scenario's own
# trace pass does; the doctor names it alloc_churn (the drain returned in a free, and the
# cudaMallocs before the next launch), its fix `pool` must not be. The misaligned bf16 GEMM (odd_vocab) is judged by its kernel's name: cuBLAS
# runs a CUTLASS tensor-op kernel named ..._align1 for it on the H200 (2026-12-01), and fp32's
# fallback is named ..._ffma_... (CUDA-core FMAs). small_batch's one_block (one block for the
# whole step) is judged from its grid size; micro1 (a grid that fills the SMs while each block
# waits on HBM: the bandwidth-bound small GEMM) and latency_bound (every SM holds one warp
# chasing pointers) look well fed in a trace, and are recorded only. serial_decode at d = 4096:
# every batch-1 variant is decode_gemv high, by its kernels' names (sd_gemv_kernel, and the
# persistent kernel's sd_decode_gemv_persistent_kernel: one kernel per token at the copy rate is
# still one token per weight read); batched's cuBLAS GEMMs of 64 rows are not decode-shaped.
# Environment: UNDERFED_DOCTOR_ROW_TIMEOUT_S (below), UNDERFED_DOCTOR_MATRIX_FLAGS (more doctor
# options, e.g. --counters), UNDERFED_DOCTOR_MATRIX_ONLY (an extended regex on SCENARIO-VARIANT:
# only those rows).
matrix='
launch_storm eager broken launch_bound --sweep elems=4K --sweep ops=1000
launch_storm graph fixed launch_bound --sweep elems=4K --sweep ops=1000
launch_storm fused fixed launch_bound --sweep elems=4K --sweep ops=1000
elementwise_chain unfused broken elementwise_chain --sweep ops=5 --sweep bits=32
elementwise_chain fused fixed elementwise_chain --sweep ops=5 --sweep bits=32
starved_input sync broken starved_input --sweep workers=8 --sweep tok_cost=1
starved_input workers fixed starved_input --sweep workers=8 --sweep tok_cost=1
starved_input pretokenized fixed starved_input --sweep workers=8 --sweep tok_cost=1
allreduce_overlap sequential broken comm_exposed --sweep bucket_mib=64 --sweep comm_ctas=0 --sweep sm_margin=0
allreduce_overlap bucketed fixed comm_exposed --sweep bucket_mib=64 --sweep comm_ctas=0 --sweep sm_margin=0
varlen_attention pad_global record padding --sweep dist=1
varlen_attention varlen record padding --sweep dist=1
checkpoint_recompute full record recompute --sweep k=4
checkpoint_recompute store_all record recompute --sweep k=4
host_sync item broken host_sync --sweep host_pct=30 --sweep launches=18
host_sync sync_timing broken host_sync --sweep host_pct=30 --sweep launches=18
host_sync pageable_copy broken host_sync --sweep host_pct=30 --sweep launches=18
host_sync malloc_free broken alloc_churn --sweep host_pct=30 --sweep launches=18
host_sync deferred fixed host_sync --sweep host_pct=30 --sweep launches=18
host_sync pool fixed alloc_churn --sweep host_pct=30 --sweep launches=18
tensor_alignment fp32 broken simt_gemm --sweep dim=4095
tensor_alignment tf32 fixed simt_gemm --sweep dim=4095
tensor_alignment odd_vocab broken simt_gemm --sweep dim=4095
tensor_alignment padded_vocab fixed simt_gemm --sweep dim=4095
small_batch one_block broken low_sm_fill --sweep tokens=32
small_batch large_micro fixed low_sm_fill --sweep tokens=32
small_batch micro1 record low_sm_fill --sweep tokens=32
small_batch latency_bound record low_sm_fill --sweep tokens=32
serial_decode eager_b1 broken decode_gemv --sweep d_model=4096
serial_decode graph_b1 broken decode_gemv --sweep d_model=4096
serial_decode persistent broken decode_gemv --sweep d_model=4096
serial_decode batched fixed decode_gemv --sweep d_model=4096
'

# UNDERFED_DOCTOR_MATRIX_FROM=DIR: judge the traces an earlier run recorded (its OUT_DIR, one
# SCENARIO-VARIANT folder each) with this build's analysis, `underfed doctor --from`: no GPU.
from=${UNDERFED_DOCTOR_MATRIX_FROM:-}
if [ -n "$from" ]; then
  from=$(cd "$from" && pwd) || exit 2
else
probe=$("$build/scenarios/launch_storm" --quick --variant eager --repeat 1 --warmup 0 --no-trace \
        --no-counters --no-expect --out "$out/probe" 2>&1)
fi
if [ -z "$from" ] && [ "${probe_rc:-$?}" -eq 77 ]; then
  skip "no GPU ($probe)"
fi

# seconds one traced run may take (UNDERFED_DOCTOR_ROW_TIMEOUT_S); past it, timeout kills it
row_timeout=${UNDERFED_DOCTOR_ROW_TIMEOUT_S:-180}
table=$out/doctor_matrix.md
{
  echo "| scenario | variant | role | rule | its verdict | its share % | top finding | top verdict | top share % | SM / tensor / DRAM % | held |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
# one decimal, or the text as it is (null, empty)
pct() { case $1 in '' | null) echo "$1" ;; *) awk -v v="$1" 'BEGIN { printf "%.1f", v }' ;; esac; }
# counters JSON: "SM / tensor / DRAM" of the first process (its PM sampling means), "-" without
counters() {
  local v
  v=$(for k in sm_active_pct tensor_active_pct dram_pct; do
        grep -o "\"$k\": [-0-9.e+null]*" "$1" | head -1 | sed 's/.*: //'
      done | tr '\n' ' ')
  set -- $v
  [ "${1:-null}" = null ] && { echo "-"; return; }
  echo "$(pct "$1") / $(pct "$2") / $(pct "$3")"
}
# finding JSON RULE: that rule's "verdict|share_pct"; top JSON: "rule|verdict|share_pct" of the
# top finding (the first process; the writer's key order).
finding() {
  grep -o "\"rule\": \"$2\", \"verdict\": \"[a-z ]*\", \"share_pct\": [-0-9.e+null]*" "$1" |
    head -1 | sed -E 's/.*"verdict": "([a-z ]*)", "share_pct": (.*)/\1|\2/'
}
top() {
  grep -o '"findings": \[{"rule": "[a-z_]*", "verdict": "[a-z ]*", "share_pct": [-0-9.e+null]*' "$1" |
    head -1 | sed -E 's/.*"rule": "([a-z_]*)", "verdict": "([a-z ]*)", "share_pct": (.*)/\1|\2|\3/'
}
while read -r name variant role rule point; do
  [ -n "$name" ] || continue
  tag=$name-$variant
  [ -z "${UNDERFED_DOCTOR_MATRIX_ONLY:-}" ] || [[ $tag =~ $UNDERFED_DOCTOR_MATRIX_ONLY ]] || continue
  # each traced program under its own timeout: a hang (the 2026-12-01 run hung at exit) fails
  # its row with the reason and the matrix goes on
  if [ -n "$from" ] && { [ ! -d "$from/$tag" ] ||
       grep -q "^| $name | $variant | .* skipped (exit 77) |\$" "$from/doctor_matrix.md" 2>/dev/null; }; then
    rc=77; echo "not recorded in $from (skipped there, or no $tag folder)" > "$out/$tag.txt"
  elif [ -n "$from" ] && recorded=$(grep -o "^| $name | $variant | .* | no (exit [0-9]*) |\$" \
                                     "$from/doctor_matrix.md" 2>/dev/null); then
    # the recorded run itself failed (the program's own exit, e.g. a verification): its trace
    # may replay, but the row does not hold
    rc=$(sed -E 's/.*no \(exit ([0-9]*)\) \|$/\1/' <<< "$recorded")
    echo "the recorded run failed (exit $rc in $from/doctor_matrix.md)" > "$out/$tag.txt"
  elif [ -n "$from" ]; then
    "$tool" doctor --from "$from/$tag" --json "$out/$tag.json" > "$out/$tag.txt" 2>&1
    rc=$?
  else
  "$tool" doctor ${UNDERFED_DOCTOR_MATRIX_FLAGS:-} --out "$out/$tag" --json "$out/$tag.json" -- \
    timeout -k 10 "$row_timeout" "$build/scenarios/$name" \
    --variant "$variant" $point --no-trace --no-counters --no-expect --out "$out/results" \
    > "$out/$tag.txt" 2>&1
  rc=$?
  fi
  if [ $rc -eq 77 ]; then     # e.g. allreduce_overlap on a machine with one GPU
    echo "skipped: $tag: $(tail -1 "$out/$tag.txt")"
    echo "| $name | $variant | $role | $rule | | | | | | | skipped (exit 77) |" >> "$table"
    continue
  fi
  if [ $rc -ne 0 ] || [ ! -f "$out/$tag.json" ]; then
    grep -q "exited with status 124" "$out/$tag.txt" && rc="$rc: timed out after $row_timeout s"
    fail "$tag: underfed doctor exit $rc (see $out/$tag.txt)"
    echo "| $name | $variant | $role | $rule | | | | | | | no (exit $rc) |" >> "$table"
    continue
  fi
  IFS='|' read -r verdict share <<< "$(finding "$out/$tag.json" "$rule")"
  IFS='|' read -r top_rule top_verdict top_share <<< "$(top "$out/$tag.json")"
  held=yes
  case $role in
    broken) [ "$top_rule" = "$rule" ] && [ "$top_verdict" = high ] || held=no ;;
    fixed) [ "$verdict" = none ] || held=no ;;
    record) held="n/a (a trace cannot tell)" ;;
  esac
  [ "$held" = no ] && { fail "$tag: $rule $verdict, top $top_rule $top_verdict"; }
  echo "| $name | $variant | $role | $rule | $verdict | $(pct "$share") | $top_rule | $top_verdict | $(pct "$top_share") | $(counters "$out/$tag.json") | $held |" >> "$table"
  echo "ok-or-recorded: $tag: $rule $verdict ($share %), top $top_rule $top_verdict ($top_share %)"
done <<< "$matrix"
cat "$table"
finish "matrix case(s) did not hold"

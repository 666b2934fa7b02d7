#!/usr/bin/env bash
# `underfed crosscheck` and the report's section without a GPU, on the fixture folder
# tests/data/crosscheck/folder (the committed H200 rows of each case's cell, with ncu pages
# made to sit near them): every comparison agrees (exit 0) and crosscheck.csv says so; a
# reference moved beyond the tolerance disagrees (exit 1); a missing ceilings size is n/a with
# its reason; REPORT.md shows the table only where crosscheck/crosscheck.csv is, and refuses a
# malformed one; ci/crosscheck.sh skips (77) without ncu or GPU, and fails so under
# UNDERFED_REQUIRE_GPU=1.
#   tests/cli/crosscheck_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/crosscheck_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"
built "$tool"

# verdicts FILE VERDICT: how many rows of crosscheck.csv have that verdict
verdicts() { grep -c ",(points|%),$2,\"" -E "$1"; }

fresh_work "$build/crosscheck-test"
fresh() { rm -rf "$work/xc"; cp -r "$src/tests/data/crosscheck/folder" "$work/xc"; }

# the cases: one line each, five fields, every scenario one of the suite's
"$tool" crosscheck plan > "$work/plan.txt" || fail "crosscheck plan exited $?"
while IFS='|' read -r id scenario variant point regex extra; do
  [ -d "$src/scenarios/$scenario" ] && [ -n "$variant" ] && [ -n "$point" ] &&
    [ -z "$extra" ] && [ "$id" = "$scenario-$variant" ] ||
    fail "plan line of $id is malformed"
done < "$work/plan.txt"
[ "$(wc -l < "$work/plan.txt")" -ge 6 ] || fail "the plan has fewer cases than scenarios"

fresh
expect 0 "25 comparisons, 0 disagree" "judge: the fixture agrees" \
  "$tool" crosscheck judge "$work/xc" --meta ncu=2025.3
csv=$work/xc/crosscheck.csv
[ "$(verdicts "$csv" agree)" = 21 ] || fail "21 rows agree expected: $(verdicts "$csv" agree)"
[ "$(verdicts "$csv" n/a)" = 4 ] || fail "4 rows n/a expected (checkpoint not run)"
grep -q '^# ncu: 2025.3$' "$csv" || fail "crosscheck.csv lacks the --meta pair"
grep -q '^# gpu: NVIDIA H200$' "$csv" || fail "crosscheck.csv lacks the GPU of the runs"

# the first timed ew_chain_f32 (the second launch: the first is the warm-up) reads 82.18 %
# DRAM against PM's 85.72: 79.90 is 5.82 off
sed -i 's/"82.18","519,840"/"79.90","519,840"/' "$work/xc/elementwise_chain-unfused.ncu.csv"
expect 1 "1 disagree" "judge: DRAM 5.8 points off disagrees" \
  "$tool" crosscheck judge "$work/xc"
grep -q '"elementwise_chain".*"dram_pct","ncu",.*,DISAGREE,' "$csv" ||
  fail "the DRAM row is not DISAGREE"
# 5 % of the kernel duration: 546 us against the trace's 518.7 is 5.3 % off
fresh
sed -i 's/"82.18","519,840"/"82.18","546,000"/' "$work/xc/elementwise_chain-unfused.ncu.csv"
expect 1 "1 disagree" "judge: kernel duration 5.3 % off disagrees" \
  "$tool" crosscheck judge "$work/xc"
grep -q '"kernel_us_mean","ncu",.*,DISAGREE,' "$csv" || fail "the duration row is not DISAGREE"

# the bench's all-reduce of another size is no reference: n/a, saying which size is missing
fresh
sed -i '/^nccl_busbw_gbs@1073741824,/d' "$work/xc/allreduce_overlap-sequential/ceilings.csv"
expect 0 "has no all-reduce of 1073741824 bytes" "judge: busbw without the 1 GiB ceiling" \
  "$tool" crosscheck judge "$work/xc"
# a run of another cell is no evidence: the row must sit at the case's point
fresh
sed -i 's/^eager,broken,,4096,1000,/eager,broken,,8192,1000,/' \
  "$work/xc/launch_storm-eager/launch_storm.csv"
expect 0 "the run has no row of eager @ elems=4096,ops=1000" "judge: a row at another point" \
  "$tool" crosscheck judge "$work/xc"
expect 2 "usage: underfed crosscheck" "crosscheck without a subcommand" "$tool" crosscheck
expect 2 "expected --meta KEY=VALUE" "judge: a bad --meta" \
  "$tool" crosscheck judge "$work/xc" --meta novalue

# the report: the section where crosscheck/crosscheck.csv is, none elsewhere
fresh
"$tool" crosscheck judge "$work/xc" > /dev/null 2>&1
mkdir -p "$work/report/crosscheck"
cp "$src/tests/data/noise-a/launch_storm.csv" "$work/report/"
expect 0 "wrote" "report without a cross-check" "$tool" report "$work/report"
grep -q "How far each instrument agrees" "$work/report/REPORT.md" &&
  fail "a report without crosscheck.csv shows the section"
cp "$csv" "$work/report/crosscheck/"
expect 0 "wrote" "report with a cross-check" "$tool" report "$work/report"
grep -q "^## How far each instrument agrees with another" "$work/report/REPORT.md" ||
  fail "REPORT.md lacks the section"
grep -qF "| elementwise_chain | unfused @ ops=1,bits=32 | ew_chain_f32 | dram_pct |" \
  "$work/report/REPORT.md" || fail "REPORT.md lacks the elementwise_chain DRAM row"
grep -qF "21 of 25 comparisons agree, 4 could not be made" "$work/report/REPORT.md" ||
  fail "REPORT.md does not count the verdicts"
sed -i 's/,agree,/,perhaps,/' "$work/report/crosscheck/crosscheck.csv"
expect 2 "verdict \"perhaps\" unknown" "report with a malformed crosscheck.csv" \
  "$tool" report "$work/report"

# the driver skips without ncu, and fails so where a GPU runner requires it
expect 77 "ncu) not found" "ci/crosscheck.sh without ncu" \
  env -u UNDERFED_REQUIRE_GPU NCU=/nonexistent/ncu bash "$src/ci/crosscheck.sh" "$build" "$work/out"
expect 1 "ncu) not found" "ci/crosscheck.sh without ncu, GPU required" \
  env NCU=/nonexistent/ncu UNDERFED_REQUIRE_GPU=1 bash "$src/ci/crosscheck.sh" "$build" "$work/out"
# with an ncu (a stand-in) but no scenario built (a build of the tool alone, as where no GPU
# toolkit is): skipped, naming what is missing; nothing runs, GPU or not
printf '#!/bin/sh\necho "stand-in ncu"\n' > "$work/ncu" && chmod +x "$work/ncu"
mkdir -p "$work/tool-only/tools" && cp "$tool" "$work/tool-only/tools/"
expect 77 "launch_storm is not built" "ci/crosscheck.sh without the scenarios" \
  env -u UNDERFED_REQUIRE_GPU NCU="$work/ncu" bash "$src/ci/crosscheck.sh" "$work/tool-only" "$work/out"

finish "failure(s)" "all crosscheck cases passed"

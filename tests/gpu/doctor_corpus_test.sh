#!/usr/bin/env bash
# The doctor on the corpus of ordinary programs (issue #31), GPU runners with the libraries
# (ctest label `doctor`): examples/corpus/run.py runs every program of corpus.json plainly,
# under its truth instrument and under the doctor, and table.py --check judges them: every row
# must run (a missing library or too few GPUs skips that row, with the reason), the doctor's top
# finding must name the truth's cause (no high finding for a healthy program), and the
# host-wait split must be within 10 points of the profiler's.
#   tests/gpu/doctor_corpus_test.sh SOURCE_DIR BUILD_DIR OUT_DIR
# Environment: UNDERFED_CORPUS_BUDGET_S (run.py's time budget, default 3000),
# UNDERFED_CORPUS_NAMES (a subset). Exit 0 held, 1 not, 77 no GPU or no row could run.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 3 ] || usage "tests/gpu/doctor_corpus_test.sh SOURCE_DIR BUILD_DIR OUT_DIR"
src_build "$1" "$2"
command -v python3 > /dev/null || skip "no python3"
out_dir "$3"
# shellcheck disable=SC2086
python3 "$src/examples/corpus/run.py" "$build" "$out" \
  --budget-s "${UNDERFED_CORPUS_BUDGET_S:-3000}" ${UNDERFED_CORPUS_NAMES:-}
rc=$?
[ $rc -eq 77 ] && skip "no GPU"
[ $rc -eq 2 ] && exit 2
grep -l '"status": "ok"' "$out"/*/row.json > /dev/null 2>&1 ||
  skip "no corpus program could run here (see the skipped rows' reasons in $out/*/row.json)"
python3 "$src/examples/corpus/table.py" "$out" --check
held=$?
[ $rc -eq 0 ] && [ $held -eq 0 ] && exit 0
echo "the corpus did not hold (run.py exit $rc, table.py --check exit $held): $out/corpus.md" >&2
exit 1

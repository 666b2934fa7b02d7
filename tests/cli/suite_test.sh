#!/usr/bin/env bash
# ci/suite.sh's usage errors: each exits 2 with the suite's own message (never bash's), before
# anything is built (BUILD_DIR points at a folder that must stay absent, and CMAKE_ARGS at a flag
# that makes cmake fail at once, should the suite get that far); --help exits 0.
#   tests/cli/suite_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/suite_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"
fresh_work "$build/suite-test"
never_built=$work/never-built

# case STATUS MESSAGE ARGS...: ci/suite.sh ARGS exits STATUS and its output holds MESSAGE.
case_() {
  local want=$1 needle=$2; shift 2
  BUILD_DIR=$never_built CMAKE_ARGS=--suite-test-must-not-build bash "$src/ci/suite.sh" "$@" > "$work/out.txt" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "ci/suite.sh $*: exit $got, expected $want:"; cat "$work/out.txt" >&2
  elif ! grep -qF -- "$needle" "$work/out.txt"; then
    fail "ci/suite.sh $*: no '$needle' in:"; cat "$work/out.txt" >&2
  elif [ -e "$never_built" ]; then
    fail "ci/suite.sh $*: built before refusing its arguments"
  else
    pass "ci/suite.sh $* -> $got"
  fi
}

case_ 2 "suite: --only needs a comma-separated list of scenarios" --only
case_ 2 "suite: --only needs a comma-separated list of scenarios" --only --quick
case_ 2 "suite: --only needs a comma-separated list of scenarios" --only=
case_ 2 "suite: --out needs a folder" --out
case_ 2 "suite: --out needs a folder" --quick --out
case_ 2 "suite: --out needs a folder" --out=
case_ 2 "suite: --only: no scenario named 'nosuch' (scenarios: " --only nosuch
case_ 2 "suite: --only: no scenario named 'nosuch'" --only launch_storm,nosuch
case_ 2 "suite: --only: empty name in 'launch_storm,'" --only launch_storm,
case_ 2 "suite: --only: empty name in 'a,,b'" --only a,,b
case_ 2 "suite: unknown option --bogus" --bogus
mkdir -p "$work/empty" "$work/two/gpu-a" "$work/two/gpu-b"
touch "$work/two/gpu-a/ceilings.csv" "$work/two/gpu-b/ceilings.csv"
case_ 2 "suite: --keep-ceilings: expected one GPU/ceilings.csv under $work/empty, found 0" --keep-ceilings --out "$work/empty"
case_ 2 "found 2" --keep-ceilings --out "$work/two"
case_ 0 "ci/suite.sh [--quick] [--only NAME,...] [--out DIR] [--keep-ceilings]" --help
# bash's own wording for a missing value must never show.
if grep -q 'parameter null or not set' "$work/out.txt"; then
  fail "bash's raw message shown"
fi

finish "suite usage check(s) failed" "every suite usage error exits 2 before the build"

#!/usr/bin/env bash
# The flake finder without a GPU: ci/repeat.sh's usage errors (exit 2 before anything is built:
# BUILD_DIR points at a folder that must stay absent, CMAKE_ARGS at a flag that makes cmake fail
# at once), and tools/repeat_claims on the fixture runs of tests/data/repeat (five quick runs
# of host_sync whose claims are steady, a count at its bound, failed once, held but within 3
# spreads, n/a every time; a full run beside them; an older fixture whose claim lines are not
# claim lines).
#   tests/cli/repeat_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/repeat_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"
fresh_work "$build/repeat-test"
never_built=$work/never-built
tool=$build/tools/repeat_claims
data=$src/tests/data/repeat

# usage STATUS MESSAGE ARGS...: ci/repeat.sh ARGS exits STATUS, says MESSAGE, builds nothing.
usage() {
  local want=$1 needle=$2; shift 2
  BUILD_DIR=$never_built CMAKE_ARGS=--repeat-test-must-not-build bash "$src/ci/repeat.sh" "$@" \
    > "$work/out.txt" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "ci/repeat.sh $*: exit $got, expected $want: $(cat "$work/out.txt")"
  elif ! grep -qF -- "$needle" "$work/out.txt"; then
    fail "ci/repeat.sh $*: no '$needle' in: $(cat "$work/out.txt")"
  elif [ -e "$never_built" ]; then
    fail "ci/repeat.sh $*: built before refusing its arguments"
  else
    pass "ci/repeat.sh $* -> $got"
  fi
}
usage 2 "repeat: say how many runs: ci/repeat.sh N" --quick
usage 2 "repeat: N must be a whole number >= 1, not '0'" 0
usage 2 "repeat: N must be a whole number >= 1, not 'x'" x --quick
usage 2 "repeat: one N only (got 3 and 4)" 3 4
usage 2 "repeat: --only needs a comma-separated list of scenarios" 3 --only
usage 2 "repeat: --only: no scenario named 'nosuch'" 3 --only host_sync,nosuch
usage 2 "repeat: --only: empty name in 'host_sync,'" 3 --only host_sync,
usage 2 "repeat: --out needs a folder" 3 --out
usage 2 "repeat: --min-margin needs a number >= 0" 3 --min-margin -1
usage 2 "repeat: unknown option --bogus" 3 --bogus
usage 0 "ci/repeat.sh N [--quick] [--only NAME,...]" --help

# claims STATUS ARGS...: repeat_claims ARGS exits STATUS; its output in $work/claims.txt.
claims() {
  local want=$1; shift
  "$tool" "$@" > "$work/claims.txt" 2>&1
  local got=$?
  [ "$got" = "$want" ] || fail "repeat_claims $*: exit $got, expected $want: $(cat "$work/claims.txt")"
}
# has TEXT: the last output holds the line TEXT (spaces squeezed).
# The table with its runs of spaces squeezed, read whole before the match: `tr | grep -q`
# under pipefail fails when grep stops at its first match and tr dies of SIGPIPE (a flake
# seen under load).
has() {
  local text
  text=$(tr -s ' ' < "$work/claims.txt")
  grep -qF -- "$1" <<< "$text" || fail "no '$1' in: $(cat "$work/claims.txt")"
}
runs=("$data"/run-{1,2,3,4,5})
claims 1 "${runs[@]}"
has "host_sync: 5 runs, mode quick, git fixture"
# median 24.5, MAD 0.2: spread 0.2965, margin (24.5 - 20) / 0.2965, the worst (24.1) 13.83
has " 1 steady 5/5 0 24.1 24.5 24.9 >= 20 0.2965 15.18 13.83 22.5 idle_host_pct"
has " 2 steady 5/5 0 1 1 1 >= 1 0 0 0 0 drains_per_step"
has " 3 FLAKY 4/5 0 1.471 1.64 1.68 >= 1.6 0.02965 1.349 -4.35 2.5 item/deferred"
has " 4 LOW 5/5 0 1.59 1.61 1.63 <= 1.65 0.01483 2.698 1.349 2.424 pool busy_pct"
has " 5 n/a 0/5 5 - - - ? - - - - fixture: a claim only a full run judges"
has "5 claims: 2 steady (held every run, margin >= 3 spreads), 1 LOW, 1 FLAKY, 1 n/a in every run"
has "host_sync claim.3 FLAKY margin 1.349"
# the least margin first
[ "$(grep -A2 '^not steady' "$work/claims.txt" | sed -n 2p | grep -o 'claim\.[0-9]*')" = claim.3 ] ||
  fail "claim.3 (margin 1.35) is not listed first: $(cat "$work/claims.txt")"
claims 1 --min-margin 2 "${runs[@]}"
has " 4 steady 5/5"
claims 0 --min-margin 1 "$data"/run-{1,2,4,5}    # without the run where claim.3 failed
has "5 claims: 4 steady"
claims 2 "$data/run-1" "$data/full"
has "repeat_claims: host_sync: the runs were made in different modes (the first 'quick', 1 other)"
claims 2 "$src/tests/data/gpu-a"
has "launch_storm.csv: claim.1: not a claim line"
claims 2 "$work/nowhere"
has "cannot read folder $work/nowhere"
claims 2 --min-margin x "$data/run-1"
has "repeat_claims: --min-margin 'x': a number >= 0"
claims 2
# the committed results: every claim line of today's files parses
claims 1 "$src"/results/nvidia-h200
has "host_sync: 1 run, mode full"

finish "repeat check(s) failed" \
  "ci/repeat.sh's usage errors exit 2 before the build; repeat_claims reads the fixture runs as expected"

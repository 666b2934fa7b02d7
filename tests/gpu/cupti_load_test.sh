#!/usr/bin/env bash
# CUPTI is loaded only after every timing pass, and never without the trace and counters passes
# (common/instruments/cupti_dl.c). Two quick runs of one scenario; the witnesses are the loader's
# own log of every library it opens (LD_DEBUG=files) and the results' `cupti_loaded` and
# `cupti_api` keys:
#   1. --no-trace --no-counters: libcupti never opened; cupti_loaded "no (...)"; cupti_api empty.
#   2. the default passes: libcupti opened after the last timing pass and before the first trace
#      pass; cupti_loaded "yes, after the timing passes (...)"; cupti_api a number.
# Skipped (77) where the scenario skips (no GPU). ARGS go to both runs (ctest passes one sweep
# point: the loading order needs several timing passes, not the whole quick sweep).
#   tests/gpu/cupti_load_test.sh PROGRAM OUT_DIR [ARGS...]
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -ge 2 ] || usage "tests/gpu/cupti_load_test.sh PROGRAM OUT_DIR [ARGS...]"
program=$1 out=$2 name=$(basename "$1")
shift 2
extra=("$@")
rm -rf "$out" && mkdir -p "$out" || exit 2
cupti_file='file=[^ ]*libcupti'    # the loader's line for libcupti, by soname or by path

# run LABEL ARGS...: a quick run, its stderr and the loader's log together in OUT_DIR/LABEL.log
run() {
  local label=$1 rc
  shift
  LD_DEBUG=files "$program" --quick --no-expect --out "$out/$label" ${extra[@]+"${extra[@]}"} "$@" \
    >"$out/$label.out" 2>"$out/$label.log"
  rc=$?
  if [ $rc = 77 ]; then
    grep -v '^ *[0-9]\+:' "$out/$label.log" >&2
    echo "skipped: $name skips here" >&2
    exit 77
  fi
  if [ $rc != 0 ]; then
    grep -v '^ *[0-9]\+:' "$out/$label.log" | tail -20 >&2
    echo "FAIL: $name $* exited $rc" >&2
    exit 1
  fi
}

# meta LABEL KEY: the value of `# KEY: ` in the run's results file
meta() { sed -n "s/^# $2: //p" "$out/$1"/*/"$name.csv"; }

# line LABEL PATTERN [last]: the number of the first (or last) log line matching PATTERN
line() {
  grep -n -- "$2" "$out/$1.log" | { [ "${3:-}" = last ] && tail -1 || head -1; } | cut -d: -f1
}

run bare --no-trace --no-counters
if grep -q "$cupti_file" "$out/bare.log"; then
  fail "--no-trace --no-counters opened libcupti: $(grep -m1 "$cupti_file" "$out/bare.log")"
fi
loaded=$(meta bare cupti_loaded) api=$(meta bare cupti_api)
[[ "$loaded" == "no ("* ]] ||
  fail "--no-trace --no-counters: cupti_loaded is '$loaded', not 'no (...)'"
[ -z "$api" ] || fail "--no-trace --no-counters: cupti_api is '$api', not empty"
echo "bare run: cupti_loaded: $loaded"

run full
opened=$(line full "$cupti_file")
last_timing=$(line full ': timing (' last)
first_trace=$(line full ': trace (')
where="libcupti opened at log line ${opened:-none}, the last timing pass at ${last_timing:-none}"
where+=", the first trace pass at ${first_trace:-none}"
if [ -z "$opened" ] || [ -z "$last_timing" ] || [ -z "$first_trace" ] ||
   [ "$opened" -lt "$last_timing" ] || [ "$opened" -gt "$first_trace" ]; then
  fail "default run: $where"
fi
loaded=$(meta full cupti_loaded) api=$(meta full cupti_api)
[[ "$loaded" == "yes, after the timing passes ("* ]] ||
  fail "default run: cupti_loaded is '$loaded', not 'yes, after the timing passes (...)'"
[[ "$api" =~ ^[0-9]+$ ]] || fail "default run: cupti_api is '$api', not a number"
echo "default run: cupti_loaded: $loaded; cupti_api: $api; $where"

[ "$failures" = 0 ] || exit 1

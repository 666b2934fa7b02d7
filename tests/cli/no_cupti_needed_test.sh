#!/usr/bin/env bash
# No program of the suite has libcupti among its DT_NEEDED libraries: the harness loads CUPTI
# with dlopen after the timing passes (common/instruments/cupti_dl.c), so that a run without the
# trace and counters passes never maps it. Reads each program's dynamic section with readelf -d,
# else objdump -p; Skipped (77) where neither tool exists.
#   tests/cli/no_cupti_needed_test.sh PROGRAM...
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -ge 1 ] || usage "tests/cli/no_cupti_needed_test.sh PROGRAM..."
if command -v readelf >/dev/null 2>&1; then
  needed() { readelf -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\].*/\1/p'; }
elif command -v objdump >/dev/null 2>&1; then
  needed() { objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }'; }
else
  echo "skipped: neither readelf nor objdump is installed (binutils): DT_NEEDED not read" >&2
  exit 77
fi

for program in "$@"; do
  if [ ! -f "$program" ]; then
    fail "$program does not exist"
    continue
  fi
  libs=$(needed "$program" | tr '\n' ' ')
  # a program with no DT_NEEDED at all was not read (every one here needs libc)
  if [ -z "$libs" ]; then
    fail "no DT_NEEDED entry read from $program"
  elif [[ " $libs" == *" libcupti"* ]]; then
    fail "$(basename "$program") needs libcupti at start-up: $libs"
  else
    pass "$(basename "$program"): $libs"
  fi
done
finish "program(s) load libcupti at start-up"

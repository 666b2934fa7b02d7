# Sourced by every shell test (tests/cli/*.sh, tests/gpu/*.sh): the checks count into
# $failures and print one line each (ok: on stdout, FAIL: on stderr); expect keeps the output of
# its command in $work/out.txt.
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# skip REASON: "skipped: REASON" on stderr (after $skip_prefix, where a test sets one), exit 77;
# with UNDERFED_REQUIRE_GPU=1 (a GPU runner) exit 1 instead.
skip() {
  echo "${skip_prefix-}skipped: $1" >&2
  [ "${UNDERFED_REQUIRE_GPU:-0}" = 1 ] && exit 1
  exit 77
}

# usage TEXT: exit 2 with "usage: TEXT" on stderr (the test's arguments are wrong).
usage() { echo "usage: $*" >&2; exit 2; }

# src_build SOURCE_DIR BUILD_DIR: $src and $build absolute (exit 2 where one is not a folder),
# $tool the built underfed.
src_build() {
  src=$(cd "$1" && pwd) || exit 2
  build=$(cd "$2" && pwd) || exit 2
  tool=$build/tools/underfed
}

# built PROGRAM [HOW]: exit 1 with "FAIL: PROGRAM is not built[ (HOW)]" unless it is.
built() { [ -x "$1" ] || { echo "FAIL: $1 is not built${2:+ ($2)}" >&2; exit 1; }; }

# out_dir DIR: $out is DIR, made where missing, absolute (exit 2 where it cannot be made).
out_dir() { mkdir -p "$1" && out=$(cd "$1" && pwd) || exit 2; }

# fresh_work DIR: $work is DIR, empty (exit 1 where it cannot be made).
fresh_work() { work=$1; rm -rf "$work" && mkdir -p "$work" || exit 1; }

# finish FAILED [PASSED]: with failures, "N FAILED" on stderr and exit 1; else print PASSED.
finish() {
  [ "$failures" = 0 ] || { echo "$failures $1" >&2; exit 1; }
  [ $# -lt 2 ] || echo "$2"
}

# expect STATUS MESSAGE WHAT COMMAND...: the exit status, and MESSAGE (a fixed string) in the
# output (stdout and stderr together); MESSAGE "" checks the status only.
expect() {
  local want=$1 message=$2 what=$3; shift 3
  "$@" > "$work/out.txt" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$what: exit $got, expected $want"; cat "$work/out.txt" >&2
  elif [ -n "$message" ] && ! grep -qF -- "$message" "$work/out.txt"; then
    fail "$what: no '$message' in:"; cat "$work/out.txt" >&2
  else
    pass "$what: exit $got"
  fi
}

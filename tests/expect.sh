# Shared by the tool's script tests (sourced): fail and expect, counting into $failures, with
# the output of each command in $work/out.txt.

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

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
    echo "ok: $what: exit $got"
  fi
}

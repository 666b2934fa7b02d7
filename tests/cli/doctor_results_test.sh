#!/usr/bin/env bash
# The doctor's figures in the pages (docs/doctor.md, and wherever else a page quotes them) are
# the committed H200 results, quoted, not retyped: after a line `<!-- from PATH -->` (PATH
# relative to the source tree), a Markdown table must be PATH's table lines exactly (every `|`
# line, in order), and a fenced block's lines must each be a line of PATH. Also checks itself:
# a page with one quoted figure changed must fail, and so must a marker naming a missing file.
#   tests/cli/doctor_results_test.sh SOURCE_DIR [PAGE...]; exit 0 in sync, 1 not. Without PAGE:
#   docs/doctor.md (which must quote some), and every README.md, docs/*.md and
#   scenarios/*/README.md that holds a `<!-- from PATH -->` line.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -ge 1 ] || usage "tests/cli/doctor_results_test.sh SOURCE_DIR [PAGE...]"
src=$(cd "$1" && pwd) || exit 2
if [ $# -ge 2 ]; then
  pages=("${@:2}")
else
  pages=("$src/docs/doctor.md")
  for page in "$src/README.md" "$src"/docs/*.md "$src"/scenarios/*/README.md; do
    [ "$page" != "$src/docs/doctor.md" ] && grep -q '^<!-- from [^ ]* -->$' "$page" &&
      pages+=("$page")
  done
fi
readme=${pages[0]}   # the page the check of the check changes

# check PAGE: 0 when every quote matches its file; prints what does not
check() {
  local page=$1 bad=0 n=0 path line
  while IFS= read -r path; do
    n=$((n + 1))
    [ -f "$src/$path" ] || { echo "FAIL: $page quotes $path, which does not exist" >&2; bad=1; continue; }
    # the quoted lines: from the marker to the first blank line after some content
    quoted=$(awk -v m="<!-- from $path -->" '
      $0 == m { on = 1; next }
      on && /^```/ { fence = !fence; seen = 1; if (!fence) exit; next }
      on && !fence && /^$/ { if (seen) exit; next }
      on { print; seen = 1 }' "$page")
    if echo "$quoted" | head -1 | grep -q '^|'; then
      if [ "$quoted" != "$(grep '^|' "$src/$path")" ]; then
        echo "FAIL: $page's table after <!-- from $path --> is not that file's table:" >&2
        diff <(echo "$quoted") <(grep '^|' "$src/$path") | head -10 >&2
        bad=1
      fi
    else
      while IFS= read -r line; do
        grep -qxF -- "$line" "$src/$path" ||
          { echo "FAIL: $page quotes a line that $path does not hold: $line" >&2; bad=1; }
      done <<< "$quoted"
    fi
  done < <(grep -o '^<!-- from [^ ]* -->$' "$page" | sed 's/^<!-- from //; s/ -->$//')
  [ $n -gt 0 ] || { echo "FAIL: $page quotes no results (<!-- from PATH --> markers)" >&2; bad=1; }
  return $bad
}

for page in "${pages[@]}"; do
  if check "$page"; then
    pass "$page quotes the committed doctor results"
  else
    failures=$((failures + 1))
  fi
done

# the check itself: a changed figure and a missing file must fail
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
awk '/^<!-- from / { on = 1 }
     on && !done && match($0, /\| [0-9]/) {
       d = substr($0, RSTART + 2, 1); $0 = substr($0, 1, RSTART + 1) ((d + 1) % 10) substr($0, RSTART + 3)
       done = 1 }
     { print }' \
  "$readme" > "$work/changed.md"
if cmp -s "$readme" "$work/changed.md"; then
  fail "found no quoted table row to change"
elif check "$work/changed.md" 2> /dev/null; then
  fail "a changed figure passed the check"
else
  pass "a changed figure fails"
fi
printf '<!-- from results/no/such/file.md -->\n| a |\n' > "$work/missing.md"
if check "$work/missing.md" 2> /dev/null; then
  fail "a quote of a missing file passed"
else
  pass "a quote of a missing file fails"
fi
[ "$failures" = 0 ]

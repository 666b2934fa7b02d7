#!/usr/bin/env bash
# `underfed readme`: the figures of the committed pages, and the generator itself.
#   - README.md, docs/*.md, every scenarios/*/README.md and any other page in git with a figure
#     marker are in sync with results/nvidia-h200 (`underfed readme --check`); a hand-edited
#     generated number makes the check fail;
#   - README.md stays a front door: at most 250 lines, none over 120 characters outside tables;
#   - on the fixture folder tests/data/gpu-a, tests/data/readme/page.md regenerates to
#     page.expected.md (inline figures, a table with a * row, text in a code block untouched),
#     the result is in sync, and the stale input is not;
#   - a variant, point, metric or ceiling that does not exist, or a value not measured, is an
#     error (exit 2) that leaves the page as it was.
#   tests/cli/readme_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/readme_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"

# exits STATUS DESCRIPTION COMMAND...: the command exits STATUS (its output in $work/out.log)
exits() {
  local want=$1 what=$2; shift 2
  "$@" > "$work/out.log" 2>&1
  local got=$?
  if [ "$got" = "$want" ]; then pass "$what (exit $got)"; else fail "$what: exit $got, not $want"; cat "$work/out.log" >&2; fi
}

built "$tool" "cmake --build BUILD --target underfed"
fresh_work "$build/readme-test"

# ---- the committed pages ------------------------------------------------------------------
cd "$src" || exit 1
# Every page with a generated figure: README.md, docs/ and the scenario pages always, and any
# other Markdown file in git that holds a figure marker (results/*/doctor/README.md, benches/,
# a page added later), the fixtures of tests/data aside (they are stale on purpose).
pages=(README.md docs/*.md scenarios/*/README.md)
if git rev-parse --git-dir > /dev/null 2>&1; then
  while IFS= read -r page; do
    [[ " ${pages[*]} " == *" $page "* ]] || pages+=("$page")
  done < <(git ls-files -- '*.md' ':!:tests/data/*' |
           while IFS= read -r f; do [ -f "$f" ] && grep -qE '<!-- (uf |underfed:table)' "$f" && echo "$f"; done)
fi
echo "pages checked: ${pages[*]}"
exits 0 "committed pages in sync with results/nvidia-h200" \
  "$tool" readme --check results/nvidia-h200 "${pages[@]}"
# A generated number edited by hand: the first figure of launch_storm's page, one digit changed.
mkdir -p "$work/edited" && cp scenarios/launch_storm/README.md "$work/edited/README.md"
sed -i -E '0,/<!-- uf [^>]*-->[0-9]/s/(<!-- uf [^>]*-->)([0-9])/\1X\2/' "$work/edited/README.md"
sed -i 's/-->X0/-->9/; s/-->X[1-9]/-->0/' "$work/edited/README.md"
if cmp -s scenarios/launch_storm/README.md "$work/edited/README.md"; then
  fail "could not edit a generated figure of scenarios/launch_storm/README.md"
else
  exits 1 "a hand-edited figure is stale" "$tool" readme --check results/nvidia-h200 \
    "$work/edited/README.md"
  grep -q "stale" "$work/out.log" || fail "--check names no stale figure"
fi

# The front door stays one: README.md at most 250 lines, none over 120 characters outside a
# table (the depth lives in docs/). An awk that counts bytes counts a µ or → as more than one:
# stricter, never looser.
lines=$(wc -l < README.md)
if [ "$lines" -le 250 ]; then pass "README.md: $lines lines"; else fail "README.md: $lines lines, over 250"; fi
long=$(awk 'length($0) > 120 && !/^\|/ { printf "%d (%d chars) ", FNR, length($0) }' README.md)
if [ -z "$long" ]; then pass "README.md: no line over 120 characters outside tables"
else fail "README.md: lines over 120 characters outside tables: $long"; fi

# ---- the generator on fixtures ------------------------------------------------------------
fixture=$src/tests/data/gpu-a
cp "$src/tests/data/readme/page.md" "$work/page.md"
exits 1 "--check on the stale fixture page" "$tool" readme --check "$fixture" "$work/page.md"
cmp -s "$src/tests/data/readme/page.md" "$work/page.md" || fail "--check rewrote the page"
exits 0 "regenerate the fixture page" "$tool" readme "$fixture" "$work/page.md"
if diff -u "$src/tests/data/readme/page.expected.md" "$work/page.md"; then
  pass "fixture page as expected"
else
  fail "fixture page differs from page.expected.md"
fi
exits 0 "the regenerated page is in sync" "$tool" readme --check "$fixture" "$work/page.md"

# A ceiling is the one recorded with the scenario's run (its `# ceiling.NAME:` line), not the
# folder's ceilings.csv, which may be another run's (a two-GPU run kept beside a newer suite).
own=$work/own-ceiling
mkdir -p "$own" && cp "$fixture/ceilings.csv" "$own/" &&
  awk 'NR == 2 { print "# ceiling.copy_d2d_gbs: 1234.5" } { print }' "$fixture/launch_storm.csv" \
    > "$own/launch_storm.csv" || fail "own-ceiling fixture"
printf '%s\n' 'c <!-- uf launch_storm ceiling.copy_d2d_gbs %.1f -->?<!-- /uf -->' > "$work/own.md"
exits 0 "a ceiling recorded in the scenario's file" "$tool" readme "$own" "$work/own.md"
grep -q '>1234.5<' "$work/own.md" || fail "the scenario's recorded ceiling was not used: $(cat "$work/own.md")"
cp "$fixture/launch_storm.csv" "$own/launch_storm.csv"
printf '%s\n' 'c <!-- uf launch_storm ceiling.copy_d2d_gbs %.1f -->?<!-- /uf -->' > "$work/own.md"
exits 0 "a ceiling the scenario's file does not record" "$tool" readme "$own" "$work/own.md"
want=$(awk -F, '$1 == "copy_d2d_gbs" { printf "%.1f", $2 }' "$fixture/ceilings.csv")
grep -q ">$want<" "$work/own.md" || fail "the folder's ceilings.csv was not used ($want): $(cat "$work/own.md")"

# Each bad figure: exit 2, the page untouched.
bad() {  # bad DESCRIPTION MARKDOWN WHAT_THE_MESSAGE_SAYS
  printf '%s\n' "$2" > "$work/bad.md"
  cp "$work/bad.md" "$work/bad.orig"
  exits 2 "$1" "$tool" readme "$fixture" "$work/bad.md"
  cmp -s "$work/bad.md" "$work/bad.orig" || fail "$1: the page was changed"
  grep -q "bad.md:[0-9]*: .*$3" "$work/out.log" || fail "$1: the message does not name the line and say \"$3\""
}
bad "unknown variant" 'x <!-- uf launch_storm/lazy step_ms -->1<!-- /uf -->' \
  "no variant \"lazy\""
bad "no row at the point" 'x <!-- uf launch_storm/eager[elems=5000] step_ms -->1<!-- /uf -->' \
  "no row of eager at elems=5000"
bad "unknown axis" 'x <!-- uf launch_storm/eager[size=4K] step_ms -->1<!-- /uf -->' \
  "unknown axis \"size\""
bad "unknown metric" 'x <!-- uf launch_storm/eager step_msec -->1<!-- /uf -->' \
  "no metric \"step_msec\""
bad "value not measured" 'x <!-- uf launch_storm/eager[elems=64K,ops=100] sm_active_pct -->1<!-- /uf -->' \
  "empty (not measured"
bad "unknown ceiling" 'x <!-- uf launch_storm ceiling.warp_speed -->1<!-- /uf -->' \
  "no ceiling \"warp_speed\""
bad "unknown scenario" 'x <!-- uf no_such_scenario/eager step_ms -->1<!-- /uf -->' \
  "no_such_scenario.csv"
bad "two conversions" 'x <!-- uf launch_storm/eager step_ms %.1f %.2f -->1<!-- /uf -->' \
  "conversions"
bad "unknown variant in a table row" "$(printf '%s\n' '<!-- underfed:table launch_storm' \
  'rows: eager, lazy' 'step ms = step_ms' '-->' '<!-- underfed:end -->')" \
  "no variant \"lazy\""
bad "a table without its end marker" "$(printf '%s\n' '<!-- underfed:table launch_storm' \
  'rows: eager' 'step ms = step_ms' '-->')" \
  "no \"<!-- underfed:end -->\" line"
bad "a figure that starts a line" "$(printf '%s\n' 'text' '<!-- uf launch_storm/eager step_ms -->1<!-- /uf -->')" \
  "starts the line"
exits 2 "no page given" "$tool" readme "$fixture"

echo "$failures failure(s)"
[ "$failures" = 0 ]

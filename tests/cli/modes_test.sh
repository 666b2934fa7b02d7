#!/usr/bin/env bash
# Every script a user or CI runs directly is executable in git (mode 100755), so that a fresh
# clone runs the README's commands as written: the scripts README.md and docs/*.md name, every
# *.sh under ci/, plots/ and tests/, and .ci/run. Skipped (77) where the sources are not a git
# checkout.
#   tests/cli/modes_test.sh SOURCE_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 1 ] || usage "tests/cli/modes_test.sh SOURCE_DIR"
src=$(cd "$1" && pwd) || exit 2
if ! command -v git >/dev/null 2>&1 || ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  echo "skipped: $src is not a git checkout (or git is missing): modes are not recorded" >&2
  exit 77
fi

# The scripts the pages name (ci/suite.sh, plots/render.sh, ...), then the folders' scripts.
mapfile -t named < <(grep -ohE '(^|[^[:alnum:]_./-])(\.?[[:alnum:]_-]+/)+[[:alnum:]_.-]+\.sh' \
                       "$src/README.md" "$src"/docs/*.md | sed -E 's/^[^[:alnum:]_.]//' | sort -u)
mapfile -t listed < <(git -C "$src" ls-files -- 'ci/*.sh' 'plots/*.sh' 'tests/*.sh' .ci/run)
[ ${#named[@]} -gt 0 ] || { echo "FAIL: README.md names no script (ci/suite.sh expected)" >&2; exit 1; }

judged=0
for path in $(printf '%s\n' "${named[@]}" "${listed[@]}" | sort -u); do
  mode=$(git -C "$src" ls-files -s -- "$path" | awk '{ print $1 }')
  # A file whose text differs from the index: the index does not describe it (an edit not yet
  # staged, or a copy of a tree beside an older .git), so its mode there says nothing yet.
  if [ -n "$mode" ] && [ -e "$src/$path" ] && ! git -C "$src" -c core.fileMode=false diff --quiet -- "$path" 2>/dev/null; then
    echo "not judged: $path differs from the git index (its mode is judged where it is committed)"
    continue
  fi
  # On disk but not in the index: not committed yet, or a copy of a newer tree beside an older
  # .git (the GPU machine's). A fresh clone (CI) cannot have it, and there the file's absence
  # is what fails (below), so here it is not judged.
  if [ -z "$mode" ] && [ -e "$src/$path" ]; then
    echo "not judged: $path is not in the git index (uncommitted, or a tree beside an older .git)"
    continue
  fi
  judged=$((judged + 1))
  if [ -z "$mode" ]; then
    fail "$path (named in README.md or docs/) is not in git"
  elif [ "$mode" != 100755 ]; then
    fail "$path is mode $mode in git: run git update-index --chmod=+x $path"
  else
    pass "$path 100755"
  fi
done
finish "script(s) not executable in git"
if [ $judged = 0 ]; then
  echo "skipped: no script matches the git index here (a copy beside an older .git?)" >&2
  exit 77
fi
echo "every directly run script is executable in git"

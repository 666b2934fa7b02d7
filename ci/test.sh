#!/usr/bin/env bash
# The test command: install what the build and tests need (Debian/Ubuntu, as root), configure,
# build every program (CUDA compiles and links without a GPU), run ctest.
# Without a GPU the gpu/sanitize/multigpu tests report Skipped; UNDERFED_REQUIRE_GPU=1 makes a
# skip a failure (for GPU runners). BUILD_DIR overrides the build folder (default: build).
# Criterion and gnuplot are optional outside CI (a GPU runner may have neither and no package
# access): without Criterion the unit tests of the host logic are not built, without gnuplot
# unit.render reports Skipped; both are said at the end, with every skipped test's reason.
# With CI=true both are required.
# On a GPU runner this runs both lanes (docs/ci.md, "Tests"): the per-commit `ctest -L gpu` and the
# nightly `-L sanitize`, `-L crosscheck`, `-L doctor`; CTEST_ARGS="-L gpu" runs one lane.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

missing=()
[ -f /usr/include/criterion/criterion.h ] || missing+=(libcriterion-dev)
command -v gnuplot >/dev/null 2>&1 || missing+=(gnuplot-nox)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ci/test.sh: installing ${missing[*]}" >&2
    # Bounded: an offline machine must not hang here.
    limit=()
    command -v timeout >/dev/null 2>&1 && limit=(timeout 600)
    if ! { "${limit[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
           "${limit[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
      echo "ci/test.sh: could not install ${missing[*]}" >&2
    fi
  else
    echo "ci/test.sh: missing ${missing[*]} (not root or no apt-get: install them yourself)" >&2
  fi
fi

command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
# In CI the unit tests are not optional: a missing Criterion fails the configure.
require_criterion=OFF
[ "${CI:-}" = true ] && require_criterion=ON

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DUNDERFED_REQUIRE_CRITERION=$require_criterion ${CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"

# What the optional tools leave out, said before the tests and again at the end.
notes=()
if grep -qE '^CRITERION_(INCLUDE_DIR|LIBRARY):[A-Z]+=.*NOTFOUND' "$build/CMakeCache.txt"; then
  notes+=("Criterion not found: the Criterion unit tests (tests/unit/test_*.c) were NOT built" \
          "or run (install libcriterion-dev, or set CI=true to make it required)")
fi
if ! command -v gnuplot >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    notes+=("gnuplot not found, and CI=true requires it: unit.render fails" "(install gnuplot-nox)")
  else
    notes+=("gnuplot not found: unit.render checks everything but the images and reports" \
            "Skipped (install gnuplot-nox; with CI=true it is required)")
  fi
fi
for ((i = 0; i < ${#notes[@]}; i += 2)); do echo "ci/test.sh: ${notes[i]} ${notes[i + 1]}" >&2; done

# ctest shows "Skipped" without the reason: the last line of each skipped test's output, from
# ctest's log.
skip_reasons() {  # skip_reasons CTEST_OUTPUT
  local names log=$build/Testing/Temporary/LastTest.log
  names=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped).*$/\1/p' "$1")
  [ -n "$names" ] && [ -f "$log" ] || return 0
  echo "ci/test.sh: skipped tests and why:" >&2
  awk -v names="$names" '
    BEGIN { n = split(names, list, "\n"); for (i = 1; i <= n; i++) want[list[i]] = 1 }
    /^[0-9]+\/[0-9]+ Test: / { name = $3; out = 0; last = ""; next }
    /^Output:$/ { out = 1; getline; next }
    /^<end of output>$/ { if (name in want) printf "  %-34s %s\n", name, last; out = 0; next }
    out && NF { last = $0 }' "$log" >&2 || true
}

cd "$build"
status=0
ctest --output-on-failure --timeout 1800 ${CTEST_ARGS:-} 2>&1 | tee "$build/ctest-output.txt" ||
  status=$?
skip_reasons "$build/ctest-output.txt"
for ((i = 0; i < ${#notes[@]}; i += 2)); do echo "ci/test.sh: ${notes[i]} ${notes[i + 1]}" >&2; done
exit $status

#!/usr/bin/env bash
# The test command: install what the build and tests need (Debian/Ubuntu, as root), configure,
# build every program (CUDA compiles and links without a GPU), run ctest.
# Without a GPU the gpu/sanitize/multigpu tests report Skipped; UNDERFED_REQUIRE_GPU=1 makes a
# skip a failure (for GPU runners). BUILD_DIR overrides the build folder (default: build).
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
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
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
cd "$build"
ctest --output-on-failure --timeout 1800 ${CTEST_ARGS:-}

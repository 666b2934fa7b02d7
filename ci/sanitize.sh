#!/usr/bin/env bash
# The host code under AddressSanitizer and UndefinedBehaviorSanitizer: a second build folder
# (default build-asan; ASAN_BUILD_DIR overrides it) with only the code that runs without a GPU
# (UNDERFED_HOST_ONLY: underfed_core, underfed_doctor, the underfed tool, the Criterion unit
# tests, the fuzz driver), then `ctest -L unit` there. Any sanitizer report fails: UBSan does not
# recover, ASan and LeakSanitizer end the process with an error. Run by .ci/run after ci/test.sh
# (which installs what the build needs). Criterion forks each test: the child inherits the
# options.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ASAN_BUILD_DIR:-$root/build-asan}
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=all"

require_criterion=OFF
[ "${CI:-}" = true ] && require_criterion=ON
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUNDERFED_HOST_ONLY=ON \
      -DUNDERFED_REQUIRE_CRITERION=$require_criterion \
      -DCMAKE_C_FLAGS="$sanitizers -fno-omit-frame-pointer" \
      -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"

# A report aborts the process with a non-zero status that ctest sees; the stack says where.
asan=halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-$asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
cd "$build"
ctest -L unit --output-on-failure --timeout 900 ${CTEST_ARGS:-}

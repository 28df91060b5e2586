#!/usr/bin/env bash
# Builds and runs the tag queue tests (the multi-thread ones included) under ThreadSanitizer.
# Usage: bash native/tests/run-tsan.sh [test-name-substring]   (run.sh runs it after its own tests)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build/core-tests-tsan"

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
if [[ -f "$build/CMakeCache.txt" ]] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi

cmake -S "$root/native/tests" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DGSF_TSAN=ON >/dev/null
cmake --build "$build" --parallel

export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
"$build/gsf_queue_tests_tsan" "$@"

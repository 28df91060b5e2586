#!/usr/bin/env bash
# Builds and runs the native core unit tests under AddressSanitizer, then (a full run) the tag
# queue tests under ThreadSanitizer (run-tsan.sh).
# Usage: bash native/tests/run.sh [test-name-substring]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build/core-tests"

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
# A cache made with another generator cannot be reused.
if [[ -f "$build/CMakeCache.txt" ]] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi

cmake -S "$root/native/tests" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" --parallel

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
"$build/gsf_core_tests" "$@"
# A full run (no name filter) also runs the tag queue tests under ThreadSanitizer.
if [[ $# -eq 0 ]]; then
  bash "$root/native/tests/run-tsan.sh"
fi

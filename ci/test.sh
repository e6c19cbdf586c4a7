#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
bash ci/build.sh asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd build-asan
ctest --output-on-failure -j "$(nproc)" --timeout 600

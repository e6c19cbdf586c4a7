#!/usr/bin/env bash
# Configures and builds coldgate. Usage: ci/build.sh [release|asan|fuzz|package] [TARGET]
#   release → build/        (the binary the README and the demo use)
#   package → build-pkg/    (Release with the man page, no tests: `cpack -G DEB` there; ci/package.sh)
#   asan    → build-asan/   (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors;
#                            with the man page and `cpack -G DEB`, which the package tests use)
#   fuzz    → build-fuzz/   (clang libFuzzer targets in fuzz/, ASan + UBSan; run by bench/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-release}
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # -g1: line tables only, what the sanitizers' reports and backtraces need; full -g costs ~10%
  # more compile time (29 s → 26 s on json_test.cpp) for variables nobody reads in CI.
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCOLDGATE_SANITIZE=ON
                             -DCOLDGATE_WERROR=ON -DCOLDGATE_PACKAGE=ON) ;;
  package) dir=build-pkg; flags=(-DCMAKE_BUILD_TYPE=Release -DCOLDGATE_PACKAGE=ON -DCOLDGATE_BUILD_TESTS=OFF) ;;
  fuzz) dir=build-fuzz; export CXX=${CXX:-clang++}
        flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLDGATE_FUZZ=ON -DCOLDGATE_BUILD_TESTS=OFF) ;;
  *) echo "ci/build.sh: unknown build kind '$kind' (release | asan | fuzz | package)" >&2; exit 2 ;;
esac

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" ${2:+--target "$2"}

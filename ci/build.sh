#!/usr/bin/env bash
# Configures and builds coldgate. Usage: ci/build.sh [release|asan|fuzz|package|strict] [TARGET]
#   release → build/        (the binary the README and the demo use)
#   package → build-pkg/    (Release with the man page, no tests: `cpack -G DEB` there; ci/package.sh)
#   asan    → build-asan/   (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors;
#                            with the man page and `cpack -G DEB`, which the package tests use)
#   fuzz    → build-fuzz/   (clang libFuzzer targets in fuzz/, ASan + UBSan; run by bench/fuzz.sh)
#   strict  → build-strict/ (what `release` compiles, with warnings as errors and no tests: the
#                            warnings only the optimizer finds, which the -O0 asan build cannot;
#                            ci/package-lane.sh and ci/debian13.sh build it)
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-release}
# The optimized builds: -O2, as Debian builds its packages (CMake's Release is -O3, ~12% more
# compile time for an I/O-bound program), and each module's sources compiled in batches
# (COLDGATE_UNITY: about half the compile time of the modules; docs/BENCHMARKS.md "test suite").
optimized=(-DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCOLDGATE_UNITY=ON)
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release "${optimized[@]}" -DCOLDGATE_PCH=OFF) ;;
  strict) dir=build-strict; flags=(-DCMAKE_BUILD_TYPE=Release "${optimized[@]}" -DCOLDGATE_PCH=OFF
                                   -DCOLDGATE_WERROR=ON -DCOLDGATE_BUILD_TESTS=OFF) ;;
  # -g1: line tables only, what the sanitizers' reports and backtraces need; full -g costs ~10%
  # more compile time (29 s → 26 s on json_test.cpp) for variables nobody reads in CI.
  # lld where installed (ci/setup.sh --test installs it): ~5× faster links of the sanitized binaries.
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCOLDGATE_SANITIZE=ON
                             -DCOLDGATE_WERROR=ON -DCOLDGATE_PACKAGE=ON -DCOLDGATE_PCH=ON
                             -DCOLDGATE_LINKER="$(command -v ld.lld >/dev/null && echo lld)" -DCOLDGATE_UNITY=ON) ;;
  package) dir=build-pkg; flags=(-DCMAKE_BUILD_TYPE=Release "${optimized[@]}" -DCOLDGATE_PACKAGE=ON
                                -DCOLDGATE_BUILD_TESTS=OFF -DCOLDGATE_PCH=OFF) ;;
  fuzz) dir=build-fuzz; export CXX=${CXX:-clang++}
        flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLDGATE_FUZZ=ON -DCOLDGATE_BUILD_TESTS=OFF) ;;
  *) echo "ci/build.sh: unknown build kind '$kind' (release | asan | fuzz | package | strict)" >&2; exit 2 ;;
esac

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" ${2:+--target "$2"}

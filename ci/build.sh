#!/usr/bin/env bash
# Configures and builds coldgate. Usage: ci/build.sh [release|asan] [TARGET]
#   release → build/        (the binary the README and the demo use)
#   asan    → build-asan/   (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors)
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-release}
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DCOLDGATE_SANITIZE=ON -DCOLDGATE_WERROR=ON) ;;
  *) echo "ci/build.sh: unknown build kind '$kind' (release | asan)" >&2; exit 2 ;;
esac

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" ${2:+--target "$2"}

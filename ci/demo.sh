#!/usr/bin/env bash
# Installs what is missing, builds coldgate and runs the main job on the bundled demo.
# Extra arguments go to `coldgate run`.
set -euo pipefail
cd "$(dirname "$0")/.."

# Installing and building report on stderr: stdout carries only the results.
bash ci/setup.sh >&2
bash ci/build.sh release coldgate >&2
echo "ci/demo.sh: built ./build/coldgate; running: ./build/coldgate run -c config/demo.yaml $*" >&2
exec ./build/coldgate run -c config/demo.yaml "$@"

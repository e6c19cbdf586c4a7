#!/usr/bin/env bash
# Makes the container provider's tests runnable on Debian bookworm (as root, no registry):
#   1. installs podman, runc, netavark, iptables, debootstrap when missing (apt-get);
#   2. writes /etc/containers/containers.conf when absent (runc; crun and the default ulimits
#      fail on these machines);
#   3. builds the base image debian:bookworm-slim (ci/base-image.sh) when missing;
#   4. builds the test image postgres:15 from ci/container-image when missing or built from an
#      older ci/container-image (a postgres:15 that is not ours, e.g. the official one, is kept);
#   5. starts `podman system service` on /run/coldgate-podman/podman.sock when not running,
#      the Docker-compatible API that the docker CLI talks to.
# Idempotent: about a second when everything is done. Progress goes to stderr; stdout gets one
# line, `DOCKER_HOST=unix:///run/coldgate-podman/podman.sock`, for `export "$(ci/setup-podman.sh)"`.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "ci/setup-podman.sh: $*" >&2; }

run_dir=/run/coldgate-podman
socket=$run_dir/podman.sock
image=postgres:15

# 1. Packages (explicit list, no recommends: buildah, dbus and friends are not needed).
packages=(podman runc conmon netavark aardvark-dns iptables catatonit debootstrap)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} > 0)); then
  [[ $(id -u) -eq 0 ]] || { say "need root to install: ${missing[*]}"; exit 3; }
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Engine configuration.
if [[ ! -e /etc/containers/containers.conf ]]; then
  say "writing /etc/containers/containers.conf (runtime runc, explicit ulimits)"
  mkdir -p /etc/containers
  cat >/etc/containers/containers.conf <<'EOF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
EOF
fi

# 3. Base image (no registry: debootstrap from Debian's mirror).
bash ci/base-image.sh >&2

# 4. Test image, labelled with a hash of its build context so an edit rebuilds it.
context_hash=$(cat ci/container-image/* | sha256sum | cut -c1-16)
old_id=
built=none
if podman image exists "$image"; then
  old_id=$(podman image inspect --format '{{.Id}}' "$image")
  built=$(podman image inspect --format '{{index .Labels "coldgate.context"}}' "$image")
fi
mkdir -p "$run_dir"
if [[ "$built" != "$context_hash" && ( "$built" == none || -n "$built" ) ]]; then
  say "building $image from ci/container-image (apt-get install postgresql-15)"
  start=$SECONDS
  podman build --network=host --pull=never --label "coldgate.context=$context_hash" \
    -t "$image" ci/container-image >"$run_dir/build.log" 2>&1 || {
    tail -n 30 "$run_dir/build.log" >&2; exit 3; }
  # The previous build of ours, now untagged (kept if a container still uses it).
  [[ -n "$old_id" ]] && podman rmi "$old_id" >/dev/null 2>&1 || true
  say "built $image in $((SECONDS - start)) s"
fi

# 5. The Docker-compatible API service.
pid=$(cat "$run_dir/service.pid" 2>/dev/null || true)
if [[ -z "$pid" || ! -S "$socket" ]] || ! kill -0 "$pid" 2>/dev/null; then
  say "starting podman system service on $socket"
  rm -f "$socket"
  # Started from / : conmon inherits the service's working folder, and a checkout that is
  # removed later (a CI clone, a worktree) would make every later `docker run` fail with
  # "Failed to get working directory".
  (cd / && exec setsid podman system service --time=0 "unix://$socket" >"$run_dir/service.log" 2>&1 \
    </dev/null) &
  echo $! >"$run_dir/service.pid"
  for _ in $(seq 100); do
    [[ -S "$socket" ]] && break
    sleep 0.1
  done
  [[ -S "$socket" ]] || { say "podman system service did not start:"; \
    tail -n 20 "$run_dir/service.log" >&2; exit 3; }
fi
echo "DOCKER_HOST=unix://$socket"

# Sourced (bash) by the tests that run containers themselves (ci/docker-test.sh,
# ci/package-test.sh), from the checkout's root, as root: makes podman usable —
# ci/setup-podman.sh when podman or its configuration is missing. That also starts the
# Docker-compatible API service, which these tests do not need: call podman_service_stop from
# the EXIT trap, which stops it again if it was started here and leaves one that ran before.
podman_service_pid_file=/run/coldgate-podman/service.pid
podman_service_before=$(cat "$podman_service_pid_file" 2>/dev/null || true)
podman_service_after=$podman_service_before
if ! command -v podman >/dev/null || [[ ! -e /etc/containers/containers.conf ]]; then
  bash ci/setup-podman.sh >/dev/null
  podman_service_after=$(cat "$podman_service_pid_file" 2>/dev/null || true)
fi

podman_service_stop() {
  if [[ -n "$podman_service_after" && "$podman_service_after" != "$podman_service_before" ]]; then
    kill "$podman_service_after" 2>/dev/null || true
  fi
}

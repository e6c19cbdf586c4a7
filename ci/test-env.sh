# Sourced by ci/test.sh and bench/suite_under_load.sh: the environment the suite runs in.
# Expects `cleanup` (an array of commands the caller's EXIT trap runs) to exist.
#
# The suite's servers, copies and test folders go on a tmpfs when there is room: on ext4 a
# cluster copy (~1,300 files) costs 4-5× what it costs on tmpfs, and the suite makes hundreds
# (docs/BENCHMARKS.md "test suite"). COLDGATE_TEST_TMPDIR chooses the folder; a tmpfs with
# less than 4 GiB free (a container's 64 MB /dev/shm) leaves TMPDIR as it is.
if [[ -z "${COLDGATE_TEST_TMPDIR:-}" ]] && [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] &&
   (( $(df --output=avail -B1 /dev/shm | tail -1) >= 4 * 1024 ** 3 )); then
  COLDGATE_TEST_TMPDIR=$(mktemp -d /dev/shm/coldgate-tests.XXXXXX)
  cleanup+=("rm -rf $COLDGATE_TEST_TMPDIR")
fi
if [[ -n "${COLDGATE_TEST_TMPDIR:-}" ]]; then
  chmod 1777 "$COLDGATE_TEST_TMPDIR"  # the server account's folders are made in it too
  export TMPDIR=$COLDGATE_TEST_TMPDIR
fi

source "$(dirname "${BASH_SOURCE[0]}")/sanitizer-env.sh"

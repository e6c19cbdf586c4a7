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

# max_malloc_fill_size: ASan fills the first 4,096 bytes of every allocation with 0xbe by default,
# so that a read of an uninitialized member gives garbage that UBSan's bool and enum checks see.
# The first 256 bytes keep that for the objects where such members sit; the large buffers
# (reserved strings, stream buffers) are no longer written and faulted in: 10% of the server
# lanes' CPU time (docs/BENCHMARKS.md "test suite").
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:max_malloc_fill_size=256}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

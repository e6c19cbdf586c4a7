# Sourced wherever the ASan build's programs run (ci/test-env.sh, ci/package-lane.sh,
# ci/debian13.sh, bench/suite_env.sh): the sanitizers' options, unless the caller set its own.
#
# max_malloc_fill_size: ASan fills the first 4,096 bytes of every allocation with 0xbe by default,
# so that a read of an uninitialized member gives garbage that UBSan's bool and enum checks see.
# The first 256 bytes keep that for the objects where such members sit; the large buffers
# (reserved strings, stream buffers) are no longer written and faulted in: 10% of the server
# lanes' CPU time (docs/BENCHMARKS.md "test suite").
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:max_malloc_fill_size=256}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# libpqxx 6.4 (Debian 12's) leaks the PGresult of a call made on a connection whose server has
# just gone: connection_base::make_result asks for the client encoding, which throws, before a
# result owns the PGresult. Nothing of ours is in those stacks; the file says which.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan-suppressions.txt:print_suppressions=0}

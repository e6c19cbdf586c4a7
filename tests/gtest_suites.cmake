# Read by ctest before it runs anything (TEST_INCLUDE_FILES, written by tests/CMakeLists.txt):
# one ctest test per GoogleTest suite of `binary`, named `<Suite>.*` and run with
# --gtest_filter=<Suite>.*. Most of the unit lane's 560-odd cases take milliseconds, while a
# process of the sanitized binary takes ~0.3 s to start and exit: one process per suite instead
# of one per case (docs/BENCHMARKS.md "test suite"). Inputs: binary, workdir, label, timeout.
if(NOT EXISTS "${binary}")
  # As gtest_discover_tests does: a test that fails and names what is missing; with the lane's
  # label, so that `ctest -L unit` fails too instead of running without it.
  get_filename_component(name "${binary}" NAME)
  add_test("${name}_NOT_BUILT" "${name}_NOT_BUILT")
  set_tests_properties("${name}_NOT_BUILT" PROPERTIES LABELS "${label}")
  return()
endif()

execute_process(COMMAND "${binary}" --gtest_list_tests
                WORKING_DIRECTORY "${workdir}"
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${binary} --gtest_list_tests failed (${status}): ${errors}")
endif()

# A suite's line starts in column 0 and ends with "." (a parameterized one may carry a
# "  # TypeParam = ..." comment); its cases are indented. gtest_main's "Running main() from"
# line matches neither.
string(REPLACE ";" "," listing "${listing}")  # a case's parameter may hold one
string(REPLACE "\n" ";" lines "${listing}")
set(suites)
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( +#.*)?$")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    set(cases_${suite} 0)
  elseif(line MATCHES "^  [A-Za-z0-9_/]" AND DEFINED suite)
    math(EXPR cases_${suite} "${cases_${suite}} + 1")
  endif()
endforeach()
if(NOT suites)
  message(FATAL_ERROR "${binary} --gtest_list_tests listed no suite:\n${listing}")
endif()

foreach(suite IN LISTS suites)
  add_test("${suite}.*" "${binary}" "--gtest_filter=${suite}.*")
  # COST orders a fresh clone's run (no timings yet): the server lanes (10) first, then the
  # suites with more cases, so that the last to start are short. A unit test has no server,
  # root or network to lack, so a skipped case is a defect: it fails its suite instead of
  # hiding among the cases that passed.
  set(cost ${cases_${suite}})
  if(cost GREATER 9)
    set(cost 9)
  endif()
  set_tests_properties("${suite}.*" PROPERTIES LABELS "${label}" TIMEOUT "${timeout}" COST ${cost}
                       WORKING_DIRECTORY "${workdir}"
                       FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endforeach()

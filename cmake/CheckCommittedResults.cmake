# ctest's check_committed_results (cmake -P): `nbody-bench check-results` on every committed results
# file, found when the test runs (so files added or removed later are checked without reconfiguring):
# results/**/*.json except the schema, and the plot tests' fixtures, which must also be of the
# current results-format version (they stand for what the harness writes).
#   -DNBODY_BENCH=<nbody-bench> -DSOURCE_DIR=<repository root> -DRESULTS_VERSION=<current version>
foreach(required NBODY_BENCH SOURCE_DIR RESULTS_VERSION)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "CheckCommittedResults.cmake needs -D${required}=...")
  endif()
endforeach()

file(GLOB_RECURSE results_files LIST_DIRECTORIES false "${SOURCE_DIR}/results/*.json")
list(FILTER results_files EXCLUDE REGEX "/results/schema/")
file(GLOB fixture_files LIST_DIRECTORIES false "${SOURCE_DIR}/plot/tests/fixture/*.json")
list(FILTER fixture_files EXCLUDE REGEX "_matrix\\.json$")  # the matrix a fixture was made from
if(NOT results_files OR NOT fixture_files)
  message(FATAL_ERROR "no results files under ${SOURCE_DIR}/results or no fixture in plot/tests/fixture")
endif()

set(failed "")
foreach(file IN LISTS results_files fixture_files)
  execute_process(COMMAND "${NBODY_BENCH}" check-results "${file}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(RELATIVE_PATH name "${SOURCE_DIR}" "${file}")
  if(NOT status EQUAL 0)
    list(APPEND failed "${name}")
    message("FAILED ${name} (exit ${status}):\n${out}${err}")
  endif()
endforeach()
foreach(file IN LISTS fixture_files)
  file(READ "${file}" text)
  string(REGEX MATCH "\"nbody_results_version\": *([0-9]+)" found "${text}")
  file(RELATIVE_PATH name "${SOURCE_DIR}" "${file}")
  if(NOT CMAKE_MATCH_1 STREQUAL "${RESULTS_VERSION}")
    list(APPEND failed "${name}")
    message("FAILED ${name}: nbody_results_version '${CMAKE_MATCH_1}', the harness writes ${RESULTS_VERSION}: regenerate it (plot/tests/fixture/README.md)")
  endif()
endforeach()
list(LENGTH results_files results_count)
list(LENGTH fixture_files fixture_count)
if(failed)
  list(LENGTH failed failed_count)
  message(FATAL_ERROR "${failed_count} of ${results_count} results files and ${fixture_count} fixtures failed: ${failed}")
endif()
message("check-results passed on ${results_count} committed results files and ${fixture_count} plot fixtures")

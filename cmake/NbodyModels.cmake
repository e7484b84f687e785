# The programming models of the suite: each is a folder models/<name>/ (docs/adding-a-model.md)
# with two CMake files:
#  - model.cmake decides whether the model can be built here and, when it cannot, why; it ends
#    with one nbody_register_model() call. It runs in the top-level scope, in the order of
#    nbody_add_models(), so that the languages and packages it finds serve the whole build and a
#    later model sees an earlier one's decision (Kokkos' spaces follow OpenMP and CUDA);
#  - CMakeLists.txt builds the model's library and its tests (models/<name>/tests/); it is added
#    only where model.cmake said the model is in the build.
# nbody_add_models() then generates the list the C++ registry reads (every model, in the build or
# not and why, and the registration function of each that is in it) and builds nbody_variants,
# the library of every variant of this build.

# Records one model: NAME as in variant ids ("omp" in omp.static), TITLE its display name (the
# configure summary, `nbody-bench list`, the report), IN_BUILD, and STATUS ("on (...)" or
# "off: <why>"). What the rest of the product reads from here rather than from a list of its own:
# FAMILY (default TITLE) names the report's "best <FAMILY> variant" row, whose members are every
# model declaring that family; REPORT_ORDER (an integer, smaller first) places the model in the
# report's tables and legends; NATIVE_SPACES are the execution spaces of a portable model (Kokkos)
# that this model is the hand-written code of (the report's Kokkos ÷ hand-written ratio);
# PACKAGES are the Debian packages scripts/setup.sh installs for it (literal names: setup.sh reads
# them with awk before CMake is installed). LIBRARY (default nbody_<NAME>) is
# the library its CMakeLists.txt builds; REGISTER_FUNCTION (default register_<NAME>_variants) is
# the function, in namespace nbody and taking a Registry&, that registers its variants.
# PORTABLE_FUNCTION (optional) names a CMake function(target) that nbody_make_portable() calls for
# every binary when the model is in the build: what the model's runtime needs beside a binary
# carried to another machine (omp_target: the offload plugins).
function(nbody_register_model)
  cmake_parse_arguments(PARSE_ARGV 0 arg ""
    "NAME;TITLE;IN_BUILD;STATUS;LIBRARY;REGISTER_FUNCTION;PORTABLE_FUNCTION;FAMILY;REPORT_ORDER"
    "PACKAGES;NATIVE_SPACES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nbody_register_model(${arg_NAME}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME OR NOT arg_NAME MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "nbody_register_model: NAME '${arg_NAME}' is not a model name (lower case, digits, _)")
  endif()
  if(NOT DEFINED arg_STATUS OR arg_STATUS STREQUAL "")
    message(FATAL_ERROR "nbody_register_model(${arg_NAME}): STATUS says whether it is on and why it is off")
  endif()
  if(NOT arg_TITLE)
    set(arg_TITLE ${arg_NAME})
  endif()
  if(NOT arg_FAMILY)
    set(arg_FAMILY "${arg_TITLE}")
  endif()
  if(NOT arg_REPORT_ORDER MATCHES "^[0-9]+$")
    message(FATAL_ERROR "nbody_register_model(${arg_NAME}): REPORT_ORDER '${arg_REPORT_ORDER}' is not a non-negative integer")
  endif()
  foreach(package IN LISTS arg_PACKAGES)
    if(NOT package MATCHES "^[a-z0-9][a-z0-9.+-]*$")
      message(FATAL_ERROR "nbody_register_model(${arg_NAME}): PACKAGES '${package}' is not a Debian package name")
    endif()
  endforeach()
  if(NOT arg_LIBRARY)
    set(arg_LIBRARY nbody_${arg_NAME})
  endif()
  if(NOT arg_REGISTER_FUNCTION)
    set(arg_REGISTER_FUNCTION register_${arg_NAME}_variants)
  endif()
  if(arg_IN_BUILD)
    set(arg_IN_BUILD ON)
  else()
    set(arg_IN_BUILD OFF)
  endif()
  get_property(models GLOBAL PROPERTY NBODY_MODELS)
  if(arg_NAME IN_LIST models)
    message(FATAL_ERROR "nbody_register_model: model ${arg_NAME} is registered twice")
  endif()
  set_property(GLOBAL APPEND PROPERTY NBODY_MODELS ${arg_NAME})
  foreach(key TITLE IN_BUILD STATUS LIBRARY REGISTER_FUNCTION PORTABLE_FUNCTION FAMILY REPORT_ORDER NATIVE_SPACES PACKAGES)
    set_property(GLOBAL PROPERTY NBODY_MODEL_${arg_NAME}_${key} "${arg_${key}}")
  endforeach()
endfunction()

# A recorded fact of a model (KEY: an argument name of nbody_register_model()) into out_var.
function(nbody_model_property model key out_var)
  get_property(value GLOBAL PROPERTY NBODY_MODEL_${model}_${key})
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

# NBODY_MODELS, when set, names the models to decide and build (serial, the reference, always is):
# the others are off without running their model.cmake, so that a build of a few models neither
# probes nor builds what the rest need (Kokkos); they declare nothing but their name and status.
set(NBODY_MODELS "" CACHE STRING "Semicolon-separated models to build (serial always is); empty: every model of nbody_add_models()")

# The whole list of the suite's models, in order: the one place that names them. A macro, so that
# each model.cmake runs in the caller's (top-level) scope.
macro(nbody_add_models)
  set(nbody_listed_models ${ARGN})  # a macro's ARGN is no variable: IN_LIST needs one
  foreach(nbody_model IN LISTS NBODY_MODELS)
    if(NOT nbody_model IN_LIST nbody_listed_models)
      message(FATAL_ERROR "NBODY_MODELS names ${nbody_model}, which is not a model of nbody_add_models(${ARGN})")
    endif()
  endforeach()
  foreach(nbody_model IN ITEMS ${ARGN})
    set(nbody_model_file "${PROJECT_SOURCE_DIR}/models/${nbody_model}/model.cmake")
    if(NOT EXISTS "${nbody_model_file}")
      message(FATAL_ERROR "nbody_add_models: ${nbody_model} has no models/${nbody_model}/model.cmake")
    endif()
    if(NBODY_MODELS AND NOT nbody_model IN_LIST NBODY_MODELS AND NOT nbody_model STREQUAL "serial")
      nbody_register_model(NAME ${nbody_model} IN_BUILD OFF STATUS "off: not in NBODY_MODELS (${NBODY_MODELS})"
                           REPORT_ORDER 0)
    else()
      include("${nbody_model_file}")
    endif()
    get_property(nbody_registered GLOBAL PROPERTY NBODY_MODELS)
    if(NOT nbody_model IN_LIST nbody_registered)
      message(FATAL_ERROR "models/${nbody_model}/model.cmake did not call nbody_register_model(NAME ${nbody_model} ...)")
    endif()
  endforeach()
  foreach(nbody_model IN ITEMS ${ARGN})
    nbody_model_property(${nbody_model} IN_BUILD nbody_in_build)
    if(nbody_in_build)
      add_subdirectory(models/${nbody_model})
    endif()
  endforeach()
  nbody_add_variants_library()
  nbody_print_model_summary()
endmacro()

# nbody_variants: core/src/builtin_registry.cpp and the generated list of models
# (generated/suite_models.cpp), linking every model library of this build.
function(nbody_add_variants_library)
  get_property(models GLOBAL PROPERTY NBODY_MODELS)
  set(declarations "")
  set(entries "")
  set(libraries "")
  foreach(model IN LISTS models)
    nbody_model_property(${model} IN_BUILD in_build)
    nbody_model_property(${model} LIBRARY library)
    nbody_model_property(${model} REGISTER_FUNCTION function)
    nbody_model_property(${model} REPORT_ORDER order)
    foreach(key TITLE FAMILY STATUS)
      nbody_model_property(${model} ${key} text)
      nbody_cxx_string_literal("${text}" literal_${key})
    endforeach()
    nbody_model_property(${model} NATIVE_SPACES spaces)
    set(space_literals "")
    foreach(space IN LISTS spaces)
      nbody_cxx_string_literal("${space}" literal)
      list(APPEND space_literals "${literal}")
    endforeach()
    list(JOIN space_literals ", " space_literals)
    if(in_build)
      if(NOT TARGET ${library})
        message(FATAL_ERROR "models/${model}/CMakeLists.txt did not build ${library}, the library nbody_register_model() names")
      endif()
      string(APPEND declarations "void ${function}(Registry& registry);\n")
      set(register "&${function}")
      set(in_build true)
      list(APPEND libraries ${library})
    else()
      set(register "nullptr")
      set(in_build false)
    endif()
    string(APPEND entries "        {.name = \"${model}\", .in_build = ${in_build}, .status = ${literal_STATUS}, "
                          ".register_variants = ${register}, .title = ${literal_TITLE}, .family = ${literal_FAMILY}, "
                          ".report_order = ${order}, .native_spaces = {${space_literals}}},\n")
  endforeach()
  set(generated "${PROJECT_BINARY_DIR}/generated/suite_models.cpp")
  file(CONFIGURE OUTPUT "${generated}" CONTENT [[
// Generated by cmake/NbodyModels.cmake from the models of nbody_add_models(): do not edit.
#include "nbody/model_registration.hpp"

namespace nbody {

@declarations@
const std::vector<SuiteModel>& suite_models() {
    static const std::vector<SuiteModel> models = {
@entries@    };
    return models;
}

}  // namespace nbody
]] @ONLY)
  add_library(nbody_variants STATIC ${PROJECT_SOURCE_DIR}/core/src/builtin_registry.cpp "${generated}")
  target_link_libraries(nbody_variants PUBLIC nbody_core ${libraries})
  target_compile_options(nbody_variants PRIVATE -Wall -Wextra)
endfunction()

# text as a C++ string literal ("..." with \ and " escaped) into out_var.
function(nbody_cxx_string_literal text out_var)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${out_var} "\"${text}\"" PARENT_SCOPE)
endfunction()

# "nbody programming models:" and one line per model: on, or off and why.
function(nbody_print_model_summary)
  get_property(models GLOBAL PROPERTY NBODY_MODELS)
  set(width 0)
  foreach(model IN LISTS models)
    nbody_model_property(${model} TITLE title)
    string(LENGTH "${title}" length)
    if(length GREATER width)
      set(width ${length})
    endif()
  endforeach()
  message(STATUS "nbody programming models:")
  foreach(model IN LISTS models)
    nbody_model_property(${model} TITLE title)
    nbody_model_property(${model} STATUS status)
    string(LENGTH "${title}" length)
    math(EXPR pad "${width} - ${length} + 2")
    string(REPEAT " " ${pad} spaces)
    message(STATUS "  ${title}${spaces}${status}")
  endforeach()
endfunction()

# Makes a target's binary runnable on another machine: static C++ runtime, remaining shared
# libraries beside the binary, found through an $ORIGIN rpath, and what each model of the build
# adds (its PORTABLE_FUNCTION).
function(nbody_make_portable target)
  if(NOT NBODY_PORTABLE_BINARY)
    return()
  endif()
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  set_target_properties(${target} PROPERTIES BUILD_RPATH "\$ORIGIN" INSTALL_RPATH "\$ORIGIN")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:${target}> -P ${PROJECT_SOURCE_DIR}/cmake/BundleSharedLibs.cmake
    VERBATIM)
  get_property(models GLOBAL PROPERTY NBODY_MODELS)
  foreach(model IN LISTS models)
    nbody_model_property(${model} IN_BUILD in_build)
    nbody_model_property(${model} PORTABLE_FUNCTION function)
    if(in_build AND function)
      cmake_language(CALL ${function} ${target})
    endif()
  endforeach()
endfunction()

# Tests are GoogleTest executables, one per area; each links the harness and its subcommands (every
# variant). A model's own tests are built in models/<name>/tests/ with the same function.
function(nbody_add_gtest name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE nbody_commands GTest::gtest_main)
  # The helpers every test may use: tests/test_support.hpp, tests/mutant_variants.hpp.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # A test's own code is glue around the variants, which keep their build's level: -O1 compiles in
  # half the time of -O3, and the asan preset's -O0 in half the time of -O1 (docs/testing.md, section 4).
  target_compile_options(${name} PRIVATE -Wall -Wextra $<$<CONFIG:Release,RelWithDebInfo>:${NBODY_TEST_CODE_OPTIMIZATION}>)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120 PROPERTIES LABELS ${name})
  # With NBODY_PORTABLE_BINARY a test binary can be carried to the GPU machine like nbody-bench.
  nbody_make_portable(${name})
endfunction()

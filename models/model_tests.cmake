# nbody_add_model_gtest(<name> <source>...): a model folder's GoogleTest executable, built like
# tests/CMakeLists.txt's nbody_add_gtest (it links nbody_harness: every variant) with the model
# folder on its include path. The models are configured before tests/ defines nbody_add_gtest and
# testing is enabled, so the calls are deferred to the end of the top-level directory, which then
# needs GTest's imported targets of its own (those of tests/ are local to that folder).
function(nbody_add_model_gtest name)
  set(sources "")
  foreach(source IN LISTS ARGN)
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  get_property(gtest_deferred GLOBAL PROPERTY NBODY_MODEL_GTEST_DEFERRED)
  if(NOT gtest_deferred)
    set_property(GLOBAL PROPERTY NBODY_MODEL_GTEST_DEFERRED ON)
    cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL find_package GTest REQUIRED)
  endif()
  cmake_language(EVAL CODE "
    cmake_language(DEFER DIRECTORY [[${PROJECT_SOURCE_DIR}]] CALL nbody_add_gtest [[${name}]] ${sources})
    cmake_language(DEFER DIRECTORY [[${PROJECT_SOURCE_DIR}]] CALL target_include_directories [[${name}]] PRIVATE [[${CMAKE_CURRENT_SOURCE_DIR}]])")
endfunction()

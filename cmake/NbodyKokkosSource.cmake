# The pinned Kokkos release and how its source is made ready to build (models/kokkos/find_kokkos.cmake):
# from NBODY_KOKKOS_SOURCE (a tarball or an unpacked folder) or the official URL, checked against
# the SHA-256, unpacked and patched. Apart so that tests/kokkos_source_errors.cmake can run the
# checks in script mode. Needs NBODY_KOKKOS_SOURCE and NBODY_KOKKOS_BUILD_ROOT set.
set(NBODY_KOKKOS_VERSION 4.6.01)
set(NBODY_KOKKOS_URL "https://github.com/kokkos/kokkos/releases/download/${NBODY_KOKKOS_VERSION}/kokkos-${NBODY_KOKKOS_VERSION}.tar.gz")
set(NBODY_KOKKOS_SHA256 b9d70e4653b87a06dbb48d63291bf248058c7c7db4bd91979676ad5609bb1a3a)
# CUDA 13 changed three runtime calls that 4.6.01 makes (fixed upstream in 4.7); the patch keeps
# the CUDA 12 calls behind CUDART_VERSION, so it is applied whatever the toolkit.
set(NBODY_KOKKOS_PATCH "${CMAKE_CURRENT_LIST_DIR}/kokkos/kokkos-${NBODY_KOKKOS_VERSION}-cuda13.patch")


# Prints the reason the build cannot be made and records it for the status line.
macro(nbody_kokkos_cannot_build reason)
  message(WARNING "Kokkos ${NBODY_KOKKOS_VERSION} is not built: ${reason}")
  list(APPEND kokkos_passed_over "not built: ${reason}")
endmacro()

# Unpacks (or copies) the source into dir/src and patches it; sets kokkos_source_dir, or leaves it
# empty after nbody_kokkos_cannot_build. Bad source options are configure errors.
function(nbody_kokkos_prepare_source dir)
  set(kokkos_source_dir "" PARENT_SCOPE)
  set(tarball "")
  if(NBODY_KOKKOS_SOURCE)
    if(NOT EXISTS "${NBODY_KOKKOS_SOURCE}")
      message(FATAL_ERROR "NBODY_KOKKOS_SOURCE=${NBODY_KOKKOS_SOURCE}: no such file or folder "
                          "(give the Kokkos ${NBODY_KOKKOS_VERSION} release tarball or an unpacked source folder)")
    endif()
    if(NOT IS_DIRECTORY "${NBODY_KOKKOS_SOURCE}")
      set(tarball "${NBODY_KOKKOS_SOURCE}")
    endif()
  else()
    set(tarball "${NBODY_KOKKOS_BUILD_ROOT}/download/kokkos-${NBODY_KOKKOS_VERSION}.tar.gz")
    if(NOT EXISTS "${tarball}")
      message(STATUS "Kokkos: downloading ${NBODY_KOKKOS_URL}")
      file(DOWNLOAD "${NBODY_KOKKOS_URL}" "${tarball}.part" STATUS status TIMEOUT 300 INACTIVITY_TIMEOUT 30)
      list(GET status 0 code)
      if(NOT code EQUAL 0)
        file(REMOVE "${tarball}.part")
        list(GET status 1 why)
        nbody_kokkos_cannot_build("downloading ${NBODY_KOKKOS_URL} failed (${why}); without internet, "
          "give the release tarball or an unpacked source folder with -DNBODY_KOKKOS_SOURCE=<path> "
          "(or the environment variable of that name with the presets)")
        set(kokkos_passed_over "${kokkos_passed_over}" PARENT_SCOPE)
        return()
      endif()
      file(RENAME "${tarball}.part" "${tarball}")
    endif()
  endif()

  if(tarball)
    file(SHA256 "${tarball}" actual)
    if(NOT actual STREQUAL NBODY_KOKKOS_SHA256)
      message(FATAL_ERROR "${tarball}: SHA-256 ${actual} does not match Kokkos ${NBODY_KOKKOS_VERSION}'s "
                          "${NBODY_KOKKOS_SHA256}; give the release tarball of ${NBODY_KOKKOS_URL}")
    endif()
    file(REMOVE_RECURSE "${dir}/src" "${dir}/unpack")
    file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${dir}/unpack")
    file(GLOB top LIST_DIRECTORIES true "${dir}/unpack/*")
    list(LENGTH top top_count)
    if(NOT top_count EQUAL 1 OR NOT EXISTS "${top}/CMakeLists.txt")
      message(FATAL_ERROR "${tarball}: not a Kokkos source tarball (expected one top folder holding CMakeLists.txt)")
    endif()
    file(RENAME "${top}" "${dir}/src")
    file(REMOVE_RECURSE "${dir}/unpack")
  else()
    file(STRINGS "${NBODY_KOKKOS_SOURCE}/CMakeLists.txt" version_lines REGEX "set\\(Kokkos_VERSION_(MAJOR|MINOR|PATCH) ")
    set(found_version "")
    foreach(line IN LISTS version_lines)
      if(line MATCHES "Kokkos_VERSION_[A-Z]+ ([0-9]+)")
        list(APPEND found_version ${CMAKE_MATCH_1})
      endif()
    endforeach()
    list(JOIN found_version "." found_version)
    string(REPLACE "." ";" pinned_parts "${NBODY_KOKKOS_VERSION}")
    set(pinned_version "")
    foreach(part IN LISTS pinned_parts)
      math(EXPR part "${part}")  # 01 -> 1, as Kokkos' CMakeLists writes it
      list(APPEND pinned_version ${part})
    endforeach()
    list(JOIN pinned_version "." pinned_version)
    if(NOT found_version STREQUAL pinned_version)
      message(FATAL_ERROR "NBODY_KOKKOS_SOURCE=${NBODY_KOKKOS_SOURCE} holds Kokkos '${found_version}', not the pinned "
                          "${NBODY_KOKKOS_VERSION}; point Kokkos_ROOT at an install of another version instead")
    endif()
    file(REMOVE_RECURSE "${dir}/src")
    file(COPY "${NBODY_KOKKOS_SOURCE}/" DESTINATION "${dir}/src" PATTERN ".git" EXCLUDE)
  endif()

  find_program(NBODY_PATCH_PROGRAM patch)
  if(NOT NBODY_PATCH_PROGRAM)
    message(FATAL_ERROR "Building Kokkos needs the patch program (Debian: apt-get install patch; scripts/setup.sh installs it)")
  endif()
  # A folder that already carries the patch is taken as it is.
  execute_process(COMMAND ${NBODY_PATCH_PROGRAM} -p1 -R --dry-run -f --silent -i "${NBODY_KOKKOS_PATCH}"
                  WORKING_DIRECTORY "${dir}/src" RESULT_VARIABLE already_patched OUTPUT_QUIET ERROR_QUIET)
  if(NOT already_patched EQUAL 0)
    execute_process(COMMAND ${NBODY_PATCH_PROGRAM} -p1 --forward --batch -i "${NBODY_KOKKOS_PATCH}"
                    WORKING_DIRECTORY "${dir}/src" RESULT_VARIABLE patch_result OUTPUT_VARIABLE patch_output ERROR_VARIABLE patch_output)
    if(NOT patch_result EQUAL 0)
      message(FATAL_ERROR "${NBODY_KOKKOS_PATCH} does not apply to ${dir}/src:\n${patch_output}")
    endif()
  endif()
  set(kokkos_source_dir "${dir}/src" PARENT_SCOPE)
endfunction()


# Copies the shared libraries a binary needs that are not part of the base system (glibc, the
# CUDA driver) next to it, under their SONAME. Run with -DBINARY=<path>.
get_filename_component(dir "${BINARY}" DIRECTORY)
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES "${BINARY}"
  RESOLVED_DEPENDENCIES_VAR resolved
  UNRESOLVED_DEPENDENCIES_VAR unresolved
  # A library found both beside the binary (a copy from an earlier build, through $ORIGIN) and in
  # the system: the system's is copied again below.
  CONFLICTING_DEPENDENCIES_PREFIX conflicting
  PRE_EXCLUDE_REGEXES "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^librt\\.so" "^libpthread\\.so" "^ld-linux" "^libcuda\\.so" "^linux-vdso"
  # The GPU machine's own: cuBLAS and NCCL are hundreds of MB (over the carry limit), and Open MPI
  # loads its plugins from where it is installed, so its library must be the machine's.
  "^libcublas" "^libnccl\\.so" "^libmpi\\.so" "^libopen-(rte|pal)\\.so"
  POST_EXCLUDE_REGEXES "^/lib64/ld-linux")
foreach(name IN LISTS conflicting_FILENAMES)
  foreach(lib IN LISTS conflicting_${name})
    if(NOT lib MATCHES "^${dir}/")
      list(APPEND resolved "${lib}")
    endif()
  endforeach()
endforeach()
foreach(lib IN LISTS resolved)
  get_filename_component(name "${lib}" NAME)
  if(name MATCHES "^(libc|libm|libdl|librt|libpthread|ld-linux)[.-]")
    continue()
  endif()
  file(COPY_FILE "${lib}" "${dir}/${name}" ONLY_IF_DIFFERENT)
endforeach()

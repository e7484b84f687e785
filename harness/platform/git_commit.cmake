# Writes OUTPUT (a C++ file defining nbody::kGitCommit) from `git rev-parse HEAD` of SOURCE_DIR,
# "-dirty" appended when tracked files differ from HEAD; touches OUTPUT only when it changes.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
                OUTPUT_VARIABLE commit RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT status EQUAL 0)
  set(commit unknown)
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND commit "-dirty")
  endif()
endif()
set(content "// Generated at build time by harness/platform/git_commit.cmake.\nnamespace nbody {\nextern const char* const kGitCommit;\nconst char* const kGitCommit = \"${commit}\";\n}  // namespace nbody\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()

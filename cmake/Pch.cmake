# Precompiled headers (cmake/pch/*.h): Qt's and Eigen's headers were most of each file's compile time (the
# front end of a GUI suite: 10 s of parsing before any code). attnlens_pch(target kind) gives `target` the
# header of that kind; attnlens_pch(target kind REUSE owner) takes `owner`'s already built one (targets with
# the same flags: the test programs of a label). ATTNLENS_PCH=OFF turns them off (e.g. to check that every
# file includes what it uses).
option(ATTNLENS_PCH "Compile with precompiled headers" ON)
function(attnlens_pch target kind)
  if(NOT ATTNLENS_PCH)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "REUSE" "")
  if(arg_REUSE)
    target_precompile_headers(${target} REUSE_FROM ${arg_REUSE})
  else()
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch/${kind}.h)
  endif()
  # GCC 12 loses "system header" on libstdc++'s lines that come from a precompiled header, and its known -O3
  # false positives inside std::string (memcpy bounds, GCC PR 105651) then reach the log: 30 of them, none
  # without the header. Our own out-of-bounds accesses are the sanitizer suites' to find.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-stringop-overread -Wno-array-bounds)
  endif()
endfunction()

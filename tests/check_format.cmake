# Fails when a C++ file of the project differs from the committed .clang-format (run by ctest as clang_format).
# CLANG_FORMAT: the program; SOURCE_DIR: the project root. The format is clang-format 14's (Debian 12).
file(GLOB_RECURSE _files RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/core/*.h ${SOURCE_DIR}/core/*.cpp ${SOURCE_DIR}/ui/*.h ${SOURCE_DIR}/ui/*.cpp
     ${SOURCE_DIR}/app/*.h ${SOURCE_DIR}/app/*.cpp ${SOURCE_DIR}/tests/*.h ${SOURCE_DIR}/tests/*.cpp
     ${SOURCE_DIR}/tools/*.h ${SOURCE_DIR}/tools/*.cpp)
list(FILTER _files EXCLUDE REGEX "^tests/fuzz/corpus/")
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${_files} WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE _status ERROR_VARIABLE _report)
if(NOT _status EQUAL 0)
  string(REGEX MATCHALL "[^\n]*: (warning|error): code should be clang-formatted" _hits "${_report}")
  set(_bad "")
  foreach(_hit IN LISTS _hits)
    string(REGEX REPLACE ":[0-9]+:[0-9]+: .*" "" _file "${_hit}")
    list(APPEND _bad ${_file})
  endforeach()
  list(REMOVE_DUPLICATES _bad)
  list(JOIN _bad "\n  " _list)
  message(FATAL_ERROR "These files differ from .clang-format (fix: clang-format -i FILE):\n  ${_list}")
endif()
list(LENGTH _files _n)
message(STATUS "${_n} files match .clang-format")

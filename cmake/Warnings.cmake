# attnlens_set_warnings(target): the project's warning set, applied per target.
function(attnlens_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
                                           -Wno-deprecated-enum-enum-conversion
                                           -Wno-restrict) # GCC 12 false positive on std::string at -O3
endfunction()

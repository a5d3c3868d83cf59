# Shared by check_install.cmake and check_deb.cmake: the attnlens-cli installed under PREFIX (a prefix or a
# package unpacked into a root) uses the resources installed beside it and translates with the built-in model.
#   check_cli_prefix(PREFIX WHAT)   WHAT names the copy in the messages ("installed", "packaged")
function(check_cli_prefix prefix what)
  set(cli ${prefix}/bin/attnlens-cli)
  execute_process(COMMAND ${cli} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "resources: ${prefix}/bin/\\.\\./share/attnlens|resources: ${prefix}/share/attnlens")
    message(FATAL_ERROR "the ${what} attnlens-cli does not use the ${what} resources:\n${out}${err}")
  endif()
  execute_process(COMMAND ${cli} translate "Wie geht es dir?" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "How are you\\?")
    message(FATAL_ERROR "the ${what} attnlens-cli did not translate (exit ${rc}):\n${out}${err}")
  endif()
endfunction()

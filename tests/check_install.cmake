# Installs the build into a fresh prefix (cmake --install --prefix), then runs the installed attnlens-cli from
# there: it must find the built-in models under PREFIX/share/attnlens (not in the source tree) and translate;
# the desktop entry and the icon must sit in the freedesktop locations. Run by CTest (test "install").
#   cmake -DBUILD_DIR=… -DPREFIX=… -DWITH_UI=ON|OFF -P check_install.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${err}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/check_cli_prefix.cmake)
check_cli_prefix(${PREFIX} installed)
set(cli ${PREFIX}/bin/attnlens-cli)
execute_process(COMMAND ${cli} vision ${PREFIX}/share/attnlens/samples/fashion-mnist/ankle_boot_1.png
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "Ankle boot")
  message(FATAL_ERROR "the installed attnlens-cli did not classify the installed sample (exit ${rc}):\n${out}${err}")
endif()

if(WITH_UI)
  foreach(f bin/attnlens share/applications/attnlens.desktop share/icons/hicolor/scalable/apps/attnlens.svg)
    if(NOT EXISTS ${PREFIX}/${f})
      message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
    endif()
  endforeach()
  file(READ ${PREFIX}/share/applications/attnlens.desktop desktop)
  foreach(key "Type=Application" "Exec=attnlens" "Icon=attnlens" "Name=Attention Lens")
    if(NOT desktop MATCHES "${key}")
      message(FATAL_ERROR "attnlens.desktop lacks ${key}")
    endif()
  endforeach()
endif()
file(REMOVE_RECURSE ${PREFIX})
message(STATUS "installed into ${PREFIX}: attnlens-cli translated and classified from there")

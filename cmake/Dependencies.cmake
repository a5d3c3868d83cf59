# Third-party dependencies, all from Debian 12 packages (see README).
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED) # IDX .gz files (Fashion-MNIST) in core/io/idx_file
find_package(GIF 5 REQUIRED) # animated GIF export (core/export/gif_writer), Debian's giflib
# Unicode for the BERT / GPT-2 tokenizers (core/text/unicode_text): categories, case mapping, NFC / NFD.
find_package(ICU 60 REQUIRED COMPONENTS uc)
# The split patterns of tokenizer.json files (core/text/hf_tokenizer: \p{L}, \p{N}, look-ahead), Debian's
# libpcre2-dev.
find_path(PCRE2_INCLUDE_DIR pcre2.h REQUIRED)
find_library(PCRE2_LIBRARY NAMES pcre2-8 REQUIRED)
add_library(attnlens::pcre2 UNKNOWN IMPORTED)
set_target_properties(attnlens::pcre2 PROPERTIES IMPORTED_LOCATION "${PCRE2_LIBRARY}"
                                                INTERFACE_INCLUDE_DIRECTORIES "${PCRE2_INCLUDE_DIR}")
# The zip container of PyTorch checkpoints (core/io/torch_checkpoint), Debian's libminizip-dev (zlib's minizip).
find_path(MINIZIP_INCLUDE_DIR minizip/unzip.h REQUIRED)
find_library(MINIZIP_LIBRARY NAMES minizip REQUIRED)
add_library(attnlens::minizip UNKNOWN IMPORTED)
set_target_properties(attnlens::minizip PROPERTIES IMPORTED_LOCATION "${MINIZIP_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${MINIZIP_INCLUDE_DIR}"
                                                  INTERFACE_LINK_LIBRARIES ZLIB::ZLIB)

# Debian's small OpenCV packages (core, imgproc, imgcodecs) ship no CMake config; libopencv-dev does
# but pulls Qt5 in. Find the three libraries by hand.
find_path(OPENCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
foreach(_cv core imgproc imgcodecs)
  find_library(OPENCV_${_cv}_LIBRARY NAMES opencv_${_cv} REQUIRED)
  add_library(attnlens_opencv_${_cv} UNKNOWN IMPORTED)
  set_target_properties(attnlens_opencv_${_cv} PROPERTIES IMPORTED_LOCATION "${OPENCV_${_cv}_LIBRARY}"
                                                          INTERFACE_INCLUDE_DIRECTORIES "${OPENCV_INCLUDE_DIR}")
endforeach()
add_library(attnlens::opencv INTERFACE IMPORTED)
target_link_libraries(attnlens::opencv INTERFACE attnlens_opencv_imgcodecs attnlens_opencv_imgproc attnlens_opencv_core)

find_path(SENTENCEPIECE_INCLUDE_DIR sentencepiece_processor.h REQUIRED)
find_library(SENTENCEPIECE_LIBRARY NAMES sentencepiece REQUIRED)
add_library(attnlens::sentencepiece UNKNOWN IMPORTED)
set_target_properties(attnlens::sentencepiece PROPERTIES IMPORTED_LOCATION "${SENTENCEPIECE_LIBRARY}"
                                                        INTERFACE_INCLUDE_DIRECTORIES "${SENTENCEPIECE_INCLUDE_DIR}")

# oneDNN (libdnnl-dev) for linear layers, found by hand: its CMake config also wants OpenCL.
if(ATTNLENS_WITH_ONEDNN)
  find_path(DNNL_INCLUDE_DIR dnnl.hpp REQUIRED)
  find_library(DNNL_LIBRARY NAMES dnnl REQUIRED)
  add_library(attnlens::dnnl UNKNOWN IMPORTED)
  set_target_properties(attnlens::dnnl PROPERTIES IMPORTED_LOCATION "${DNNL_LIBRARY}"
                                                 INTERFACE_INCLUDE_DIRECTORIES "${DNNL_INCLUDE_DIR}")
endif()

# Qt Gui + Svg always: the drawing functions (ui/render) serve the CLI's labelled exports as well.
if(ATTNLENS_FUZZ)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Svg Concurrent) # ui, for fuzz_session
elseif(ATTNLENS_BUILD_UI OR ATTNLENS_BUILD_TESTS)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Svg Test Concurrent)
else()
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Svg)
endif()

# llama.cpp's Jinja engine (MIT) for the chat templates of tokenizer_config.json (core/text/chat_template):
# no Debian package has a C++ Jinja, so tools/setup/fetch-jinja.sh fetches its sources (pinned) into
# third_party/llama-jinja, compiled here as they are, without our warnings.
set(ATTNLENS_JINJA_DIR ${PROJECT_SOURCE_DIR}/third_party/llama-jinja)
if(NOT EXISTS ${ATTNLENS_JINJA_DIR}/jinja/runtime.h)
  message(FATAL_ERROR "llama.cpp's Jinja engine is missing: run tools/setup/fetch-jinja.sh "
                      "(tools/setup/run-app.sh and run-tests.sh do)")
endif()
file(GLOB _jinja_sources ${ATTNLENS_JINJA_DIR}/jinja/*.cpp)
add_library(attnlens_jinja STATIC ${_jinja_sources} ${ATTNLENS_JINJA_DIR}/json.cpp ${ATTNLENS_JINJA_DIR}/unicode.cpp)
add_library(attnlens::jinja ALIAS attnlens_jinja)
set_target_properties(attnlens_jinja PROPERTIES UNITY_BUILD OFF) # third-party sources specialise templates per file
target_include_directories(attnlens_jinja SYSTEM PUBLIC ${ATTNLENS_JINJA_DIR})
# Its assert() checks throw instead of being compiled out (cmake/jinja-shim/cassert says why).
target_include_directories(attnlens_jinja BEFORE PRIVATE ${PROJECT_SOURCE_DIR}/cmake/jinja-shim)
target_link_libraries(attnlens_jinja PRIVATE nlohmann_json::nlohmann_json)
target_compile_options(attnlens_jinja PRIVATE -w)
# Template arithmetic is the engine's own: `x % 0` casts fmod's NaN to int64, `9223372036854775807 + 1`
# overflows (tests/fuzz/fuzz_chat_template found both). Signed overflow wraps here (-fwrapv) and, with clang,
# out-of-range float-to-int casts saturate (-fno-strict-float-cast-overflow; GCC's x86 code gives INT64_MIN): a
# garbage number in a template's output, never undefined behaviour the sanitizers should stop on.
target_compile_options(attnlens_jinja PRIVATE -fwrapv $<$<CXX_COMPILER_ID:Clang>:-fno-strict-float-cast-overflow>)
if(ATTNLENS_SANITIZE OR ATTNLENS_FUZZ)
  target_compile_options(attnlens_jinja PRIVATE -fno-sanitize=signed-integer-overflow,float-cast-overflow)
endif()
set_target_properties(attnlens_jinja PROPERTIES POSITION_INDEPENDENT_CODE ON)

#!/usr/bin/env bash
# Builds and runs every test: the core, CLI and GUI suites (labels fast and ui) under ASan + UBSan with leak
# detection, the fuzz targets for 20 s each (clang, libFuzzer), then the whole suite (release build,
# offscreen Qt). Installs missing Debian packages. The last line printed is ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/setup/common.sh
attnlens_install_packages "${ATTNLENS_PACKAGES[@]}" "${ATTNLENS_TEST_PACKAGES[@]}"
tools/setup/fetch-jinja.sh
export QT_QPA_PLATFORM=offscreen QTEST_DISABLE_STACK_DUMP=1
jobs=$(nproc)
stage() { echo "== [$((SECONDS / 60)) min $((SECONDS % 60)) s] $* =="; } # elapsed time per stage, for the CI budget

# CI's clean clone once ran out of disk mid-build: say how much there was, and (CI only) drop each stage's build
# tree once its suites have passed, so that the three trees never sit side by side.
df -h . | tail -n 1 | awk '{print "disk: " $4 " free of " $2}'
drop_tree() { if [[ "${CI:-}" == "true" ]]; then rm -rf "$1"; fi; }

stage "ASan + UBSan build: core, CLI and GUI suites (labels fast, ui)"
cmake --preset asan
cmake --build --preset asan -j "$jobs"
stage "ASan + UBSan suites"
ctest --preset asan -j "$jobs"
drop_tree build/asan

stage "Fuzz targets: every parser of a user's file, 20 s each (tools/fuzz/run.sh)"
tools/fuzz/run.sh 20
drop_tree build/fuzz

stage "Release build: every suite"
cmake --preset release
cmake --build --preset release -j "$jobs"
stage "Release suites"
ctest --preset release -j "$jobs"

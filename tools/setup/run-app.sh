#!/usr/bin/env bash
# Builds Attention Lens (release) and opens it on the built-in models. Installs missing Debian packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/setup/common.sh
attnlens_install_packages "${ATTNLENS_PACKAGES[@]}"
tools/setup/fetch-jinja.sh
cmake --preset release -DATTNLENS_BUILD_TESTS=OFF
cmake --build --preset release --target attnlens attnlens-cli
exec ./build/release/app/attnlens "$@"

# Shared by run-app.sh and run-tests.sh: installs the Debian 12 packages the build needs, when missing.
# Uses apt-get as root, or through sudo otherwise.

ATTNLENS_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-svg-dev libeigen3-dev nlohmann-json3-dev libsentencepiece-dev zlib1g-dev libminizip-dev libicu-dev libgif-dev libpcre2-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev libdnnl-dev
  fonts-dejavu-core
  lld # links 3-5 times faster than GNU ld (CMake falls back to ld without it)
  curl ca-certificates git # tools/setup/fetch-jinja.sh: llama.cpp's Jinja engine (chat templates)
)
ATTNLENS_TEST_PACKAGES=(xvfb xauth clang libclang-rt-14-dev clang-format) # clang: the libFuzzer targets (tests/fuzz); clang-format: the clang_format test

attnlens_install_packages() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; return 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

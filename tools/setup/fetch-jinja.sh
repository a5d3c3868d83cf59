#!/usr/bin/env bash
# Fetches llama.cpp's Jinja engine (common/jinja, MIT; the engine llama.cpp renders every model's chat_template
# with) into third_party/llama-jinja/, where the build compiles it (cmake/Dependencies.cmake: attnlens::jinja,
# for core/text/chat_template). No Debian package has a C++ Jinja; npm is reachable, and the npm package
# node-llama-cpp ships llama.cpp's source as a git bundle. The tarball (pinned, checked by SHA-256) is kept in
# ~/.cache/attnlens so that fresh clones do not download it again. Needs curl, git, tar.
#   tools/setup/fetch-jinja.sh        (idempotent: does nothing when the pinned version is in place)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=3.22.1 # node-llama-cpp; its llama.cpp snapshot is recorded in VERSION below
sha256=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
dest=$root/third_party/llama-jinja
stamp="node-llama-cpp $version"
if [[ -f $dest/VERSION ]] && [[ "$(head -1 "$dest/VERSION")" == "$stamp" ]]; then exit 0; fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/attnlens
tgz=$cache/node-llama-cpp-$version.tgz
mkdir -p "$cache"
if [[ ! -f $tgz ]] || ! echo "$sha256  $tgz" | sha256sum -c --quiet - 2>/dev/null; then
  echo "Fetching llama.cpp's Jinja engine (npm: node-llama-cpp $version, 36 MB)"
  curl -fsSL --retry 3 -o "$tgz.part" "https://registry.npmjs.org/node-llama-cpp/-/node-llama-cpp-$version.tgz"
  echo "$sha256  $tgz.part" | sha256sum -c --quiet - || { echo "error: $tgz.part: SHA-256 mismatch" >&2; exit 1; }
  mv "$tgz.part" "$tgz"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tgz" -C "$work" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
git clone -q "$work/package/llama/gitRelease.bundle" "$work/llama.cpp" 2>/dev/null
src=$work/llama.cpp
rm -rf "$dest"
mkdir -p "$dest/jinja"
cp "$src"/common/jinja/*.cpp "$src"/common/jinja/*.h "$dest/jinja/"
cp "$src"/common/json.h "$src"/common/json.cpp "$src"/common/unicode.h "$src"/common/unicode.cpp "$dest/"
cp "$src/LICENSE" "$dest/LICENSE"
# json.cpp asserts through ggml.h's GGML_ASSERT only: a stand-in instead of ggml.
cat > "$dest/ggml.h" <<'H'
#pragma once
// Stand-in for ggml.h (tools/setup/fetch-jinja.sh): json.cpp only uses GGML_ASSERT.
#include <cstdio>
#include <cstdlib>
#define GGML_ASSERT(x) do { if (!(x)) { std::fprintf(stderr, "GGML_ASSERT(%s) failed\n", #x); std::abort(); } } while (0)
H
{
  echo "$stamp"
  echo "llama.cpp commit $(git -C "$src" rev-parse HEAD) ($(tr -d '\n ' < "$work/package/llama/llama.cpp.info.json"))"
} > "$dest/VERSION"
echo "llama.cpp's Jinja engine in $dest"

#!/usr/bin/env bash
# Installs llama.cpp's prebuilt CPU binaries (the npm packages node-llama-cpp and @node-llama-cpp/linux-x64, both
# pinned by tools/bench/llamacpp/package.json; with their JavaScript dependencies 85 MB) for the peer of
# tools/bench/llamacpp_bench.py — a benchmark only: nothing builds or tests against it. Kept in
# ~/.cache/attnlens/llamacpp-peer; prints that folder. Needs node and npm (Debian 12: the nodejs and npm
# packages).
#   tools/setup/fetch-llamacpp-peer.sh        (idempotent: does nothing when the pinned versions are in place)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/tools/bench/llamacpp
dest=${XDG_CACHE_HOME:-$HOME/.cache}/attnlens/llamacpp-peer
mkdir -p "$dest"
cp "$src/peer.mjs" "$dest/" # the script may change without the packages changing
# .installed: a copy of package.json written only after npm succeeded (a failed install is redone)
if [[ -d $dest/node_modules ]] && cmp -s "$src/package.json" "$dest/.installed"; then
  echo "$dest"
  exit 0
fi
rm -rf "$dest/node_modules" "$dest/.installed"
cp "$src/package.json" "$dest/"
# --omit=optional: node-llama-cpp's CUDA / Vulkan / ARM builds (600 MB) are optional; the CPU build is named
# as a dependency. --ignore-scripts: the prebuilt binaries are used as they are (nothing is compiled).
(cd "$dest" && npm install --ignore-scripts --omit=optional --no-audit --no-fund --no-package-lock >&2)
cp "$src/package.json" "$dest/.installed"
echo "$dest"

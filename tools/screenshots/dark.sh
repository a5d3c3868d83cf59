#!/usr/bin/env bash
# README screenshots of every page under the dark palette (attnlens --dark; View → Theme → Dark in the app),
# taken from the real app under Xvfb:   tools/screenshots/dark.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
out=$root/docs/screenshots
mkdir -p "$out"
names=(playground translate vision diffusion)
for page in 0 1 2 3; do
  xvfb-run -a -s "-screen 0 1500x1000x24" "$build/app/attnlens" --dark --page $page --size 1400x900 \
    --screenshot "$out/dark-${names[$page]}.png"
done
ls -l "$out"/dark-*.png

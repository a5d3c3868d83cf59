#!/usr/bin/env bash
# Every page at a small laptop size (1024×700) and a large one (1600×1000), under the light and the dark
# palette, taken from the real app under Xvfb (issue 38: layouts and colours are checked in all four):
#   tools/screenshots/sizes.sh [BUILD_DIR]
# Writes docs/screenshots/sizes/<page>-<W>x<H>-<light|dark>.png (20 pictures); the README shows the small
# and the dark ones. The app starts on the built-in models and shows each page's first result.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
out=$root/docs/screenshots/sizes
mkdir -p "$out"
names=(playground translate vision diffusion text)
for size in 1024x700 1600x1000; do
  for theme in light dark; do
    flag=()
    [[ $theme == dark ]] && flag=(--dark)
    for page in 0 1 2 3 4; do
      xvfb-run -a -s "-screen 0 1700x1100x24" "$build/app/attnlens" "${flag[@]}" --page $page --size $size \
        --screenshot "$out/${names[$page]}-$size-$theme.png"
    done
  done
done
ls -l "$out"

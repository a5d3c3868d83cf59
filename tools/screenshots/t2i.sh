#!/usr/bin/env bash
# README screenshots of the Text to image page, taken from the real app under Xvfb:
#   tools/screenshots/t2i.sh [BUILD_DIR]
# The built-in sd-fashion-tiny generates "a sneaker in the top left and a bag in the bottom right" (seed 1,
# PNDM 25 steps); the view shows the word "bag" aggregated over the steps and layers, a pixel of the bag with
# the words it attends to, and every word's map under the image; the same with value-weighted maps.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
out=$root/docs/screenshots
mkdir -p "$out"
shot() { # name, extra args...
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1700x1100x24" "$build/app/attnlens" --page 5 --size 1600x1000 --seed 1 --steps 25 \
    --input "a sneaker in the top left and a bag in the bottom right" "$@" --screenshot "$out/t2i-$name.png"
}
shot word --word bag --query 42,42 --view words
shot steps --word sneaker --view steps
shot value-weighted --word bag --query 42,42 --view words --value-weighted
ls -l "$out"/t2i-*.png

#!/usr/bin/env bash
# README screenshots of the Diffusion page, taken from the real app under Xvfb:
#   tools/screenshots/diffusion.sh [BUILD_DIR]
# The built-in ddpm-fashion-tiny generates a sneaker (class 7, seed 3, DDIM 50); the view shows where a
# pixel of its sole looks in the first expansive 14×14 layer at step 30, and who attends to a region
# of the upper shoe in the bottleneck.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
out=$root/docs/screenshots
mkdir -p "$out"
shot() { # name, extra args...
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1700x1100x24" "$build/app/attnlens" --page 3 --size 1600x1000 \
    --class 7 --seed 3 --steps 50 --scheduler ddim "$@" --screenshot "$out/diffusion-$name.png"
}
shot query --step 30 --layer 5 --query 18,8 --head mean
shot key-side --step 40 --layer 2 --query 10,14:14,20 --key-side --on xt
ls -l "$out"/diffusion-*.png

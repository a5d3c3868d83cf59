#!/usr/bin/env bash
# README screenshots of the Vision page, taken from the real app under Xvfb:
#   tools/screenshots/vision.sh [BUILD_DIR]
# Uses the built-in ViT and one of its shipped samples; the heads grid shows the last layer's heads
# for the CLS token; the token-norm map after the last layer; the Texts box on the shipped CLIP model.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
image=$root/resources/samples/fashion-mnist/ankle_boot_1.png
layers=$(sed -n 's/.*"num_hidden_layers": *\([0-9]*\).*/\1/p' "$root/resources/models/vit-fashion-mnist/config.json")
out=$root/docs/screenshots
mkdir -p "$out"
shot() { # name, extra args...
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1500x1000x24" "$build/app/attnlens" --page 2 --size 1400x900 --image "$image" \
    "$@" --screenshot "$out/vision-$name.png"
}
shot overlay --query 4,2 --layer $((layers - 2))
shot heads --query cls --layer $((layers - 1)) --grab headsGrid
shot token-norms --query norms --layer $((layers - 1))
# The shipped CLIP model on one of its test-split compositions: four texts (two captions that differ in the
# places), the first one's similarity map.
clip=$root/resources/models/clip-fashion-tiny
xvfb-run -a -s "-screen 0 1500x1000x24" "$build/app/attnlens" --page 2 --size 1400x900 --model "$clip" \
  --image "$clip/samples/bag-sneaker.png" --texts "a bag | a sneaker | a bag in the top left and a sneaker in the bottom right | a sneaker in the top left and a bag in the bottom right" --query text:0 \
  --screenshot "$out/vision-clip-texts.png"
# The shipped SigLIP model: its pooling probe (the summary query: no CLS) and four texts scored each by a sigmoid.
siglip=$root/resources/models/siglip-fashion-tiny
xvfb-run -a -s "-screen 0 1500x1000x24" "$build/app/attnlens" --page 2 --size 1400x900 --model "$siglip" \
  --image "$siglip/samples/dress-boot-coat.png" --texts "a dress in the top right, a boot in the bottom left and a coat in the bottom right|a coat in the top right, a boot in the bottom left and a dress in the bottom right|a boot|a bag" \
  --screenshot "$out/vision-siglip-probe.png"
ls -l "$out"/vision-*.png

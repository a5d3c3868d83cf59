#!/usr/bin/env bash
# README screenshots of the Text page's Logit lens tab, taken from the real app under Xvfb:
#   tools/screenshots/logit-lens.sh [BUILD_DIR]
# The built-in llama-en-tiny continues "Lily and Tom went to the park. Lily said to" greedily; the lens shows the
# stream after each layer read out at every position, then the contributions to the last token's top logit.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
out=$root/docs/screenshots
mkdir -p "$out"
shot() { # name, extra args...
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/attnlens" --page 4 --size 1500x950 \
    --input "Lily and Tom went to the park. Lily said to" "$@" --screenshot "$out/text-$name.png"
}
shot logit-lens --view lens
shot contributions --view contrib
ls -l "$out"/text-logit-lens.png "$out"/text-contributions.png

#!/usr/bin/env bash
# README screenshots of the Translate page, taken from the real app under Xvfb:
#   tools/screenshots/translate.sh [BUILD_DIR] [MODEL_DIR]
# MODEL_DIR defaults to the built-in translator when installed, else the tiny test fixture (random
# weights: its "translations" are nonsense, but every view is real).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
model=${2:-}
if [[ -z $model ]]; then
  if [[ -f $root/resources/models/marian-de-en-tiny/config.json ]]; then model=$root/resources/models/marian-de-en-tiny
  else model=$root/tests/data/marian/tiny-f32; fi
fi
out=$root/docs/screenshots
mkdir -p "$out"
long="Als wir gestern Abend nach einem langen Arbeitstag endlich nach Hause kamen, stellten wir fest, dass \
jemand die Tür offen gelassen hatte und die Katze des Nachbarn in unserer Küche saß und ganz zufrieden die \
Reste vom Mittagessen fraß, die wir auf dem Tisch vergessen hatten."
shot() { # name, extra args...
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1500x1000x24" "$build/app/attnlens" --model "$model" --page 1 --size 1400x900 \
    --input "Wie geht es dir?" --max-tokens 12 "$@" --screenshot "$out/translate-$name.png"
}
long_shot() { # name, extra args... : the same views on a 40-word sentence in a 1280 × 800 window
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1500x1000x24" "$build/app/attnlens" --model "$model" --page 1 --size 1280x800 \
    --input "$long" "$@" --screenshot "$out/translate-long-$name.png"
}
shot matrix --steps 4 --view matrix --kind cross --token t2
shot model --view model --kind encoder
shot lines --view lines --kind cross --layer 1 --token t1
shot embeddings --view embeddings
shot beam --beam 3 --steps 5 --view beam
long_shot matrix --view matrix --kind encoder --steps 7
long_shot embeddings --view embeddings
long_shot beam --beam 4 --steps 7 --view beam
ls -l "$out"/translate-*.png

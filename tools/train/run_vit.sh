#!/bin/bash
# End-to-end: Fashion-MNIST ViT -> resources/models/vit-fashion-mnist, samples, goldens.
# (The shipped model's own history of warm-restart cycles is in tools/train/README.md and its model card.)
# Usage: tools/train/run_vit.sh [WORK_DIR] [extra train_vit.py args, e.g. --minutes 110]
set -e
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${1:-build/train-work}"; shift || true
"$HERE/deps.sh"
PY=/usr/bin/python3
mkdir -p "$WORK/vit" "$WORK/teacher"
nice -n 10 $PY "$HERE/export_samples.py"
# The CNN the ViT is distilled from (a training aid, never shipped; ~25 minutes of one core).
nice -n 10 $PY "$HERE/train_teacher.py" --work "$WORK/teacher" --width 32 --epochs 12 --resume
nice -n 10 $PY "$HERE/train_vit.py" --work "$WORK/vit" --d 128 --layers 4 --heads 4 --ffn 256 \
    --lr 1e-3 --teacher "$WORK/teacher/teacher.pt" --export-every-epoch --resume "$@"
# The C++ engine's accuracy over the whole test set goes into the model card (needs a built CLI).
CLI="${ATTNLENS_CLI:-build/release/app/attnlens-cli}"
DS=/usr/share/datasets/fashion-mnist
if [ -x "$CLI" ]; then
  "$CLI" vision-eval --model resources/models/vit-fashion-mnist --idx-images "$DS/t10k-images-idx3-ubyte.gz" \
      --idx-labels "$DS/t10k-labels-idx1-ubyte.gz" --json "$WORK/vit/eval_cpp.json"
  nice -n 10 $PY "$HERE/train_vit.py" --work "$WORK/vit" --export-only --cpp-eval "$WORK/vit/eval_cpp.json"
else
  echo "note: no $CLI: build it (cmake --workflow --preset release) and rerun for the C++ accuracy"
fi
nice -n 10 $PY "$HERE/make_goldens.py" vit

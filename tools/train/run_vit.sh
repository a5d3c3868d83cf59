#!/bin/bash
# End-to-end: Fashion-MNIST ViT -> resources/models/vit-fashion-mnist, samples, goldens.
# Usage: tools/train/run_vit.sh [WORK_DIR] [extra train_vit.py args, e.g. --minutes 110]
set -e
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${1:-build/train-work}"; shift || true
"$HERE/deps.sh"
PY=/usr/bin/python3
mkdir -p "$WORK/vit"
nice -n 10 $PY "$HERE/export_samples.py"
nice -n 10 $PY "$HERE/train_vit.py" --work "$WORK/vit" --d 128 --layers 4 --heads 4 --ffn 256 \
    --lr 1e-3 --export-every-epoch --resume "$@"
nice -n 10 $PY "$HERE/make_goldens.py" vit

#!/bin/bash
# End-to-end: Ding dictionary -> SentencePiece -> Marian -> resources/models/marian-de-en-tiny, goldens.
# Usage: tools/train/run_marian.sh [WORK_DIR] [extra train_marian.py args, e.g. --minutes 90]
set -e
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${1:-build/train-work}"; shift || true
"$HERE/deps.sh"
PY=/usr/bin/python3
DATA="$WORK/data"
nice -n 10 $PY "$HERE/prepare_data.py" --out "$DATA"
if [ ! -f "$DATA/spm.model" ]; then
  cat "$DATA/spm_de.txt" "$DATA/spm_en.txt" > "$DATA/spm_joint.txt"
  nice -n 10 spm_train --input="$DATA/spm_joint.txt" --model_prefix="$DATA/spm" --vocab_size=7998 \
    --model_type=unigram --character_coverage=0.9999 --unk_id=0 --bos_id=-1 --eos_id=-1 --pad_id=-1 \
    --input_sentence_size=3000000 --shuffle_input_sentence=true --num_threads=1 \
    --max_sentence_length=1000
fi
# The recorded model's settings (see README.md); later arguments override them.
nice -n 10 $PY "$HERE/train_marian.py" --data "$DATA" --spm "$DATA/spm.model" --work "$WORK/marian" \
    --d 128 --enc-layers 3 --dec-layers 3 --heads 4 --ffn 512 --dropout 0.05 --lr 2e-3 --warmup 400 \
    --max-tokens 2048 --max-sent-len 12 --dev-limit 150 --beam-test-limit 300 --resume "$@"
nice -n 10 $PY "$HERE/make_goldens.py" marian

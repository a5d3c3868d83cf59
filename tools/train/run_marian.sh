#!/bin/bash
# End-to-end: Ding dictionary + Debian translation catalogues -> SentencePiece -> Marian (v2 recipe)
# -> resources/models/marian-de-en-tiny, goldens.
# Usage: tools/train/run_marian.sh [WORK_DIR] [extra train_marian.py args, e.g. --minutes 90]
# Each step is skipped when its output exists, and training resumes from WORK_DIR/marian/last.pt, so
# an interrupted run continues where it stopped when started again with the same arguments.
set -e
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${1:-build/train-work}"; shift || true
"$HERE/deps.sh"
PY=/usr/bin/python3
DATA="$WORK/data"
CAT="$WORK/catalog"
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPENBLAS_NUM_THREADS=1
nice -n 10 $PY "$HERE/prepare_data.py" --out "$DATA"
if [ ! -f "$CAT/catalog_sentences.tsv" ]; then
  # every Debian package with a German translation catalogue (~1900 packages, ~5 GB downloaded,
  # only the catalogues and copyright files kept); apt-file needs its index
  [ -d "$WORK/mo" ] || { apt-file update >/dev/null; nice -n 10 $PY "$HERE/catalog_pairs.py" fetch --work "$WORK"; }
  nice -n 10 $PY "$HERE/catalog_pairs.py" extract --mo "$WORK/mo" --out "$CAT"
fi
if [ ! -f "$DATA/spm.model" ]; then
  # the catalogue sentences count three times, the dictionary's sentences ten times (prepare_data)
  cut -f1 "$CAT/catalog_sentences.tsv" > "$DATA/cat_de.txt"; cut -f2 "$CAT/catalog_sentences.tsv" > "$DATA/cat_en.txt"
  cat "$DATA/spm_de.txt" "$DATA/spm_en.txt" "$DATA"/cat_de.txt "$DATA"/cat_de.txt "$DATA"/cat_de.txt \
      "$DATA"/cat_en.txt "$DATA"/cat_en.txt "$DATA"/cat_en.txt > "$DATA/spm_joint.txt"
  nice -n 10 spm_train --input="$DATA/spm_joint.txt" --model_prefix="$DATA/spm" --vocab_size=7998 \
    --model_type=unigram --character_coverage=0.9999 --unk_id=0 --bos_id=-1 --eos_id=-1 --pad_id=-1 \
    --input_sentence_size=3000000 --shuffle_input_sentence=true --num_threads=2 \
    --max_sentence_length=1000
fi
# The recorded model's settings (see the model card); later arguments override them.
nice -n 5 $PY "$HERE/train_marian.py" --data "$DATA" --spm "$DATA/spm.model" --work "$WORK/marian" \
    --d 256 --enc-layers 4 --dec-layers 4 --heads 8 --ffn 1024 --dropout 0.1 --lr 1e-3 --warmup 600 \
    --max-tokens 4096 --phrase-frac 0.2 --extra "$CAT/catalog_sentences.tsv" --extra-frac 0.45 \
    --snapshot-minutes 8 --dev-limit 150 --beam-test-limit 300 --threads 2 --resume "$@"
nice -n 10 $PY "$HERE/make_goldens.py" marian

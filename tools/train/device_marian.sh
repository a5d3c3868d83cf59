#!/bin/bash
# The translator's recipe on a lent GPU machine (issue 23), in one short call: the same train_marian.py,
# three model sizes trained side by side on the one GPU, the best by held-out dev chrF brought back.
#
#   here:   tools/train/device_marian.sh pack [DATA CATALOG]  # run_marian.sh's WORK/data, WORK/catalog
#                                                     # -> build/device-pack/marian-data.tar.xz (≈ 10 MB)
#   there:  tools/train/device_marian.sh train MINUTES # run by the device tool with carry ["build/device-pack"];
#                                                     # writes $OUT/best.tar.partNN (the exported folder) + runs.tar.gz
#   here:   tools/train/device_marian.sh unpack FILES_AT DEST   # reassembles the folder into DEST
#   or:     copy an exported folder to build/device-pack/init, then there
#           tools/train/device_marian.sh continue MIX DICT   # continues it: MIX minutes on the recipe's mix, then
#                                                     # DICT minutes on the dictionary alone; two mixes side by side
#
# MARIAN_DEVICE_ARGS is appended to every run's arguments (a smoke test on a CPU: tiny sizes and limits).
# The machine starts bare and nothing outlasts the call, so training runs from scratch each time; the data
# travels pre-extracted (the machine reaches no package archive). CPU training stays the reference recipe
# (run_marian.sh); this only runs it faster.
set -euo pipefail
cd "$(dirname "$0")/../.."
PACK=build/device-pack
PY=${PYTHON:-python3}  # the device's python3 holds PyTorch; here: PYTHON=/usr/bin/python3
case "${1:-}" in
pack)
  DATA=${2:-build/train-work/data}; CAT=${3:-build/train-work/catalog}
  rm -rf "$PACK" && mkdir -p "$PACK/data" "$PACK/catalog"
  for f in sent_train.tsv sent_dev.tsv sent_test.tsv phrase_train.tsv everyday.txt spm.model; do
    cp "$DATA/$f" "$PACK/data/"
  done
  cp "$CAT/catalog_sentences.tsv" "$PACK/catalog/"
  # the tokenizer folder is built here (build_vocab needs protobuf's sentencepiece_model_pb2, which
  # the device's packages may not match); every run there starts from a copy of it
  "$PY" -c 'import sys; sys.path.insert(0, "tools/train"); from marian_torch import build_vocab; build_vocab(sys.argv[1], sys.argv[2])' \
      "$DATA/spm.model" "$PACK/tok"
  tar -C "$PACK" -cJf "$PACK/marian-data.tar.xz" data catalog tok && rm -rf "$PACK/data" "$PACK/catalog" "$PACK/tok"
  ls -l "$PACK"
  ;;
train)
  MIN=${2:-7}
  W=/tmp/marian-device
  mkdir -p "$W" && tar -C "$W" -xJf "$PACK/marian-data.tar.xz"
  common=(--data "$W/data" --spm "$W/data/spm.model" --heads 8 --dropout 0.1 --lr 1.5e-3 --warmup 1000
          --max-tokens 16384 --phrase-frac 0.2 --extra "$W/catalog/catalog_sentences.tsv" --extra-frac 0.45
          --minutes "$MIN" --ckpt-minutes 2 --snapshot-minutes 1 --average 4 --dev-limit 0 --beam-test-limit 600
          --threads 4)
  declare -A size=([d256x4]="--d 256 --enc-layers 4 --dec-layers 4 --ffn 1024"
                   [d256x6]="--d 256 --enc-layers 6 --dec-layers 6 --ffn 1024"
                   [d384x4]="--d 384 --enc-layers 4 --dec-layers 4 --ffn 1536")
  for name in "${!size[@]}"; do
    mkdir -p "$W/$name" && cp -r "$W/tok" "$W/$name/tok"
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 "$PY" tools/train/train_marian.py "${common[@]}" ${size[$name]} ${MARIAN_DEVICE_ARGS:-} --work "$W/$name" \
        --out "$W/out-$name" > "$W/$name.log" 2>&1 &
  done
  wait
  # The best by held-out dev chrF among the exports small enough to ship (MARIAN_DEVICE_MAX_MB, default 30:
  # the built-in lives in git and the working tree travels to such machines under 64 MiB); all are reported.
  best=$("$PY" - "$W" "${MARIAN_DEVICE_MAX_MB:-30}" <<'EOF'
import json, os, sys
w, max_mb = sys.argv[1], float(sys.argv[2])
runs = []
for name in sorted(os.listdir(w)):
    p = os.path.join(w, name, "results.json")
    if os.path.exists(p):
        st = json.load(open(p))["state"]
        dev = st["log"][-1]["dev150_chrf"] if st["log"] else 0.0
        mb = os.path.getsize(os.path.join(w, "out-" + name, "model.safetensors")) / 2**20
        print(name, "dev chrF", st.get("dev_chrf_last", dev), f"{mb:.1f} MB", file=sys.stderr)
        if mb <= max_mb:
            runs.append((st.get("dev_chrf_last", dev), name))
print(max(runs)[1] if runs else "")
EOF
)
  for name in "${!size[@]}"; do tail -n 40 "$W/$name.log"; done
  echo "best by dev chrF: $best"
  (cd "$W" && find . -maxdepth 2 \( -name '*.log' -o -name results.json \) -print0 | tar -czf "$OUT/runs.tar.gz" --null -T -)
  [ -n "$best" ] && tar -C "$W" -cf - "out-$best" | split -b 15m -d - "$OUT/best.tar.part"
  ls -l "$OUT"
  ;;
continue)
  # A later lent machine continues the best export so far instead of starting over (issue 47): variant
  # "mix" is the recipe's mix of sentences, dictionary phrases and catalogue messages, "sent" leans on the
  # dictionary's example sentences (the nearest to everyday text). Each then gets the dictionary alone.
  MIX=${2:-5}; DICT=${3:-2}
  W=/tmp/marian-device
  mkdir -p "$W" && tar -C "$W" -xJf "$PACK/marian-data.tar.xz"
  common=(--data "$W/data" --spm "$W/data/spm.model" --dropout 0.1 --warmup 1000 --max-tokens 16384
          --extra "$W/catalog/catalog_sentences.tsv" --ckpt-minutes 2 --average 4 --dev-limit 0 --threads 4)
  declare -A mix=([mix]="--phrase-frac 0.2 --extra-frac 0.45 --seed 2" [sent]="--phrase-frac 0.1 --extra-frac 0.3 --seed 3")
  for name in "${!mix[@]}"; do
    (
      # shellcheck disable=SC2086
      PYTHONUNBUFFERED=1 "$PY" tools/train/train_marian.py "${common[@]}" ${mix[$name]} --init-from "$PACK/init" \
          --lr 1.5e-3 --more-minutes "$MIX" --snapshot-minutes 1 --beam-test-limit 100 --work "$W/$name" \
          --out "$W/mix-$name" ${MARIAN_DEVICE_ARGS:-} > "$W/$name.log" 2>&1
      # shellcheck disable=SC2086
      PYTHONUNBUFFERED=1 "$PY" tools/train/train_marian.py "${common[@]}" --phrase-frac 0.2 --extra-frac 0 --resume \
          --new-epoch --lr 5e-4 --more-minutes "$DICT" --snapshot-minutes 0.4 --beam-test-limit 300 \
          --work "$W/$name" --out "$W/out-$name" ${MARIAN_DEVICE_ARGS:-} > "$W/$name-dictphase.log" 2>&1
    ) &
  done
  wait
  for name in "${!mix[@]}"; do
    grep -E '^(==|TEST|dev chrF|training stopped)' "$W/$name.log" "$W/$name-dictphase.log" | tail -n 14
    grep -E '^  .* -> ' "$W/$name-dictphase.log" || true
  done
  (cd "$W" && find . -maxdepth 2 \( -name '*.log' -o -name results.json \) -print0 | tar -czf "$OUT/runs.tar.gz" --null -T -)
  for name in "${!mix[@]}"; do
    [ -d "$W/out-$name" ] && tar -C "$W" -cf - "out-$name" | split -b 15m -d - "$OUT/$name.tar.part"
  done
  ls -l "$OUT"
  ;;
unpack)
  AT=${2:?FILES_AT}; DEST=${3:?DEST}
  mkdir -p "$DEST"
  for first in "$AT"/*.tar.part00; do cat "${first%00}"* | tar -C "$DEST" -xf -; done
  tar -C "$DEST" -xzf "$AT/runs.tar.gz"
  ls "$DEST"
  ;;
*)
  sed -n 2,12p "$0"; exit 2 ;;
esac

#!/bin/bash
# Install the Debian 12 packages the training pipeline needs (only those missing).
set -e
PKGS="python3 python3-torch python3-numpy python3-pil python3-sentencepiece python3-protobuf sentencepiece
      libopenblas0-pthread trans-de-en dataset-fashion-mnist apt-file"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
fi

#!/usr/bin/python3
"""The PyTorch side of the ViT speed comparison: one forward of a ViT folder on one thread, every head's
attention kept (as `attnlens-cli bench --image` captures them), timed as the CLI times its own.

The model is tools/golden/vit_reference.py's RefVit: F.linear, matmul, softmax and exact GELU in the
order transformers' ViTSelfAttention uses them, on Debian's torch 1.13. Run it with OpenBLAS, e.g.

  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \\
      /usr/bin/python3 tools/bench/vit_peer.py /tmp/attnlens-vit-bench/vit-b16 /tmp/attnlens-vit-bench/bench.png
  build/release/app/attnlens-cli bench --model /tmp/attnlens-vit-bench/vit-b16 \\
      --image /tmp/attnlens-vit-bench/bench.png --repeat 5

stdout: one JSON object {"peer", "threads", "repeat", "median_ms", "min_ms", "max_ms", "tokens"}.
"""
import json
import os
import statistics
import sys
import time

# One thread on both sides: OpenBLAS (pthreads build) has its own pool that torch.set_num_threads does
# not reach; measured here, leaving it at two threads made the peer 1.45x faster (490 vs 341 ms).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ATTNLENS_THREADS", "1")  # our side: one thread too (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before torch loads OpenBLAS)
import torch  # noqa: E402
from PIL import Image  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import vit_reference as ref  # noqa: E402


def main():
    folder, image = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # 1 unless compare.py --threads
    model = ref.RefVit(folder)
    proc = ref.load_processor(folder)
    pixels, _ = ref.preprocess(Image.open(image), proc, model.c["channels"])
    model.forward(pixels)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = model.forward(pixels)
        times.append((time.perf_counter() - start) * 1000.0)
    print(json.dumps({"peer": "torch " + torch.__version__, "threads": torch.get_num_threads(), "repeat": repeat,
                      "median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
                      "tokens": int(out["attentions"].shape[-1])}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The vector-heatmap peer: matplotlib's SVG and PDF of the sinusoidal table at L 4096, d 1024,
drawn like `pelab export heatmap --len 4096 --dim 1024` (1000 x 600 px at 96 dpi, a title, axes,
a colorbar, nearest-neighbour cells), and the sizes of both tools' files side by side.

    python3 tests/peers/matplotlib_heatmap.py [PELAB]      # PELAB: the binary (build/app/pelab)

Not a test: it needs numpy and matplotlib (Debian: python3-matplotlib) and says so when missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    sys.exit(f"matplotlib_heatmap.py needs numpy and matplotlib ({e}); "
             "on Debian: apt-get install python3-matplotlib")

L, D = 4096, 1024


def table():
    # sinusoidal, interleaved: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)
    p = np.arange(L)[:, None]
    inv = 10000.0 ** (-np.arange(0, D, 2) / D)
    pe = np.empty((L, D), dtype=np.float32)
    pe[:, 0::2] = np.sin(p * inv)
    pe[:, 1::2] = np.cos(p * inv)
    return pe


def main():
    pelab = sys.argv[1] if len(sys.argv) > 1 else "build/app/pelab"
    out = tempfile.mkdtemp(prefix="pelab-peer-")
    fig, ax = plt.subplots(figsize=(1000 / 96, 600 / 96), dpi=96)
    im = ax.imshow(table(), aspect="auto", interpolation="nearest", cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_title("sinusoidal position encoding")
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    fig.colorbar(im, ax=ax, label="value")
    sizes = {}
    for ext in ("svg", "pdf"):
        mpl = os.path.join(out, "mpl." + ext)
        fig.savefig(mpl)
        ours = os.path.join(out, "pelab." + ext)
        subprocess.run([pelab, "export", "heatmap", "--len", str(L), "--dim", str(D), "-o", ours],
                       check=True)
        sizes[ext] = (os.path.getsize(ours), os.path.getsize(mpl))
    for ext, (a, b) in sizes.items():
        print(f"{ext}: pelab {a / 1e6:.2f} MB, matplotlib {matplotlib.__version__} "
              f"{b / 1e6:.2f} MB, ratio {a / b:.2f}")
    for f in os.listdir(out):
        os.unlink(os.path.join(out, f))
    os.rmdir(out)


if __name__ == "__main__":
    main()

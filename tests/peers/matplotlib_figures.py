#!/usr/bin/env python3
"""The figure peer: three of pelab's figures drawn by matplotlib at one paper column
(3.5 x 2.2 in), next to pelab's own, from the same numbers (pelab's CSV export of each figure):

  frequencies   RoPE theta_k and wavelengths, Llama 3.1's config (original vs llama3 scaling)
  decay         the dot-product decay of the encodings from p0
  extrapolation the built-in models' loss by position, past their training length

    python3 tests/peers/matplotlib_figures.py [PELAB] [OUTDIR]

PELAB is the binary (build/app/pelab), OUTDIR where the PNGs go (docs/figures): for each figure
NAME-pelab.png, NAME-matplotlib.png (110 dpi) and NAME.png, the two side by side (the README
shows those). It prints the
SVG sizes of both tools (matplotlib with svg.fonttype 'none', text as <text>, like pelab's).
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
    sys.exit(f"matplotlib_figures.py needs numpy and matplotlib ({e}); "
             "on Debian: apt-get install python3-matplotlib")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PELAB = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "app", "pelab")
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs", "figures")
LLAMA = os.path.join(ROOT, "assets", "configs", "llama-3.1-8b.json")
W, H, DPI = 3.5, 2.2, 110
SIZE = f"{W}x{H}in"

plt.rcParams.update({
    "font.family": "DejaVu Sans", "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8,
    "xtick.labelsize": 7, "ytick.labelsize": 7, "legend.fontsize": 6.5, "axes.linewidth": 0.75,
    "svg.fonttype": "none", "svg.hashsalt": "pelab",
})

FIGS = {
    "frequencies": ["--config", LLAMA],
    "decay": [],
    "extrapolation": [],
}


def pelab(view, args, out):
    subprocess.run([PELAB, "export", view, *args, "--size", SIZE, *out], check=True)


def csv(view, args, tmp):
    path = os.path.join(tmp, view + ".csv")
    subprocess.run([PELAB, "export", view, *args, "-o", path], check=True)
    return np.loadtxt(path, delimiter=",", comments="#", ndmin=2)


def draw_frequencies(d):
    k, th0, th1, wl0, wl1 = d[:, 0], d[:, 1], d[:, 2], d[:, 3], d[:, 4]
    fig, (a, b) = plt.subplots(1, 2, figsize=(W, H), dpi=DPI, constrained_layout=True)
    fig.suptitle("RoPE frequencies: original vs llama3 f = 8", fontsize=8, fontweight="bold")
    a.semilogy(k, th0, label="original")
    a.semilogy(k, th1, label="llama3 f = 8")
    a.set_xlabel("frequency pair k")
    a.set_ylabel(r"$\theta_k$ (radians per position)")
    a.legend(loc="lower left")
    b.semilogy(k, wl0)
    b.semilogy(k, wl1)
    b.axhline(8192, color="k", ls="--", lw=0.8)
    b.axhline(131072, color="k", ls="--", lw=0.8)  # T: max_position_embeddings
    b.set_xlabel("frequency pair k")
    b.set_ylabel(r"wavelength $2\pi/\theta_k$")
    return fig


def draw_rows(d, names, title, xlabel, ylabel, logx=False, ylim=None):
    fig, a = plt.subplots(figsize=(W, H), dpi=DPI, constrained_layout=True)
    x = d[0]
    for row, name in zip(d[1:], names):
        a.plot(x, row, label=name, lw=1)
    if logx:
        a.set_xscale("log")
    if ylim:
        a.set_ylim(*ylim)
    a.set_title(title, fontweight="bold")
    a.set_xlabel(xlabel)
    a.set_ylabel(ylabel)
    a.legend(loc="best")
    return fig


def side_by_side(left, right, out):
    a, b = plt.imread(left), plt.imread(right)
    h = max(a.shape[0], b.shape[0])
    fig = plt.figure(figsize=((a.shape[1] + b.shape[1] + 20) / DPI, h / DPI), dpi=DPI)
    fig.figimage(a, 0, h - a.shape[0])
    fig.figimage(b, a.shape[1] + 20, h - b.shape[0])
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    # a 128-colour palette keeps the committed PNGs small (matplotlib brings Pillow)
    from PIL import Image
    Image.open(out).convert("RGB").quantize(128).save(out, optimize=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for view, args in FIGS.items():
            d = csv(view, args, tmp)
            if view == "frequencies":
                fig = draw_frequencies(d)
            elif view == "decay":
                fig = draw_rows(d, ["sinusoidal", "learned", "RoPE bound B(r)", "ALiBi exp(bias)"],
                                "Dot-product decay from p0", "position p", "score")
            else:
                fig = draw_rows(d, ["nope", "learned", "sinusoidal", "alibi", "rope", "t5"],
                                "Loss by position", "position", "loss")
            mpl_png = os.path.join(OUT, view + "-matplotlib.png")
            pel_png = os.path.join(OUT, view + "-pelab.png")
            fig.savefig(mpl_png, dpi=DPI)
            mpl_svg = os.path.join(tmp, view + "-mpl.svg")
            fig.savefig(mpl_svg)
            plt.close(fig)
            pelab(view, args, ["--dpi", str(DPI), "-o", pel_png])
            pel_svg = os.path.join(tmp, view + "-pelab.svg")
            pelab(view, args, ["-o", pel_svg])
            side_by_side(pel_png, mpl_png, os.path.join(OUT, view + ".png"))
            sp, sm = os.path.getsize(pel_svg), os.path.getsize(mpl_svg)
            print(f"{view}: SVG pelab {sp / 1024:.1f} KB, matplotlib {matplotlib.__version__} "
                  f"{sm / 1024:.1f} KB, ratio {sp / sm:.2f}")


if __name__ == "__main__":
    main()

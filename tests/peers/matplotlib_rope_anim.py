#!/usr/bin/env python3
"""The animation peer: the RoPE view's spin as matplotlib.animation with PillowWriter, the figure
`pelab export rope --animate pos=0:63:64 --width 800 --height 600 -o rope.gif` makes (16 circles
of the pairs k = 0, 4, ..., 63 at d 128, base 10000; q at m and k at n = 0 as arrows; title and
labels), timed as whole processes side by side with pelab, with both files' sizes.

    python3 tests/peers/matplotlib_rope_anim.py [PELAB] [RUNS]   # PELAB: build/app/pelab

Not a test: it needs numpy, matplotlib and Pillow (Debian: python3-matplotlib) and says so when
they are missing. With --draw-only it only writes the matplotlib GIF (what gets timed).
"""
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

D, BASE, FRAMES, FPS, W, H, DPI = 128, 10000.0, 64, 12, 800, 600, 100


def draw(path):
    try:
        import numpy as np
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.animation import FuncAnimation, PillowWriter
    except ImportError as e:
        sys.exit(f"matplotlib_rope_anim.py needs numpy, matplotlib and Pillow ({e}); "
                 "on Debian: apt-get install python3-matplotlib")
    np_ = D // 2
    theta = BASE ** (-2.0 * np.arange(np_) / D)
    show = [round(i * (np_ - 1) / 15) for i in range(16)]
    fig, axes = plt.subplots(4, 4, figsize=(W / DPI, H / DPI), dpi=DPI)
    arrows = []
    for ax, k in zip(axes.flat, show):
        ax.add_patch(plt.Circle((0, 0), 1, fill=False, color="#dddddd"))
        ax.plot([-1, 1], [0, 0], color="#dddddd", lw=0.8)
        ax.set_xlim(-1.2, 1.2)
        ax.set_ylim(-1.2, 1.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.arrow(0, 0, 0.9, 0, width=0.05, color="#d55e00", length_includes_head=True)
        q = ax.arrow(0, 0, 0.9, 0, width=0.025, color="#0072b2", length_includes_head=True)
        ax.set_title(f"k={k}  \u03b8={theta[k]:.3g}", fontsize=7)
        arrows.append((ax, k, q))
    title = fig.suptitle("", fontsize=10, fontweight="bold")

    def frame(m):
        score = float(np.sum(np.cos(m * theta)))
        title.set_text(f"RoPE: q at m={m}, k at n=0  |  q\u00b7k = {score:.4f}")
        out = [title]
        for i, (ax, k, q) in enumerate(arrows):
            q.remove()
            a = m * theta[k]
            q = ax.arrow(0, 0, 0.9 * math.cos(a), 0.9 * math.sin(a), width=0.025,
                         color="#0072b2", length_includes_head=True)
            arrows[i] = (ax, k, q)
            out.append(q)
        return out

    anim = FuncAnimation(fig, frame, frames=range(FRAMES))
    anim.save(path, writer=PillowWriter(fps=FPS))


def timed(cmd, runs):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def main():
    if "--draw-only" in sys.argv:
        draw(sys.argv[sys.argv.index("--draw-only") + 1])
        return
    pelab = sys.argv[1] if len(sys.argv) > 1 else "build/app/pelab"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    out = tempfile.mkdtemp(prefix="pelab-peer-")
    ours, theirs = os.path.join(out, "pelab.gif"), os.path.join(out, "mpl.gif")
    t_ours = timed([pelab, "export", "rope", "--animate", f"pos=0:{FRAMES - 1}:{FRAMES}",
                    "--width", str(W), "--height", str(H), "-o", ours], runs)
    t_theirs = timed([sys.executable, os.path.abspath(__file__), "--draw-only", theirs], runs)
    s_ours, s_theirs = os.path.getsize(ours), os.path.getsize(theirs)
    print(f"{FRAMES} frames {W}x{H}, whole process, median of {runs}: pelab {t_ours:.2f} s "
          f"({s_ours / 1e3:.0f} kB), matplotlib + PillowWriter {t_theirs:.2f} s "
          f"({s_theirs / 1e3:.0f} kB): {t_theirs / t_ours:.1f}x faster, file "
          f"{s_ours / s_theirs:.2f}x the size")
    for f in (ours, theirs):
        os.unlink(f)
    os.rmdir(out)


if __name__ == "__main__":
    main()

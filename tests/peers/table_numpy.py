#!/usr/bin/env python3
"""numpy's side of the table and export comparison (not a test).

usage: table_numpy.py table LEN DIM            build the sinusoidal table, print its time
       table_numpy.py save LEN DIM OUT.npy     build it and numpy.save it (time the process)
       table_numpy.py savetxt LEN DIM OUT.csv  build it and numpy.savetxt it with %.9g, the
                                               precision pelab's CSV writes
The table is the one `pelab export heatmap` writes: PE[p, 2k] = sin(p w_k),
PE[p, 2k+1] = cos(p w_k), w_k = 10000^(-2k/d), float32.
"""
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("table_numpy.py: needs numpy (Debian: apt-get install python3-numpy)")


def table(length, dim):
    # in float32 throughout, numpy's fastest way (its float32 sin and cos are vectorised)
    pos = np.arange(length, dtype=np.float32)[:, None]
    w = (10000.0 ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)).astype(np.float32)
    ang = pos * w[None, :]
    out = np.empty((length, dim), dtype=np.float32)
    out[:, 0::2] = np.sin(ang)
    out[:, 1::2] = np.cos(ang)
    return out


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("table", "save", "savetxt"):
        sys.exit(__doc__)
    what, length, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    t0 = time.perf_counter()
    t = table(length, dim)
    dt = time.perf_counter() - t0
    if what == "table":
        print(f"numpy {np.__version__} table {length}x{dim} float32: {dt * 1e3:.2f} ms")
    elif what == "save":
        np.save(sys.argv[4], t)
    else:
        np.savetxt(sys.argv[4], t, fmt="%.9g", delimiter=",")


if __name__ == "__main__":
    main()

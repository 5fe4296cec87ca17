#!/usr/bin/env python3
"""bench_large_table.py: the README's frame table from `pelab bench --large` output.

    build/app/pelab bench --large | tee bench-large.txt
    python3 docs/bench_large_table.py < bench-large.txt

Prints the machine and load lines, then one Markdown row per view and size: after a change and
the same frame in the terminal, the window and the window at 175%, and the window's first frame,
in ms. Each figure is the one the bench holds against its target, the smaller of wall clock and
CPU time (a view on two threads has more CPU time than wall clock); a figure over its target
(16 ms after a change, 2 ms for the same frame) is in bold. Reads standard input, writes standard
output, nothing else."""
import re
import sys

ROW = re.compile(
    r"^\s+(\S+)\s+(.+?)\s+(terminal|window 175%|window)\s+"
    r"([\d.]+) \(cpu\s+([\d.]+)\)\s+[\d.]+x\s+"
    r"([\d.]+) \(cpu\s+([\d.]+)\)\s+[\d.]+x\s+([\d.]+)"
)
FRONTS = ["terminal", "window", "window 175%"]
TARGET = {"change": 16.0, "same": 2.0}


def cell(ms, target):
    text = f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"
    return f"**{text}**" if ms > target else text


def main():
    rows, order, head = {}, [], []
    for line in sys.stdin:
        line = line.rstrip("\n")
        m = ROW.match(line)
        if not m:
            if line.startswith(("machine:", "load average", "over target", "peak resident")):
                head.append(line)
            continue
        view, size, front = m.group(1), m.group(2), m.group(3)
        change = min(float(m.group(4)), float(m.group(5)))
        same = min(float(m.group(6)), float(m.group(7)))
        key = (view, size)
        if key not in rows:
            rows[key] = {}
            order.append(key)
        rows[key][front] = (change, same, float(m.group(8)))
    if not rows:
        sys.exit("bench_large_table.py: no `pelab bench --large` rows on standard input")
    for h in head:
        print(h + "  ")
    print()
    print("| view, size | terminal, after a change | terminal, same frame | window, after a change "
          "| window, same frame | window 175%, after a change | window 175%, same frame "
          "| first frame, window |")
    print("|---|" + "---:|" * 7)
    for view, size in order:
        r = rows[(view, size)]
        cells = []
        for f in FRONTS:
            if f in r:
                cells += [cell(r[f][0], TARGET["change"]), cell(r[f][1], TARGET["same"])]
            else:
                cells += ["", ""]
        first = f"{r['window'][2]:.1f}" if "window" in r else ""
        print(f"| {view}, {size} | " + " | ".join(cells) + f" | {first} |")


if __name__ == "__main__":
    main()

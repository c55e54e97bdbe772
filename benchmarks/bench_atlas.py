"""Benchmark of the atlas's regeneration (``make atlas``): the previous strategy against today's.

Run with ``.venv/bin/python benchmarks/bench_atlas.py [--step N]``: every ``N``-th architecture
of each depth of the atlas grid (default 97, about 250 entries), computed single-threaded in
this process by both strategies, interleaved depth by depth so that both see the same load on
a shared machine. Prints the CPU time per entry (which other programs on a busy machine do not inflate) and the
full grid's extrapolated wall time on two idle cores, side by side, and how many entries of the
slice each strategy certifies.

* **before**: the strategy of the previous atlas, on today's library: the lightning bounds
  twice (the three symmetries alone, then with the fiber directions the book knew then, the
  token collapse and the unread directions of the next layer, and the engine's rounds of
  inputs when those do not meet); three float64 readings of the softmax Jacobian; the softmax
  certificate with the symmetries alone at the first point, and again at the best reading's
  point when that reading is higher; the minor's rows chosen among all inputs.
* **after**: ``tools/make_atlas.py``'s :func:`compute_entry` — one lightning certificate with
  every fiber family, the softmax certificate with the families that are softmax symmetries,
  whose own float64 reading is the estimate (one Jacobian), further points only where the
  bounds do not meet, the minor's rows among the fewest inputs; plus the cheap upper bounds
  that say which families each bound needed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def before(widths: tuple[int, ...], attn: tuple[int, ...]) -> tuple[bool, bool]:
    """The previous strategy's computations; returns (lightning certified, softmax certified)."""
    from lsa_lib import rank
    from lsa_lib.dimension import exact_dimension, float_dimension

    old = ("collapse", "unread")
    plain = exact_dimension(widths, attn, 3)
    beyond = exact_dimension(widths, attn, 3, beyond_symmetries=True, families=old)
    lower, upper = max(plain.lower, beyond.lower), min(plain.upper, beyond.upper)
    readings = [float_dimension(widths, attn, 3, "exp", seed=k, strict=False) for k in range(3)]
    keep = rank._leading_inputs
    rank._leading_inputs = lambda J, out, r: J.shape[0] // out  # every input, as before
    try:
        soft = exact_dimension(widths, attn, 3, "exp")
        lo, up = soft.lower, soft.upper
        trusted = [k for k, r in enumerate(readings) if r.trusted]
        if trusted:
            k = max(trusted, key=lambda k: (readings[k].rank, readings[k].gap))
            if readings[k].rank > lo and k > 0:
                other = exact_dimension(widths, attn, 3, "exp", seed=k)
                lo, up = max(lo, other.lower), min(up, other.upper)
    finally:
        rank._leading_inputs = keep
    return lower == upper, lo == up


def after(widths: tuple[int, ...], attn: tuple[int, ...]) -> tuple[bool, bool]:
    from make_atlas import compute_entry

    e = compute_entry(widths, attn, softmax=True)
    return e["lower"] == e["upper"], e["softmax_lower"] == e["softmax_upper"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=97, help="every N-th architecture")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(ROOT / "tools"))
    from make_atlas import GRID, architectures

    after((2, 2), (2,))  # imports and first calls out of the timings
    before((2, 2), (2,))
    rows, total = [], {"before": 0.0, "after": 0.0}
    for depth in sorted(GRID):
        archs = architectures(depth)
        chosen = archs[:: args.step]
        row = {"depth": depth, "grid": len(archs), "slice": len(chosen)}
        for name, fn in (("before", before), ("after", after)):
            start, light, soft = time.process_time(), 0, 0
            for w, a in chosen:
                lc, sc = fn(w, a)
                light, soft = light + lc, soft + sc
            per = (time.process_time() - start) / len(chosen)
            row[name] = (per, light, soft)
            total[name] += per * len(archs) / 2  # two processes
        rows.append(row)
    print("CPU time per entry of this process (other programs on a busy machine do not count):")
    print(
        f"{'depth':>5} {'grid':>6} {'slice':>5} | {'before ms':>9} {'after ms':>8} | "
        f"{'certified before (light, softmax)':>34} {'after':>12}"
    )
    for r in rows:
        (bt, bl, bs), (at, al, as_) = r["before"], r["after"]
        n = r["slice"]
        was, now = f"{bl}, {bs} of {n}", f"{al}, {as_}"
        print(
            f"{r['depth']:>5} {r['grid']:>6} {n:>5} | {1000 * bt:>9.0f} {1000 * at:>8.0f} | "
            f"{was:>34} {now:>12}"
        )
    print(
        f"full grid on 2 idle cores, extrapolated: before {total['before'] / 60:.1f} min, "
        f"after {total['after'] / 60:.1f} min (load average now "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()

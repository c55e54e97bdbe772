"""Lightning vs softmax self-attention: forward time against the number of tokens t.

Prints, side by side in one run, the median forward time of one lightning layer (evaluated
in its linear order) and one softmax layer for t = 256, 512, ..., 16384 with d = d' = 64,
a = 16, on float64 CPU data; then the fitted log-log exponents and the speed-up at t = 8192.

Usage::

    .venv/bin/python benchmarks/bench_lightning.py [--backend torch|numpy] [--threads N]
        [--repeats R] [--tmax 16384]

By default torch float64 with one thread for both layers (a fair comparison on a shared
machine). The softmax layer processes the queries in blocks of 2048 columns so that its
memory stays bounded at t = 16384 (same arithmetic, O(t²) time).
Targets (issue 2): lightning exponent <= 1.15, softmax exponent >= 1.8, speed-up >= 30x at 8192.
"""

from __future__ import annotations

import argparse
import os
import platform

from lsa_lib.lightning import flop_count, forward_time
from lsa_lib.plotting import fit_loglog_slope

D, D_OUT, A = 64, 64, 16


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (torch backend)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tmax", type=int, default=16384)
    args = parser.parse_args()

    if args.backend == "torch":
        import torch

        torch.set_num_threads(args.threads)
        threads = f"torch threads = {torch.get_num_threads()}"
    else:
        threads = "numpy (BLAS threads as configured by the environment)"
    print(
        f"lightning vs softmax forward time, {args.backend} float64, {threads}, "
        f"d = d' = {D}, a = {A}, median of {args.repeats} runs; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    )
    ts = []
    t = 256
    while t <= args.tmax:
        ts.append(t)
        t *= 2
    print(
        f"{'t':>6} {'lightning [ms]':>15} {'softmax [ms]':>13} {'speed-up':>9} {'flop ratio':>11}"
    )
    light, soft = [], []
    for t in ts:
        tl = forward_time("lightning", t, D, D_OUT, A, repeats=args.repeats, backend=args.backend)
        ts_ = forward_time("softmax", t, D, D_OUT, A, repeats=args.repeats, backend=args.backend)
        light.append(tl)
        soft.append(ts_)
        ratio = flop_count(D, D_OUT, A, t, "quadratic") / flop_count(D, D_OUT, A, t, "linear")
        print(f"{t:>6} {tl * 1e3:>15.3f} {ts_ * 1e3:>13.3f} {ts_ / tl:>8.1f}x {ratio:>10.1f}x")

    p_light, _ = fit_loglog_slope(ts, light)
    p_soft, _ = fit_loglog_slope(ts, soft)
    print(f"fitted exponent (time ~ t^p, t = {ts[0]}..{ts[-1]}):")
    print(f"  lightning p = {p_light:.3f}   (target <= 1.15)")
    print(f"  softmax   p = {p_soft:.3f}   (target >= 1.8)")
    ok = p_light <= 1.15 and p_soft >= 1.8
    if 8192 in ts:
        i = ts.index(8192)
        speedup = soft[i] / light[i]
        print(f"speed-up at t = 8192: {speedup:.1f}x   (target >= 30x)")
        ok = ok and speedup >= 30
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

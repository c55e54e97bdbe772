"""Benchmark of the rank engine (lsa_lib.rank), printed as tables.

Run with ``.venv/bin/python benchmarks/bench_rank.py`` (``--quick`` skips the baseline for
δ < 10 and the largest-network search; ``--threads N`` sets the BLAS/torch threads, default 1).

1. The setting of Figure 3 of [HMK25]: softmax networks, l = 2, t = 3, a_i = 2, widths δ,
   N = 250 random normal inputs. ``float_dimension`` (float64, per-input reverse mode, rank
   read at the largest singular-value gap) against a baseline built the way a per-output
   script builds the Jacobian: the network is evaluated in float32 on the N inputs, every
   output coordinate gets its own reverse-mode backward pass, and the rank is
   ``torch.linalg.matrix_rank`` with its default tolerance. Wall-clock and CPU times (the CPU
   time of the process does not count other programs on a busy machine).
   Expected (Conjecture 3.10 / Eq. 16): δ² + Σ a_i (2δ − a_i) − l + l.
2. Certified dimensions of the lightning versions (same widths, exact mod p).
3. The largest lightning network certified in under 60 s, from a list of growing candidates.

Single-threaded by default, for both methods: the machine is shared, and multi-threaded BLAS
under contention makes every timing noisy.
"""

from __future__ import annotations

import argparse
import os
import sys


def _set_threads(n: int) -> None:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds for part 3")
    args = parser.parse_args()
    _set_threads(args.threads)  # before numpy and torch are imported

    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from lsa_lib.dimension import exact_dimension, float_dimension
    from lsa_lib.lightning import deep_attention
    from lsa_lib.report import timed

    L, T, A, N = 2, 3, 2, 250

    def expected(delta: int, softmax: bool) -> int:
        return (
            delta * delta + sum(a * (2 * delta - a) for a in (A,) * L) - L + (L if softmax else 0)
        )

    def baseline(delta: int, seed: int = 0) -> int:
        """float32, one backward pass per output coordinate, default matrix_rank tolerance."""
        rng = np.random.default_rng(seed)
        shapes = [(A, delta), (A, delta), (delta, delta)] * L
        params = [
            torch.tensor(rng.standard_normal(s), dtype=torch.float32, requires_grad=True)
            for s in shapes
        ]
        X = torch.tensor(rng.standard_normal((N, delta, T)), dtype=torch.float32)
        layers = [tuple(params[3 * i : 3 * i + 3]) for i in range(L)]
        y = deep_attention(X, layers, "exp").reshape(-1)
        rows = []
        for j in range(y.numel()):
            grads = torch.autograd.grad(y[j], params, retain_graph=True)
            rows.append(torch.cat([g.reshape(-1) for g in grads]))
        J = torch.stack(rows)
        return int(torch.linalg.matrix_rank(J))

    def ours(delta: int, n_inputs: int | None) -> object:
        return float_dimension((delta,) * (L + 1), (A,) * L, T, "exp", n_inputs=n_inputs, seed=0)

    # warm-up (first calls of torch.func and autograd pay one-off initialisation costs)
    ours(3, 5 * N)
    baseline(3)

    print(f"threads: {args.threads}; numpy {np.__version__}, torch {torch.__version__}")
    print()
    print("1. Figure 3 setting: softmax, l = 2, t = 3, a = 2, N = 250 random normal inputs")
    head = (
        f"{'δ':>3} {'P':>4} {'expect':>6} | {'base rank':>9} {'wall s':>7} {'cpu s':>7} | "
        f"{'ours':>4} {'gap':>8} {'wall s':>7} {'cpu s':>7} {'speed-up wall/cpu':>17} | "
        f"{'auto N':>6} {'rank':>4} {'gap':>8} {'cpu s':>6}"
    )
    print(head)
    print("-" * len(head))
    for delta in range(3, 11):
        P = L * (2 * A * delta + delta * delta)
        fixed = timed(ours, delta, N, repeats=5)
        auto = timed(ours, delta, None, repeats=3)
        if args.quick and delta < 10:
            b_rank, b_wall, b_cpu, speed = "–", float("nan"), float("nan"), "–"
        else:
            base = timed(baseline, delta)
            b_rank, b_wall, b_cpu = base.result, base.wall, base.cpu
            speed = f"{b_wall / fixed.wall:.0f}x / {b_cpu / fixed.cpu:.0f}x"
        r, ra = fixed.result, auto.result
        print(
            f"{delta:>3} {P:>4} {expected(delta, True):>6} | {b_rank!s:>9} {b_wall:>7.2f} "
            f"{b_cpu:>7.2f} | {r.rank:>4} {r.gap:>8.1e} {fixed.wall:>7.3f} {fixed.cpu:>7.3f} "
            f"{speed:>17} | {ra.n_inputs:>6} {ra.rank:>4} {ra.gap:>8.1e} {auto.cpu:>6.3f}"
        )
        sys.stdout.flush()

    print()
    print("2. Certified dimensions of the lightning networks (same widths; exact mod p)")
    head = f"{'δ':>3} {'P':>4} {'expect':>6} {'lower':>5} {'upper':>5} {'inputs':>6} {'cpu s':>7}"
    print(head)
    print("-" * len(head))
    total = 0.0
    for delta in range(3, 11):
        run = timed(exact_dimension, (delta,) * (L + 1), (A,) * L, T, seed=0, repeats=3)
        cert = run.result
        total += run.cpu
        print(
            f"{delta:>3} {cert.n_params:>4} {expected(delta, False):>6} {cert.lower:>5} "
            f"{cert.upper:>5} {cert.n_inputs:>6} {run.cpu:>7.3f}"
        )
    print(f"total: {total:.2f} s (CPU)")
    sys.stdout.flush()

    if args.quick:
        return
    print()
    print(f"3. Largest lightning network certified in under {args.budget:.0f} s")
    candidates = [
        ((16,) * 5, (16,) * 4, 3),
        ((16,) * 5, (16,) * 4, 16),
        ((24,) * 5, (24,) * 4, 24),
        ((32,) * 5, (24,) * 4, 32),
        ((32,) * 5, (32,) * 4, 32),
    ]
    head = f"{'widths':>22} {'attn':>18} {'t':>3} {'P':>6} {'lower':>5} {'upper':>5} {'wall s':>7}"
    print(head)
    print("-" * len(head))
    best = None
    for widths, attn, t in candidates:
        run = timed(exact_dimension, widths, attn, t, seed=0)
        cert = run.result
        ok = run.wall < args.budget
        mark = "" if ok else "  (over budget)"
        print(
            f"{widths!s:>22} {attn!s:>18} {t:>3} {cert.n_params:>6} {cert.lower:>5} "
            f"{cert.upper:>5} {run.wall:>7.2f}{mark}"
        )
        sys.stdout.flush()
        if ok and cert.certified:
            best = (widths, attn, t, cert, run.wall)
        if not ok:
            break
    if best is not None:
        widths, attn, t, cert, wall = best
        print(
            f"largest certified under budget: widths {widths}, attn {attn}, t = {t}: "
            f"P = {cert.n_params}, dimension {cert.rank}, {wall:.1f} s"
        )


if __name__ == "__main__":
    main()

"""Benchmark of the sweep (``lsa_lib.sweep``, ``make sweep``): its speed and Dask's overhead.

Run with ``.venv/bin/python benchmarks/bench_sweep.py [--cases N] [--sample N]`` on a quiet
machine. Prints, side by side:

1. certified architectures per CPU-second by depth, read off the committed sweep's records
   (each record's own time; one process per core);
2. the same cases swept on one and on two Dask workers (wall time, and the ratio);
3. Dask against the plain process pool that ``make atlas`` uses (``multiprocessing`` with one
   task per architecture, the costliest first), on the same ``--cases`` architectures (2,000
   by default) on two processes each: wall times and their ratio, Dask's overhead;
4. the certificate before and after the changes that made it cheaper (the fiber families'
   stacked ranks through flint's matrix constructor instead of the library's rank mod p, and
   abstract-number checks before the test for Python ints), on a ``--sample`` of the cases,
   single-threaded in this process, interleaved so that both see the same load.
"""

from __future__ import annotations

import argparse
import multiprocessing
import numbers
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]


def per_depth() -> None:
    from lsa_lib.sweep import read_sweep

    records = read_sweep(ROOT / "site_data" / "sweep")
    cases, seconds = defaultdict(int), defaultdict(float)
    for r in records:
        d = len(r["attn"])
        cases[d] += r["status"] == "ok" and r["lower"] == r["upper"]
        seconds[d] += r["seconds"]
    print("1. certified architectures per CPU-second, committed sweep")
    print("   depth  cases  CPU-s  certified/CPU-s")
    for d in sorted(cases):
        print(f"   {d:5d}  {cases[d]:5d}  {seconds[d]:5.0f}  {cases[d] / seconds[d]:15.2f}")
    total = sum(cases.values()) / sum(seconds.values())
    print(f"   all    {sum(cases.values()):5d}  {sum(seconds.values()):5.0f}  {total:15.2f}")


def _options(n: int, seed: int):
    from lsa_lib.sweep import SweepOptions

    return SweepOptions(seed=seed, n=n, shard_size=25)


def dask_wall(n: int, workers: int, seed: int) -> float:
    from lsa_lib.sweep import run_sweep

    out = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    try:
        start = time.perf_counter()
        run_sweep(out, _options(n, seed), workers=workers, progress=None)
        return time.perf_counter() - start
    finally:
        shutil.rmtree(out)


def _one(case: dict) -> float:
    from lsa_lib.sweep import certify_architecture

    start = time.perf_counter()
    certify_architecture(
        case["widths"],
        case["attn"],
        case["t"],
        seed=case["seed"],
        softmax=case["softmax"],
        time_limit=120,
    )
    return time.perf_counter() - start


def _single_threaded() -> None:
    import torch

    torch.set_num_threads(1)


def pool_wall(n: int, seed: int, jobs: int = 2) -> float:
    """The same cases through the atlas's strategy: a fork pool, the costliest first."""
    from lsa_lib.lightning import parameter_count
    from lsa_lib.sweep._certify import rule_verdicts
    from lsa_lib.sweep._run import SOFTMAX_RULES, shard_cases

    options = _options(n, seed)
    cases = []
    for k in range(options.shards):
        for j, c in enumerate(shard_cases(options, k)):
            touched = rule_verdicts(c["widths"], c["attn"], c["t"], {})
            softmax = parameter_count(
                c["widths"], c["attn"]
            ) <= options.softmax_max_params and bool(
                SOFTMAX_RULES & set(touched["rules"] + touched["near"])
            )
            seed_k = (options.seed * 1_000_003 + k * 10_007 + j) % 2**31
            cases.append({**c, "seed": seed_k, "softmax": softmax})
    cases.sort(key=lambda c: parameter_count(c["widths"], c["attn"]) * len(c["attn"]), reverse=True)
    start = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs, initializer=_single_threaded) as pool:
        for _ in pool.imap_unordered(_one, cases, chunksize=1):
            pass
    return time.perf_counter() - start


def before_after(n: int, seed: int) -> None:
    """The certificate with the previous stacked ranks and number checks, against today's."""
    import flint
    import numpy as np

    from lsa_lib import _exact, _modp
    from lsa_lib.dimension import _fibers
    from lsa_lib.sweep import certify_architecture, draw_architectures

    today = (_fibers._stacked_rank, _exact._number, _exact._kind, _modp.as_residues)

    def old_stacked(blocks):
        blocks = [b for b in blocks if b.shape[0]]
        if not blocks:
            return 0
        M = np.concatenate(blocks).astype(np.int64)
        return int(flint.nmod_mat(*M.shape, M.ravel().tolist(), _exact.PRIME).rank())

    def old_number(x):
        return (
            today[1](x) if not isinstance(x, numbers.Integral) or isinstance(x, np.generic) else x
        )

    def old_kind(rows):
        for row in rows:
            for x in row:
                isinstance(x, numbers.Integral)  # the abstract check paid on every entry
        return today[2](rows)

    cases = draw_architectures(np.random.default_rng(seed), n)
    times = {"before": 0.0, "after": 0.0}
    same = True
    for c in cases:
        args = (c["widths"], c["attn"], c["t"])
        for label in ("before", "after"):
            if label == "before":
                _fibers._stacked_rank, _exact._number, _exact._kind = (
                    old_stacked,
                    old_number,
                    old_kind,
                )
            start = time.process_time()
            r = certify_architecture(*args, seed=1)
            times[label] += time.process_time() - start
            _fibers._stacked_rank, _exact._number, _exact._kind, _modp.as_residues = today
            if label == "before":
                first = (r["lower"], r["upper"], r["families"])
            elif first != (r["lower"], r["upper"], r["families"]):
                same = False
    print(f"4. the lightning certificate on {n} sweep architectures (CPU seconds, one thread)")
    print(
        f"   before {times['before']:.1f} s   after {times['after']:.1f} s   "
        f"ratio {times['before'] / times['after']:.2f}   same bounds and families: {same}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--workers-cases", type=int, default=200)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--skip", default="", help="parts to skip, e.g. 2,3")
    args = parser.parse_args(argv)
    skip = {int(x) for x in args.skip.split(",") if x}
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at the start")
    if 1 not in skip:
        per_depth()
    if 2 not in skip:
        one = dask_wall(args.workers_cases, 1, args.seed)
        two = dask_wall(args.workers_cases, 2, args.seed)
        print(
            f"2. {args.workers_cases} architectures on Dask: 1 worker {one:.0f} s, "
            f"2 workers {two:.0f} s, speed-up {one / two:.2f}"
        )
    if 3 not in skip:
        dask = dask_wall(args.cases, 2, args.seed + 1)
        pool = pool_wall(args.cases, args.seed + 1)
        print(
            f"3. {args.cases} architectures on 2 processes: Dask {dask:.0f} s, process pool "
            f"{pool:.0f} s, Dask / pool {dask / pool:.2f}"
        )
    if 4 not in skip:
        before_after(args.sample, args.seed + 2)
    print(f"load {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())

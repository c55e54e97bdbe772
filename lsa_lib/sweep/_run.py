"""Shards, the Dask cluster, the Parquet files and the command line (part of :mod:`lsa_lib.sweep`).

A sweep is ``n`` architectures in shards of ``shard_size``; shard ``k`` of seed ``s`` draws its
cases from ``numpy.random.default_rng([s, k])`` and seeds each certificate from its position,
so the same seed gives the same records on any cluster. Shards run as Dask tasks; the client
writes each finished shard to ``shard-<k>.parquet`` (through a temporary name, so a file is
either whole or absent), and a rerun skips the shards already written: a killed sweep resumes,
and a worker that dies loses no finished shard (Dask runs its task again elsewhere).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import _checks
from ..lightning import parameter_count
from ._certify import certify_architecture, rule_verdicts
from ._draw import Limits, draw

MANIFEST = "sweep.json"
# how long a given scheduler address may take to answer
CONNECT_TIMEOUT = "5s"
SOFTMAX_RULES = frozenset({"softmax one layer", "softmax formula", "softmax lightning plus l"})


@dataclass(frozen=True)
class SweepOptions:
    """What a sweep draws and computes; stored beside its shards (:doc:`/book/notes/sweep`).

    The options are written to ``sweep.json`` in the sweep's folder; a rerun with the same
    options resumes the sweep.

    ``softmax_max_params``: the softmax network is certified too where a softmax rule's domain
    holds the case or is one clause away, and ``P`` is at most this (larger softmax networks
    are rarely certified: float64 loses the rank first).
    """

    seed: int = 0
    n: int = 20000
    shard_size: int = 50
    time_limit: float = 120.0
    softmax_max_params: int = 150
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        _checks.size(self.n, "n (architectures)")
        _checks.size(self.shard_size, "shard_size")
        _checks.seed(self.seed)
        if not (isinstance(self.time_limit, int | float) and self.time_limit > 0):
            raise ValueError(
                f"time_limit must be a positive number of seconds, got {self.time_limit!r}"
            )
        if not isinstance(self.softmax_max_params, int) or self.softmax_max_params < 0:
            raise ValueError(
                f"softmax_max_params must be an int ≥ 0, got {self.softmax_max_params!r}"
            )
        for name, value in asdict(self.limits).items():
            _checks.size(value, f"limits.{name}")

    @property
    def shards(self) -> int:
        """The number of shards."""
        return -(-self.n // self.shard_size)

    def shard_len(self, k: int) -> int:
        """The number of architectures of shard ``k``."""
        return min(self.shard_size, self.n - k * self.shard_size)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SweepOptions:
        return cls(**{**data, "limits": Limits(**data["limits"])})


def shard_cases(options: SweepOptions, k: int) -> list[dict[str, Any]]:
    """The cases of shard ``k`` (with their ``kind``), drawn from its own seed."""
    rng = np.random.default_rng([options.seed, k])
    return [draw(rng, options.limits) for _ in range(options.shard_len(k))]


def run_shard(options: SweepOptions, k: int) -> list[dict[str, Any]]:
    """Every record of shard ``k`` (a Dask task: one thread; deterministic but for the times)."""
    import torch

    torch.set_num_threads(1)
    out = []
    for j, case in enumerate(shard_cases(options, k)):
        w, a, t = case["widths"], case["attn"], case["t"]
        seed = (options.seed * 1_000_003 + k * 10_007 + j) % 2**31
        touched = rule_verdicts(w, a, t, {})
        softmax = parameter_count(w, a) <= options.softmax_max_params and bool(
            SOFTMAX_RULES & set(touched["rules"] + touched["near"])
        )
        record = certify_architecture(
            w, a, t, seed=seed, softmax=softmax, time_limit=options.time_limit
        )
        out.append({"shard": k, "index": j, "seed": seed, **case, **record})
    return out


# ---------------------------------------------------------------- Parquet ---


def _schema() -> Any:
    import pyarrow as pa

    ints = pa.list_(pa.int16())
    names = pa.list_(pa.string())
    return pa.schema(
        [
            ("shard", pa.int32()),
            ("index", pa.int32()),
            ("seed", pa.int64()),
            ("kind", pa.string()),
            ("widths", ints),
            ("attn", ints),
            ("t", pa.int16()),
            ("P", pa.int32()),
            ("lower", pa.int32()),
            ("upper", pa.int32()),
            ("upper_symmetries", pa.int32()),
            ("families", names),
            ("softmax_lower", pa.int32()),
            ("softmax_upper", pa.int32()),
            ("softmax_points", pa.int16()),
            ("softmax_rank", pa.int32()),
            ("softmax_gap", pa.float64()),
            ("rules", names),
            ("disagreements", names),
            ("near", names),
            ("near_disagree", names),
            ("status", pa.string()),
            ("seconds", pa.float64()),
        ]
    )


def shard_path(out: Path, k: int) -> Path:
    """The file of shard ``k``."""
    return out / f"shard-{k:05d}.parquet"


def write_shard(out: Path, k: int, records: list[dict[str, Any]]) -> None:
    """Write one shard atomically (a temporary file, then a rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema()
    columns = {f.name: [r.get(f.name) for r in records] for f in schema}
    table = pa.table(columns, schema=schema)
    tmp = shard_path(out, k).with_suffix(".tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, shard_path(out, k))


def committed_sweep() -> Path | None:
    """The folder ``site_data/sweep`` of the book's repository, from the working directory up
    (None in a runtime without the repository, such as Colab)."""
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "site_data" / "sweep" / MANIFEST).exists():
            return folder / "site_data" / "sweep"
    return None


def read_sweep(folder: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Every record of a sweep's folder, in shard order (see :doc:`/book/notes/sweep`).

    Parameters
    ----------
    folder : path, optional
        A folder written by :func:`run_sweep`; default: the committed sweep of the book's
        repository (``site_data/sweep``, found from the working directory up).

    Returns
    -------
    list of dict
        One dict per architecture, with the columns of the Parquet files (``widths`` and
        ``attn`` as tuples).

    Raises
    ------
    FileNotFoundError
        If the folder holds no sweep (or, by default, no repository is found).
    """
    import pyarrow.parquet as pq

    path = committed_sweep() if folder is None else Path(folder)
    if path is None or not (path / MANIFEST).exists():
        where = "the book's repository (site_data/sweep)" if folder is None else str(folder)
        raise FileNotFoundError(f"no sweep in {where}: run `make sweep` there")
    records = []
    for shard in sorted(path.glob("shard-*.parquet")):
        for r in pq.read_table(shard).to_pylist():
            r["widths"], r["attn"] = tuple(r["widths"]), tuple(r["attn"])
            records.append(r)
    return records


# ---------------------------------------------------------------- the cluster ---


def _client(workers: int, scheduler: str | None) -> Any:
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as err:
            raise ConnectionError(
                f"no Dask scheduler answers at {scheduler!r} ({type(err).__name__}: {err})"
            ) from None
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # a free port: two sweeps on one machine do not collide
        silence_logs=logging.ERROR,
    )
    return Client(cluster)


class _Progress:
    """Shards done and architectures per second, on one line of stderr."""

    def __init__(self, total: int, done: int, stream: Any) -> None:
        self.total, self.done, self.stream = total, done, stream
        self.start, self.cases = time.perf_counter(), 0

    def update(self, cases: int) -> None:
        self.done += 1
        self.cases += cases
        if self.stream is None:
            return
        rate = self.cases / max(time.perf_counter() - self.start, 1e-9)
        width = 30
        bar = "#" * round(width * self.done / self.total)
        self.stream.write(
            f"\r[{bar:<{width}}] {self.done}/{self.total} shards, {rate:.1f} architectures/s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")


def run_sweep(
    out: str | os.PathLike[str],
    options: SweepOptions | None = None,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    progress: Any = sys.stderr,
) -> dict[str, Any]:
    """Run (or resume) a sweep into the folder ``out`` on a Dask cluster.

    Explained in :doc:`/book/notes/sweep`. The folder keeps the options (``sweep.json``); a
    folder holding a sweep with other options is refused. Shards already written are skipped.

    Parameters
    ----------
    out : path
        The folder of the shards.
    options : SweepOptions, optional
        Default: the documented sweep (20,000 architectures, seed 0).
    workers : int
        Worker processes of the local cluster (one thread each); ignored with ``scheduler``.
    scheduler : str, optional
        The address of a running Dask scheduler (``tcp://host:8786``); default: a
        ``LocalCluster`` on this machine.
    progress : file, optional
        Where the progress line goes (None: nowhere).

    Returns
    -------
    dict
        ``shards`` (written by this run), ``skipped`` (found on disk), ``architectures``
        (computed by this run), ``seconds`` (wall time).

    Raises
    ------
    ValueError
        On bad options, or a folder with another sweep.
    ConnectionError
        If no scheduler answers at ``scheduler``.
    """
    options = SweepOptions() if options is None else options
    if not isinstance(options, SweepOptions):
        raise TypeError(f"options must be a SweepOptions, got {type(options).__name__}")
    _checks.size(workers, "workers")
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address string, got {scheduler!r}")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / MANIFEST
    if manifest.exists():
        stored = json.loads(manifest.read_text())
        if stored != options.to_json():
            raise ValueError(
                f"{folder} holds a sweep with other options ({stored}); use another folder "
                "or the same options to resume it"
            )
    else:
        manifest.write_text(json.dumps(options.to_json(), indent=1) + "\n")
    todo = [k for k in range(options.shards) if not shard_path(folder, k).exists()]
    start = time.perf_counter()
    bar = _Progress(options.shards, options.shards - len(todo), progress)
    cases = 0
    if todo:
        from distributed import as_completed

        with _client(workers, scheduler) as client:
            futures = client.map(run_shard, [options] * len(todo), todo, pure=False)
            for future in as_completed(futures):
                records = future.result()
                write_shard(folder, records[0]["shard"], records)
                cases += len(records)
                bar.update(len(records))
                future.release()
    bar.close()
    return {
        "shards": len(todo),
        "skipped": options.shards - len(todo),
        "architectures": cases,
        "seconds": time.perf_counter() - start,
    }


# ---------------------------------------------------------------- the command line ---


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value}")
    return value


def main(argv: Iterable[str] | None = None) -> int:
    """``python -m lsa_lib.sweep``: run or resume a sweep (``make sweep``, :doc:`/book/notes/sweep`).

    Parameters
    ----------
    argv : iterable of str, optional
        The command line's arguments (default: ``sys.argv[1:]``); ``--help`` lists them.

    Returns
    -------
    int
        0; bad arguments, an unreachable scheduler or a folder with another sweep exit with
        status 2 and a message naming the problem.
    """
    parser = argparse.ArgumentParser(
        prog="python -m lsa_lib.sweep",
        description="Certify random architectures beyond the atlas and check every rule on them.",
    )
    parser.add_argument("--out", type=Path, default=Path("site_data/sweep"))
    parser.add_argument("--n", type=_positive, default=SweepOptions.n, help="architectures")
    parser.add_argument("--seed", type=int, default=SweepOptions.seed)
    parser.add_argument("--shard-size", type=_positive, default=SweepOptions.shard_size)
    parser.add_argument("--time-limit", type=_seconds, default=SweepOptions.time_limit)
    parser.add_argument("--max-depth", type=_positive, default=Limits.max_depth)
    parser.add_argument("--max-width", type=_positive, default=Limits.max_width)
    parser.add_argument("--max-attn", type=_positive, default=Limits.max_attn)
    parser.add_argument("--max-tokens", type=_positive, default=Limits.max_tokens)
    parser.add_argument("--max-params", type=_positive, default=Limits.max_params)
    parser.add_argument("--softmax-max-params", type=int, default=SweepOptions.softmax_max_params)
    parser.add_argument("--workers", type=_positive, default=2, help="local worker processes")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    args = parser.parse_args(None if argv is None else list(argv))
    if args.seed < 0:
        parser.error(f"--seed must be ≥ 0, got {args.seed}")
    if args.softmax_max_params < 0:
        parser.error(f"--softmax-max-params must be ≥ 0, got {args.softmax_max_params}")
    limits = Limits(args.max_depth, args.max_width, args.max_attn, args.max_tokens, args.max_params)
    options = SweepOptions(
        seed=args.seed,
        n=args.n,
        shard_size=args.shard_size,
        time_limit=args.time_limit,
        softmax_max_params=args.softmax_max_params,
        limits=limits,
    )
    try:
        result = run_sweep(args.out, options, workers=args.workers, scheduler=args.scheduler)
    except (ValueError, ConnectionError) as err:
        parser.exit(2, f"python -m lsa_lib.sweep: error: {err}\n")
    print(
        f"{result['architectures']} architectures in {result['shards']} shards "
        f"({result['skipped']} shards already done) in {result['seconds']:.0f} s; "
        f"records in {args.out}"
    )
    return 0

"""Compute the data of the website's atlas of dimensions (``make atlas``).

For every architecture of the atlas grid — depth 1 and 2 with widths and attention dimensions
1..6, depth 3 with 1..4 — this records what ``lsa_lib`` says about its neuromanifold: the
parameter count, the dimension formula's value or the hypotheses that fail, the certified
dimension (exact bounds modulo a prime) and, where computed, the float64 estimate of the
softmax network's dimension with its singular-value gap.

All calls into the library are in :func:`compute_entry`; the rest of the script only walks
the grid and writes JSON files into ``site_data/atlas/`` (one small index, then one file per
depth and first two widths, which the atlas page fetches only when the reader picks such an
architecture).

Usage: ``.venv/bin/python tools/make_atlas.py [--jobs N] [--only-depth L] [--out DIR]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "site_data" / "atlas"
T = 3  # tokens per input, for every entry
# depth -> largest width / attention dimension on the grid
GRID = {1: 6, 2: 6, 3: 4}
# the softmax float estimate is computed for these depths (all of them: it is cheap here)
SOFTMAX_DEPTHS = (1, 2, 3)


def compute_entry(
    widths: tuple[int, ...], attn: tuple[int, ...], *, softmax: bool, seed: int = 0
) -> dict[str, Any]:
    """Everything the atlas shows for one architecture, computed by ``lsa_lib`` (``t = 3``).

    The only function of this script that calls the library.

    Returns a dict of plain values: ``P``; ``formula`` (the dimension formula's value, or
    None when a hypothesis fails), ``failed`` (the failed hypotheses, as sentences),
    ``formula_rhs`` (the general-width formula's right-hand side, computed even where it does
    not apply), ``source`` (which formula, whose); ``lower``/``upper`` (certified bounds on the
    lightning network's dimension: the better of the plain certificate and the one whose upper
    bound also uses the extra fiber directions); for the softmax network ``softmax_formula``
    (or None), ``softmax_failed``, and when ``softmax`` is true the float64 estimate
    ``softmax_rank`` with its ``softmax_gap`` (``softmax_rank`` None when no gap was clear).
    """
    from lsa_lib import parameter_count
    from lsa_lib.dimension import (
        certified_dimension_beyond_symmetries,
        failed_hypotheses,
        formula_source,
        general_width_formula,
    )
    from lsa_lib.rank import RankAmbiguityError, certified_dimension, numerical_dimension

    failed = failed_hypotheses(widths, attn, t=T)
    plain = certified_dimension(widths, attn, t=T, seed=seed)
    beyond = certified_dimension_beyond_symmetries(widths, attn, t=T, seed=seed)
    entry: dict[str, Any] = {
        "P": parameter_count(widths, attn),
        "formula": None if failed else general_width_formula(widths, attn),
        "failed": failed,
        "formula_rhs": general_width_formula(widths, attn),
        "source": formula_source(widths, attn),
        "lower": max(plain.lower, beyond.lower),
        "upper": min(plain.upper, beyond.upper),
        "prime": plain.prime,
    }
    sm_failed = failed_hypotheses(widths, attn, t=T, normalized=True)
    entry["softmax_failed"] = sm_failed
    entry["softmax_formula"] = (
        None if sm_failed else general_width_formula(widths, attn, normalized=True)
    )
    entry["softmax_source"] = formula_source(widths, attn, normalized=True)
    if softmax:
        try:
            est = numerical_dimension(widths, attn, t=T, normalized=True, seed=seed)
            entry["softmax_rank"], entry["softmax_gap"] = est.rank, float(est.gap)
        except RankAmbiguityError as err:
            entry["softmax_rank"], entry["softmax_gap"] = None, float(err.reading.gap)
    return entry


# ----------------------------------------------------------------------------------------
# the grid and the files (no library calls below)
# ----------------------------------------------------------------------------------------

# Where each case is explained: the chapter's statement boxes (stable labels, also cited by
# the atlas page through {prf:ref}, so that the build fails if one disappears).
CHAPTERS = {
    "one-layer": ["04_dimension.html#thm-dim-one-layer", "Theorem 4.1 (dimension of one layer)"],
    "equal": ["04_dimension.html#thm-dim-deep", "Theorem 4.2 (deep networks, equal widths)"],
    "general": ["04_dimension.html#conj-general-widths", "Conjecture 4.1 (general widths)"],
    "fails": [
        "04_dimension.html#conj-general-widths",
        "Conjecture 4.1 and its hypotheses (general widths)",
    ],
    "softmax": ["06_softmax.html#conj-softmax-deep", "Conjecture 6.1 (softmax networks)"],
}


def architectures(depth: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (widths, attn) of the given depth on the atlas grid, in lexicographic order."""
    n = GRID[depth]
    sizes = range(1, n + 1)
    return [
        (tuple(w), tuple(a))
        for w in itertools.product(sizes, repeat=depth + 1)
        for a in itertools.product(sizes, repeat=depth)
    ]


def chapter_key(widths: tuple[int, ...], entry: dict[str, Any]) -> str:
    if len(widths) == 2:
        return "one-layer"
    if entry["failed"]:
        return "fails"
    return "equal" if entry["source"].startswith("equal") else "general"


def file_name(widths: tuple[int, ...]) -> str:
    """The data file of an architecture: by depth and its first two widths."""
    return f"l{len(widths) - 1}-{widths[0]}-{widths[1]}.json"


def _work(arch: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[Any, dict[str, Any], float]:
    widths, attn = arch
    start = time.perf_counter()
    entry = compute_entry(widths, attn, softmax=len(attn) in SOFTMAX_DEPTHS)
    return arch, entry, time.perf_counter() - start


def _compact(widths: tuple[int, ...], entry: dict[str, Any]) -> list[Any]:
    """One row of a data file; the column names are in the index (``columns``)."""
    return [
        entry["P"],
        entry["formula"],
        entry["formula_rhs"],
        entry["failed"],
        entry["source"],
        entry["lower"],
        entry["upper"],
        entry["softmax_formula"],
        entry["softmax_failed"],
        entry.get("softmax_rank"),
        None if entry.get("softmax_gap") is None else float(f"{entry['softmax_gap']:.3g}"),
        chapter_key(widths, entry),
    ]


COLUMNS = [
    "P",
    "formula",
    "formula_rhs",
    "failed",
    "source",
    "lower",
    "upper",
    "softmax_formula",
    "softmax_failed",
    "softmax_rank",
    "softmax_gap",
    "chapter",
]


def write_index(out: Path) -> None:
    """``index.json``: the grid, the columns of the data files, the chapter links."""
    import lsa_lib

    names = sorted(p.name for p in out.glob("l*.json"))
    index = {
        "t": T,
        "grid": {str(d): GRID[d] for d in sorted(GRID)},
        "softmax_depths": list(SOFTMAX_DEPTHS),
        "columns": COLUMNS,
        "chapters": CHAPTERS,
        "files": names,
        "entries": sum(len(json.loads((out / n).read_text())) for n in names),
        "lsa_lib_version": lsa_lib.__version__,
    }
    (out / "index.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--only-depth", type=int, choices=sorted(GRID), default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--index-only", action="store_true", help="rewrite index.json from the data files"
    )
    args = parser.parse_args(argv)
    if args.index_only:
        write_index(args.out)
        return 0

    depths = [args.only_depth] if args.only_depth else sorted(GRID)
    archs = [arch for depth in depths for arch in architectures(depth)]
    start = time.perf_counter()
    files: dict[str, dict[str, Any]] = defaultdict(dict)
    seconds: dict[int, float] = defaultdict(float)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for k, (arch, entry, sec) in enumerate(pool.imap_unordered(_work, archs, chunksize=8)):
            widths, attn = arch
            key = ",".join(map(str, widths)) + "|" + ",".join(map(str, attn))
            files[file_name(widths)][key] = _compact(widths, entry)
            seconds[len(attn)] += sec
            if (k + 1) % 500 == 0:
                print(f"{k + 1}/{len(archs)} architectures, {time.perf_counter() - start:.0f} s")
    elapsed = time.perf_counter() - start

    args.out.mkdir(parents=True, exist_ok=True)
    if args.only_depth is None:
        for old in args.out.glob("l*.json"):
            old.unlink()
    sizes = 0
    for name, rows in sorted(files.items()):
        text = json.dumps(dict(sorted(rows.items())), separators=(",", ":"), ensure_ascii=False)
        (args.out / name).write_text(text + "\n", encoding="utf-8")
        sizes += len(text) + 1
    write_index(args.out)
    cpu = ", ".join(f"depth {d}: {seconds[d]:.0f} s" for d in sorted(seconds))
    print(
        f"{len(archs)} architectures in {elapsed:.0f} s wall ({args.jobs} processes; "
        f"compute time {cpu}); {len(files)} data files, {sizes / 1024:.0f} KiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

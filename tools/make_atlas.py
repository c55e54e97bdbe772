"""Compute the data of the website's atlas of dimensions (``make atlas``).

For every architecture of the atlas grid — depth 1 and 2 with widths and attention dimensions
1..6, depth 3 with 1..4 — this records what ``lsa_lib`` says about its neuromanifold: the
parameter count, the dimension formula's value or the hypotheses that fail, the certified
dimension (exact bounds modulo a prime) and, where computed, the certified bounds on the
softmax network's dimension and its float64 estimate with its singular-value gap.

All calls into the library are in :func:`compute_entry` and :func:`softmax_entry`; the
rest of the script only walks the grid and writes JSON files into ``site_data/atlas/`` (one
small index, then one file per depth and first widths, which the atlas page fetches only when
the reader picks such an architecture).

Usage: ``.venv/bin/python tools/make_atlas.py [--jobs N] [--out DIR] [--rewrite | --softmax]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import re
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
# the softmax estimate is the largest trusted float64 rank over this many random points
SOFTMAX_POINTS = 3


def compute_entry(
    widths: tuple[int, ...], attn: tuple[int, ...], *, softmax: bool, seed: int = 0
) -> dict[str, Any]:
    """Everything the atlas shows for one architecture, computed by ``lsa_lib`` (``t = 3``).

    With :func:`softmax_entry`, the only code of this script that calls the library.

    Returns a dict of plain values: ``P``; ``formula`` (the dimension formula's value, or
    None when a hypothesis fails), ``failed`` (the failed hypotheses, as sentences),
    ``formula_rhs`` (the general-width formula's right-hand side, computed even where it does
    not apply), ``source`` (which formula, whose); ``lower``/``upper`` (certified bounds on the
    lightning network's dimension: the better of the plain certificate and the one whose upper
    bound also uses the extra fiber directions); for the softmax network ``softmax_formula``
    (or None), ``softmax_failed``, and when ``softmax`` is true the certified bounds and the
    float64 estimate of :func:`softmax_entry`.
    """
    from lsa_lib import parameter_count
    from lsa_lib.dimension import exact_dimension, failed_hypotheses, general_width_formula

    failed = failed_hypotheses(widths, attn, t=T)
    plain = exact_dimension(widths, attn, T, seed=seed)
    beyond = exact_dimension(widths, attn, T, beyond_symmetries=True, seed=seed)
    entry: dict[str, Any] = {
        "P": parameter_count(widths, attn),
        "formula": None if failed else general_width_formula(widths, attn),
        "failed": failed,
        "formula_rhs": general_width_formula(widths, attn),
        "source": _source(widths, attn),
        "lower": max(plain.lower, beyond.lower),
        "upper": min(plain.upper, beyond.upper),
        "prime": plain.prime,
    }
    sm_failed = failed_hypotheses(widths, attn, t=T, normalizer="exp")
    entry["softmax_failed"] = sm_failed
    entry["softmax_formula"] = (
        None if sm_failed else general_width_formula(widths, attn, normalizer="exp")
    )
    entry["softmax_source"] = _source(widths, attn, softmax=True)
    if softmax:
        entry.update(softmax_entry(widths, attn, seed=seed))
    return entry


def softmax_entry(
    widths: tuple[int, ...], attn: tuple[int, ...], *, seed: int = 0
) -> dict[str, Any]:
    """The softmax network's dimension: certified bounds, and a float64 estimate.

    ``softmax_lower``/``softmax_upper``: the exact engine's bounds (a Jacobian minor proven
    non-zero in ball arithmetic; the symmetries that survive the softmax). ``softmax_rank``: the
    largest trusted float64 reading over ``SOFTMAX_POINTS`` random points, with its
    ``softmax_gap``. A rank at one point never exceeds the dimension, and at an unlucky point a
    true direction can sink under round-off (width-one networks average their tokens together,
    see the softmax chapter's note on numerics), so the best reading is kept; where it exceeds
    the certificate's lower bound, the certificate is also computed at the best reading's point
    and the better of the two bounds kept on each side. ``softmax_rank`` is None when no point
    gives a trusted reading (``softmax_gap`` is then the largest drop seen).
    """
    from lsa_lib.dimension import exact_dimension, float_dimension

    readings = [
        float_dimension(widths, attn, T, "exp", seed=seed + k, strict=False)
        for k in range(SOFTMAX_POINTS)
    ]
    trusted = [k for k, r in enumerate(readings) if r.trusted]
    bounds = exact_dimension(widths, attn, T, "exp", seed=seed)
    entry = {"softmax_lower": bounds.lower, "softmax_upper": bounds.upper}
    if not trusted:
        return {**entry, "softmax_rank": None, "softmax_gap": max(float(r.gap) for r in readings)}
    k = max(trusted, key=lambda k: (readings[k].rank, readings[k].gap))
    best = readings[k]
    if best.rank > bounds.lower and k > 0:  # certify at the point of the best reading too
        other = exact_dimension(widths, attn, T, "exp", seed=seed + k)
        entry["softmax_lower"] = max(bounds.lower, other.lower)  # both pairs are proofs
        entry["softmax_upper"] = min(bounds.upper, other.upper)
    return {**entry, "softmax_rank": best.rank, "softmax_gap": float(best.gap)}


# ----------------------------------------------------------------------------------------
# the grid and the files (no library calls below)
# ----------------------------------------------------------------------------------------

# Where each case is explained: the chapter's statement boxes (stable labels, also cited by
# the atlas page through {prf:ref}, so that the build fails if one disappears).
CHAPTERS = {
    "one-layer": ["04_dimension.html#thm-dim-one-layer", "the dimension of one layer"],
    "equal": ["04_dimension.html#thm-dim-deep", "deep networks with a bottleneck"],
    "general": ["04_dimension.html#conj-general-widths", "the book's general-width conjecture"],
    "fails": [
        "04_dimension.html#conj-general-no-hypotheses",
        "why the general-width formula needs its hypotheses",
    ],
    "softmax": ["06_softmax.html#conj-softmax-deep", "the softmax conjecture (Conjecture 3.10)"],
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


def _source(widths: tuple[int, ...], attn: tuple[int, ...], softmax: bool = False) -> str:
    """Which statement gives the formula's value, and whose it is (see the chapters' boxes)."""
    if len(attn) == 1:
        return f"one {'softmax ' if softmax else ''}layer: the formula reported for HMK25"
    equal = len(set(widths)) == 1
    if softmax:
        return (
            "equal widths: HMK25's Eq. 16 (Conjecture 3.10)"
            if equal
            else "the general-width formula + l (the book's extension of Eq. 16's count)"
        )
    return (
        "equal widths: the formula reported for HMK25"
        if equal
        else "general widths: the book's conjecture, certified on grids"
    )


def chapter_key(widths: tuple[int, ...], entry: dict[str, Any]) -> str:
    if len(widths) == 2:
        return "one-layer"
    if entry["failed"]:
        return "fails"
    return "equal" if len(set(widths)) == 1 else "general"


# leading widths that name a data file, per depth (files of at most a few hundred entries)
SPLIT = {1: 2, 2: 2, 3: 3}


def file_name(widths: tuple[int, ...]) -> str:
    """The data file of an architecture: by depth and its first widths (``SPLIT``)."""
    depth = len(widths) - 1
    return f"l{depth}-" + "-".join(map(str, widths[: SPLIT[depth]])) + ".json"


# The library's sentences (failed hypotheses, formula sources) repeat with other numbers: a data
# file stores each as [template number, "its numbers"], the templates are in the index.
NUMBER = re.compile(r"\d+")


def encode(sentences: list[str], templates: dict[str, int]) -> list[list[Any]]:
    out = []
    for sentence in sentences:
        if "#" in sentence:
            raise ValueError(f"cannot encode a sentence with '#': {sentence!r}")
        template = NUMBER.sub("#", sentence)
        number = templates.setdefault(template, len(templates))
        out.append([number, ",".join(NUMBER.findall(sentence))])
    return out


def decode(codes: list[list[Any]], templates: list[str]) -> list[str]:
    """The sentences back from :func:`encode` (the atlas page does the same in JavaScript)."""
    out = []
    for number, args in codes:
        pieces = templates[number].split("#")
        values = args.split(",") if args else []
        if len(values) != len(pieces) - 1:
            raise ValueError(f"template {number} takes {len(pieces) - 1} numbers, got {args!r}")
        out.append("".join(p + v for p, v in zip(pieces, [*values, ""], strict=True)))
    return out


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
    "softmax_lower",
    "softmax_upper",
]


def _row(widths: tuple[int, ...], entry: dict[str, Any], templates: dict[str, int]) -> list[Any]:
    """One row of a data file, in the order of ``COLUMNS``."""
    gap = entry.get("softmax_gap")
    return [
        entry["P"],
        entry["formula"],
        entry["formula_rhs"],
        encode(entry["failed"], templates),
        encode([entry["source"]], templates)[0],
        entry["lower"],
        entry["upper"],
        entry["softmax_formula"],
        encode(entry["softmax_failed"], templates),
        entry.get("softmax_rank"),
        None if gap is None else float(f"{gap:.2g}"),
        chapter_key(widths, entry),
        entry.get("softmax_lower"),
        entry.get("softmax_upper"),
    ]


def read_atlas(out: Path = OUT) -> dict[tuple[tuple[int, ...], tuple[int, ...]], dict[str, Any]]:
    """The stored entries, decoded (the form :func:`compute_entry` returns, plus ``chapter``)."""
    index = json.loads((out / "index.json").read_text())
    entries = {}
    for name in index["files"]:
        for key, row in json.loads((out / name).read_text()).items():
            w, a = key.split("|")
            arch = (tuple(map(int, w.split(","))), tuple(map(int, a.split(","))))
            entry = dict(zip(index["columns"], row, strict=True))
            entry["failed"] = decode(entry["failed"], index["templates"])
            entry["softmax_failed"] = decode(entry["softmax_failed"], index["templates"])
            entry["source"] = decode([entry["source"]], index["templates"])[0]
            entries[arch] = entry
    return entries


def write_atlas(entries: dict[Any, dict[str, Any]], out: Path) -> int:
    """Write the data files and the index; return the total size in bytes."""
    import lsa_lib

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    templates: dict[str, int] = {}
    files: dict[str, dict[str, Any]] = defaultdict(dict)
    for (widths, attn), entry in sorted(entries.items()):
        key = ",".join(map(str, widths)) + "|" + ",".join(map(str, attn))
        files[file_name(widths)][key] = _row(widths, entry, templates)
    size = 0
    for name, rows in sorted(files.items()):
        text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False) + "\n"
        (out / name).write_text(text, encoding="utf-8")
        size += len(text.encode())
    index = {
        "t": T,
        "grid": {str(d): GRID[d] for d in sorted(GRID)},
        "split": {str(d): SPLIT[d] for d in sorted(SPLIT)},
        "softmax_depths": list(SOFTMAX_DEPTHS),
        "softmax_points": SOFTMAX_POINTS,
        "columns": COLUMNS,
        "templates": sorted(templates, key=templates.get),
        "chapters": CHAPTERS,
        "files": sorted(files),
        "entries": len(entries),
        "lsa_lib_version": lsa_lib.__version__,
    }
    text = json.dumps(index, indent=1, ensure_ascii=False) + "\n"
    (out / "index.json").write_text(text, encoding="utf-8")
    return size + len(text.encode())


def _work(arch: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[Any, dict[str, Any], float]:
    widths, attn = arch
    start = time.perf_counter()
    entry = compute_entry(widths, attn, softmax=len(attn) in SOFTMAX_DEPTHS)
    return arch, entry, time.perf_counter() - start


def _softmax_work(arch: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[Any, dict[str, Any]]:
    return arch, softmax_entry(*arch)


def _in_processes(work: Any, archs: list[Any], jobs: int, chunksize: int) -> Any:
    """``work`` on every architecture, in ``jobs`` single-threaded processes, in any order."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap_unordered(work, archs, chunksize=chunksize)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--rewrite", action="store_true", help="rewrite the stored data (no computation)"
    )
    parser.add_argument(
        "--softmax",
        action="store_true",
        help="recompute only the softmax column (bounds and estimate) of the stored data",
    )
    args = parser.parse_args(argv)
    if args.softmax:
        entries = read_atlas(args.out)
        archs = [arch for arch in sorted(entries) if len(arch[1]) in SOFTMAX_DEPTHS]
        start = time.perf_counter()
        for arch, softmax in _in_processes(_softmax_work, archs, args.jobs, chunksize=16):
            entries[arch].update(softmax)
        size = write_atlas(entries, args.out)
        print(
            f"{len(archs)} softmax entries in {time.perf_counter() - start:.0f} s wall; "
            f"{size / 1024:.0f} KiB"
        )
        return 0
    if args.rewrite:
        entries = read_atlas(args.out)
        for (widths, attn), entry in entries.items():  # sources and chapters need no library
            entry["source"] = _source(widths, attn)
            entry["softmax_source"] = _source(widths, attn, softmax=True)
        size = write_atlas(entries, args.out)
        print(f"rewritten: {size / 1024:.0f} KiB")
        return 0

    archs = [arch for depth in sorted(GRID) for arch in architectures(depth)]
    start = time.perf_counter()
    entries: dict[Any, dict[str, Any]] = {}
    seconds: dict[int, float] = defaultdict(float)
    for k, (arch, entry, sec) in enumerate(_in_processes(_work, archs, args.jobs, chunksize=8)):
        entries[arch] = entry
        seconds[len(arch[1])] += sec
        if (k + 1) % 1000 == 0:
            print(f"{k + 1}/{len(archs)} architectures, {time.perf_counter() - start:.0f} s")
    elapsed = time.perf_counter() - start
    size = write_atlas(entries, args.out)
    cpu = ", ".join(f"depth {d}: {seconds[d]:.0f} s" for d in sorted(seconds))
    print(
        f"{len(archs)} architectures in {elapsed:.0f} s wall ({args.jobs} processes; "
        f"compute time {cpu}); {len(list(args.out.glob('*.json')))} files, {size / 1024:.0f} KiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Compute the data of the website's atlas of dimensions (``make atlas``).

For every architecture of the atlas grid — depth 1 and 2 with widths and attention dimensions
1..6, depth 3 with 1..4 — this records what ``lsa_lib`` says about its neuromanifold: the
parameter count, the dimension formula's value or the hypotheses that fail, the book's rules
(``lsa_lib.rules``) whose domain holds it, the certified dimension of the lightning network and
the certified bounds on the softmax network's dimension (exact bounds; the upper bounds use the
fiber families of the research note on widening layers, and the atlas records which families
each bound needed), the softmax network's float64 estimate with its singular-value gap, and for
a softmax entry whose bounds do not meet, why.

All calls into the library are in :func:`compute_entry`, :func:`softmax_entry` and
:func:`closing_families`; the rest of the script only walks the grid and writes JSON files into
``site_data/atlas/`` (one small index, then one file per depth and first widths, which the
atlas page fetches only when the reader picks such an architecture). Links from the page to
the book are labels (``thm-dim-one-layer``), which the page turns into addresses with the map
the site writes at build time (``_static/labels.json``), so they follow moved text.

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
# the softmax columns are computed for these depths (all of them)
SOFTMAX_DEPTHS = (1, 2, 3)
# the softmax certificate is tried at up to this many random points, until its bounds meet
SOFTMAX_POINTS = 3


def compute_entry(
    widths: tuple[int, ...], attn: tuple[int, ...], *, softmax: bool, seed: int = 0
) -> dict[str, Any]:
    """Everything the atlas shows for one architecture, computed by ``lsa_lib`` (``t = 3``).

    With :func:`formula_columns`, :func:`softmax_entry` and :func:`closing_families`, the only
    code of this script that calls the library.

    Returns a dict of plain values: the columns of :func:`formula_columns`; ``lower``/``upper``
    (certified bounds on the lightning network's dimension, the upper bound with every fiber
    family) and ``families`` (the families that bound needs, see :func:`closing_families`);
    and when ``softmax`` is true the columns of :func:`softmax_entry`.
    """
    from lsa_lib.dimension import exact_dimension

    cert = exact_dimension(widths, attn, T, beyond_symmetries=True, seed=seed)
    entry: dict[str, Any] = formula_columns(widths, attn)
    entry.update(
        lower=cert.lower,
        upper=cert.upper,
        prime=cert.prime,
        families=closing_families(widths, attn, None, seed=seed),
    )
    if softmax:
        entry.update(softmax_entry(widths, attn, seed=seed))
    return entry


def formula_columns(widths: tuple[int, ...], attn: tuple[int, ...]) -> dict[str, Any]:
    """What the formulas and the rules say (cheap: no certificate; ``--rewrite`` redoes it).

    ``P``; ``formula`` (the dimension formula's value, or None when a hypothesis fails),
    ``failed`` (the failed hypotheses, as sentences), ``formula_rhs`` (the general-width
    formula's right-hand side, computed even where it does not apply), ``rules`` (the names of
    the lightning rules whose domain holds the architecture); the same for the softmax network:
    ``softmax_formula``, ``softmax_failed``, ``softmax_rules``.
    """
    from lsa_lib import parameter_count
    from lsa_lib.dimension import failed_hypotheses, general_width_formula

    failed = failed_hypotheses(widths, attn, t=T)
    sm_failed = failed_hypotheses(widths, attn, t=T, normalizer="exp")
    return {
        "P": parameter_count(widths, attn),
        "formula": None if failed else general_width_formula(widths, attn),
        "failed": failed,
        "formula_rhs": general_width_formula(widths, attn),
        "rules": applicable_rules(widths, attn, "lightning"),
        "softmax_formula": None if sm_failed else general_width_formula(widths, attn, "exp"),
        "softmax_failed": sm_failed,
        "softmax_rules": applicable_rules(widths, attn, "softmax"),
    }


def applicable_rules(widths: tuple[int, ...], attn: tuple[int, ...], model: str) -> list[str]:
    """The names of the rules of ``lsa_lib.rules`` about ``model`` whose domain holds the case."""
    from lsa_lib.rules import RULES

    case = {"widths": widths, "attn": attn, "t": T}
    return [r.name for r in RULES if r.model == model and r.in_domain(**case)]


def closing_families(
    widths: tuple[int, ...], attn: tuple[int, ...], normalizer: str | None, *, seed: int = 0
) -> list[str]:
    """The fiber families the upper bound needs beyond the symmetries (none: they suffice).

    ``lsa_lib.dimension.needed_fiber_families`` at another random point than the certificate's.
    """
    from lsa_lib.dimension import needed_fiber_families

    return list(needed_fiber_families(widths, attn, T, normalizer, seed=seed + 7).needed)


def softmax_entry(
    widths: tuple[int, ...], attn: tuple[int, ...], *, seed: int = 0
) -> dict[str, Any]:
    """The softmax network's dimension: certified bounds, and a float64 estimate.

    ``softmax_lower``/``softmax_upper``, ``softmax_points``, ``softmax_rank`` and
    ``softmax_gap``: ``lsa_lib.sweep.softmax_bounds`` (the exact engine's bounds at up to
    ``SOFTMAX_POINTS`` random points until they meet, the best of each kept; the float64 reading of the Jacobian
    that chose the certificate's minor, the largest trusted one, with its gap).
    ``softmax_families``: as :func:`closing_families`. ``softmax_open``: None, or why the bounds
    do not meet (the key of a sentence of ``OPEN_REASONS``).
    """
    from lsa_lib.sweep import softmax_bounds

    entry = softmax_bounds(widths, attn, T, seed=seed, points=SOFTMAX_POINTS)
    lower, upper = entry["softmax_lower"], entry["softmax_upper"]
    entry["softmax_families"] = closing_families(widths, attn, "exp", seed=seed)
    entry["softmax_open"] = None if lower == upper else open_reason(entry["softmax_rank"], upper)
    return entry


# Why a softmax entry's bounds do not meet, decided from the certificates themselves.
OPEN_REASONS = {
    "float-below": (
        "At every point tried the float64 Jacobian shows fewer directions than the upper bound, "
        "and ball arithmetic can only prove a minor that float64 chose: either the dimension is "
        "below the upper bound (a fiber direction the book does not know), or float64 misses "
        "directions there."
    ),
    "ball-short": (
        "The float64 Jacobian shows as many directions as the upper bound, but no minor of that "
        "size could be proven non-zero in ball arithmetic (at up to 512 bits): the lower bound "
        "falls short of what float64 sees."
    ),
    "no-gap": (
        "No point tried gives a clear gap in the float64 singular values, so no rank is read "
        "and the lower bound stays where ball arithmetic could prove it."
    ),
}


def open_reason(rank: int | None, upper: int) -> str:
    """The key of ``OPEN_REASONS`` that says why the bounds do not meet, from the best trusted
    float reading ``rank`` (None: no point gave one)."""
    if rank is None:
        return "no-gap"
    return "ball-short" if rank >= upper else "float-below"


# ----------------------------------------------------------------------------------------
# the grid and the files (no library calls below)
# ----------------------------------------------------------------------------------------

# What the page links, by label (the page resolves labels to addresses with the site's label
# map; book/atlas.md cites each with {prf:ref}, so that the build fails if one disappears).
LINKS = {
    "certificate": ["prop-exact-bounds", "how the certificate works"],
    "hypotheses": [
        "conj-general-no-hypotheses",
        "why the general-width formula needs its hypotheses",
    ],
    "atlas": ["prop-atlas-certified", "how the atlas is certified"],
    "ball": ["prop-ball-bound", "how the softmax certificate works"],
    "softmax": ["conj-softmax-deep", "the paper's Conjecture 3.10 (deep softmax networks)"],
    "softmax-open": ["sec-widening-open", "what a certificate can leave open"],
}
# The fiber families of lsa_lib.dimension.FIBER_FAMILIES: the box that proves each, and its name
# in the reader's words.
FAMILIES = {
    "collapse": ["prop-token-collapse", "the directions hidden by a token collapse"],
    "unread": ["prop-fiber-unread", "the unread hidden directions"],
    "unused": ["prop-fiber-unused", "the unused directions behind a widening layer"],
    "one token": ["prop-fiber-one-token", "the attention of a single token"],
}
# How the page names a box's status (the book's badges).
STATUS_WORDS = {
    "reported": "the paper's result, as reported",
    "paper": "the paper's result",
    "proved here": "proved in the book",
    "certified": "the book's, certified on grids",
    "conjecture": "a conjecture",
    "float evidence": "float evidence",
    "refuted": "refuted",
}


def label_statuses(book: Path = ROOT / "book") -> dict[str, str]:
    """Each theorem-like box's status, by label, read from the book's pages wherever they are."""
    box = re.compile(r"```\{prf:\w+\}[^\n]*\n((?::\w+:[^\n]*\n)+)")
    statuses: dict[str, str] = {}
    for path in sorted(book.rglob("*")):
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        elif path.suffix == ".md":
            texts = [path.read_text(encoding="utf-8")]
        else:
            continue
        for text in texts:
            for m in box.finditer(text):
                fields = dict(re.findall(r":(\w+): *([^\n]*)", m.group(1)))
                if "label" in fields:
                    statuses[fields["label"]] = fields.get("status", "")
    return statuses


def rule_table() -> list[dict[str, Any]]:
    """The lightning and softmax rules of ``lsa_lib.rules`` as the page shows them."""
    from lsa_lib.rules import RULES

    statuses = label_statuses()
    return [
        {
            "name": r.name,
            "model": r.model,
            "label": r.label,
            "statement": r.statement,
            "domain": r.domain_text,
            "status": STATUS_WORDS.get(statuses.get(r.label, ""), ""),
        }
        for r in RULES
        if r.model in ("lightning", "softmax")
    ]


def architectures(depth: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (widths, attn) of the given depth on the atlas grid, in lexicographic order."""
    n = GRID[depth]
    sizes = range(1, n + 1)
    return [
        (tuple(w), tuple(a))
        for w in itertools.product(sizes, repeat=depth + 1)
        for a in itertools.product(sizes, repeat=depth)
    ]


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
    "rules",
    "lower",
    "upper",
    "families",
    "softmax_formula",
    "softmax_failed",
    "softmax_rules",
    "softmax_lower",
    "softmax_upper",
    "softmax_families",
    "softmax_open",
    "softmax_points",
    "softmax_rank",
    "softmax_gap",
]
FAMILY_NAMES = list(FAMILIES)


def _row(entry: dict[str, Any], templates: dict[str, int], rules: list[str]) -> list[Any]:
    """One row of a data file, in the order of ``COLUMNS`` (names stored as list indices)."""
    gap = entry.get("softmax_gap")
    families = entry.get("softmax_families")
    return [
        entry["P"],
        entry["formula"],
        entry["formula_rhs"],
        encode(entry["failed"], templates),
        [rules.index(r) for r in entry["rules"]],
        entry["lower"],
        entry["upper"],
        [FAMILY_NAMES.index(f) for f in entry["families"]],
        entry["softmax_formula"],
        encode(entry["softmax_failed"], templates),
        [rules.index(r) for r in entry["softmax_rules"]],
        entry.get("softmax_lower"),
        entry.get("softmax_upper"),
        None if families is None else [FAMILY_NAMES.index(f) for f in families],
        entry.get("softmax_open"),
        entry.get("softmax_points"),
        entry.get("softmax_rank"),
        None if gap is None else float(f"{gap:.2g}"),
    ]


def read_atlas(out: Path = OUT) -> dict[tuple[tuple[int, ...], tuple[int, ...]], dict[str, Any]]:
    """The stored entries, decoded (the form :func:`compute_entry` returns)."""
    index = json.loads((out / "index.json").read_text())
    rules = [r["name"] for r in index["rules"]]
    families = [f["name"] for f in index["families"]]
    entries = {}
    for name in index["files"]:
        for key, row in json.loads((out / name).read_text()).items():
            w, a = key.split("|")
            arch = (tuple(map(int, w.split(","))), tuple(map(int, a.split(","))))
            entry = dict(zip(index["columns"], row, strict=True))
            for column in ("failed", "softmax_failed"):
                entry[column] = decode(entry[column], index["templates"])
            for column in ("rules", "softmax_rules"):
                entry[column] = [rules[k] for k in entry[column]]
            for column in ("families", "softmax_families"):
                if entry[column] is not None:
                    entry[column] = [families[k] for k in entry[column]]
            entries[arch] = entry
    return entries


def write_atlas(entries: dict[Any, dict[str, Any]], out: Path) -> int:
    """Write the data files and the index; return the total size in bytes."""
    import lsa_lib

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    rules = rule_table()
    names = [r["name"] for r in rules]
    templates: dict[str, int] = {}
    files: dict[str, dict[str, Any]] = defaultdict(dict)
    for (widths, attn), entry in sorted(entries.items()):
        key = ",".join(map(str, widths)) + "|" + ",".join(map(str, attn))
        files[file_name(widths)][key] = _row(entry, templates, names)
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
        "rules": rules,
        "families": [{"name": f, "label": lb, "text": txt} for f, (lb, txt) in FAMILIES.items()],
        "links": LINKS,
        "open_reasons": OPEN_REASONS,
        "files": sorted(files),
        "entries": len(entries),
        "counts": counts(entries),
        "lsa_lib_version": lsa_lib.__version__,
    }
    text = json.dumps(index, indent=1, ensure_ascii=False) + "\n"
    (out / "index.json").write_text(text, encoding="utf-8")
    return size + len(text.encode())


def counts(entries: dict[Any, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per depth: entries, certified lightning entries, certified softmax entries."""
    out: dict[str, dict[str, int]] = {}
    for (_, attn), e in sorted(entries.items()):
        c = out.setdefault(str(len(attn)), {"entries": 0, "lightning": 0, "softmax": 0})
        c["entries"] += 1
        c["lightning"] += e["lower"] == e["upper"]
        c["softmax"] += e.get("softmax_lower") is not None and e["softmax_lower"] == e.get(
            "softmax_upper"
        )
    return out


def _cost(arch: tuple[tuple[int, ...], tuple[int, ...]]) -> int:
    """A rough cost of an entry (parameters times outputs per input), to start the big first."""
    widths, attn = arch
    return sum(2 * a * d + e * d for d, e, a in zip(widths, widths[1:], attn)) * len(attn)


def _work(arch: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[Any, dict[str, Any], float]:
    widths, attn = arch
    start = time.perf_counter()
    entry = compute_entry(widths, attn, softmax=len(attn) in SOFTMAX_DEPTHS)
    return arch, entry, time.perf_counter() - start


def _softmax_work(arch: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[Any, dict[str, Any]]:
    return arch, softmax_entry(*arch)


def _single_threaded() -> None:
    """Each worker process computes on one core (the pool supplies the parallelism)."""
    import torch

    torch.set_num_threads(1)


def _in_processes(work: Any, archs: list[Any], jobs: int) -> Any:
    """``work`` on every architecture, in ``jobs`` single-threaded processes, in any order.

    The costliest entries go first and are handed out one at a time, so that no process
    waits at the end while another finishes a long queue.
    """
    os.environ["OMP_NUM_THREADS"] = "1"
    order = sorted(archs, key=_cost, reverse=True)
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_single_threaded) as pool:
        yield from pool.imap_unordered(work, order, chunksize=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help="recompute the formulas' and rules' columns only (the certificates are kept)",
    )
    parser.add_argument(
        "--softmax",
        action="store_true",
        help="recompute only the softmax columns of the stored data",
    )
    args = parser.parse_args(argv)
    if args.softmax:
        entries = read_atlas(args.out)
        archs = [arch for arch in sorted(entries) if len(arch[1]) in SOFTMAX_DEPTHS]
        start = time.perf_counter()
        for arch, softmax in _in_processes(_softmax_work, archs, args.jobs):
            entries[arch].update(softmax)
        size = write_atlas(entries, args.out)
        print(
            f"{len(archs)} softmax entries in {time.perf_counter() - start:.0f} s wall; "
            f"{size / 1024:.0f} KiB"
        )
        return 0
    if args.rewrite:  # the formulas' and rules' columns again, the certificates kept
        entries = read_atlas(args.out)
        for (widths, attn), entry in entries.items():
            entry.update(formula_columns(widths, attn))
        size = write_atlas(entries, args.out)
        print(f"rewritten: {size / 1024:.0f} KiB")
        return 0

    archs = [arch for depth in sorted(GRID) for arch in architectures(depth)]
    start = time.perf_counter()
    entries: dict[Any, dict[str, Any]] = {}
    seconds: dict[int, float] = defaultdict(float)
    for k, (arch, entry, sec) in enumerate(_in_processes(_work, archs, args.jobs)):
        entries[arch] = entry
        seconds[len(arch[1])] += sec
        if (k + 1) % 2000 == 0:
            print(f"{k + 1}/{len(archs)} architectures, {time.perf_counter() - start:.0f} s")
    elapsed = time.perf_counter() - start
    size = write_atlas(entries, args.out)
    cpu = ", ".join(f"depth {d}: {seconds[d]:.0f} s" for d in sorted(seconds))
    print(
        f"{len(archs)} architectures in {elapsed:.0f} s wall ({args.jobs} processes; "
        f"compute time {cpu}); {len(list(args.out.glob('*.json')))} files, {size / 1024:.0f} KiB"
    )
    for depth, c in counts(entries).items():
        print(
            f"depth {depth}: {c['entries']} entries, lightning certified {c['lightning']}, "
            f"softmax certified {c['softmax']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

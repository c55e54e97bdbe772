"""The sweep: certified architectures far beyond the atlas, every rule checked on them.

Explained in :doc:`/book/notes/sweep`. The atlas of dimensions is a grid (depth ≤ 3, widths
≤ 6); a rule checked only there is checked only where the book already looked. The sweep draws
architectures from a documented distribution — depth 1–6, widths and attention dimensions
1–10, ``t`` = 1–5, weighted toward where rules break (:data:`KINDS`) — certifies each
(:func:`certify_architecture`: exact bounds with every fiber family; for softmax the bounds and
float reading of the atlas), checks every rule whose domain holds, and records disagreements
and uncertified cases. It runs on Dask (:func:`run_sweep`: a ``LocalCluster`` by default, or a
running scheduler), writes one Parquet file per shard, resumes where it stopped, and gives the
same records for the same seed. ``python -m lsa_lib.sweep`` (``make sweep``) is its command
line; the committed sweep lives in ``site_data/sweep``.

Needs the ``sweep`` extra (``pip install lsa_lib[sweep]``: Dask distributed and pyarrow) for
:func:`run_sweep` and :func:`read_sweep`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..rules import RULES, Rule, RuleCheck, check_rule
from . import _draw
from ._certify import certify_architecture
from ._draw import Limits
from ._run import SweepOptions, main, read_sweep, run_sweep

__all__ = [
    "KINDS",
    "Limits",
    "SweepOptions",
    "certify_architecture",
    "draw_architectures",
    "run_sweep",
    "read_sweep",
    "rule_checks",
    "main",
]

#: The kinds of draw of the sweep's distribution and their weights
#: (:doc:`/book/notes/sweep`): ``"uniform"``, ``"non-increasing"`` hidden widths, ``"deep, wide
#: input"`` (depth ≥ 4, ``d_0 ≥ 7``, a narrow layer two or more layers on), ``"ones"``
#: (patterns of ``a_i = 1``), ``"widening after narrowing"``, ``"near a rule"`` (inside a random
#: rule's domain or one clause outside it).
KINDS: dict[str, float] = {name: weight for name, (weight, _) in _draw.KINDS.items()}


def draw_architectures(rng: Any, n: int, limits: Limits | None = None) -> list[dict[str, Any]]:
    """``n`` architectures of the sweep's distribution (:doc:`/book/notes/sweep`).

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
    limits : Limits, optional
        The ranges (default: depth ≤ 6, widths and attention dimensions ≤ 10, ``t ≤ 5``,
        at most 1500 parameters).

    Returns
    -------
    list of dict
        Cases ``{"widths", "attn", "t", "kind"}``, none on the atlas's grid.
    """
    from .. import _checks

    _checks.size(n, "n")
    return [_draw.draw(rng, limits or Limits()) for _ in range(n)]


def rule_checks(
    records: Iterable[dict[str, Any]], rules: Iterable[Rule] | None = None
) -> dict[str, RuleCheck]:
    """Every lightning and softmax rule of :data:`lsa_lib.rules.RULES` against sweep records.

    Recomputed from the records' architectures and certified values with today's rules (so a
    rule changed after the sweep is checked as it is now). Explained in
    :doc:`/book/notes/sweep`.

    Parameters
    ----------
    records : iterable of dict
        As :func:`read_sweep` returns them.
    rules : iterable of Rule, optional
        Other rules to check (:data:`lsa_lib.rules.REFUTED`, say); only those about
        lightning or softmax networks are taken.

    Returns
    -------
    dict of str to lsa_lib.rules.RuleCheck
        By rule name: cases inside the domain, the counterexamples among them (must be
        none), cases just outside and how many of those the formula misses.
    """
    certified: dict[str, list[tuple[dict[str, Any], int]]] = {"lightning": [], "softmax": []}
    for r in records:
        case = {"widths": tuple(r["widths"]), "attn": tuple(r["attn"]), "t": r["t"]}
        if r.get("lower") is not None and r["lower"] == r.get("upper"):
            certified["lightning"].append((case, r["lower"]))
        if r.get("softmax_lower") is not None and r["softmax_lower"] == r.get("softmax_upper"):
            certified["softmax"].append((case, r["softmax_lower"]))
    return {
        rule.name: check_rule(rule, certified[rule.model])
        for rule in (RULES if rules is None else rules)
        if rule.model in certified
    }

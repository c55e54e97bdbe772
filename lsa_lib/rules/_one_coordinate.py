"""The rules about the variety of one output coordinate (part of :mod:`lsa_lib.rules`).

Its linear relations and its dimension, in cases ``d, a, t`` (research note on invariants).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .. import _checks
from .._clauses import Clause
from ..dimension import general_width_formula
from ..invariants import scaled_coordinates, variety_counts
from ..rank import ExactRank, exact_rank
from ._core import Rule


def _one_coordinate_cases(rng: np.random.Generator, n: int = 12) -> list[dict[str, Any]]:
    """A random sample of ``(d, a, t)``: ``d ≤ 4``, ``1 ≤ a ≤ d + 1``, one token in every other case.

    Every other case has ``t = 1`` and the others ``t ∈ {2, 3}`` (``t = 4`` for ``d ≤ 3``), so
    that each rule of the variety of one output coordinate gets cases on both sides of the
    boundary ``t = 1`` of its domain.
    """
    _checks.size(n, "n")
    out: list[dict[str, Any]] = []
    for i in range(n):
        d = int(rng.integers(1, 5))
        a = int(rng.integers(1, d + 2))
        t = 1 if i % 2 == 0 else int(rng.integers(2, 4 if d == 4 else 5))
        out.append({"d": d, "a": a, "t": t})
    return out


def _coordinate_span_bound(d: int, t: int) -> int:
    """The rank of the linear map from the entries ``F[p, q, r]`` (``p ≤ q``) to the coordinates.

    The coordinates of every point of the variety are its image, so this bounds the dimension of
    their linear span from above.
    """
    columns = []
    for p, q, r in itertools.product(range(d), repeat=3):
        if p <= q:
            E = np.zeros((d, d, d), dtype=object)
            E[p, q, r] = E[q, p, r] = 1
            y = scaled_coordinates(E, t)
            columns.append([y[k] for k in sorted(y)])
    return exact_rank(np.array(columns, dtype=object).T).rank


def _linear_relations_certificate(d: int, a: int, t: int) -> ExactRank:
    """``n − span`` with the span bounded by the exact rank of points (below) and of the map (above)."""
    counts = variety_counts(d, a, t)
    n = counts["coordinates"]
    return ExactRank(n - _coordinate_span_bound(d, t), n - counts["span"], n, None, "rational")


def _one_coordinate_dimension_certificate(d: int, a: int, t: int) -> ExactRank:
    return variety_counts(d, a, t)["dimension"]


def _linear_relations(d: int, a: int, t: int) -> int:
    return (t - 2) * d * d * (d + 1) // 2 + math.comb(d + 2, 3)


def _one_coordinate_dimension(d: int, a: int, t: int) -> int:
    return general_width_formula((d, 1), (a,))


def _one_token_dimension(d: int, a: int, t: int) -> int:
    g = min(2 * a, d)
    return d + g * d - g * (g - 1) // 2 - 1


SEVERAL_TOKENS = Clause("t ≥ 2 tokens, every d ≥ 1 and a ≥ 1", lambda d, a, t: t >= 2)
ONE_TOKEN = Clause("t = 1 token, every d ≥ 1 and a ≥ 1", lambda d, a, t: t == 1)


COORDINATE_RULES: list[Rule] = [
    Rule(
        name="one-coordinate linear relations",
        label="prop-inv-counts",
        model="one output coordinate",
        statement=(
            "the scaled coefficients of one output coordinate satisfy exactly "
            "(t − 2) d²(d + 1)/2 + C(d + 2, 3) independent linear relations, for every a"
        ),
        clauses=(SEVERAL_TOKENS,),
        formula=_linear_relations,
        certify=_linear_relations_certificate,
        cases=_one_coordinate_cases,
    ),
    Rule(
        name="one-coordinate dimension",
        label="prop-inv-counts",
        model="one output coordinate",
        statement="the variety of one output coordinate has the dimension of M_(d,1,a)",
        clauses=(SEVERAL_TOKENS,),
        formula=_one_coordinate_dimension,
        certify=_one_coordinate_dimension_certificate,
        cases=_one_coordinate_cases,
    ),
    Rule(
        name="one-token dimension",
        label="prop-inv-counts",
        model="one output coordinate",
        statement=(
            "with one token the variety is the set of cubics ℓq with rank q ≤ g = min(2a, d), "
            "of dimension d + gd − g(g − 1)/2 − 1"
        ),
        clauses=(ONE_TOKEN,),
        formula=_one_token_dimension,
        certify=_one_coordinate_dimension_certificate,
        cases=_one_coordinate_cases,
    ),
]

"""The rules about deep lightning networks (part of :mod:`lsa_lib.rules`).

The dimension formulas of one layer, of equal widths, of a bottleneck, of general widths and
the seen-dimension correction, each with its domain made of clauses. The general-width
clauses are the formula's own hypotheses (:data:`lsa_lib.dimension.HYPOTHESES`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._clauses import Clause
from ..dimension import HYPOTHESES, general_width_formula, unread_count
from ..lightning import parameter_count
from ._core import Rule

TOKENS = HYPOTHESES["tokens"]
NON_INCREASING = HYPOTHESES["non-increasing"]
NO_COLLAPSE_LOSS = HYPOTHESES["no collapse loss"]
FULLY_READ = HYPOTHESES["fully read"]

ONE_LAYER = Clause("one layer", lambda widths, attn, t: len(attn) == 1)
DEEP = Clause("l ≥ 2", lambda widths, attn, t: len(attn) >= 2)
EQUAL_WIDTHS = Clause("d₀ = … = dₗ = δ", lambda widths, attn, t: len(set(widths)) == 1)
COMMON_A = Clause("a₁ = … = aₗ = a", lambda widths, attn, t: len(set(attn)) == 1)
A_AT_MOST_DELTA = Clause("every aᵢ ≤ δ", lambda widths, attn, t: max(attn) <= widths[0])


def _lightning_formula(widths: Any, attn: Any, t: int) -> int:
    return general_width_formula(widths, attn)


def _one_layer_cases(rng: np.random.Generator, n: int = 12) -> list[dict[str, Any]]:
    """One-layer architectures with ``d, d', a`` in ``1..6`` and ``t`` in ``{1, 2, 4}``."""
    out = []
    for _ in range(n):
        d, d_out, a = (int(x) for x in rng.integers(1, 7, size=3))
        out.append({"widths": (d, d_out), "attn": (a,), "t": int(rng.choice([1, 2, 4]))})
    return out


def _equal_width_formula(widths: Any, attn: Any, t: int) -> int:
    # δ² + Σ_i a_i (2δ − a_i) − l, written out (not through general_width_formula)
    if len(set(widths)) != 1:
        raise ValueError(f"the equal-width formula needs equal widths, got {tuple(widths)}")
    delta = widths[0]
    return delta**2 + sum(a * (2 * delta - a) for a in attn) - len(attn)


def _bottleneck_formula(widths: Any, attn: Any, t: int) -> int:
    # P − Σ a_i² − (l − 1) δ² − l with δ the constant hidden width
    l = len(attn)
    if l < 2 or len(set(widths[1:l])) != 1:
        raise ValueError(f"the bottleneck formula needs l ≥ 2 equal hidden widths, got {widths}")
    delta = widths[1]
    return parameter_count(widths, attn) - sum(a * a for a in attn) - (l - 1) * delta**2 - l


BOTTLENECK_SHAPE = (
    DEEP,
    Clause("d₁ = … = dₗ₋₁ = δ", lambda widths, attn, t: len(set(widths[1 : len(attn)])) == 1),
)
BOTTLENECK_CLAUSES = (
    TOKENS,
    Clause("δ ≤ d₀", lambda widths, attn, t: widths[1] <= widths[0]),
    Clause("δ ≤ dₗ", lambda widths, attn, t: widths[1] <= widths[-1]),
    COMMON_A,
    Clause("a ≤ δ", lambda widths, attn, t: max(attn) <= widths[1]),
)


def _seen_correction_formula(widths: Any, attn: Any, t: int) -> int:
    # the general-width formula minus Σ (d_i − ŝ_i)(d_{i−1} − d_i) over the narrowing hidden
    # layers that the later layers cannot read fully
    return general_width_formula(widths, attn) - unread_count(widths, attn)


LIGHTNING_RULES: list[Rule] = [
    Rule(
        name="one layer",
        label="thm-dim-one-layer",
        model="lightning",
        statement="one lightning layer has dimension 2ad + dd' − a² − 1 if a ≤ d, else d² + dd' − 1",
        shape=(ONE_LAYER,),
        clauses=(TOKENS,),
        formula=_lightning_formula,
        cases=_one_layer_cases,
    ),
    Rule(
        name="general widths",
        label="conj-general-widths",
        model="lightning",
        statement="the general-width formula gives the dimension of a deep lightning network",
        clauses=(TOKENS, NON_INCREASING, NO_COLLAPSE_LOSS, FULLY_READ),
        formula=_lightning_formula,
    ),
    Rule(
        name="equal widths, common a",
        label="thm-dim-deep",
        model="lightning",
        statement=(
            "with all widths δ and one attention dimension a in every layer, the dimension is "
            "δ² + l·a(2δ − a) − l (the paper's equal-width configuration)"
        ),
        shape=(EQUAL_WIDTHS,),
        clauses=(TOKENS, COMMON_A, A_AT_MOST_DELTA),
        formula=_equal_width_formula,
    ),
    Rule(
        name="bottleneck, common a",
        label="thm-dim-deep",
        model="lightning",
        statement=(
            "with a constant hidden width δ, input and output widths at least δ and one "
            "attention dimension a ≤ δ, the dimension is P − l·a² − (l − 1)δ² − l"
        ),
        shape=BOTTLENECK_SHAPE,
        clauses=BOTTLENECK_CLAUSES,
        formula=_bottleneck_formula,
    ),
    Rule(
        name="equal widths, per layer",
        label="conj-dim-deep-per-layer",
        model="lightning",
        statement="with all widths δ, the dimension is δ² + Σᵢ aᵢ(2δ − aᵢ) − l",
        shape=(EQUAL_WIDTHS,),
        clauses=(TOKENS, A_AT_MOST_DELTA, NO_COLLAPSE_LOSS),
        formula=_equal_width_formula,
    ),
    Rule(
        name="seen-dimension correction",
        label="conj-seen-dimension",
        model="lightning",
        statement=(
            "the dimension is the general-width formula minus Σ (dᵢ − ŝᵢ)(dᵢ₋₁ − dᵢ) over the "
            "narrowing hidden layers, ŝᵢ the seen dimension"
        ),
        shape=(DEEP,),
        clauses=(TOKENS, NON_INCREASING, NO_COLLAPSE_LOSS),
        formula=_seen_correction_formula,
    ),
]

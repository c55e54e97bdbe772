"""The book's refuted rules, kept with their counterexamples (part of :mod:`lsa_lib.rules`).

A rule the book once stated and a certified case inside its domain contradicts. Each stays in
code, with the box that states and refutes it, so that the tests keep finding its
counterexamples (a refuted rule that nobody can refute any more would be a mistake of the
tests) and the notes can show where it breaks.
"""

from __future__ import annotations

from typing import Any

from .._clauses import Clause
from ..dimension import general_width_formula
from ._core import Rule
from ._lightning import DEEP, NO_COLLAPSE_LOSS, NON_INCREASING, TOKENS


def one_layer_ahead(widths: Any, attn: Any, i: int) -> int:
    """``s'_i = min(d_i, d_{i+1} + 2 r_{i+1}, min(d_i, …, d_l) + 2 Σ_{j>i} r_j)``: the read bound
    that looks one layer ahead (refuted: :doc:`/book/notes/general_widths`)."""
    r = [min(a, d) for a, d in zip(attn, widths, strict=False)]
    return min(widths[i], widths[i + 1] + 2 * r[i], min(widths[i:]) + 2 * sum(r[i:]))


def _one_layer_ahead_loss(widths: Any, attn: Any) -> int:
    return sum(
        (widths[i] - one_layer_ahead(widths, attn, i)) * (widths[i - 1] - widths[i])
        for i in range(1, len(attn))
        if widths[i] < widths[i - 1]
    )


ONE_LAYER_AHEAD_READ = Clause(
    "every narrowing hidden layer fully read by the later layers, counted one layer ahead "
    "(s'ᵢ = dᵢ)",
    lambda widths, attn, t: _one_layer_ahead_loss(widths, attn) == 0,
)

REFUTED_RULES: list[Rule] = [
    Rule(
        name="general widths, one layer ahead",
        label="conj-one-layer-ahead",
        model="lightning",
        statement=(
            "the general-width formula gives the dimension where every narrowing hidden layer "
            "is fully read by the one-layer-ahead count s'ᵢ"
        ),
        clauses=(TOKENS, NON_INCREASING, NO_COLLAPSE_LOSS, ONE_LAYER_AHEAD_READ),
        formula=lambda widths, attn, t: general_width_formula(widths, attn),
    ),
    Rule(
        name="seen-dimension correction, one layer ahead",
        label="conj-one-layer-ahead",
        model="lightning",
        statement=(
            "the dimension is the general-width formula minus Σ (dᵢ − s'ᵢ)(dᵢ₋₁ − dᵢ) with the "
            "one-layer-ahead count s'ᵢ"
        ),
        shape=(DEEP,),
        clauses=(TOKENS, NON_INCREASING, NO_COLLAPSE_LOSS),
        formula=lambda widths, attn, t: (
            general_width_formula(widths, attn) - _one_layer_ahead_loss(widths, attn)
        ),
    ),
]

"""The rules about deep softmax networks (part of :mod:`lsa_lib.rules`).

Chapter 6: which of chapter 4's two counterexamples deep softmax networks inherit. The
clauses are the general-width formula's hypotheses (:data:`lsa_lib.dimension.HYPOTHESES`).
"""

from __future__ import annotations

from typing import Any

from .. import _checks
from ..dimension import general_width_formula, unread_count
from ._core import Rule
from ._lightning import (
    A_AT_MOST_DELTA,
    COMMON_A,
    EQUAL_WIDTHS,
    FULLY_READ,
    NO_COLLAPSE_LOSS,
    NON_INCREASING,
    ONE_LAYER,
    TOKENS,
    _one_layer_cases,
)


def _softmax_formula(widths: Any, attn: Any, t: int) -> int:
    return general_width_formula(widths, attn, normalizer="exp")


def _softmax_unread_formula(widths: Any, attn: Any, t: int) -> int:
    # the lightning dimension there (chapter 4: the formula less the unread directions), plus l
    return general_width_formula(widths, attn, normalizer="exp") - unread_count(widths, attn)


def _eq16(widths: Any, attn: Any, t: int) -> int:
    # δ = d_0 and a = a_1 also just outside the domain, where the a_i differ
    w, a = _checks.architecture(widths, attn)
    return w[0] ** 2 + len(a) * a[0] * (2 * w[0] - a[0])


SOFTMAX_RULES: list[Rule] = [
    Rule(
        name="softmax one layer",
        label="thm-softmax-one-layer",
        model="softmax",
        statement="one softmax layer has the lightning layer's dimension plus one",
        shape=(ONE_LAYER,),
        clauses=(TOKENS,),
        formula=_softmax_formula,
        cases=_one_layer_cases,
    ),
    Rule(
        name="softmax formula",
        label="conj-softmax-formula",
        model="softmax",
        statement=(
            "a deep softmax network has the general-width formula's dimension plus l (one "
            "more per layer), whether or not a layer collapses the tokens"
        ),
        clauses=(TOKENS, NON_INCREASING, FULLY_READ),
        formula=_softmax_formula,
    ),
    Rule(
        name="softmax lightning plus l",
        label="conj-softmax-unread",
        model="softmax",
        statement=(
            "a deep softmax network has the lightning network's dimension plus l: the "
            "general-width formula plus l, less the unread directions Σ (dᵢ − ŝᵢ)(dᵢ₋₁ − dᵢ)"
        ),
        clauses=(TOKENS, NON_INCREASING, NO_COLLAPSE_LOSS),
        formula=_softmax_unread_formula,
    ),
    Rule(
        name="softmax equal widths",
        label="conj-softmax-equal-widths",
        model="softmax",
        statement=(
            "equal widths δ and a common attention dimension a: δ² + l·a(2δ − a), the paper's "
            "Eq. 16 in the book's reading"
        ),
        shape=(EQUAL_WIDTHS,),
        clauses=(TOKENS, COMMON_A, A_AT_MOST_DELTA),
        formula=_eq16,
    ),
]

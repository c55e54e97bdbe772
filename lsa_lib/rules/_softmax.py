"""The rules about deep softmax networks (part of :mod:`lsa_lib.rules`).

Chapter 6: which of chapter 4's two counterexamples deep softmax networks inherit.
"""

from __future__ import annotations

from typing import Any

from .. import _checks
from ..dimension import general_width_formula, seen_dimension
from ._core import Rule
from ._lightning import _one_layer, _one_layer_cases, _one_layer_near


def _softmax_formula(widths: Any, attn: Any, t: int) -> int:
    return general_width_formula(widths, attn, normalizer="exp")


def _non_increasing(widths: Any, attn: Any) -> bool:
    """``d_0 ≥ d_1 ≥ … ≥ d_{l-1}`` (the output width is free)."""
    w, a = _checks.architecture(widths, attn)
    return all(w[i] >= w[i + 1] for i in range(len(a) - 1))


def _unread_loss(widths: Any, attn: Any) -> int:
    """``Σ (d_i − s_i)(d_{i-1} − d_i)`` over the hidden layers with ``s_i < d_i < d_{i-1}``.

    The directions of narrowing hidden spaces that no later layer reads
    (:func:`lsa_lib.dimension.seen_dimension`; chapter 4's counterexample (b)).
    """
    w, a = _checks.architecture(widths, attn)
    loss = 0
    for i in range(1, len(a)):
        if w[i] < w[i - 1] and (s := seen_dimension(w, a, i)) < w[i]:
            loss += (w[i] - s) * (w[i - 1] - w[i])
    return loss


def _token_collapse(attn: Any) -> bool:
    """A layer with ``a_i = 1`` followed by a later one with ``a_j ≥ 2`` (counterexample (a))."""
    a = tuple(attn)
    first = next((i for i in range(len(a) - 1) if a[i] == 1), None)
    return first is not None and any(x >= 2 for x in a[first + 1 :])


def _read_clauses(widths: Any, attn: Any, t: int) -> tuple[bool, ...]:
    return (t >= 2, _non_increasing(widths, attn), _unread_loss(widths, attn) == 0)


def _softmax_read_domain(widths: Any, attn: Any, t: int) -> bool:
    return all(_read_clauses(widths, attn, t))


def _softmax_read_near(widths: Any, attn: Any, t: int) -> bool:
    return sum(not c for c in _read_clauses(widths, attn, t)) == 1


def _lightning_plus_l_clauses(widths: Any, attn: Any, t: int) -> tuple[bool, ...]:
    return (t >= 2, _non_increasing(widths, attn), not _token_collapse(attn))


def _softmax_lightning_domain(widths: Any, attn: Any, t: int) -> bool:
    return all(_lightning_plus_l_clauses(widths, attn, t))


def _softmax_lightning_near(widths: Any, attn: Any, t: int) -> bool:
    return sum(not c for c in _lightning_plus_l_clauses(widths, attn, t)) == 1


def _softmax_unread_formula(widths: Any, attn: Any, t: int) -> int:
    # the lightning dimension there (chapter 4: the formula less the unread directions), plus l
    return general_width_formula(widths, attn, normalizer="exp") - _unread_loss(widths, attn)


def _equal_widths_clauses(widths: Any, attn: Any, t: int) -> tuple[bool, ...]:
    w, a = _checks.architecture(widths, attn)
    return (t >= 2, len(set(w)) == 1, len(set(a)) == 1, max(a) <= min(w))


def _equal_widths_common_a(widths: Any, attn: Any, t: int) -> bool:
    return all(_equal_widths_clauses(widths, attn, t))


def _equal_widths_near(widths: Any, attn: Any, t: int) -> bool:
    return sum(not c for c in _equal_widths_clauses(widths, attn, t)) == 1


def _eq16(widths: Any, attn: Any, t: int) -> int:
    # δ = d_0 and a = a_1 also just outside the domain, where the widths or the a_i differ
    w, a = _checks.architecture(widths, attn)
    return w[0] ** 2 + len(a) * a[0] * (2 * w[0] - a[0])


SOFTMAX_RULES: list[Rule] = [
    Rule(
        name="softmax one layer",
        label="thm-softmax-one-layer",
        model="softmax",
        statement="one softmax layer has the lightning layer's dimension plus one",
        domain_text="one layer, t ≥ 2 tokens",
        in_domain=_one_layer,
        formula=_softmax_formula,
        near=_one_layer_near,
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
        domain_text=(
            "t ≥ 2; non-increasing input and hidden widths; every narrowing hidden layer fully "
            "read by the later layers"
        ),
        in_domain=_softmax_read_domain,
        formula=_softmax_formula,
        near=_softmax_read_near,
    ),
    Rule(
        name="softmax lightning plus l",
        label="conj-softmax-unread",
        model="softmax",
        statement=(
            "a deep softmax network has the lightning network's dimension plus l: the "
            "general-width formula plus l, less the unread directions "
            "Σ (dᵢ − sᵢ)(dᵢ₋₁ − dᵢ) of chapter 4"
        ),
        domain_text=(
            "t ≥ 2; non-increasing input and hidden widths; no aᵢ = 1 followed by a later "
            "aⱼ ≥ 2 (hidden layers need not be fully read)"
        ),
        in_domain=_softmax_lightning_domain,
        formula=_softmax_unread_formula,
        near=_softmax_lightning_near,
    ),
    Rule(
        name="softmax equal widths",
        label="conj-softmax-equal-widths",
        model="softmax",
        statement=(
            "equal widths δ and a common attention dimension a: δ² + l·a(2δ − a), the paper's "
            "Eq. 16 in the book's reading"
        ),
        domain_text="t ≥ 2; d₀ = … = dₗ = δ; a₁ = … = aₗ = a ≤ δ",
        in_domain=_equal_widths_common_a,
        formula=_eq16,
        near=_equal_widths_near,
    ),
]

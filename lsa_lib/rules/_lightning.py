"""The rules about deep lightning networks (part of :mod:`lsa_lib.rules`).

The dimension formulas of one layer, of equal widths, of a bottleneck, of general widths and
the seen-dimension correction, each with its domain and the cases just outside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dimension import failed_hypotheses, general_width_formula, seen_dimension
from ..lightning import parameter_count
from ._core import Rule


def _lightning_formula(widths: Any, attn: Any, t: int) -> int:
    return general_width_formula(widths, attn)


def _lightning_domain(widths: Any, attn: Any, t: int) -> bool:
    return not failed_hypotheses(widths, attn, t)


def _lightning_near(widths: Any, attn: Any, t: int) -> bool:
    return len(failed_hypotheses(widths, attn, t)) == 1


def _one_layer(widths: Any, attn: Any, t: int) -> bool:
    return len(attn) == 1 and t >= 2


def _one_layer_near(widths: Any, attn: Any, t: int) -> bool:
    return len(attn) == 1


def _one_layer_cases(rng: np.random.Generator, n: int = 12) -> list[dict[str, Any]]:
    """One-layer architectures with ``d, d', a`` in ``1..6`` and ``t`` in ``{1, 2, 4}``."""
    out = []
    for _ in range(n):
        d, d_out, a = (int(x) for x in rng.integers(1, 7, size=3))
        out.append({"widths": (d, d_out), "attn": (a,), "t": int(rng.choice([1, 2, 4]))})
    return out


def _collapse_loses(attn: Any) -> bool:
    """Some ``a_i = 1`` followed by a later ``a_j ≥ 2`` (token-rank collapse that costs)."""
    first = next((i for i, a in enumerate(attn[:-1]) if a == 1), None)
    return first is not None and any(a >= 2 for a in attn[first + 1 :])


def _one_fails(clauses: list[bool]) -> bool:
    """Exactly one clause of a domain fails: the case is just outside it."""
    return clauses.count(False) == 1


def _equal_width_formula(widths: Any, attn: Any, t: int) -> int:
    # δ² + Σ_i a_i (2δ − a_i) − l, written out (not through general_width_formula)
    if len(set(widths)) != 1:
        raise ValueError(f"the equal-width formula needs equal widths, got {tuple(widths)}")
    delta = widths[0]
    return delta**2 + sum(a * (2 * delta - a) for a in attn) - len(attn)


def _equal_common_clauses(widths: Any, attn: Any, t: int) -> list[bool]:
    return [t >= 2, len(set(attn)) == 1, max(attn) <= widths[0]]


def _equal_common_domain(widths: Any, attn: Any, t: int) -> bool:
    return len(set(widths)) == 1 and all(_equal_common_clauses(widths, attn, t))


def _equal_common_near(widths: Any, attn: Any, t: int) -> bool:
    # the formula needs equal widths; just outside breaks one of the other clauses
    return len(set(widths)) == 1 and _one_fails(_equal_common_clauses(widths, attn, t))


def _equal_per_layer_clauses(widths: Any, attn: Any, t: int) -> list[bool]:
    return [t >= 2, max(attn) <= widths[0], not _collapse_loses(attn)]


def _equal_per_layer_domain(widths: Any, attn: Any, t: int) -> bool:
    return len(set(widths)) == 1 and all(_equal_per_layer_clauses(widths, attn, t))


def _equal_per_layer_near(widths: Any, attn: Any, t: int) -> bool:
    # the formula needs equal widths; just outside breaks one of the other clauses
    return len(set(widths)) == 1 and _one_fails(_equal_per_layer_clauses(widths, attn, t))


def _bottleneck_formula(widths: Any, attn: Any, t: int) -> int:
    # P − Σ a_i² − (l − 1) δ² − l with δ the constant hidden width
    l = len(attn)
    if l < 2 or len(set(widths[1:l])) != 1:
        raise ValueError(f"the bottleneck formula needs l ≥ 2 equal hidden widths, got {widths}")
    delta = widths[1]
    return parameter_count(widths, attn) - sum(a * a for a in attn) - (l - 1) * delta**2 - l


def _bottleneck_shape(widths: Any, attn: Any) -> bool:
    l = len(attn)
    return l >= 2 and len(set(widths[1:l])) == 1


def _bottleneck_common_clauses(widths: Any, attn: Any, t: int) -> list[bool]:
    delta, l = widths[1], len(attn)
    return [t >= 2, delta <= widths[0], delta <= widths[l], len(set(attn)) == 1, max(attn) <= delta]


def _bottleneck_common_domain(widths: Any, attn: Any, t: int) -> bool:
    return _bottleneck_shape(widths, attn) and all(_bottleneck_common_clauses(widths, attn, t))


def _bottleneck_common_near(widths: Any, attn: Any, t: int) -> bool:
    shape = _bottleneck_shape(widths, attn)
    return shape and _one_fails(_bottleneck_common_clauses(widths, attn, t))


def _seen_correction_formula(widths: Any, attn: Any, t: int) -> int:
    # the general-width formula minus Σ (d_i − s_i)(d_{i−1} − d_i) over the narrowing hidden
    # layers that the later layers cannot read fully
    loss = 0
    for i in range(1, len(attn)):
        if widths[i] < widths[i - 1]:
            loss += (widths[i] - seen_dimension(widths, attn, i)) * (widths[i - 1] - widths[i])
    return general_width_formula(widths, attn) - loss


def _seen_correction_clauses(widths: Any, attn: Any, t: int) -> list[bool]:
    shrinking = all(widths[i] >= widths[i + 1] for i in range(len(attn) - 1))
    return [t >= 2, shrinking, not _collapse_loses(attn)]


def _seen_correction_domain(widths: Any, attn: Any, t: int) -> bool:
    return len(attn) >= 2 and all(_seen_correction_clauses(widths, attn, t))


def _seen_correction_near(widths: Any, attn: Any, t: int) -> bool:
    return len(attn) >= 2 and _one_fails(_seen_correction_clauses(widths, attn, t))


LIGHTNING_RULES: list[Rule] = [
    Rule(
        name="one layer",
        label="thm-dim-one-layer",
        model="lightning",
        statement="one lightning layer has dimension 2ad + dd' − a² − 1 if a ≤ d, else d² + dd' − 1",
        domain_text="one layer, t ≥ 2 tokens",
        in_domain=_one_layer,
        formula=_lightning_formula,
        near=_one_layer_near,
        cases=_one_layer_cases,
    ),
    Rule(
        name="general widths",
        label="conj-general-widths",
        model="lightning",
        statement="the general-width formula gives the dimension of a deep lightning network",
        domain_text=(
            "t ≥ 2; non-increasing input and hidden widths; no aᵢ = 1 followed by a later "
            "aⱼ ≥ 2; every narrowing hidden layer fully read by the later layers"
        ),
        in_domain=_lightning_domain,
        formula=_lightning_formula,
        near=_lightning_near,
    ),
    Rule(
        name="equal widths, common a",
        label="thm-dim-deep",
        model="lightning",
        statement=(
            "with all widths δ and one attention dimension a in every layer, the dimension is "
            "δ² + l·a(2δ − a) − l (the paper's equal-width configuration)"
        ),
        domain_text="d₀ = … = dₗ = δ; a₁ = … = aₗ = a ≤ δ; t ≥ 2",
        in_domain=_equal_common_domain,
        formula=_equal_width_formula,
        near=_equal_common_near,
    ),
    Rule(
        name="bottleneck, common a",
        label="thm-dim-deep",
        model="lightning",
        statement=(
            "with a constant hidden width δ, input and output widths at least δ and one "
            "attention dimension a ≤ δ, the dimension is P − l·a² − (l − 1)δ² − l"
        ),
        domain_text="l ≥ 2; d₁ = … = dₗ₋₁ = δ ≤ d₀, dₗ; a₁ = … = aₗ = a ≤ δ; t ≥ 2",
        in_domain=_bottleneck_common_domain,
        formula=_bottleneck_formula,
        near=_bottleneck_common_near,
    ),
    Rule(
        name="equal widths, per layer",
        label="conj-dim-deep-per-layer",
        model="lightning",
        statement=(
            "with all widths δ, the dimension is δ² + Σᵢ aᵢ(2δ − aᵢ) − l unless some "
            "aᵢ = 1 is followed by a later aⱼ ≥ 2"
        ),
        domain_text=("d₀ = … = dₗ = δ; every aᵢ ≤ δ; no aᵢ = 1 followed by a later aⱼ ≥ 2; t ≥ 2"),
        in_domain=_equal_per_layer_domain,
        formula=_equal_width_formula,
        near=_equal_per_layer_near,
    ),
    Rule(
        name="seen-dimension correction",
        label="conj-seen-dimension",
        model="lightning",
        statement=(
            "with non-increasing input and hidden widths, the dimension is the general-width "
            "formula minus Σ (dᵢ − sᵢ)(dᵢ₋₁ − dᵢ) over the narrowing hidden layers"
        ),
        domain_text=(
            "l ≥ 2; t ≥ 2; d₀ ≥ … ≥ dₗ₋₁; no aᵢ = 1 followed by a later aⱼ ≥ 2 "
            "(hidden layers may be read only partly)"
        ),
        in_domain=_seen_correction_domain,
        formula=_seen_correction_formula,
        near=_seen_correction_near,
    ),
]

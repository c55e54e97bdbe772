"""The distribution of the sweep's architectures (part of :mod:`lsa_lib.sweep`).

Each draw picks a *kind* by its weight, then an architecture of that kind; cases on the atlas's
grid (``t = 3``, depth ≤ 2 with sizes ≤ 6, depth 3 with sizes ≤ 4) and cases with more than
``max_params`` parameters are drawn again. The kinds aim where rules break: at their domain
boundaries, at token collapses, behind widening layers, deep with wide inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lightning import parameter_count
from ..rules import RULES

Case = dict[str, Any]


@dataclass(frozen=True)
class Limits:
    """The ranges the sweep draws from (the defaults are the documented distribution).

    Depth, widths, attention dimensions and tokens are drawn from ``1..max_*``; cases with more
    than ``max_params`` parameters are drawn again (:doc:`/book/notes/sweep`).
    """

    max_depth: int = 6
    max_width: int = 10
    max_attn: int = 10
    max_tokens: int = 5
    max_params: int = 1500


def _ints(rng: np.random.Generator, low: int, high: int, size: int) -> tuple[int, ...]:
    return tuple(int(x) for x in rng.integers(low, high + 1, size=size))


def _depth(rng: np.random.Generator, lim: Limits, low: int = 1) -> int:
    return int(rng.integers(min(low, lim.max_depth), lim.max_depth + 1))


def _tokens(rng: np.random.Generator, lim: Limits, low: int = 1) -> int:
    return int(rng.integers(min(low, lim.max_tokens), lim.max_tokens + 1))


def _attention(rng: np.random.Generator, lim: Limits, l: int) -> tuple[int, ...]:
    """Attention dimensions: uniform, small, or ones with a few larger ones."""
    style = rng.integers(3)
    if style == 0:
        return _ints(rng, 1, lim.max_attn, l)
    if style == 1:
        return _ints(rng, 1, min(3, lim.max_attn), l)
    return tuple(
        1 if rng.random() < 0.6 else int(rng.integers(1, lim.max_attn + 1)) for _ in range(l)
    )


def _shrinking(rng: np.random.Generator, lim: Limits, l: int, top: int | None = None) -> list[int]:
    """``d_0 ≥ … ≥ d_{l-1}`` (``d_0 = top`` if given); the output width is drawn freely."""
    hidden = sorted(_ints(rng, 1, top or lim.max_width, l), reverse=True)
    if top is not None:
        hidden[0] = top
    return hidden + [int(rng.integers(1, lim.max_width + 1))]


def _uniform(rng: np.random.Generator, lim: Limits) -> Case:
    l = _depth(rng, lim)
    widths = _ints(rng, 1, lim.max_width, l + 1)
    return {"widths": widths, "attn": _ints(rng, 1, lim.max_attn, l), "t": _tokens(rng, lim)}


def _non_increasing(rng: np.random.Generator, lim: Limits) -> Case:
    l = _depth(rng, lim, 2)
    return {
        "widths": tuple(_shrinking(rng, lim, l)),
        "attn": _attention(rng, lim, l),
        "t": _tokens(rng, lim, 2),
    }


def _deep_wide_input(rng: np.random.Generator, lim: Limits) -> Case:
    """Depth ≥ 4, ``d_0 ≥ 7``, a narrow layer two or more layers after the first."""
    l = _depth(rng, lim, 4)
    top = int(rng.integers(min(7, lim.max_width), lim.max_width + 1))
    widths = _shrinking(rng, lim, l, top)
    k = int(rng.integers(min(3, l - 1), l)) if l >= 2 else 0
    narrow = int(rng.integers(1, 3))
    widths[k:l] = [min(w, narrow) for w in widths[k:l]]
    return {"widths": tuple(widths), "attn": _attention(rng, lim, l), "t": _tokens(rng, lim, 2)}


def _ones(rng: np.random.Generator, lim: Limits) -> Case:
    """Patterns of ``a_i = 1``: all ones, a one before larger ones, larger ones before ones."""
    l = _depth(rng, lim, 2)
    if l < 2:  # a depth limit of 1 leaves no pattern to draw
        return _uniform(rng, lim)
    big = lambda: int(rng.integers(2, max(2, lim.max_attn) + 1))  # noqa: E731
    k = int(rng.integers(1, l))
    pattern = int(rng.integers(4))
    if pattern == 0:
        attn = [1] * l
    elif pattern == 1:
        attn = [1] * k + [big() for _ in range(l - k)]
    elif pattern == 2:
        attn = [big() for _ in range(k)] + [1] * (l - k)
    else:
        attn = [1 if i % 2 == 0 else big() for i in range(l)]
    attn = [min(a, lim.max_attn) for a in attn]
    widths = (
        _shrinking(rng, lim, l) if rng.random() < 0.6 else list(_ints(rng, 1, lim.max_width, l + 1))
    )
    return {"widths": tuple(widths), "attn": tuple(attn), "t": _tokens(rng, lim)}


def _valley(rng: np.random.Generator, lim: Limits) -> Case:
    """Widening after narrowing: some ``d_{i-1} > d_i < d_{i+1}``."""
    l = _depth(rng, lim, 2)
    if l < 2:  # no hidden layer to widen after
        return _uniform(rng, lim)
    widths = list(_ints(rng, 1, lim.max_width, l + 1))
    i = int(rng.integers(1, l))
    low = int(rng.integers(1, max(1, lim.max_width - 1) + 1))
    widths[i] = min(low, widths[i])
    widths[i - 1] = max(widths[i - 1], min(lim.max_width, widths[i] + 1))
    widths[i + 1] = max(widths[i + 1], min(lim.max_width, widths[i] + 1))
    return {"widths": tuple(widths), "attn": _attention(rng, lim, l), "t": _tokens(rng, lim)}


DEEP_RULES = [r for r in RULES if r.model in ("lightning", "softmax")]
_BASE: dict[str, Callable[[np.random.Generator, Limits], Case]] = {
    "uniform": _uniform,
    "non-increasing": _non_increasing,
    "deep, wide input": _deep_wide_input,
    "ones": _ones,
    "widening after narrowing": _valley,
}


def _near_a_rule(rng: np.random.Generator, lim: Limits) -> Case:
    """A case inside a random rule's domain or just outside it (one clause broken)."""
    r = DEEP_RULES[int(rng.integers(len(DEEP_RULES)))]
    makers = list(_BASE.values())
    case = makers[0](rng, lim)
    for _ in range(200):
        case = makers[int(rng.integers(len(makers)))](rng, lim)
        if r.in_domain(**case) or r.near(**case):
            break
    return case


#: The kinds of draw and their weights (documented in :doc:`/book/notes/sweep`).
KINDS: dict[str, tuple[float, Callable[[np.random.Generator, Limits], Case]]] = {
    "uniform": (0.15, _uniform),
    "non-increasing": (0.2, _non_increasing),
    "deep, wide input": (0.2, _deep_wide_input),
    "ones": (0.15, _ones),
    "widening after narrowing": (0.1, _valley),
    "near a rule": (0.2, _near_a_rule),
}


def on_atlas_grid(widths: tuple[int, ...], attn: tuple[int, ...], t: int) -> bool:
    """Whether the case is an entry of the atlas (``t = 3``; depth ≤ 2 with sizes ≤ 6, depth 3
    with sizes ≤ 4)."""
    top = max(widths + attn)
    return t == 3 and ((len(attn) <= 2 and top <= 6) or (len(attn) == 3 and top <= 4))


def draw(rng: np.random.Generator, lim: Limits) -> Case:
    """One architecture of the sweep's distribution, with its ``kind``."""
    names = list(KINDS)
    weights = np.array([KINDS[k][0] for k in names])
    while True:
        kind = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        case = KINDS[kind][1](rng, lim)
        w, a, t = case["widths"], case["attn"], case["t"]
        if on_atlas_grid(w, a, t) or parameter_count(w, a) > lim.max_params:
            continue
        return {**case, "kind": kind}

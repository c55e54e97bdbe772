"""What a rule is, how it is checked, and how cases are drawn (part of :mod:`lsa_lib.rules`).

:class:`Rule` and :class:`RuleCheck`, :func:`check_rule`, and the samplers the rule families
draw their cases with: random deep architectures off the atlas's grid, and small distinct
cases of the variants.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _checks
from ..dimension import exact_dimension
from ..lightning import parameter_count
from ..rank import ExactRank

Case = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    """A general statement about a family, with its domain in code (:doc:`/book/checked`).

    Attributes
    ----------
    name : str
        A short name, unique among :data:`RULES` (``"general widths"``).
    label : str
        The label of the book's box that states the rule (``"conj-general-widths"``).
    model : str
        ``"lightning"`` or ``"softmax"`` (deep networks, cases ``widths, attn, t``; checked on
        the atlas), or the name of another model (``"multi-head"``, ``"transport"``, …).
    statement : str
        The rule in one sentence, in the reader's voice.
    domain_text : str
        The domain in words (the ledger shows it).
    in_domain : callable
        ``in_domain(**case) -> bool``: the domain, in code.
    formula : callable
        ``formula(**case) -> int``: the rule's right-hand side, defined also just outside the
        domain (so that the tests can count where it would fail).
    certify : callable, optional
        ``certify(**case) -> ExactRank``: the exact certificate of one case. Default for deep
        lightning and softmax networks: :func:`lsa_lib.dimension.exact_dimension` with the
        extra fiber directions.
    cases : callable, optional
        ``cases(rng) -> list of dict``: a random sample of cases in and just outside the domain.
        Default for deep networks: random architectures off the atlas grid (depth 1–4, ``t`` in
        ``{1, 2, 4}``).
    near : callable, optional
        ``near(**case) -> bool`` for a case outside the domain: is it *just* outside (it
        breaks one clause of the domain)? The ledger counts how many certified cases just
        outside disagree with the formula. Default: every case outside the domain.
    """

    name: str
    label: str
    model: str
    statement: str
    domain_text: str
    in_domain: Callable[..., bool]
    formula: Callable[..., int]
    certify: Callable[..., ExactRank] | None = None
    cases: Callable[[np.random.Generator], list[dict[str, Any]]] | None = None
    near: Callable[..., bool] | None = None

    def value(self, **case: Any) -> int | None:
        """The rule's value on its domain, ``None`` outside it."""
        return self.formula(**case) if self.in_domain(**case) else None

    def certificate(self, **case: Any) -> ExactRank:
        """The exact certificate of one case (see :attr:`certify`)."""
        if self.certify is not None:
            return self.certify(**case)
        if self.model not in ("lightning", "softmax"):
            raise ValueError(f"rule {self.name!r} (model {self.model!r}) has no certify function")
        normalizer = None if self.model == "lightning" else "exp"
        return exact_dimension(
            case["widths"],
            case["attn"],
            case["t"],
            normalizer,
            beyond_symmetries=True,
        )

    def sample(self, rng: np.random.Generator) -> list[dict[str, Any]]:
        """A fresh random sample of cases (see :attr:`cases`)."""
        if self.cases is not None:
            return self.cases(rng)
        if self.model not in ("lightning", "softmax"):
            raise ValueError(f"rule {self.name!r} (model {self.model!r}) has no cases function")
        return _architecture_cases(rng)


@dataclass(frozen=True)
class RuleCheck:
    """How a rule fares on a set of certified cases (:func:`check_rule`).

    ``inside`` certified cases lie in the domain, of which ``disagree_inside`` (the
    counterexamples: must be empty) differ from the formula; ``outside`` certified cases lie
    just outside it (:attr:`Rule.near`), of which ``disagree_outside`` differ.
    """

    rule: str
    inside: int
    outside: int
    disagree_inside: tuple[Case, ...]
    disagree_outside: int


def check_rule(rule: Rule, certified: Iterable[tuple[Case, int]]) -> RuleCheck:
    """Compare a rule with certified values (the ledger's counts, :doc:`/book/checked`).

    Parameters
    ----------
    rule : Rule
    certified : iterable of (case, int)
        Cases with their certified value (dimension or count).

    Returns
    -------
    RuleCheck
    """
    inside = outside = disagree_outside = 0
    bad: list[Case] = []
    for case, value in certified:
        if rule.in_domain(**case):
            inside += 1
            if rule.formula(**case) != value:
                bad.append(dict(case))
        elif rule.near is None or rule.near(**case):
            outside += 1
            try:
                differs = rule.formula(**case) != value
            except ValueError:  # the formula is not defined there at all
                differs = True
            disagree_outside += differs
    return RuleCheck(rule.name, inside, outside, tuple(bad), disagree_outside)


def _architecture_cases(
    rng: np.random.Generator, n: int = 12, *, max_width: int = 6, max_params: int = 260
) -> list[dict[str, Any]]:
    """A random sample of deep architectures off the atlas's grid (``t ≠ 3``, depth 1–4).


    Widths and attention dimensions are drawn from ``1..max_width``, shrinking, widening and
    mixed; ``t`` from ``{1, 2, 4}``. Cases with more than ``max_params`` parameters are redrawn
    (the test certifies each one).
    """
    _checks.size(n, "n")
    out: list[dict[str, Any]] = []
    while len(out) < n:
        depth = int(rng.integers(1, 5))
        widths = tuple(int(x) for x in rng.integers(1, max_width + 1, size=depth + 1))
        attn = tuple(int(x) for x in rng.integers(1, max_width + 1, size=depth))
        if parameter_count(widths, attn) > max_params:
            continue
        out.append({"widths": widths, "attn": attn, "t": int(rng.choice([1, 2, 4]))})
    return out


def _small(rng: np.random.Generator, n: int, draw: Callable[[], dict[str, Any]], size: Any) -> list:
    """``n`` distinct cases from ``draw()`` whose ``size(**case)`` (parameters) is small enough."""
    out: list[dict[str, Any]] = []
    for _ in range(200 * n):
        case = draw()
        if case not in out and size(**case):
            out.append(case)
        if len(out) == n:
            break
    return out


def _draw(rng: np.random.Generator, low: int, high: int) -> int:
    return int(rng.integers(low, high + 1))

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
from .._clauses import Clause, failing
from ..dimension import exact_dimension
from ..lightning import parameter_count
from ..rank import ExactRank

Case = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    """A general statement about a family, with its domain in code (:doc:`/book/checked`).

    The domain is a list of clauses (:class:`~lsa_lib._clauses.Clause`: words and a test): the
    text the ledger, the atlas and the book's ``{rule}`` role print is made of the same objects
    the tests evaluate.

    Attributes
    ----------
    name : str
        A short name, unique among :data:`RULES` (``"general widths"``).
    label : str
        The label of the book's box that states the rule (``"conj-general-widths"``).
    model : str
        ``"lightning"`` or ``"softmax"`` (deep networks, cases ``widths, attn, t``; checked on
        the atlas and the sweep), or the name of another model (``"multi-head"``, …).
    statement : str
        The rule in one sentence, in the reader's voice.
    clauses : tuple of Clause
        The domain: the case must satisfy every clause.
    formula : callable
        ``formula(**case) -> int``: the rule's right-hand side, defined wherever the
        :attr:`shape` holds (so that the tests can count where it would fail).
    shape : tuple of Clause
        Where the formula is defined at all (equal widths for the equal-width formula; one
        layer for the one-layer formula): part of the domain, but a case outside the shape is
        not *just* outside the domain.
    certify : callable, optional
        ``certify(**case) -> ExactRank``: the exact certificate of one case. Default for deep
        lightning and softmax networks: :func:`lsa_lib.dimension.exact_dimension` with the
        extra fiber directions.
    cases : callable, optional
        ``cases(rng) -> list of dict``: a random sample of cases in and just outside the domain.
        Default for deep networks: random architectures off the atlas grid (depth 1–4, ``t`` in
        ``{1, 2, 4}``).
    """

    name: str
    label: str
    model: str
    statement: str
    clauses: tuple[Clause, ...]
    formula: Callable[..., int]
    shape: tuple[Clause, ...] = ()
    certify: Callable[..., ExactRank] | None = None
    cases: Callable[[np.random.Generator], list[dict[str, Any]]] | None = None

    @property
    def domain_text(self) -> str:
        """The domain in words: the clauses' texts, shape first (the ledger shows it)."""
        return "; ".join(c.text for c in (*self.shape, *self.clauses))

    def failed_clauses(self, **case: Any) -> list[Clause]:
        """The clauses of the domain that ``case`` breaks (the shape's first, if it breaks it)."""
        broken_shape = failing(self.shape, **case)
        return broken_shape or failing(self.clauses, **case)

    def in_domain(self, **case: Any) -> bool:
        """Whether ``case`` lies in the domain (every clause holds)."""
        return not self.failed_clauses(**case)

    def near(self, **case: Any) -> bool:
        """Whether ``case`` lies *just* outside the domain: in the shape, one clause broken."""
        return not failing(self.shape, **case) and len(failing(self.clauses, **case)) == 1

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
        elif rule.near(**case):
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

"""The book's general statements about families of networks, with their domains written in code.

A :class:`Rule` is a statement of the form "on this domain, the dimension (or a count) equals
this formula". Its :attr:`~Rule.domain` is a predicate, not only a sentence: :meth:`Rule.value`
returns the formula's value on the domain and ``None`` outside it, so no caller can apply a rule
beyond the cases that check it. Every rule is checked by the tests against every certified
entry of the atlas of dimensions (rules about lightning and softmax networks) and against a fresh
random sample of cases certified in the test, in and just outside its domain; a rule whose
domain admits a certified counterexample fails the tests. The ledger page ("What is checked")
shows each rule's domain, the number of certified cases it was checked on, and how many
certified cases just outside the domain disagree with the formula — the reason the domain is
what it is.

Cases are keyword arguments. Rules about deep lightning or softmax networks (``model`` is
``"lightning"`` or ``"softmax"``) take ``widths``, ``attn`` and ``t``; the atlas stores exactly
these (``t = 3``). A rule about another model names its own arguments and supplies
:attr:`~Rule.cases` (a random sample of cases) and :attr:`~Rule.certify` (the exact
certificate of one case, an :class:`~lsa_lib.rank.ExactRank`).

Explained in :doc:`/book/checked` (the rules and their checks) and in the chapters that state
them (each rule carries the label of its box).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _checks
from .dimension import exact_dimension, failed_hypotheses, general_width_formula
from .lightning import parameter_count
from .rank import ExactRank

__all__ = ["Rule", "RULES", "rule", "architecture_cases", "check_rule"]

Case = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    """A general statement about a family, with its domain in code.

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
        Default for deep networks: :func:`architecture_cases`.
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
        return architecture_cases(rng)


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
    """Compare a rule with certified values.

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


def architecture_cases(
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


# --------------------------------------------------------------------------------------------
# Dimension formulas of deep lightning and softmax networks
# --------------------------------------------------------------------------------------------


def _lightning_formula(widths: Any, attn: Any, t: int) -> int:
    return general_width_formula(widths, attn)


def _softmax_formula(widths: Any, attn: Any, t: int) -> int:
    return general_width_formula(widths, attn, normalizer="exp")


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


RULES: list[Rule] = [
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
]


def rule(name: str) -> Rule:
    """The rule of :data:`RULES` with this name (``KeyError`` naming the known ones if none)."""
    for r in RULES:
        if r.name == name:
            return r
    raise KeyError(f"no rule named {name!r}; the rules are {[r.name for r in RULES]}")

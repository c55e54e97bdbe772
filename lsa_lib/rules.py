"""The book's general statements about families of networks, with their domains written in code.

A :class:`Rule` is a statement of the form "on this domain, the dimension (or a count) equals
this formula". Its :attr:`~Rule.in_domain` is a predicate, not only a sentence: :meth:`Rule.value`
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
them (each rule carries the label of its box): the invariant counts of one output coordinate in
:doc:`/book/notes/invariants`, the singular locus of one layer in
:doc:`/book/05_singularities/locus`; the rules about variants of the lightning layer (residual
networks, several heads, positional transport, content-dependent metrics) in the research notes,
:doc:`/book/notes/index`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import _checks, heads, metric, residual, transport
from .dimension import (
    exact_dimension,
    failed_hypotheses,
    general_width_formula,
    seen_dimension,
)
from .invariants import scaled_coordinates, variety_counts
from .lightning import parameter_count
from .rank import ExactRank, exact_rank

__all__ = ["Rule", "RULES", "rule", "check_rule"]

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


# Deep softmax networks (chapter 6): which of chapter 4's two counterexamples they inherit.


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


# --------------------------------------------------------------------------------------------
# The variety of one output coordinate (cases d, a, t; research note on invariants)
# --------------------------------------------------------------------------------------------


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


def _several_tokens(d: int, a: int, t: int) -> bool:
    return t >= 2


def _one_token(d: int, a: int, t: int) -> bool:
    return t == 1


# --------------------------------------------------------------------------------------------
# The singular locus of one layer (cases d, d_out, a and the ranks of A and V)
# --------------------------------------------------------------------------------------------


def _singular_locus_cases(rng: np.random.Generator, n: int = 16) -> list[dict[str, Any]]:
    """A random sample of one-layer sizes ``d, d_out ≤ 3``, ``a ≤ d`` and ranks of ``A`` and ``V``.

    A quarter of the ``n`` cases lie just outside the rule's domain (``d = 1``, or
    ``d_out = a = 1``); every case carries the ``seed`` of its integer point.
    """
    n = _checks.size(n, "n", minimum=4)
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 8 == 0:
            d, d_out, a = 1, int(rng.integers(1, 4)), 1
        elif i % 8 == 1:
            d, d_out, a = int(rng.integers(2, 4)), 1, 1
        else:
            d = int(rng.integers(2, 4))
            d_out, a = int(rng.integers(1, 4)), int(rng.integers(1, d + 1))
        rank_A = int(rng.integers(0, min(a, d) + 1))
        rank_V = int(rng.integers(0, min(d_out, d) + 1))
        out.append(
            {
                "d": d,
                "d_out": d_out,
                "a": a,
                "rank_A": rank_A,
                "rank_V": rank_V,
                "seed": int(rng.integers(2**31)),
            }
        )
    return out


def _twice_F(A: np.ndarray, V: np.ndarray) -> list[int]:
    """``2 F(A, V)`` flattened (integers for integer ``A``, ``V``)."""
    T = np.einsum("kp,qr->kpqr", V, A)
    return (T + T.transpose(0, 2, 1, 3)).ravel().tolist()


def _attention_tangents(K: np.ndarray, Q: np.ndarray) -> list[np.ndarray]:
    """``d(Kᵀ Q)`` along every entry of ``K`` and of ``Q``."""
    out = []
    for i, j in itertools.product(range(K.shape[0]), range(K.shape[1])):
        E = np.zeros(K.shape, dtype=np.int64)
        E[i, j] = 1
        out += [E.T @ Q, K.T @ E]
    return out


def _tangent_span_certificate(
    d: int, d_out: int, a: int, rank_A: int, rank_V: int, seed: int = 0
) -> ExactRank:
    """The tangent test of the chapter in exact arithmetic, at an integer point of these ranks.

    ``A = B Cᵀ`` and ``V`` are random integer matrices of ranks ``rank_A ≤ min(a, d)`` and
    ``rank_V``. The preimages are those of :func:`lsa_lib.singularities.tangent_space`: the
    point, its swap partner when both ranks are 1, four random ``(0, V')`` and ``(A', 0)`` for
    the zero function; the directions of ``A`` are those of its factorizations ``Kᵀ Q`` (with a
    zero key row and each query row ``e_j`` when ``rank_A < a``), all of them for ``a ≥ d`` or
    ``A = 0``. The certificate is the exact rank ``r`` of the span of all their differentials,
    capped at ``dim M + 1``: ``dim M + 1`` means singular (``r > dim M``), ``dim M`` smooth
    (``r = dim M`` and every differential has rank ``dim M``); where a differential drops rank
    the test does not decide, and the bounds ``dim M ≤ · ≤ dim M + 1`` do not meet.
    """
    rng = np.random.default_rng(_checks.seed(seed))
    dim_m = general_width_formula((d, d_out), (a,))

    def ints(*shape: int) -> np.ndarray:
        return rng.integers(-5, 6, size=shape).astype(np.int64)

    def of_rank(rows: int, cols: int, r: int) -> tuple[np.ndarray, np.ndarray]:
        while True:  # a random integer product of rank exactly r
            B, C = ints(rows, r), ints(cols, r)
            M = B @ C.T
            if r == 0 or exact_rank(M).rank == r:
                return B, C

    B, C = of_rank(d, d, rank_A)
    P, R = of_rank(d_out, d, rank_V)
    A, V = B @ C.T, P @ R.T
    sheets = [(A, V, B, C)]  # (A, V) and factors of A (columns of B, C)
    if rank_A == 0 or rank_V == 0:
        k = min(a, d)
        for _ in range(4):
            sheets.append((np.zeros((d, d), dtype=np.int64), ints(d_out, d), None, None))
            B2, C2 = of_rank(d, d, k)
            sheets.append((B2 @ C2.T, np.zeros((d_out, d), dtype=np.int64), B2, C2))
    elif rank_A == rank_V == 1:  # A = b cᵀ, V = v wᵀ  ->  (w cᵀ, v bᵀ)
        b, c, v, w = B[:, :1], C[:, :1], P[:, :1], R[:, :1]
        sheets.append((w @ c.T, v @ b.T, w, c))
    columns, ranks = [], []
    for As, Vs, Bs, Cs in sheets:
        if a >= d or Bs is None or not Bs.size:
            dirs = [np.eye(d * d, dtype=np.int64)[i].reshape(d, d) for i in range(d * d)]
        else:
            r = Bs.shape[1]
            K, Q = np.zeros((a, d), dtype=np.int64), np.zeros((a, d), dtype=np.int64)
            K[:r], Q[:r] = Bs.T, Cs.T
            dirs = _attention_tangents(K, Q)
            if r < a:  # a zero key row with any query row: more factorizations of the same A
                for j in range(d):
                    Q2 = Q.copy()
                    Q2[r] = np.eye(d, dtype=np.int64)[j]
                    dirs += _attention_tangents(K, Q2)
        block = [_twice_F(dA, Vs) for dA in dirs]
        for i in range(d_out * d):
            block.append(_twice_F(As, np.eye(d_out * d, dtype=np.int64)[i].reshape(d_out, d)))
        ranks.append(exact_rank(np.array(block, dtype=np.int64).T).rank)
        columns += block
    span = exact_rank(np.array(columns, dtype=np.int64).T).rank
    n = len(columns)
    if span > dim_m:
        return ExactRank(dim_m + 1, dim_m + 1, n, None, "rational")
    if span == dim_m and all(r == dim_m for r in ranks):
        return ExactRank(dim_m, dim_m, n, None, "rational")
    return ExactRank(dim_m, dim_m + 1, n, None, "rational")  # "critical": undecided


def _singular_rule(d: int, d_out: int, a: int, rank_A: int, rank_V: int, seed: int = 0) -> bool:
    return rank_A * rank_V <= 1 or (a < d and rank_A < a)


def _capped_span(d: int, d_out: int, a: int, rank_A: int, rank_V: int, seed: int = 0) -> int:
    dim_m = general_width_formula((d, d_out), (a,))
    return dim_m + 1 if _singular_rule(d, d_out, a, rank_A, rank_V) else dim_m


def _singular_rule_domain(
    d: int, d_out: int, a: int, rank_A: int, rank_V: int, seed: int = 0
) -> bool:
    return d >= 2 and (d_out, a) != (1, 1)


#: The book's rules, each checked by the tests (:doc:`/book/checked`).
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
    Rule(
        name="one-coordinate linear relations",
        label="prop-inv-counts",
        model="one output coordinate",
        statement=(
            "the scaled coefficients of one output coordinate satisfy exactly "
            "(t − 2) d²(d + 1)/2 + C(d + 2, 3) independent linear relations, for every a"
        ),
        domain_text="t ≥ 2 tokens, every d ≥ 1 and a ≥ 1",
        in_domain=_several_tokens,
        formula=_linear_relations,
        certify=_linear_relations_certificate,
        cases=_one_coordinate_cases,
    ),
    Rule(
        name="one-coordinate dimension",
        label="prop-inv-counts",
        model="one output coordinate",
        statement="the variety of one output coordinate has the dimension of M_(d,1,a)",
        domain_text="t ≥ 2 tokens, every d ≥ 1 and a ≥ 1",
        in_domain=_several_tokens,
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
        domain_text="t = 1 token, every d ≥ 1 and a ≥ 1",
        in_domain=_one_token,
        formula=_one_token_dimension,
        certify=_one_coordinate_dimension_certificate,
        cases=_one_coordinate_cases,
    ),
    Rule(
        name="singular locus",
        label="obs-singular-rule",
        model="one-layer tangent test",
        statement=(
            "a function of one layer is singular (its tangent span exceeds dim M, capped at "
            "dim M + 1) exactly when rk(A)·rk(V) ≤ 1, or a < d and rk A < a"
        ),
        domain_text="one layer with d ≥ 2 and (d', a) ≠ (1, 1); any ranks of A and V",
        in_domain=_singular_rule_domain,
        formula=_capped_span,
        certify=_tangent_span_certificate,
        cases=_singular_locus_cases,
    ),
]


# --------------------------------------------------------------------------------------------
# Variants of the lightning layer (the research notes). Each formula is written here from the
# note's statement, independently of the ``predicted`` values of the parametrizations; each
# certificate is the exact engine's, with the symmetry tangents of the variant's module.
# --------------------------------------------------------------------------------------------


def _c2(n: int) -> int:
    """``C(n, 2)``, and ``0`` for ``n < 2``."""
    return n * (n - 1) // 2 if n >= 2 else 0


def _fiber(a: int, d: int) -> int:
    """The dimension of the fibers of ``(Q, K) ↦ Kᵀ Q``: ``2ad − r(2d − r)``, ``r = min(a, d)``."""
    r = min(a, d)
    return 2 * a * d - r * (2 * d - r)


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


# residual networks ------------------------------------------------------------------------


def _residual_formula(d: int, attn: Any, t: int) -> int:
    return sum(2 * a * d + d * d - _fiber(a, d) - 1 for a in attn)


def _residual_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        attn = tuple(_draw(rng, 1, d + 1) for _ in range(_draw(rng, 1, 3)))
        return {"d": d, "attn": attn, "t": int(rng.choice([2, 3, 4]))}

    return _small(rng, 20, draw, lambda d, attn, t: sum(2 * a * d + d * d for a in attn) <= 110)


# several heads -----------------------------------------------------------------------------


def _summed_formula(d: int, d_out: int, a: int, H: int, t: int) -> int:
    r = min(a, d)
    per_head = 2 * a * d + d * d_out - _fiber(a, d) - max(1, min(H, d * d) - (d - r) ** 2)
    return min(d_out * d * d * (d + 1) // 2, H * per_head)


def _summed_certify(d: int, d_out: int, a: int, H: int, t: int) -> ExactRank:
    c = exact_rank(heads.multihead_parametrization(d, d_out, a, H, t=t))
    return replace(c, upper=min(c.upper, heads.cubic_map_dimension(d, d_out)))


def _summed_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "a": _draw(rng, 1, d + 1),
            "H": _draw(rng, 1, 6),
            "t": int(rng.choice([2, 3, 4])),
        }

    return _small(rng, 20, draw, lambda d, d_out, a, H, t: H * (2 * a * d + d * d_out) <= 150)


def _output_count(d: int, d_out: int, heads: Any, t: int) -> int:
    """``Σ_h [r_k (2d − r_k) + r_v (d + d' − r_v)]``: the count of the per-head symmetries."""
    total = 0
    for d_k, d_v in heads:
        r_k, r_v = min(d_k, d), min(d_v, d, d_out)
        total += r_k * (2 * d - r_k) + r_v * (d + d_out - r_v)
    return total


def _output_cases(rng: np.random.Generator, n: int, max_params: int) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        sizes = tuple((_draw(rng, 1, d + 1), _draw(rng, 1, d + 1)) for _ in range(_draw(rng, 1, 3)))
        return {"d": d, "d_out": _draw(rng, 1, 3), "heads": sizes, "t": int(rng.choice([2, 3]))}

    def size(d: int, d_out: int, heads: Any, t: int) -> bool:
        return sum(2 * d_k * d + d_v * d + d_out * d_v for d_k, d_v in heads) <= max_params

    return _small(rng, n, draw, size)


def _lightning_heads_domain(d: int, d_out: int, heads: Any, t: int) -> bool:
    cubic = d_out * d * d * (d + 1) // 2
    return (
        t >= 2
        and d_out >= 2
        and len(heads) <= 2
        and not _moves(d, d_out, heads)
        and _output_count(d, d_out, heads, t) - len(heads) <= cubic
    )


def _moves(d: int, d_out: int, sizes: Any) -> bool:
    return heads.moves_possible(d, d_out, list(sizes))


# positional transport --------------------------------------------------------------------

# Pythagorean triples with four different angles (so that equal angles come only from repeats)
_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25))


def _rotation(rotations: Any, a: int) -> tuple[Any, int]:
    if not rotations:
        return np.eye(a, dtype=np.int64), 1
    return transport.rational_rotation(list(rotations), a=a)


def _fixed_formula(d: int, d_out: int, rotations: Any, a: int, t: int) -> int:
    """``2ad + dd' − dim C(R) − 1``, the centralizer counted from the blocks of ``R``.

    An angle repeated ``m`` times gives ``GL_m(ℂ)``, ``2m²`` real dimensions; the ``f`` fixed
    axes give ``GL_f``. The triples of ``_TRIPLES`` have different angles in ``(0, π)``.
    """
    blocks = [tuple(r) for r in rotations]
    fixed = a - 2 * len(blocks)
    dim_c = fixed * fixed + sum(2 * blocks.count(b) ** 2 for b in set(blocks))
    return 2 * a * d + d * d_out - dim_c - 1


def _fixed_certify(d: int, d_out: int, rotations: Any, a: int, t: int) -> ExactRank:
    R, scale = _rotation(rotations, a)
    return exact_rank(transport.transport_parametrization(d, d_out, R, scale, t=t))


def _fixed_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        n_blocks = _draw(rng, 0, 2)
        rotations = tuple(_TRIPLES[int(i)] for i in rng.integers(0, len(_TRIPLES), size=n_blocks))
        a = 2 * n_blocks + _draw(rng, 0 if n_blocks else 1, 1)
        d = _draw(rng, max(1, a - 1), 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "rotations": rotations,
            "a": a,
            "t": int(rng.choice([2, 3])),
        }

    return _small(rng, 16, draw, lambda d, d_out, rotations, a, t: 2 * a * d + d * d_out <= 60)


def _learned_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out + (2 * t - 1) * a * a - 2 * a * a - 1 - _c2(2 * a - d)


def _flat_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out - 1


def _curved_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out + (t - 2) * a * a - 1 - _c2(2 * a - d)


def _connection_cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "a": _draw(rng, 1, d + 1),
            "t": int(rng.choice([2, 3, 4])),
        }

    return _small(
        rng, 24, draw, lambda d, d_out, a, t: 2 * a * d + d * d_out + (2 * t - 1) * a * a <= 100
    )


def _transport_certify(*, causal: bool, flat: bool = False) -> Callable[..., ExactRank]:
    def certify(d: int, d_out: int, a: int, t: int) -> ExactRank:
        param = transport.learned_transport_parametrization(
            d, d_out, a, t, causal=causal, flat=flat
        )
        return exact_rank(param)

    return certify


# content-dependent metrics ---------------------------------------------------------------


def _content_formula(d: int, d_out: int, a: int, t: int) -> int:
    return 2 * a * d + d * d_out + d - _fiber(a, d) - 2


def _tensor_formula(d: int, d_out: int, a: int, r: int, t: int) -> int:
    return 2 * a * d + d * d_out + r * a * d - _c2(a) - 1 - _c2(r) - 1


def _tensor_ceiling(d: int, d_out: int, r: int) -> int:
    """``dd' + d² + n − 1`` with ``n`` the proved bound on the cubic maps the layer reaches."""
    cubic = d * (d + 2) * (d + 1) * d // 6  # d · C(d + 2, 3): all cubic maps ℝ^d → ℝ^d
    n = min(cubic, d * d + d * (d + 1) // 2 - 1) if r == 1 else cubic
    return d * d_out + d * d + n - 1


def _tensor_domain(d: int, d_out: int, a: int, r: int, t: int) -> bool:
    return (
        t >= 2
        and a <= d
        and r <= 2
        and _tensor_formula(d, d_out, a, r, t) <= _tensor_ceiling(d, d_out, r)
    )


def _tensor_cases(rng: np.random.Generator, n: int, max_params: int) -> list[dict[str, Any]]:
    def draw() -> dict[str, Any]:
        d = _draw(rng, 1, 4)
        return {
            "d": d,
            "d_out": _draw(rng, 1, 3),
            "a": _draw(rng, 1, d + 1),
            "r": _draw(rng, 1, 3),
            "t": int(rng.choice([2, 3])),
        }

    return _small(rng, n, draw, lambda d, d_out, a, r, t: (2 + r) * a * d + d * d_out <= max_params)


def _tensor_softmax_certify(d: int, d_out: int, a: int, r: int, t: int) -> ExactRank:
    param = metric.riemannian_parametrization(d, d_out, a, r, t=t, normalizer="exp")
    point_rng = np.random.default_rng(0)  # scores of order one: half a standard normal
    return exact_rank(param, [0.5 * point_rng.standard_normal(s) for s in param.shapes])


_VARIANT_RULES: list[Rule] = [
    Rule(
        name="residual networks",
        label="prop-residual-dim",
        model="residual",
        statement=(
            "a residual lightning network of width d has the sum of its single layers' "
            "dimensions, Σ_i (2a_i d + d² − f(a_i, d) − 1)"
        ),
        domain_text="t ≥ 2 tokens (any depth and attention dimensions)",
        in_domain=lambda d, attn, t: t >= 2,
        formula=_residual_formula,
        certify=lambda d, attn, t: exact_rank(residual.residual_parametrization(d, attn, t)),
        cases=_residual_cases,
    ),
    Rule(
        name="summed heads",
        label="conj-heads-dim",
        model="summed heads",
        statement=(
            "H summed lightning heads have dimension min(d'd·d(d+1)/2, "
            "H(2ad + dd' − f(a, d) − max(1, min(H, d²) − (d − r)²))), r = min(a, d)"
        ),
        domain_text="d' ≥ 2 outputs, t ≥ 2 tokens",
        in_domain=lambda d, d_out, a, H, t: d_out >= 2 and t >= 2,
        formula=_summed_formula,
        certify=_summed_certify,
        cases=_summed_cases,
    ),
    Rule(
        name="softmax heads with output maps",
        label="prop-mh-softmax-grid",
        model="multi-head softmax",
        statement=(
            "standard multi-head softmax attention has dimension "
            "Σ_h [r_k(2d − r_k) + r_v(d + d' − r_v)], r_k = min(d_k, d), r_v = min(d_v, d, d')"
        ),
        domain_text="t ≥ 2 tokens (any widths and head sizes)",
        in_domain=lambda d, d_out, heads, t: t >= 2,
        formula=_output_count,
        certify=lambda d, d_out, heads, t: _output_dimension(d, d_out, heads, t, "exp"),
        cases=lambda rng: _output_cases(rng, 6, 70),
    ),
    Rule(
        name="lightning heads with output maps",
        label="prop-mh-lightning-grid",
        model="multi-head lightning",
        statement=(
            "standard multi-head lightning attention has dimension "
            "Σ_h [r_k(2d − r_k) + r_v(d + d' − r_v)] − H"
        ),
        domain_text=(
            "t ≥ 2; d' ≥ 2; at most two heads; no moves between heads (heads.moves_possible); "
            "the count at most d'd·d(d+1)/2"
        ),
        in_domain=_lightning_heads_domain,
        formula=lambda d, d_out, heads, t: _output_count(d, d_out, heads, t) - len(heads),
        certify=lambda d, d_out, heads, t: _output_dimension(d, d_out, heads, t, None),
        cases=lambda rng: _output_cases(rng, 24, 120),
    ),
    Rule(
        name="transport by a fixed rotation",
        label="prop-transport-dim",
        model="transport",
        statement="transport by a fixed orthogonal R gives dimension 2ad + dd' − dim C(R) − 1",
        domain_text="a ≤ d, t ≥ 2 (R a rational block rotation)",
        in_domain=lambda d, d_out, rotations, a, t: a <= d and t >= 2,
        formula=_fixed_formula,
        certify=_fixed_certify,
        cases=_fixed_cases,
    ),
    Rule(
        name="learned transport",
        label="conj-learned-dim",
        model="learned transport",
        statement=(
            "one learned map per offset gives dimension 2ad + dd' + (2t − 1)a² − 2a² − 1 "
            "− C(2a − d, 2)"
        ),
        domain_text="a ≤ d, t ≥ 2",
        in_domain=lambda d, d_out, a, t: a <= d and t >= 2,
        formula=_learned_formula,
        certify=_transport_certify(causal=False),
        cases=_connection_cases,
    ),
    Rule(
        name="flat connection",
        label="prop-mg-curvature",
        model="causal transport, flat",
        statement="causal transport by the powers of one learned map has dimension 2ad + dd' − 1",
        domain_text="a ≤ d, t ≥ 3 (at t = 2 it is the curved count)",
        in_domain=lambda d, d_out, a, t: a <= d and t >= 3,
        formula=_flat_formula,
        certify=_transport_certify(causal=True, flat=True),
        cases=_connection_cases,
    ),
    Rule(
        name="curved connection",
        label="prop-mg-curvature",
        model="causal transport, curved",
        statement=(
            "causal transport by one learned map per offset has dimension "
            "2ad + dd' + (t − 2)a² − 1 − C(2a − d, 2)"
        ),
        domain_text="a ≤ d, t ≥ 2",
        in_domain=lambda d, d_out, a, t: a <= d and t >= 2,
        formula=_curved_formula,
        certify=_transport_certify(causal=True),
        cases=_connection_cases,
    ),
    Rule(
        name="linear content weight",
        label="prop-metric-dim",
        model="content weight",
        statement="the weight m(x) = μᵀx adds d − 1 dimensions: 2ad + dd' + d − f(a, d) − 2",
        domain_text="t ≥ 2 tokens",
        in_domain=lambda d, d_out, a, t: t >= 2,
        formula=_content_formula,
        certify=lambda d, d_out, a, t: exact_rank(metric.metric_parametrization(d, d_out, a, t)),
        cases=lambda rng: [
            {k: v for k, v in c.items() if k != "r"} for c in _tensor_cases(rng, 16, 60)
        ],
    ),
    Rule(
        name="metric tensor",
        label="prop-mg-grid",
        model="metric tensor",
        statement=(
            "the metric tensor I + Σ_k (B_k x)(B_k x)ᵀ at the query gives dimension "
            "2ad + dd' + rad − C(a, 2) − 1 − C(r, 2) − 1 (lightning)"
        ),
        domain_text="a ≤ d, r ≤ 2, t ≥ 2, the count at most the proved ceiling",
        in_domain=_tensor_domain,
        formula=_tensor_formula,
        certify=lambda d, d_out, a, r, t: exact_rank(
            metric.riemannian_parametrization(d, d_out, a, r, t=t)
        ),
        cases=lambda rng: _tensor_cases(rng, 24, 90),
    ),
    Rule(
        name="metric tensor, softmax",
        label="prop-mg-grid",
        model="metric tensor, softmax",
        statement="with the softmax, the metric-tensor layer has one dimension more",
        domain_text="as for the lightning layer",
        in_domain=_tensor_domain,
        formula=lambda d, d_out, a, r, t: _tensor_formula(d, d_out, a, r, t) + 1,
        certify=_tensor_softmax_certify,
        cases=lambda rng: _tensor_cases(rng, 5, 50),
    ),
]


def _output_dimension(d: int, d_out: int, sizes: Any, t: int, normalizer: str | None) -> ExactRank:
    reading, _ = heads.multihead_dimension(
        d, d_out, list(sizes), normalizer=normalizer, t=t, method="exact"
    )
    assert isinstance(reading, ExactRank)
    return reading


RULES += _VARIANT_RULES


def rule(name: str) -> Rule:
    """The rule of :data:`RULES` with this name (listed in :doc:`/book/checked`).

    Parameters
    ----------
    name : str
        The rule's :attr:`Rule.name`.

    Returns
    -------
    Rule

    Raises
    ------
    KeyError
        Naming the known rules, if none has this name.
    """
    for r in RULES:
        if r.name == name:
            return r
    raise KeyError(f"no rule named {name!r}; the rules are {[r.name for r in RULES]}")

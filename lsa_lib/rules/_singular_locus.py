"""The rule about the singular locus of one layer (part of :mod:`lsa_lib.rules`).

Cases ``d, d_out, a`` and the ranks of ``A`` and ``V``; the certificate is the chapter's tangent
test in exact arithmetic.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .. import _checks
from .._clauses import Clause
from ..dimension import general_width_formula
from ..rank import ExactRank, exact_rank
from ._core import Rule


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


SINGULAR_RULES: list[Rule] = [
    Rule(
        name="singular locus",
        label="obs-singular-rule",
        model="one-layer tangent test",
        statement=(
            "a function of one layer is singular (its tangent span exceeds dim M, capped at "
            "dim M + 1) exactly when rk(A)·rk(V) ≤ 1, or a < d and rk A < a"
        ),
        clauses=(
            Clause(
                "one layer with d ≥ 2 and (d', a) ≠ (1, 1); any ranks of A and V",
                _singular_rule_domain,
            ),
        ),
        formula=_capped_span,
        certify=_tangent_span_certificate,
        cases=_singular_locus_cases,
    ),
]

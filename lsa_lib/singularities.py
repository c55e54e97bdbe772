"""Singular points and the boundary of one layer (:doc:`/book/05_singularities`).

A lightning layer computes ``φ(X) = V X Xᵀ A X``. Column ``j`` is ``V S A x_j`` with
``S = X Xᵀ``, so the function is the coefficient tensor

    F[k, p, q, r] = (V[k, p] A[q, r] + V[k, q] A[p, r]) / 2,

symmetric in ``(p, q)`` (:func:`function_coefficients`); for ``t ≥ 2`` it determines the
function and back. The neuromanifold ``M_{d,d',a}`` is the set of these ``F`` with
``rk A ≤ a``. This module compares the rank rule for singular points (:func:`is_singular`)
with the span of the tangent directions of all preimages (:func:`tangent_space`), and builds a
sequence of weights that blows up while its functions converge (:func:`blow_up_sequence`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from . import _checks, _limits
from ._checks import Array
from .dimension import general_width_formula
from .fibers import swap
from .rank import FloatRank, float_rank
from .tolerances import GAP_MIN

__all__ = [
    "function_coefficients",
    "coefficient_differential",
    "coefficient_evaluation_rank",
    "TangentSpace",
    "tangent_space",
    "is_singular",
    "balanced",
    "blow_up_sequence",
]


def function_coefficients(A: ArrayLike, V: ArrayLike) -> Array:
    """The coefficient tensor ``F`` of the function computed by ``(A, V)``.

    Explained in :doc:`/book/05_singularities`.

    Parameters
    ----------
    A : array-like or torch.Tensor, shape=[..., d, d]
    V : array-like or torch.Tensor, shape=[..., d_out, d]
        Leading batch axes broadcast (torch in, torch out: the descent experiment trains
        through it).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, d, d, d]
        ``F[k, p, q, r] = (V[k, p] A[q, r] + V[k, q] A[p, r]) / 2``, symmetric in ``(p, q)``;
        ``φ(X)[k, j] = Σ F[k, p, q, r] (X Xᵀ)[p, q] X[r, j]``.
    """
    if _checks.is_torch(A) or _checks.is_torch(V):
        T = torch.einsum("...kp,...qr->...kpqr", torch.as_tensor(V), torch.as_tensor(A))
        return (T + T.transpose(-3, -2)) / 2
    A, V = _checks.pair(A, V)
    T = np.einsum("kp,qr->kpqr", V, A)
    return (T + T.transpose(0, 2, 1, 3)) / 2


def coefficient_differential(A: ArrayLike, V: ArrayLike) -> NDArray[np.float64]:
    """The Jacobian of ``(A, V) ↦ F`` at a point (:doc:`/book/05_singularities`).

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]

    Returns
    -------
    numpy.ndarray, shape=[d_out * d**3, d**2 + d_out * d]
        Column ``i``: the derivative of ``F.ravel()`` along entry ``i`` of
        ``(A.ravel(), V.ravel())``. ``F`` is bilinear, so the entries are halves of integers
        when ``A`` and ``V`` are integer.
    """
    A, V = _checks.pair(A, V)
    d, d_out = A.shape[0], V.shape[0]
    n_rows, n_cols = d_out * d**3, d * d + d_out * d
    _limits.fits(3 * 8 * n_rows * n_cols, f"the {n_rows} × {n_cols} differential of (A, V) ↦ F")
    I_d = np.eye(d)
    JA = np.einsum("kp,qm,rn->kpqrmn", V, I_d, I_d)
    JV = np.einsum("km,pn,qr->kpqrmn", np.eye(d_out), I_d, A)
    n = d_out * d**3
    return np.hstack(
        [
            ((JA + JA.transpose(0, 2, 1, 3, 4, 5)) / 2).reshape(n, d * d),
            ((JV + JV.transpose(0, 2, 1, 3, 4, 5)) / 2).reshape(n, d_out * d),
        ]
    )


def coefficient_evaluation_rank(
    d: int, d_out: int, t: int, *, n_inputs: int | None = None, seed: int = 0
) -> FloatRank:
    """Whether the function determines its tensor: the rank of ``F ↦ φ`` on sampled inputs.

    Explained in :doc:`/book/05_singularities`.

    Parameters
    ----------
    d, d_out, t : int
    n_inputs : int, optional
        Random inputs (default ``2 n_coef / (d_out t) + 2``).
    seed : int

    Returns
    -------
    lsa_lib.rank.FloatRank
        The float rank of the linear map from the ``n_coef = d' · d(d+1)/2 · d`` independent
        coefficients (its ``n_params``) to the outputs; equal numbers mean that different
        tensors give different functions.
    """
    d, d_out, t = _checks.size(d, "d"), _checks.size(d_out, "d_out"), _checks.size(t, "t")
    n_coef = d_out * d * d * (d + 1) // 2
    n = 2 * n_coef // (d_out * t) + 2 if n_inputs is None else _checks.size(n_inputs, "n_inputs")
    _limits.fits(
        2 * 8 * n * d_out * t * n_coef, f"the {n * d_out * t} × {n_coef} evaluation matrix"
    )
    pairs = [(p, q) for p in range(d) for q in range(p, d)]
    X = np.random.default_rng(_checks.seed(seed)).standard_normal((n, d, t))
    S = X @ X.transpose(0, 2, 1)
    cols = []
    for k in range(d_out):
        for p, q in pairs:
            for r in range(d):
                out = np.zeros((n, d_out, t))
                out[:, k, :] = (S[:, p, q] if p == q else 2 * S[:, p, q])[:, None] * X[:, r, :]
                cols.append(out.ravel())
    return float_rank(np.array(cols).T)


@dataclass(frozen=True)
class TangentSpace:
    """The span of the tangent directions of all preimages of one function.

    Explained in :doc:`/book/05_singularities`.

    Attributes
    ----------
    dimension : int
        Of the span (read at a gap of at least ``min_gap``).
    gap : float
    manifold_dimension : int
        ``dim M_{d,d',a}``.
    sheet_ranks : tuple of int
        The rank of the differential at each ``(A, V)`` preimage used (the first is the point).
    kind : str
        ``"zero"``, ``"rank-one pair"``, ``"rank-deficient A"`` or ``"generic"`` (by the
        ranks of ``A`` and ``V``, which depend only on the function).
    basis : numpy.ndarray, shape=[d_out * d**3, dimension]
        Orthonormal, in the coordinates of ``F.ravel()``.
    """

    dimension: int
    gap: float
    manifold_dimension: int
    sheet_ranks: tuple[int, ...]
    kind: str
    basis: NDArray[np.float64] = field(repr=False)

    @property
    def excess(self) -> int:
        """``dimension − manifold_dimension``."""
        return self.dimension - self.manifold_dimension

    @property
    def verdict(self) -> str:
        """``"singular"`` (the span exceeds ``dim M``), ``"smooth"`` (equal, and every
        differential has rank ``dim M``) or ``"critical"`` (a differential drops rank)."""
        if self.dimension > self.manifold_dimension:
            return "singular"
        if self.dimension == self.manifold_dimension and all(
            r == self.manifold_dimension for r in self.sheet_ranks
        ):
            return "smooth"
        return "critical"


def _kind(A: np.ndarray, V: np.ndarray, a: int, min_gap: float) -> str:
    rA, rV = float_rank(A, min_gap=min_gap).rank, float_rank(V, min_gap=min_gap).rank
    if rA > a:
        raise ValueError(f"A has rank {rA} > a = {a}: not a point of M_(d,d',a)")
    if rA == 0 or rV == 0:
        return "zero"
    if rA == 1 and rV == 1:
        return "rank-one pair"
    return "rank-deficient A" if a < A.shape[0] and rA < a else "generic"


def _attention_directions(A: np.ndarray, a: int, r: int, min_gap: float) -> np.ndarray:
    """Orthonormal basis of the span of d(Kᵀ Q) over the factorizations Kᵀ Q = A (a < d).

    For ``r = rk A = a`` one GL_a-orbit (the tangent space of the rank-≤a matrices);
    otherwise also factorizations with a zero key row and query rows ``e_1, …, e_d``.
    """
    d = A.shape[0]
    U, s, Wt = np.linalg.svd(A)
    m = min(r, a)
    K0, Q0 = (U[:, :m] * np.sqrt(s[:m])).T, np.sqrt(s[:m])[:, None] * Wt[:m]
    vecs = []
    for q in [None] if m == a else list(np.eye(d)):
        K, Q = np.zeros((a, d)), np.zeros((a, d))
        K[:m], Q[:m] = K0, Q0
        if q is not None:
            Q[m] = q
        for i in range(a):
            for j in range(d):
                E = np.zeros((a, d))
                E[i, j] = 1.0
                vecs += [(E.T @ Q).ravel(), (K.T @ E).ravel()]  # dK = E, dQ = E
    M = np.array(vecs).T
    return np.linalg.svd(M, full_matrices=False)[0][:, : float_rank(M, min_gap=min_gap).rank]


def balanced(A: ArrayLike, V: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The point ``(cA, V/c)`` of the scaling line with ``‖cA‖ = ‖V/c‖`` (Frobenius).

    Explained in :doc:`/book/05_singularities/closedness`.

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]

    Returns
    -------
    tuple of numpy.ndarray
        The same function; ``(A, V)`` unchanged if one of them is zero.
    """
    A, V = _checks.pair(A, V)
    sa, sv = float(np.abs(A).max()), float(np.abs(V).max())
    if sa == 0 or sv == 0:
        return A, V
    # c = sqrt(‖V‖ / ‖A‖), computed from the scaled matrices so that no norm overflows
    c = math.sqrt(sv) / math.sqrt(sa) * math.sqrt(np.linalg.norm(V / sv) / np.linalg.norm(A / sa))
    return c * A, V / c


def tangent_space(
    A: ArrayLike,
    V: ArrayLike,
    *,
    a: int | None = None,
    seed: int = 0,
    n_samples: int = 4,
    min_gap: float = GAP_MIN,
) -> TangentSpace:
    """The span of the images of the differentials at all preimages of ``φ_{(A,V)}``.

    The preimages: the scaling line and the ``GL_a``-orbit of one (same image), the swap
    partner when ``rk A = rk V = 1`` (:func:`lsa_lib.fibers.swap`), ``n_samples`` random
    ``(0, V')`` and ``(A', 0)`` for the zero function, and when ``rk A < a`` factorizations
    with a zero key row. Explained in :doc:`/book/05_singularities`.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Of rank at most ``a``.
    V : array-like, shape=[d_out, d]
    a : int, optional
        Attention dimension (default ``d``).
    seed, n_samples : int
        For the random preimages of the zero function.
    min_gap : float
        The gap needed to read every rank.

    Returns
    -------
    TangentSpace
        Its ``verdict`` compares the span with ``dim M_{d,d',a}``.

    Raises
    ------
    ValueError
        On bad shapes or ``rk A > a``.
    lsa_lib.rank.RankAmbiguityError
        If a rank cannot be read.
    """
    A, V = _checks.pair(A, V)
    d, d_out = A.shape[0], V.shape[0]
    a = d if a is None else _checks.size(a, "a (the attention dimension)")
    n_samples = _checks.size(n_samples, "n_samples")
    kind = _kind(A, V, a, min_gap)
    A, V = balanced(A, V)
    sheets = [(A, V)]
    rng = np.random.default_rng(_checks.seed(seed))
    if kind == "zero":  # preimages A = 0 (any V) and V = 0 (rank A ≤ a)
        k = min(a, d)
        for _ in range(n_samples):
            sheets.append((np.zeros((d, d)), rng.standard_normal((d_out, d))))
            B = rng.standard_normal((d, k)) @ rng.standard_normal((k, d))
            sheets.append((B, np.zeros((d_out, d))))
    elif kind == "rank-one pair":
        sheets.append(swap(A, V))
    blocks, ranks = [], []
    for As, Vs in sheets:
        J = coefficient_differential(As, Vs)
        rs = float_rank(As, min_gap=min_gap).rank
        B = _attention_directions(As, a, rs, min_gap) if (a < d and rs > 0) else np.eye(d * d)
        block = np.hstack([J[:, : d * d] @ B, J[:, d * d :]])
        norm = np.linalg.norm(block)
        ranks.append(0 if norm == 0 else float_rank(block, min_gap=min_gap).rank)
        if norm > 0:
            blocks.append(block / norm)
    dim_m = general_width_formula((d, d_out), (a,))
    if not blocks:
        return TangentSpace(0, math.inf, dim_m, tuple(ranks), kind, np.zeros((d_out * d**3, 0)))
    M = np.hstack(blocks)
    reading = float_rank(M, min_gap=min_gap)
    U = np.linalg.svd(M, full_matrices=False)[0]
    return TangentSpace(reading.rank, reading.gap, dim_m, tuple(ranks), kind, U[:, : reading.rank])


def is_singular(
    A: ArrayLike, V: ArrayLike, *, a: int | None = None, min_gap: float = GAP_MIN
) -> bool:
    """Whether ``φ_{(A,V)}`` is a singular point of ``M_{d,d',a}``, by the rank rule.

    The rule: singular iff ``rk(A)·rk(V) ≤ 1``, or ``a < d`` and ``rk A < a`` (the ranks, read
    at the largest gap, depend only on the function). The first part is reported from the
    paper, the second is the book's; :doc:`/book/05_singularities/locus` compares the rule with
    :func:`tangent_space`.

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]
    a : int, optional
        Attention dimension (default ``d``).
    min_gap : float

    Returns
    -------
    bool
        For ``d = 1`` always False (``M_{1,d',a} = R^{d'}``).

    Raises
    ------
    ValueError
        On bad shapes, ``rk A > a``, or for ``d ≥ 2`` with ``d' = a = 1``, where the rule
        does not apply (generic rank-one points are smooth there; see the chapter).
    """
    A, V = _checks.pair(A, V)
    a = A.shape[0] if a is None else _checks.size(a, "a (the attention dimension)")
    kind = _kind(A, V, a, min_gap)
    if A.shape[0] == 1:
        return False
    if V.shape[0] == 1 and a == 1:
        raise ValueError(
            "the rank rule does not apply to M_(d,1,1): every nonzero point has "
            "rk A = rk V = 1 (see the chapter 'Singularities and the boundary')"
        )
    return kind != "generic"


def blow_up_sequence(
    n_values: ArrayLike, d: int = 2, d_out: int = 2, seed: int = 0
) -> dict[str, Any]:
    """Weights ``(A_n, V_n)`` with ``‖A_n‖ → ∞`` whose functions converge to a rank-one pair.

    ``A_n = n b cᵀ + B`` and ``V_n = (v wᵀ + B' / n) / n``: full rank for generic data, and
    ``F(A_n, V_n) = F(bcᵀ, vwᵀ) + O(1/n)``. Explained in :doc:`/book/05_singularities/closedness`.

    Parameters
    ----------
    n_values : array-like of positive numbers
    d, d_out : int
        At least 2.
    seed : int

    Returns
    -------
    dict
        ``"weights"`` (the ``(A_n, V_n)``), ``"balanced"`` (:func:`balanced`), ``"limit"``
        (balanced ``(b cᵀ, v wᵀ)``), ``"functions"`` (the tensors ``F``) and
        ``"limit_function"``.
    """
    ns = np.asarray(n_values, dtype=np.float64).ravel()
    if ns.size == 0 or not np.all(np.isfinite(ns)) or np.any(ns <= 0):
        raise ValueError("n_values must be a non-empty list of positive numbers")
    d, d_out = _checks.size(d, "d", minimum=2), _checks.size(d_out, "d_out", minimum=2)
    rng = np.random.default_rng(_checks.seed(seed))
    b, c, w = (rng.standard_normal(d) for _ in range(3))
    v = rng.standard_normal(d_out)
    B, B2 = rng.standard_normal((d, d)), rng.standard_normal((d_out, d))
    A0, V0 = np.outer(b, c), np.outer(v, w)
    weights = [(n * A0 + B, (V0 + B2 / n) / n) for n in ns]
    return {
        "weights": weights,
        "balanced": [balanced(Ak, Vk) for Ak, Vk in weights],
        "limit": balanced(A0, V0),
        "functions": [function_coefficients(Ak, Vk) for Ak, Vk in weights],
        "limit_function": function_coefficients(A0, V0),
    }

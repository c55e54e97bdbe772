"""Singular points, the smallest example and the closedness of one layer (chapter "Singularities
and the boundary").

A single lightning layer computes ``φ(X) = V X Xᵀ A X`` with ``A = Kᵀ Q``. Column ``j`` is
``V S A x_j`` with ``S = X Xᵀ``, so the function is the tensor

    F[k, p, q, r] = (V[k, p] A[q, r] + V[k, q] A[p, r]) / 2,

symmetric in ``(p, q)``, with ``φ(X)[k, j] = Σ F[k, p, q, r] S[p, q] X[r, j]``
(:func:`function_coefficients`). The neuromanifold ``M_{d,d',a}`` is the set of all such ``F``
with ``rk A ≤ a``. This module computes

* tangent information: the rank of the differential of ``(A, V) ↦ φ`` at a point
  (:func:`tangent_dimension`, through the rank engine) and the span of the tangent directions
  of *all* preimages of a function (:func:`tangent_space`);
* the rank rule for singular points (:func:`is_singular`, :func:`singular_kind`);
* the smallest example ``M_{2,1,2}``, pairs of binary quadrics with a common real linear factor:
  its implicit equation by elimination (:func:`m212_implicit_equation`), membership with explicit
  weights (:func:`m212_contains`, :func:`m212_preimage`), and a 3-dimensional slice through it
  (:func:`umbrella_slice`, :func:`plot_umbrella_slice`, :func:`explore_umbrella_slice`);
* a sequence of weights that blows up while its functions converge (:func:`blow_up_sequence`,
  :func:`balanced`);
* an exploratory gradient-descent experiment (:func:`descent_runs`, :func:`near_singular_stats`).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from .rank import DEFAULT_MIN_GAP, float_rank

__all__ = [
    "function_coefficients",
    "coefficient_differential",
    "coefficient_evaluation_rank",
    "single_layer_dimension",
    "TangentDimension",
    "tangent_dimension",
    "TangentSpace",
    "tangent_space",
    "singular_kind",
    "is_singular",
    "quadric_pair",
    "m212_implicit_equation",
    "m212_resultant",
    "m212_contains",
    "m212_preimage",
    "UmbrellaSlice",
    "umbrella_slice",
    "plot_umbrella_slice",
    "explore_umbrella_slice",
    "balanced",
    "blow_up_sequence",
    "DescentRuns",
    "descent_runs",
    "singular_proximity",
    "near_singular_stats",
    "wilson_interval",
]


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------


def _is_integer_array(M: Any) -> bool:
    arr = np.asarray(M)
    if arr.dtype == object:
        return all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in arr.ravel())
    return np.issubdtype(arr.dtype, np.integer)


def _matrix(M: Any, name: str) -> np.ndarray:
    """``M`` as a finite float64 matrix, or a TypeError/ValueError naming ``name``."""
    if hasattr(M, "detach"):
        M = M.detach().cpu().numpy()
    if isinstance(M, (str, bytes)):
        raise TypeError(f"{name} must be a numeric matrix, got {type(M).__name__}")
    try:
        arr = np.asarray(M)
    except (TypeError, ValueError) as err:  # pragma: no cover - ragged input
        raise TypeError(f"{name} must be a numeric matrix") from err
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be a numeric matrix, got dtype object") from err
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be a numeric matrix, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    if arr.ndim != 2 or min(arr.shape) < 1:
        raise ValueError(f"{name} must be a non-empty matrix, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has non-finite entries (nan or inf)")
    return arr


def _pair(A: Any, V: Any) -> tuple[np.ndarray, np.ndarray]:
    A = _matrix(A, "A")
    V = _matrix(V, "V")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square (d, d), got shape {A.shape}")
    if V.shape[1] != A.shape[0]:
        raise ValueError(
            f"V must have shape (d_out, d) with d = {A.shape[0]} (the size of A), got {V.shape}"
        )
    return A, V


def _check_a(a: Any, d: int) -> int:
    if a is None:
        return d
    if isinstance(a, bool) or not isinstance(a, numbers.Integral) or a < 1:
        raise ValueError(f"a must be a positive integer (the attention dimension), got {a!r}")
    return int(a)


def _rank(M: np.ndarray, min_gap: float) -> int:
    if not np.any(M):
        return 0
    return float_rank(M, min_gap=min_gap).rank


# --------------------------------------------------------------------------------------------
# the function as a coefficient tensor, and its differential
# --------------------------------------------------------------------------------------------


def function_coefficients(A: Any, V: Any) -> np.ndarray:
    """The coefficient tensor ``F`` of the function computed by ``(A, V)``.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Attention matrix ``Kᵀ Q``.
    V : array-like, shape=[d_out, d]
        Value matrix.

    Returns
    -------
    numpy.ndarray, shape=[d_out, d, d, d]
        ``F[k, p, q, r] = (V[k, p] A[q, r] + V[k, q] A[p, r]) / 2``, symmetric in ``(p, q)``.
        The layer's output is ``φ(X)[k, j] = Σ_{p,q,r} F[k, p, q, r] (X Xᵀ)[p, q] X[r, j]``; for
        ``t ≥ 2`` tokens two weights give the same function exactly when their tensors agree,
        so ``F`` is a coordinate system on the space of functions.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A, V = _pair(A, V)
    T = np.einsum("kp,qr->kpqr", V, A)
    return (T + T.transpose(0, 2, 1, 3)) / 2


def coefficient_differential(A: Any, V: Any) -> np.ndarray:
    """The Jacobian of ``(A, V) ↦ F`` (:func:`function_coefficients`) at a point.

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]

    Returns
    -------
    numpy.ndarray, shape=[d_out * d**3, d**2 + d_out * d]
        Column ``i`` is the derivative of ``F.ravel()`` along the ``i``-th entry of
        ``(A.ravel(), V.ravel())``. ``F`` is bilinear, so the columns are
        ``F(E_i, V)`` and ``F(A, E_j)`` for the unit matrices ``E``; entries are exact halves of
        integers when ``A`` and ``V`` are integer.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A, V = _pair(A, V)
    d, d_out = A.shape[0], V.shape[0]
    eye_d = np.eye(d)
    # d F / d A[m, n] : (V[k, p] δ(q, m) δ(r, n) + V[k, q] δ(p, m) δ(r, n)) / 2
    JA = np.einsum("kp,qm,rn->kpqrmn", V, eye_d, eye_d)
    JA = (JA + JA.transpose(0, 2, 1, 3, 4, 5)) / 2
    # d F / d V[m, n] : (δ(k, m) δ(p, n) A[q, r] + δ(k, m) δ(q, n) A[p, r]) / 2
    JV = np.einsum("km,pn,qr->kpqrmn", np.eye(d_out), eye_d, A)
    JV = (JV + JV.transpose(0, 2, 1, 3, 4, 5)) / 2
    n = d_out * d**3
    return np.hstack([JA.reshape(n, d * d), JV.reshape(n, d_out * d)])


def coefficient_evaluation_rank(
    d: int, d_out: int, t: int, *, n_inputs: int | None = None, seed: int = 0
) -> tuple[int, int]:
    """Whether the function determines its coefficient tensor: the rank of ``F ↦ φ`` on samples.

    Parameters
    ----------
    d, d_out, t : int
        Widths and tokens per input (positive).
    n_inputs : int, optional
        Number of random inputs ``X`` (default: enough for the rank to be full if it can be).
    seed : int
        Seed of the inputs.

    Returns
    -------
    tuple of int
        ``(rank, n_coefficients)``: the rank, read at a singular-value gap of at least 1e4, of
        the linear map from tensors ``F`` (symmetric in ``(p, q)``; ``n_coefficients =
        d' · d(d+1)/2 · d`` of them) to the outputs ``φ(X)[k, j] = Σ F[k, p, q, r] S[p, q] X[r, j]`` on the inputs.
        Equal numbers mean that different tensors give different functions.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    for name, v in (("d", d), ("d_out", d_out), ("t", t)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    pairs = [(p, q) for p in range(d) for q in range(p, d)]
    n_coef = d_out * len(pairs) * d
    if n_inputs is None:
        n_inputs = 2 * n_coef // (d_out * t) + 2
    if isinstance(n_inputs, bool) or not isinstance(n_inputs, numbers.Integral) or n_inputs < 1:
        raise ValueError(f"n_inputs must be a positive integer, got {n_inputs!r}")
    X = np.random.default_rng(seed).standard_normal((int(n_inputs), d, t))
    S = X @ X.transpose(0, 2, 1)
    cols = []
    for k in range(d_out):
        for p, q in pairs:
            for r in range(d):
                out = np.zeros((int(n_inputs), d_out, t))
                weight = S[:, p, q] if p == q else 2 * S[:, p, q]
                out[:, k, :] = weight[:, None] * X[:, r, :]
                cols.append(out.ravel())
    return float_rank(np.array(cols).T).rank, n_coef


def single_layer_dimension(d: int, d_out: int, a: int) -> int:
    """``dim M_{d,d',a}``: ``2ad + dd' − a² − 1`` if ``a ≤ d``, else ``d² + dd' − 1``.

    Parameters
    ----------
    d, d_out, a : int
        Input width ``d``, output width ``d'``, attention dimension ``a`` (positive).

    Returns
    -------
    int
        The dimension formula for ``t ≥ 2`` as reported in summaries of the paper (checked by
        exact ranks in the chapter "Single-layer fibers"). For ``d = 1`` it is ``d'``.

    Notes
    -----
    Used in the chapter "Singularities and the boundary" as the dimension a smooth point's
    tangent space must have.
    """
    for name, v in (("d", d), ("d_out", d_out), ("a", a)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if a <= d:
        return 2 * a * d + d * d_out - a * a - 1
    return d * d + d * d_out - 1


# --------------------------------------------------------------------------------------------
# the rank of the differential at one point (through the rank engine)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TangentDimension:
    """The rank of the differential of ``(A, V) ↦ φ`` at one point.

    Explained in the chapter "Singularities and the boundary".

    Attributes
    ----------
    rank : int
        The rank.
    exact : bool
        True when decided in exact integer arithmetic, False for a float64 reading.
    gap : float
        The singular-value gap at the rank (``inf`` for an exact result).
    n_params : int
        ``d² + d'd``, the number of ``(A, V)`` coordinates.
    method : str
        How the rank was obtained.
    """

    rank: int
    exact: bool
    gap: float
    n_params: int
    method: str


def tangent_dimension(
    A: Any,
    V: Any,
    *,
    t: int = 3,
    exact: bool | None = None,
    n_inputs: int | None = None,
    seed: int = 0,
    min_gap: float = DEFAULT_MIN_GAP,
) -> TangentDimension:
    """The rank of the differential of ``(A, V) ↦ φ_{(A,V)}`` at the point ``(A, V)``.

    ``A`` ranges over all ``d × d`` matrices here (the parametrization of ``M_{d,d',a}`` for
    ``a ≥ d``); for ``a < d`` use :func:`tangent_space` with ``a``, which restricts ``A`` to rank
    ``≤ a``.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Attention matrix.
    V : array-like, shape=[d_out, d]
        Value matrix.
    t : int
        Tokens per input (at least 2: with one token only the symmetric part of ``A`` is seen).
    exact : bool, optional
        ``True``: exact arithmetic (needs integer ``A`` and ``V``); ``False``: float64;
        default: exact exactly when both matrices are integer arrays.
    n_inputs : int, optional
        Float mode: number of random inputs (default: the engine's).
    seed : int
        Seed of the random inputs.
    min_gap : float
        Float mode: the singular-value gap needed to read the rank.

    Returns
    -------
    TangentDimension
        Float mode: the float64 Jacobian of the sampled outputs
        (:func:`lsa_lib.rank.numerical_rank` with
        :func:`lsa_lib.rank.attention_value_parametrization`), read at its largest gap.
        Exact mode: :func:`lsa_lib.rank.certified_rank`; when its bounds differ (the point is
        not generic), the rank of the integer matrix ``2 ×`` :func:`coefficient_differential`
        over the rationals (python-flint), which is exact and agrees with the sampled Jacobian
        because the coefficients determine the function for ``t ≥ 2``.

    Raises
    ------
    ValueError
        On bad shapes, ``t < 2``, or ``exact=True`` with non-integer entries.
    lsa_lib.rank.RankAmbiguityError
        Float mode, when the singular values show no gap of ``min_gap``.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    from . import rank as _engine

    integer = _is_integer_array(A) and _is_integer_array(V)
    Af, Vf = _pair(A, V)
    if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 2:
        raise ValueError(f"t must be an integer >= 2 (with t = 1 only sym(A) is seen), got {t!r}")
    if exact is None:
        exact = integer
    if exact and not integer:
        raise ValueError("exact=True needs integer A and V (integer dtype arrays)")
    d, d_out = Af.shape[0], Vf.shape[0]
    param = _engine.attention_value_parametrization(d, d_out, t=int(t))
    if exact:
        Ai = np.asarray(A, dtype=np.int64)
        Vi = np.asarray(V, dtype=np.int64)
        cert = _engine.certified_rank(param, params=[Ai, Vi], seed=seed)
        if cert.lower == cert.upper:
            return TangentDimension(
                cert.lower, True, math.inf, param.n_params, "certified_rank (mod p bounds)"
            )
        import flint

        J2 = np.rint(2 * coefficient_differential(Ai, Vi)).astype(np.int64)
        r = int(flint.fmpz_mat(J2.tolist()).rank())
        if not (cert.lower <= r <= cert.upper):  # pragma: no cover - would be a bug
            raise RuntimeError(f"exact rank {r} outside the certified bounds {cert}")
        return TangentDimension(r, True, math.inf, param.n_params, "exact rank of 2·dF over Q")
    res = _engine.numerical_rank(
        param, params=[Af, Vf], n_inputs=n_inputs, seed=seed, min_gap=min_gap
    )
    return TangentDimension(
        res.rank, False, float(res.gap), param.n_params, "float64 Jacobian (numerical_rank)"
    )


# --------------------------------------------------------------------------------------------
# tangent directions of all preimages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TangentSpace:
    """The span of the tangent directions of all preimages of one function.

    Explained in the chapter "Singularities and the boundary".

    Attributes
    ----------
    dimension : int
        Dimension of the span (read at a singular-value gap of at least ``min_gap``).
    gap : float
        That gap.
    manifold_dimension : int
        ``dim M_{d,d',a}`` (:func:`single_layer_dimension`).
    sheet_ranks : tuple of int
        The rank of the differential at each ``(A, V)`` preimage used (the first is the given
        point). When ``rk A < a < d`` the attention directions of that preimage are those of
        all its factorizations ``A = Kᵀ Q`` together.
    kind : str
        :func:`singular_kind` of the point.
    basis : numpy.ndarray, shape=[d_out * d**3, dimension]
        An orthonormal basis of the span, in the coordinates of ``F.ravel()``.
    """

    dimension: int
    gap: float
    manifold_dimension: int
    sheet_ranks: tuple[int, ...]
    kind: str
    basis: np.ndarray = field(repr=False)

    @property
    def excess(self) -> int:
        """``dimension − manifold_dimension``: positive means more tangent directions than a
        smooth point of ``M`` can have."""
        return self.dimension - self.manifold_dimension

    @property
    def verdict(self) -> str:
        """``"singular"`` if the span exceeds ``dim M``; ``"smooth"`` if it equals ``dim M`` and
        every preimage's differential has rank ``dim M``; ``"critical"`` otherwise (some
        differential drops rank: the tangent test alone does not decide)."""
        if self.dimension > self.manifold_dimension:
            return "singular"
        if self.dimension == self.manifold_dimension and all(
            r == self.manifold_dimension for r in self.sheet_ranks
        ):
            return "smooth"
        return "critical"


def _attention_directions(A: np.ndarray, a: int, r: int) -> np.ndarray:
    """Orthonormal basis (d², k) of the span of d(Kᵀ Q) over the factorizations Kᵀ Q = A.

    For ``r = rk A = a < d`` all factorizations are one GL_a-orbit and the span is the tangent
    space of the rank-≤a matrices at ``A``. Otherwise factorizations with a zero key row and a
    free query row exist; the span is computed from those with query rows e_1, ..., e_d.
    """
    d = A.shape[0]
    U, s, Wt = np.linalg.svd(A)
    m = min(r, a)
    K0 = (U[:, :m] * np.sqrt(s[:m])).T  # (m, d)
    Q0 = np.sqrt(s[:m])[:, None] * Wt[:m]  # (m, d)
    extra_rows = [None] if m == a else [np.eye(d)[i] for i in range(d)]
    vecs = []
    for q in extra_rows:
        K = np.zeros((a, d))
        Q = np.zeros((a, d))
        K[:m], Q[:m] = K0, Q0
        if q is not None:
            Q[m] = q
        for i in range(a):
            for j in range(d):
                E = np.zeros((a, d))
                E[i, j] = 1.0
                vecs.append((E.T @ Q).ravel())  # dK = E
                vecs.append((K.T @ E).ravel())  # dQ = E
    M = np.array(vecs).T
    Ub, sb, _ = np.linalg.svd(M, full_matrices=False)
    k = int((sb > sb[0] * 1e-10).sum())
    return Ub[:, :k]


def balanced(A: Any, V: Any) -> tuple[np.ndarray, np.ndarray]:
    """The point ``(cA, V/c)`` of the scaling line with ``‖cA‖ = ‖V/c‖`` (Frobenius norms).

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]

    Returns
    -------
    tuple of numpy.ndarray
        The balanced representative (the same function, by
        :func:`lsa_lib.fibers.scaling_fiber`); ``(A, V)`` unchanged if one of them is zero.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary" (closedness).
    """
    from .fibers import scaling_fiber

    A, V = _pair(A, V)
    na, nv = np.linalg.norm(A), np.linalg.norm(V)
    if na == 0 or nv == 0:
        return A, V
    return scaling_fiber(A, V, math.sqrt(nv / na))


def _sheets(
    A: np.ndarray, V: np.ndarray, a: int, rA: int, rV: int, rng: np.random.Generator, n: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    d, d_out = A.shape[0], V.shape[0]
    sheets = [(A, V)]
    if rA == 0 or rV == 0:  # the zero function: preimages A = 0 (any V) and V = 0 (rank A ≤ a)
        k = min(a, d)
        for _ in range(n):
            sheets.append((np.zeros((d, d)), rng.standard_normal((d_out, d))))
            B = rng.standard_normal((d, k)) @ rng.standard_normal((k, d))
            sheets.append((B, np.zeros((d_out, d))))
    elif rA == 1 and rV == 1:
        from .fibers import swap

        sheets.append(tuple(np.asarray(m, dtype=np.float64) for m in swap(A, V)))
    return sheets


def tangent_space(
    A: Any,
    V: Any,
    *,
    a: int | None = None,
    seed: int = 0,
    n_samples: int = 4,
    min_gap: float = DEFAULT_MIN_GAP,
) -> TangentSpace:
    """The span of the images of the differentials at all preimages of ``φ_{(A,V)}``.

    The preimages of the function (in the weights ``(Q, K, V)`` of ``M_{d,d',a}``) are: the
    scaling line and the ``GL_a``-orbit of any one of them (same image of the differential), the
    swap partner when ``rk A = rk V = 1`` (:func:`lsa_lib.fibers.swap`), every ``(0, V')`` and
    ``(A', 0)`` for the zero function (``n_samples`` random ones of each), and, when
    ``rk A < a``, factorizations ``A = Kᵀ Q`` with a zero key row and a free query row.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Attention matrix, of rank at most ``a``.
    V : array-like, shape=[d_out, d]
        Value matrix.
    a : int, optional
        Attention dimension (default ``d``: ``A`` unconstrained).
    seed : int
        Seed for the random preimages of the zero function.
    n_samples : int
        Number of random preimages of each kind for the zero function.
    min_gap : float
        Gap needed to read every rank (of ``A``, ``V``, each differential and the span).

    Returns
    -------
    TangentSpace
        Its ``verdict`` compares the span with ``dim M_{d,d',a}``.

    Raises
    ------
    ValueError
        On bad shapes, ``rk A > a`` (not a point of ``M_{d,d',a}``), or a bad ``a``.
    lsa_lib.rank.RankAmbiguityError
        If a rank cannot be read.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A, V = _pair(A, V)
    d = A.shape[0]
    a = _check_a(a, d)
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    rA, rV = _rank(A, min_gap), _rank(V, min_gap)
    if rA > a:
        raise ValueError(f"A has rank {rA} > a = {a}: not a point of M_(d,d',a)")
    A, V = balanced(A, V)
    rng = np.random.default_rng(seed)
    blocks, ranks = [], []
    for As, Vs in _sheets(A, V, a, rA, rV, rng, int(n_samples)):
        J = coefficient_differential(As, Vs)
        rs = _rank(As, min_gap)
        B = _attention_directions(As, a, rs) if (a < d and rs > 0) else np.eye(d * d)
        block = np.hstack([J[:, : d * d] @ B, J[:, d * d :]])
        norm = np.linalg.norm(block)
        ranks.append(0 if norm == 0 else float_rank(block, min_gap=min_gap).rank)
        if norm > 0:
            blocks.append(block / norm)
    kind = singular_kind(A, V, a=a, min_gap=min_gap)
    dim_m = single_layer_dimension(d, V.shape[0], a)
    if not blocks:
        return TangentSpace(0, math.inf, dim_m, tuple(ranks), kind, np.zeros((A.size, 0)))
    M = np.hstack(blocks)
    reading = float_rank(M, min_gap=min_gap)
    U = np.linalg.svd(M, full_matrices=False)[0]
    return TangentSpace(reading.rank, reading.gap, dim_m, tuple(ranks), kind, U[:, : reading.rank])


# --------------------------------------------------------------------------------------------
# the rank rule
# --------------------------------------------------------------------------------------------


def singular_kind(A: Any, V: Any, *, a: int | None = None, min_gap: float = DEFAULT_MIN_GAP) -> str:
    """Which kind of point ``(A, V)`` is, by the ranks of ``A`` and ``V``.

    Parameters
    ----------
    A : array-like, shape=[d, d]
    V : array-like, shape=[d_out, d]
    a : int, optional
        Attention dimension (default ``d``).
    min_gap : float
        Gap needed to read the ranks (SVD).

    Returns
    -------
    str
        ``"zero"`` (``A = 0`` or ``V = 0``), ``"rank-one pair"`` (``rk A = rk V = 1``, the swap
        points), ``"rank-deficient A"`` (``a < d`` and ``0 < rk A < a``, not a rank-one pair) or
        ``"generic"``. All four depend only on the function (its preimages share them).

    Raises
    ------
    ValueError
        On bad shapes or ``rk A > a``.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A, V = _pair(A, V)
    d = A.shape[0]
    a = _check_a(a, d)
    rA, rV = _rank(A, min_gap), _rank(V, min_gap)
    if rA > a:
        raise ValueError(f"A has rank {rA} > a = {a}: not a point of M_(d,d',a)")
    if rA == 0 or rV == 0:
        return "zero"
    if rA == 1 and rV == 1:
        return "rank-one pair"
    if a < d and rA < a:
        return "rank-deficient A"
    return "generic"


def is_singular(A: Any, V: Any, *, a: int | None = None, min_gap: float = DEFAULT_MIN_GAP) -> bool:
    """Whether the function ``φ_{(A,V)}`` is a singular point of ``M_{d,d',a}``, by the rank rule.

    The rule: the point is singular iff ``rk(A)·rk(V) ≤ 1`` (the zero function and the rank-one
    pairs), or ``a < d`` and ``rk A < a``. Ranks are read from singular values at their largest
    gap; they depend only on the function, not on the chosen preimage. The rule is the
    statement reported from the paper (the ``rk A < a`` part is the book's check); the chapter
    compares it with :func:`tangent_space` at sampled points.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Attention matrix, of rank at most ``a``.
    V : array-like, shape=[d_out, d]
        Value matrix.
    a : int, optional
        Attention dimension (default ``d``: ``A`` unconstrained; any ``a ≥ d`` gives the same
        space).
    min_gap : float
        Gap needed to read the ranks.

    Returns
    -------
    bool
        For ``d = 1`` always False: ``M_{1,d',a} = R^{d'}`` is a linear space.

    Raises
    ------
    ValueError
        On bad shapes, ``rk A > a``, or for ``d ≥ 2`` with ``d' = a = 1``: there every nonzero
        point has ``rk A = rk V = 1``, yet at generic ones the two swapped sheets coincide and
        the tangent space has the dimension of ``M`` (checked in the chapter), so the rule does
        not apply.
    lsa_lib.rank.RankAmbiguityError
        If a rank cannot be read.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A, V = _pair(A, V)
    d, d_out = A.shape[0], V.shape[0]
    a = _check_a(a, d)
    kind = singular_kind(A, V, a=a, min_gap=min_gap)
    if d == 1:
        return False
    if d_out == 1 and a == 1:
        raise ValueError(
            "the rank rule does not apply to M_(d,1,1): every nonzero point has "
            "rk A = rk V = 1 (see the chapter 'Singularities and the boundary')"
        )
    return kind != "generic"


# --------------------------------------------------------------------------------------------
# the smallest example: M_{2,1,2}, pairs of binary quadrics
# --------------------------------------------------------------------------------------------

_M212_NAMES = ("a1", "b1", "c1", "a2", "b2", "c2")


def quadric_pair(A: Any, V: Any) -> np.ndarray:
    """The pair of binary quadrics ``q_r(x) = (w·x)((A e_r)·x)`` of a point of ``M_{2,1,2}``.

    Parameters
    ----------
    A : array-like, shape=[2, 2]
        Attention matrix.
    V : array-like, shape=[1, 2]
        Value matrix ``V = wᵀ``.

    Returns
    -------
    numpy.ndarray, shape=[6]
        ``(a₁, b₁, c₁, a₂, b₂, c₂)`` with ``q_r = a_r x² + b_r xy + c_r y²``. The layer is
        ``φ(X)[0, j] = Σ_r (Σ_i q_r(x_i)) X[r, j]``, so the pair is the function.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A, V = _pair(A, V)
    if A.shape != (2, 2) or V.shape != (1, 2):
        raise ValueError(
            f"M_(2,1,2) needs A of shape (2, 2) and V of shape (1, 2), got {A.shape}, {V.shape}"
        )
    F = function_coefficients(A, V)[0]
    return np.array([[F[0, 0, r], 2 * F[0, 1, r], F[1, 1, r]] for r in range(2)]).ravel()


@functools.lru_cache(maxsize=1)
def m212_implicit_equation() -> tuple[sympy.Expr, tuple[sympy.Symbol, ...]]:
    """The implicit equation of ``M_{2,1,2}``, by eliminating the weights (sympy Gröbner basis).

    The ideal ``⟨a_r − w₁A₁ᵣ, b_r − (w₁A₂ᵣ + w₂A₁ᵣ), c_r − w₂A₂ᵣ : r = 1, 2⟩`` (the
    parametrization of :func:`quadric_pair`) is intersected with ``Q[a₁, …, c₂]`` by a
    lexicographic Gröbner basis; its generators define the Zariski closure of ``M_{2,1,2}``.

    Returns
    -------
    tuple
        ``(R, symbols)``: the single generator ``R`` (a quartic, leading coefficient of
        ``a₁²c₂²`` made +1) and the symbols ``(a1, b1, c1, a2, b2, c2)``.

    Raises
    ------
    RuntimeError
        If the elimination ideal is not generated by one polynomial (it is).

    Notes
    -----
    Takes a few seconds (cached). Explained in the chapter "Singularities and the boundary".
    """
    coeffs = sympy.symbols(" ".join(_M212_NAMES))
    a1, b1, c1, a2, b2, c2 = coeffs
    w1, w2, A11, A12, A21, A22 = sympy.symbols("w1 w2 A11 A12 A21 A22")
    weights = (w1, w2, A11, A12, A21, A22)
    ideal = [
        a1 - w1 * A11,
        b1 - (w1 * A21 + w2 * A11),
        c1 - w2 * A21,
        a2 - w1 * A12,
        b2 - (w1 * A22 + w2 * A12),
        c2 - w2 * A22,
    ]
    G = sympy.groebner(ideal, *weights, *coeffs, order="lex")
    elim = [g for g in G.exprs if not (g.free_symbols & set(weights))]
    if len(elim) != 1:  # pragma: no cover - a different answer would be a discovery
        raise RuntimeError(f"expected one implicit equation, got {len(elim)}")
    R = sympy.expand(elim[0])
    lead = sympy.Poly(R, *coeffs).coeff_monomial(a1**2 * c2**2)
    return sympy.expand(R / lead), coeffs


def m212_resultant() -> tuple[sympy.Expr, tuple[sympy.Symbol, ...]]:
    """The resultant of the two binary quadrics ``q₁, q₂`` (sympy), in ``(a₁, …, c₂)``.

    Returns
    -------
    tuple
        ``(Res, symbols)``: ``Res`` vanishes exactly when ``q₁`` and ``q₂`` have a common
        (complex) linear factor, or both leading coefficients vanish.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    coeffs = sympy.symbols(" ".join(_M212_NAMES))
    a1, b1, c1, a2, b2, c2 = coeffs
    x = sympy.Symbol("x")
    Res = sympy.resultant(a1 * x**2 + b1 * x + c1, a2 * x**2 + b2 * x + c2, x)
    return sympy.expand(Res), coeffs


def _pair_vector(q: Any) -> np.ndarray:
    arr = np.asarray(q, dtype=np.float64) if not isinstance(q, (str, bytes)) else None
    if arr is None or arr.shape != (6,):
        raise ValueError(
            f"a pair of binary quadrics is a vector (a1, b1, c1, a2, b2, c2) of length 6, got {q!r}"
        )
    if not np.isfinite(arr).all():
        raise ValueError("the pair of quadrics has non-finite entries")
    return arr


def _m212_value(q: np.ndarray) -> float:
    a1, b1, c1, a2, b2, c2 = q
    return float((a1 * c2 - a2 * c1) ** 2 - (a1 * b2 - a2 * b1) * (b1 * c2 - b2 * c1))


def m212_contains(q: Any, *, tol: float = 1e-9) -> bool:
    """Whether a pair of binary quadrics lies in ``M_{2,1,2}`` (has a common real linear factor).

    Parameters
    ----------
    q : array-like, shape=[6]
        ``(a₁, b₁, c₁, a₂, b₂, c₂)``.
    tol : float
        Relative tolerance: the equation counts as zero when ``|R(q)| ≤ tol·‖q‖⁴``, the pair as
        proportional when the ``2 × 3`` coefficient matrix has ``σ₂ ≤ tol·σ₁``.

    Returns
    -------
    bool
        Linearly independent pair: in ``M`` iff the implicit equation vanishes (the common
        factor is then the gcd, a real linear form). Proportional pair ``(λ₁q, λ₂q)``: in ``M``
        iff ``q`` has a real linear factor, i.e. its discriminant ``b² − 4ac ≥ 0`` — so
        proportional pairs of *definite* quadrics satisfy the equation but are not in ``M``.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    q = _pair_vector(q)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    C = q.reshape(2, 3)
    s = np.linalg.svd(C, compute_uv=False)
    if s[0] == 0:
        return True
    if s[1] <= tol * s[0]:  # proportional: one quadric decides
        a, b, c = C[np.argmax(np.abs(C).sum(axis=1))]
        return bool(b * b - 4 * a * c >= -tol * (a * a + b * b + c * c))
    return abs(_m212_value(q)) <= tol * float(np.dot(q, q)) ** 2


def m212_preimage(q: Any, *, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Explicit weights ``(A, V)`` of ``M_{2,1,2}`` computing a given pair of quadrics.

    Parameters
    ----------
    q : array-like, shape=[6]
        A pair in ``M_{2,1,2}`` (see :func:`m212_contains`).
    tol : float
        As in :func:`m212_contains`.

    Returns
    -------
    tuple of numpy.ndarray
        ``A`` of shape ``(2, 2)`` and ``V = wᵀ`` of shape ``(1, 2)`` with
        ``quadric_pair(A, V) ≈ q``: ``w·x`` is the common real linear factor and ``A e_r`` the
        coefficients of the cofactor ``q_r / (w·x)``; balanced (:func:`balanced`).

    Raises
    ------
    ValueError
        If the pair is not in ``M_{2,1,2}``.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    q = _pair_vector(q)
    if not m212_contains(q, tol=tol):
        raise ValueError(
            f"the pair {q.tolist()} has no common real linear factor: not in M_(2,1,2)"
        )
    C = q.reshape(2, 3)
    _, s, Wt = np.linalg.svd(C)
    if s[0] == 0:
        return np.zeros((2, 2)), np.array([[1.0, 0.0]])
    if s[1] <= tol * s[0]:  # proportional pair (λ₁ g, λ₂ g)
        g = Wt[0] * s[0]
        lam = C @ Wt[0] / s[0]
        a, b, c = g
        # a real root [r1 : r2] of g(x, y) = a x² + b x y + c y²
        if abs(a) >= abs(c):
            if a == 0:  # then g = b x y
                r = np.array([1.0, 0.0])
            else:
                r = np.array([(-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a), 1.0])
        else:
            r = np.array([1.0, (-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * c)])
        cofactors = [lam[0] * g, lam[1] * g]
    else:  # independent pair: the common root spans the kernel direction (r1², r1 r2, r2²)
        z = Wt[2]
        r = np.array([z[0], z[1]]) if abs(z[0]) >= abs(z[2]) else np.array([z[1], z[2]])
        cofactors = [C[0], C[1]]
    w = np.array([r[1], -r[0]])  # ℓ(x, y) = r2 x − r1 y vanishes at [r1 : r2]
    A = np.zeros((2, 2))
    for k, (a, b, c) in enumerate(cofactors):
        # divide a x² + b xy + c y² by w1 x + w2 y: cofactor m1 x + m2 y
        if abs(w[0]) >= abs(w[1]):
            m1 = a / w[0]
            m2 = (b - m1 * w[1]) / w[0]
        else:
            m2 = c / w[1]
            m1 = (b - m2 * w[0]) / w[1]
        A[:, k] = (m1, m2)
    return balanced(A, w[None, :])


# --------------------------------------------------------------------------------------------
# a 3-dimensional slice of M_{2,1,2}: the Whitney umbrella
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UmbrellaSlice:
    """Computed data of the slice ``{(q₁, q₂) = (x² + s y², v xy + u y²)}`` of ``M_{2,1,2}``.

    Explained in the chapter "Singularities and the boundary".

    Attributes
    ----------
    equation : sympy.Expr
        The implicit equation restricted to the slice, in the symbols ``u, v, s``.
    singular_equations : list of sympy.Expr
        The equation and its three partial derivatives (their common zeros: the singular curve).
    surface : tuple of numpy.ndarray
        ``(U, V, S)`` grids (shape ``[n, n]``) of points of ``M`` in the slice, one ruling
        line per row: the pairs with common root ``[k : 1]``.
    singular_in_m : numpy.ndarray, shape=[m, 3]
        Points of the singular curve that lie in ``M`` (``s ≤ 0``).
    singular_not_in_m : numpy.ndarray, shape=[m, 3]
        Points of the same curve where the equation vanishes but the pair is not in ``M``.
    """

    equation: sympy.Expr
    singular_equations: list
    surface: tuple[np.ndarray, np.ndarray, np.ndarray] = field(repr=False)
    singular_in_m: np.ndarray = field(repr=False)
    singular_not_in_m: np.ndarray = field(repr=False)


def _slice_pair(u: float, v: float, s: float) -> np.ndarray:
    return np.array([1.0, 0.0, s, 0.0, v, u])


def umbrella_slice(n: int = 41, box: float = 1.0) -> UmbrellaSlice:
    """Data for a 3-dimensional affine slice of ``M_{2,1,2}`` (a reconstruction of Figure 1).

    The slice is ``q₁ = x² + s y²``, ``q₂ = v xy + u y²`` with coordinates ``(u, v, s)``. The
    surface is drawn from the parametrization, not from the equation: for each common root
    ``[k : 1]``, the pairs of the slice vanishing there form a line (two linear conditions on
    ``(u, v, s)``), and these lines sweep the part of ``M`` in the slice. The singular curve
    comes from sympy (the equation and its gradient vanish).

    Parameters
    ----------
    n : int
        Grid size per direction (at least 5).
    box : float
        Half-width of the drawn cube ``[−box, box]³``.

    Returns
    -------
    UmbrellaSlice

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 5:
        raise ValueError(f"n must be an integer >= 5, got {n!r}")
    if not (isinstance(box, numbers.Real) and math.isfinite(box) and box > 0):
        raise ValueError(f"box must be a positive number, got {box!r}")
    R, (a1, b1, c1, a2, b2, c2) = m212_implicit_equation()
    u, v, s = sympy.symbols("u v s")
    eq = sympy.expand(R.subs({a1: 1, b1: 0, c1: s, a2: 0, b2: v, c2: u}))
    sing = [eq] + [sympy.diff(eq, z) for z in (u, v, s)]
    # ruling lines: the pairs of the slice with common root [k : 1] satisfy q1(k, 1) = 0 and
    # q2(k, 1) = 0, two affine conditions on (u, v, s), solved as a linear system
    ks = np.linspace(-math.sqrt(box), math.sqrt(box), n)
    taus = np.linspace(-box, box, n)
    U = np.empty((n, n))
    Vg = np.empty((n, n))
    S = np.empty((n, n))
    for i, k in enumerate(ks):
        root = np.array([k * k, k, 1.0])  # (x², xy, y²) at (x, y) = (k, 1)

        def at_root(p: np.ndarray, root: np.ndarray = root) -> np.ndarray:
            return _slice_pair(*p).reshape(2, 3) @ root

        base = at_root(np.zeros(3))
        L = np.stack([at_root(e) - base for e in np.eye(3)], axis=1)
        rhs = -base
        p0 = np.linalg.lstsq(L, rhs, rcond=None)[0]
        direction = np.linalg.svd(L)[2][-1]
        direction = direction / np.max(np.abs(direction[:2]))  # unit step in the (u, v) box
        direction = direction if direction[1] >= 0 else -direction  # consistent orientation
        pts = p0[None, :] + taus[:, None] * direction[None, :]
        U[i], Vg[i], S[i] = pts[:, 0], pts[:, 1], pts[:, 2]
    # the singular curve: solve the equation and its gradient with sympy
    sols = sympy.solve(sing, [u, v, s], dict=True)
    curve = []
    for sol in sols:
        free = [z for z in (u, v, s) if z not in sol]
        if len(free) != 1:  # pragma: no cover - the curve is a line for this slice
            raise RuntimeError(f"unexpected singular set {sols}")
        z = free[0]
        for val in np.linspace(-box, box, 4 * n):
            point = [float(sympy.sympify(sol.get(c, c)).subs(z, val)) for c in (u, v, s)]
            curve.append(point)
    curve = np.array(curve)
    inside = np.array([m212_contains(_slice_pair(*p)) for p in curve])
    return UmbrellaSlice(eq, sing, (U, Vg, S), curve[inside], curve[~inside])


def plot_umbrella_slice(
    data: UmbrellaSlice | None = None, *, elev: float = 24.0, azim: float = -35.0, ax: Any = None
) -> Any:
    """Draw :func:`umbrella_slice` as a surface with the singular curve in gold.

    Parameters
    ----------
    data : UmbrellaSlice, optional
        Precomputed data (default: ``umbrella_slice()``).
    elev, azim : float
        Viewing angles in degrees.
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    import matplotlib.pyplot as plt

    from .plotting import SINGULAR_COLOR, SMOOTH_COLOR

    if data is None:
        data = umbrella_slice()
    if ax is None:
        fig = plt.figure(figsize=(6.4, 5.2))
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    U, Vg, S = data.surface
    ax.computed_zorder = False  # draw the curves on top of the translucent surface
    ax.plot_surface(
        U,
        Vg,
        S,
        color=SMOOTH_COLOR,
        alpha=0.45,
        linewidth=0.25,
        edgecolor="#1a3c5a",
        shade=True,
        zorder=1,
    )
    c_in, c_out = data.singular_in_m, data.singular_not_in_m
    ax.plot(
        c_in[:, 0],
        c_in[:, 1],
        c_in[:, 2],
        color=SINGULAR_COLOR,
        lw=4.5,
        label="singular points (in M)",
        zorder=10,
    )
    ax.plot(
        c_out[:, 0],
        c_out[:, 1],
        c_out[:, 2],
        color="#555555",
        lw=2.2,
        ls="--",
        label="on the quartic, not in M",
        zorder=10,
    )
    ax.set_xlabel("u  (coefficient of y² in q₂)", labelpad=6)
    ax.set_ylabel("v  (coefficient of xy in q₂)", labelpad=6)
    ax.set_zlabel("s  (coefficient of y² in q₁)", labelpad=6)
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_ticks([-1.0, -0.5, 0.0, 0.5, 1.0])
    ax.view_init(elev=elev, azim=azim)
    ax.legend(loc="upper left")
    return fig


def explore_umbrella_slice(data: UmbrellaSlice | None = None) -> Any:
    """A rotatable view of :func:`plot_umbrella_slice` for a live Jupyter kernel (ipywidgets).

    Parameters
    ----------
    data : UmbrellaSlice, optional
        Precomputed data (default: ``umbrella_slice()``).

    Returns
    -------
    ipywidgets.Widget
        Sliders for elevation and azimuth that redraw the figure; display it in Jupyter.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    if data is None:
        data = umbrella_slice()

    def draw(elev: float, azim: float) -> None:
        plot_umbrella_slice(data, elev=elev, azim=azim)
        plt.show()

    return widgets.interactive(
        draw,
        elev=widgets.FloatSlider(value=24.0, min=-90.0, max=90.0, step=2.0),
        azim=widgets.FloatSlider(value=-35.0, min=-180.0, max=180.0, step=2.0),
    )


# --------------------------------------------------------------------------------------------
# closedness: weights that blow up while the functions converge
# --------------------------------------------------------------------------------------------


def blow_up_sequence(n_values: Any, d: int = 2, d_out: int = 2, seed: int = 0) -> dict[str, Any]:
    """Weights ``(A_n, V_n)`` with ``‖A_n‖ → ∞`` whose functions converge to a rank-one pair.

    ``A_n = n b cᵀ + B`` and ``V_n = (v wᵀ + W / n) / n``: every ``A_n`` and ``V_n`` has full
    rank for generic data, ``‖A_n‖ → ∞``, and
    ``F(A_n, V_n) = F(bcᵀ, vwᵀ) + O(1/n)``.

    Parameters
    ----------
    n_values : array-like of positive numbers
        The indices ``n``.
    d, d_out : int
        Sizes (``d ≥ 2``, ``d_out ≥ 2`` so that generic members have full rank ≥ 2).
    seed : int
        Seed of ``b, c, v, w, B, W``.

    Returns
    -------
    dict
        ``"weights"``: list of ``(A_n, V_n)``; ``"balanced"``: their :func:`balanced`
        representatives; ``"limit"``: explicit limit weights ``(b cᵀ, v wᵀ)`` balanced;
        ``"functions"``: the tensors ``F(A_n, V_n)``; ``"limit_function"``: ``F`` at the limit.

    Notes
    -----
    Explained in the chapter "Singularities and the boundary" (closedness).
    """
    ns = np.asarray(n_values, dtype=np.float64).ravel()
    if ns.size == 0 or not np.all(np.isfinite(ns)) or np.any(ns <= 0):
        raise ValueError("n_values must be a non-empty list of positive numbers")
    for name, val in (("d", d), ("d_out", d_out)):
        if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < 2:
            raise ValueError(f"{name} must be an integer >= 2, got {val!r}")
    rng = np.random.default_rng(seed)
    b, c, w = (rng.standard_normal(d) for _ in range(3))
    v = rng.standard_normal(d_out)
    B = rng.standard_normal((d, d))
    W = rng.standard_normal((d_out, d))
    A0, V0 = np.outer(b, c), np.outer(v, w)
    weights = [(n * A0 + B, (V0 + W / n) / n) for n in ns]
    return {
        "weights": weights,
        "balanced": [balanced(Ak, Vk) for Ak, Vk in weights],
        "limit": balanced(A0, V0),
        "functions": [function_coefficients(Ak, Vk) for Ak, Vk in weights],
        "limit_function": function_coefficients(A0, V0),
    }


# --------------------------------------------------------------------------------------------
# an exploratory experiment: gradient descent on one lightning layer
# --------------------------------------------------------------------------------------------


def _sigma_ratio(M: np.ndarray) -> np.ndarray:
    """σ₂/σ₁ over the last two axes (0 for a zero matrix)."""
    s = np.linalg.svd(M, compute_uv=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = s[..., 1] / s[..., 0]
    return np.where(s[..., 0] > 0, r, 0.0)


def singular_proximity(A: Any, V: Any) -> np.ndarray:
    """How close ``(A, V)`` is to the locus ``rk(A)·rk(V) ≤ 1``, scale-free.

    Parameters
    ----------
    A : array-like, shape=[..., d, d]
    V : array-like, shape=[..., d_out, d]

    Returns
    -------
    numpy.ndarray, shape=[...]
        ``max(σ₂(A)/σ₁(A), σ₂(V)/σ₁(V))``: 0 exactly on rank-one pairs, small near them,
        of order 1 at generic points (1 means "undefined/zero" is never returned: a zero
        matrix gives 0). It depends only on the function (scaling and swapping keep it).

    Notes
    -----
    Explained in the chapter "Singularities and the boundary".
    """
    A = np.asarray(A, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    if A.ndim < 2 or V.ndim < 2 or A.shape[-1] != A.shape[-2] or V.shape[-1] != A.shape[-1]:
        raise ValueError(f"A must be (..., d, d) and V (..., d_out, d), got {A.shape}, {V.shape}")
    if min(A.shape[-1], V.shape[-2]) < 2:
        raise ValueError("singular_proximity needs d >= 2 and d_out >= 2")

    return np.maximum(_sigma_ratio(A), _sigma_ratio(V))


@dataclass(frozen=True)
class DescentRuns:
    """Trajectories of many gradient-descent runs toward one target.

    Explained in the chapter "Singularities and the boundary".

    Attributes
    ----------
    steps : numpy.ndarray, shape=[n_records]
        The recorded step numbers.
    proximity : numpy.ndarray, shape=[n_runs, n_records]
        :func:`singular_proximity` along each run.
    loss : numpy.ndarray, shape=[n_runs, n_records]
        The loss, relative to the loss of the zero function.
    target_proximity : float
        :func:`singular_proximity` of the target.
    ratio_A, ratio_V : numpy.ndarray, shape=[n_runs, n_records]
        ``σ₂/σ₁`` of ``A = KᵀQ`` and of ``V`` along each run (``proximity`` is their maximum).
    final_weights : tuple of numpy.ndarray
        ``(Q, K, V)`` at the end, shapes ``[n_runs, d, d]``, ``[n_runs, d, d]``,
        ``[n_runs, d_out, d]``.
    """

    steps: np.ndarray
    proximity: np.ndarray
    loss: np.ndarray
    target_proximity: float
    ratio_A: np.ndarray
    ratio_V: np.ndarray
    final_weights: tuple = field(repr=False, default=())


def descent_runs(
    A_target: Any,
    V_target: Any,
    *,
    n_runs: int = 64,
    steps: int = 3000,
    lr: float = 0.05,
    init_scale: float = 0.1,
    n_inputs: int = 128,
    t: int = 3,
    record_every: int = 25,
    seed: int = 0,
) -> DescentRuns:
    """Plain gradient descent on one lightning layer ``(Q, K, V)`` (``a = d``) toward a target.

    The loss is the mean squared error between the layer and the target layer on ``n_inputs``
    fixed standard normal inputs, divided by the mean squared norm of the target outputs
    (so the zero function has loss 1). All runs are trained together in torch float64; the
    loss is evaluated through the Gram matrix of the inputs' cubic features (it equals the
    mean over the inputs, computed once), so a step costs the same for any ``n_inputs``.

    Parameters
    ----------
    A_target : array-like, shape=[d, d]
    V_target : array-like, shape=[d_out, d]
    n_runs : int
        Number of independent initializations (entries normal with std ``init_scale``).
    steps : int
        Gradient steps.
    lr : float
        Step size.
    init_scale : float
        Standard deviation of the initial weights.
    n_inputs, t : int
        The training inputs ``X`` of shape ``(n_inputs, d, t)``.
    record_every : int
        Record proximity and loss every this many steps.
    seed : int
        Seeds the inputs and the initializations.

    Returns
    -------
    DescentRuns

    Notes
    -----
    Exploratory; explained in the chapter "Singularities and the boundary".
    """
    import torch

    A_t, V_t = _pair(A_target, V_target)
    for name, val, low in (
        ("n_runs", n_runs, 1),
        ("steps", steps, 1),
        ("n_inputs", n_inputs, 1),
        ("t", t, 2),
        ("record_every", record_every, 1),
    ):
        if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {val!r}")
    for name, val in (("lr", lr), ("init_scale", init_scale)):
        if not (isinstance(val, numbers.Real) and math.isfinite(val) and val > 0):
            raise ValueError(f"{name} must be a positive number, got {val!r}")
    d, d_out = A_t.shape[0], V_t.shape[0]
    gen = torch.Generator().manual_seed(int(seed))
    dt = torch.float64
    X = torch.randn(n_inputs, d, t, generator=gen, dtype=dt)
    # The output is linear in F: φ(X)[k, j] = Σ F[k, p, q, r] z_j[p, q, r] with
    # z_j[p, q, r] = (X Xᵀ)[p, q] X[r, j]. So the mean squared error over the fixed inputs is
    # the quadratic form of the Gram matrix G of the z's (computed once): per step the cost
    # does not depend on n_inputs.
    Z = torch.einsum("npq,nrj->njpqr", X @ X.mT, X).reshape(n_inputs * t, d**3)
    G = Z.T @ Z / (n_inputs * t * d_out)
    At, Vt = torch.as_tensor(A_t, dtype=dt), torch.as_tensor(V_t, dtype=dt)

    def coefficients(A: Any, V: Any) -> Any:
        T = torch.einsum("...kp,...qr->...kpqr", V, A)
        return ((T + T.transpose(-3, -2)) / 2).reshape(*T.shape[:-4], d_out, d**3)

    Ft = coefficients(At, Vt)
    scale = float(torch.einsum("ki,ij,kj->", Ft, G, Ft))
    Q = (init_scale * torch.randn(n_runs, d, d, generator=gen, dtype=dt)).requires_grad_()
    K = (init_scale * torch.randn(n_runs, d, d, generator=gen, dtype=dt)).requires_grad_()
    V = (init_scale * torch.randn(n_runs, d_out, d, generator=gen, dtype=dt)).requires_grad_()
    rec_steps, losses, rA, rV = [], [], [], []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: extra threads only add contention
    try:
        _descend(
            Q, K, V, coefficients, Ft, G, scale, steps, lr, record_every, rec_steps, losses, rA, rV
        )
    finally:
        torch.set_num_threads(threads)
    ratio_A, ratio_V = np.array(rA).T, np.array(rV).T
    return DescentRuns(
        np.array(rec_steps),
        np.maximum(ratio_A, ratio_V),
        np.array(losses).T,
        float(singular_proximity(A_t, V_t)),
        ratio_A,
        ratio_V,
        tuple(M.detach().numpy().copy() for M in (Q, K, V)),
    )


def _descend(
    Q: Any,
    K: Any,
    V: Any,
    coefficients: Any,
    Ft: Any,
    G: Any,
    scale: float,
    steps: int,
    lr: float,
    record_every: int,
    rec_steps: list,
    losses: list,
    ratios_A: list,
    ratios_V: list,
) -> None:
    import torch

    for step in range(steps + 1):
        D = coefficients(K.mT @ Q, V) - Ft
        per_run = torch.einsum("rki,ij,rkj->r", D, G, D) / scale
        if step % record_every == 0 or step == steps:
            with torch.no_grad():
                rec_steps.append(step)
                ratios_A.append(_sigma_ratio((K.mT @ Q).numpy()))
                ratios_V.append(_sigma_ratio(V.detach().numpy()))
                losses.append(per_run.detach().numpy().copy())
        if step == steps:
            break
        gQ, gK, gV = torch.autograd.grad(per_run.sum(), (Q, K, V))
        with torch.no_grad():
            Q -= lr * gQ
            K -= lr * gK
            V -= lr * gV


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes, n : int
        Counts, ``0 ≤ successes ≤ n``, ``n ≥ 1``.
    z : float
        Normal quantile (1.96 for 95 %).

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Notes
    -----
    Used in the chapter "Singularities and the boundary".
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if (
        isinstance(successes, bool)
        or not isinstance(successes, numbers.Integral)
        or not 0 <= successes <= n
    ):
        raise ValueError(f"successes must be an integer in [0, n], got {successes!r}")
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def near_singular_stats(
    runs: DescentRuns, threshold: float = 0.05, fit_loss: float = 1e-3
) -> dict[str, Any]:
    """Summary statistics of :func:`descent_runs`.

    Parameters
    ----------
    runs : DescentRuns
    threshold : float
        A point counts as near the locus ``rk(A)·rk(V) ≤ 1`` when its proximity is below this.
    fit_loss : float
        A run has fitted the target when its relative loss is below this.

    Returns
    -------
    dict
        ``n_runs``; ``end_near`` (runs whose last point is near the locus) with its Wilson 95 %
        interval ``end_near_ci``; ``ever_near`` (runs near the locus at some recorded step);
        ``median_first_near_step`` (over the runs ever near; ``nan`` if none);
        ``mean_time_near`` (mean fraction of recorded steps spent near the locus);
        ``fitted`` (runs whose final relative loss is below ``fit_loss``);
        ``median_steps_to_fit`` (first recorded step with loss below ``fit_loss``, over the
        fitted runs); ``unfitted_near`` (runs not fitted whose last point is near the locus).

    Notes
    -----
    Used in the chapter "Singularities and the boundary".
    """
    if not isinstance(runs, DescentRuns):
        raise TypeError(f"runs must be a DescentRuns, got {type(runs).__name__}")
    for name, val in (("threshold", threshold), ("fit_loss", fit_loss)):
        if not (isinstance(val, numbers.Real) and 0 < val < 1):
            raise ValueError(f"{name} must be in (0, 1), got {val!r}")
    near = runs.proximity < threshold
    fit = runs.loss < fit_loss
    n = near.shape[0]
    end = int(near[:, -1].sum())
    ever = near.any(axis=1)
    first = np.array([runs.steps[np.argmax(row)] for row in near[ever]])
    fitted = fit[:, -1]
    to_fit = np.array([runs.steps[np.argmax(row)] for row in fit[fitted]])
    return {
        "n_runs": n,
        "end_near": end,
        "end_near_ci": wilson_interval(end, n),
        "ever_near": int(ever.sum()),
        "median_first_near_step": float(np.median(first)) if first.size else float("nan"),
        "mean_time_near": float(near.mean()),
        "fitted": int(fitted.sum()),
        "median_steps_to_fit": float(np.median(to_fit)) if to_fit.size else float("nan"),
        "unfitted_near": int((near[:, -1] & ~fitted).sum()),
    }

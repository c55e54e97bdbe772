"""Positional transport: scores ``s_ij = (K x_i)ᵀ T_{j−i} (Q x_j)`` (:doc:`/book/07_beyond`).

Tokens are numbered ``0, …, t−1`` in sentence order. With a fixed invertible ``R`` and
``T_k = R^k`` (:func:`transported_attention`) an orthogonal ``R`` is rotary position
encoding, the "discrete connection" of the Riemannian-attention seed with constant transport;
its symmetries shrink from ``GL_a`` to the centralizer of ``R`` (:func:`commutant_basis`).
With one learned ``a × a`` map per offset (:func:`learned_transport_attention`) it is the
seed's learned discrete connection. A variant the book investigates on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import lcm
from typing import Any

import numpy as np
import sympy
import torch
from numpy.typing import ArrayLike, NDArray

from . import _checks
from ._checks import Array
from .lightning import _const
from .rank import Parametrization
from .symmetries import _adj, _obj, _zeros_like

__all__ = [
    "transported_attention",
    "transport_scores",
    "learned_transport_attention",
    "rational_rotation",
    "commutant_basis",
    "transport_parametrization",
    "learned_transport_parametrization",
]


def _transported(X: Any, Q: Any, K: Any, R: Any) -> tuple[Any, Any]:
    """Keys moved by ``(R^{-i})ᵀ`` and queries by ``R^j``: ``(K̃, Q̃)`` of shape ``(..., a, t)``."""
    t, a = X.shape[-1], R.shape[0]
    _, Rinv = _checks.inverse(R, a, "R", like=R)
    eye = torch.eye(a, dtype=R.dtype) if _checks.is_torch(R) else np.eye(a)
    pos, neg = [eye], [eye]
    for _ in range(1, t):
        pos.append(pos[-1] @ R)
        neg.append(neg[-1] @ Rinv.T)
    stack, einsum = (torch.stack, torch.einsum) if _checks.is_torch(R) else (np.stack, np.einsum)
    return (
        einsum("jab,...bj->...aj", stack(neg), K @ X),
        einsum("jab,...bj->...aj", stack(pos), Q @ X),
    )


def _inputs(X: Any, Q: Any, K: Any, R: Any, V: Any = None) -> tuple[Any, ...]:
    like = _checks.torch_like(X, Q, K, V, R)
    Q, K, V = _checks.layer(Q, K, K if V is None else V, like=like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, Q)
    R = _checks.array(R, "R", like=like)
    if tuple(R.shape) != (Q.shape[0], Q.shape[0]):
        raise ValueError(f"R must have shape ({Q.shape[0]}, {Q.shape[0]}), got {tuple(R.shape)}")
    return X, Q, K, V, R


def transport_scores(X: ArrayLike, Q: ArrayLike, K: ArrayLike, R: ArrayLike) -> Array:
    """The transported scores ``s_ij = (K x_i)ᵀ R^{j−i} (Q x_j)`` (:doc:`/book/07_beyond`).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]
    R : array-like, shape=[a, a]
        Invertible (a rotation: rotary position encoding).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., t, t]
        Entry ``(i, j)``: key ``i`` against query ``j``, as ``((R^{−i})ᵀ K x_i)ᵀ (R^j Q x_j)``.
    """
    X, Q, K, _, R = _inputs(X, Q, K, R)
    Kt, Qt = _transported(X, Q, K, R)
    return Kt.mT @ Qt


def transported_attention(
    X: ArrayLike, Q: ArrayLike, K: ArrayLike, V: ArrayLike, R: ArrayLike
) -> Array:
    """Lightning attention with positional transport: column ``j`` is ``Σ_i s_ij V x_i``.

    Linear in ``t``: keys and queries are moved before the usual lightning contraction.
    ``R = I`` is plain lightning attention. Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns, in sentence order.
    Q, K : array-like, shape=[a, d]
    V : array-like, shape=[d_out, d]
    R : array-like, shape=[a, a]
        Invertible; ``s_ij = (K x_i)ᵀ R^{j−i} (Q x_j)``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
    """
    X, Q, K, V, R = _inputs(X, Q, K, R, V)
    Kt, Qt = _transported(X, Q, K, R)
    return ((V @ X) @ Kt.mT) @ Qt


def learned_transport_attention(
    X: ArrayLike, Q: ArrayLike, K: ArrayLike, V: ArrayLike, T: ArrayLike
) -> Array:
    """Lightning attention with a learned transport per offset, ``s_ij = (K x_i)ᵀ T_{j−i} (Q x_j)``.

    Quadratic in ``t`` (one score matrix per offset). Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]
    V : array-like, shape=[d_out, d]
    T : array-like, shape=[2t − 1, a, a]
        ``T[k + t − 1]`` transports the offset ``k = j − i``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
    """
    like = _checks.torch_like(X, Q, K, V, T)
    Q, K, V = _checks.layer(Q, K, V, like=like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, Q)
    t, a = X.shape[-1], Q.shape[0]
    T = _checks.array(T, "T", min_ndim=3, like=like)
    if tuple(T.shape) != (2 * t - 1, a, a):
        raise ValueError(
            f"T must have shape (2t - 1, a, a) = {(2 * t - 1, a, a)} for t = {t} tokens, "
            f"got {tuple(T.shape)}"
        )
    KX, QX = K @ X, Q @ X
    offsets = np.subtract.outer(np.arange(t), np.arange(t)).T  # [i, j] → j − i
    S = 0
    for k in range(-(t - 1), t):
        S = S + _const(offsets == k, X) * (KX.mT @ T[k + t - 1] @ QX)
    return (V @ X) @ S


def rational_rotation(
    triples: Sequence[tuple[int, int, int]], a: int | None = None
) -> tuple[NDArray[np.int64], int]:
    """A block rotation with rational entries, as an integer matrix and a common scale.

    Each Pythagorean triple ``p² + q² = s²`` gives the block ``[[p, −q], [q, p]] / s``;
    rational rotations keep every computation exact. Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    triples : sequence of (p, q, s)
    a : int, optional
        The size; axes beyond ``2 len(triples)`` are left fixed.

    Returns
    -------
    R_int : numpy.ndarray of int, shape=[a, a]
        ``s · R`` with ``s`` the least common multiple of the hypotenuses.
    s : int
        ``R = R_int / s`` is orthogonal.
    """
    if isinstance(triples, (str, bytes)) or not isinstance(triples, Sequence) or not triples:
        raise ValueError("triples must be a non-empty list of Pythagorean triples (p, q, s)")
    clean = []
    for tr in triples:
        if not isinstance(tr, (tuple, list)) or len(tr) != 3:
            raise ValueError(f"each triple must be (p, q, s), got {tr!r}")
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in tr):
            raise ValueError(f"triple entries must be integers, got {tr!r}")
        p, q, h = (int(v) for v in tr)
        if h <= 0 or p * p + q * q != h * h:
            raise ValueError(f"({p}, {q}, {h}) is not a Pythagorean triple p² + q² = s², s > 0")
        clean.append((p, q, h))
    size = 2 * len(clean)
    a = size if a is None else _checks.size(a, "a")
    if a < size:
        raise ValueError(f"a = {a} is too small for {len(clean)} rotation blocks (need {size})")
    s = lcm(*(h for _, _, h in clean))
    R = np.zeros((a, a), dtype=np.int64)
    for b, (p, q, h) in enumerate(clean):
        f = s // h
        R[2 * b : 2 * b + 2, 2 * b : 2 * b + 2] = [[p * f, -q * f], [q * f, p * f]]
    for k in range(size, a):
        R[k, k] = s
    return R, s


def commutant_basis(R: ArrayLike) -> list[NDArray[np.int64]]:
    """An integer basis of the commutant ``{E : E R = R E}`` of an integer matrix ``R``.

    Its length is the dimension of the centralizer of ``R`` in ``GL_a``, the symmetry group
    that replaces ``GL_a`` under transport (``a`` for distinct eigenvalues, ``a²`` for ``cI``).
    Computed exactly. Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    R : array-like of int, shape=[a, a]
        For a rational ``R`` pass ``s R``: the commutant is the same.

    Returns
    -------
    list of numpy.ndarray of int, shape=[a, a]
    """
    Ri = _checks.integer_matrix(R, "R")
    a = Ri.shape[0]
    if Ri.shape != (a, a):
        raise ValueError(f"R must be a square matrix, got shape {Ri.shape}")
    rows = []  # (E R − R E)_ij as a linear form in the entries of E (row-major)
    for i in range(a):
        for j in range(a):
            row = [0] * (a * a)
            for k in range(a):
                row[i * a + k] += int(Ri[k, j])
                row[k * a + j] -= int(Ri[i, k])
            rows.append(row)
    basis = []
    for v in sympy.Matrix(rows).nullspace():
        den = lcm(*(Fraction(str(x)).denominator for x in v))
        basis.append(np.array([int(Fraction(str(x)) * den) for x in v]).reshape(a, a))
    return basis


def transport_parametrization(
    d: int, d_out: int, R: ArrayLike, scale: int = 1, t: int = 3
) -> Parametrization:
    """Positional transport ``s_ij = (K x_i)ᵀ R^{j−i} (Q x_j)`` for the rank engine.

    Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    d, d_out : int
    R : array-like of int, shape=[a, a]
        ``scale · R_true`` with ``R_true`` orthogonal (``R Rᵀ = scale² I``), e.g. from
        :func:`rational_rotation`, or a signed permutation (``scale = 1``).
    scale : int
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q, K, V``. The forward computes ``scale^{2(t−1)}`` times the layer (integer
        constants; a non-zero factor changes no rank): key ``i`` times ``scale^{t−1−i} R^i``,
        query ``j`` times ``scale^{t−1−j} R^j``. Generators: the commutant of ``R`` as
        ``(E Q, −Eᵀ K)`` and the scaling; ``predicted = P − dim C(R) − 1``.
    """
    Ri = _checks.integer_matrix(R, "R")
    scale = _checks.size(scale, "scale")
    d, d_out, t = _checks.size(d, "d"), _checks.size(d_out, "d_out"), _checks.tokens(t, minimum=2)
    a = Ri.shape[0]
    if Ri.shape != (a, a) or not np.array_equal(
        Ri @ Ri.T, scale * scale * np.eye(a, dtype=np.int64)
    ):
        raise ValueError("R / scale must be orthogonal: R Rᵀ must equal scale² I")
    powers = [np.eye(a, dtype=object)]
    for _ in range(1, t):
        powers.append(powers[-1] @ Ri.astype(object))
    C = [scale ** (t - 1 - i) * powers[i] for i in range(t)]
    if max(abs(int(v)) for c in C for v in c.ravel()) >= 2**50:
        raise ValueError("R and t give constants too large for exact float64 arithmetic")
    E = [np.diag(np.eye(t, dtype=np.int64)[i]) for i in range(t)]
    basis = commutant_basis(Ri)

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V = params
        KX, QX = K @ X, Q @ X
        Kt = _const(C[0], X) @ KX @ _const(E[0], X)
        Qt = _const(C[0], X) @ QX @ _const(E[0], X)
        for i in range(1, t):
            Kt = Kt + _const(C[i], X) @ KX @ _const(E[i], X)
            Qt = Qt + _const(C[i], X) @ QX @ _const(E[i], X)
        return ((V @ X) @ Kt.mT) @ Qt

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        Q, K, V = (_obj(p) for p in params)
        zero_V = np.zeros(V.shape, dtype=object)
        gens = [[Q.copy(), np.zeros(K.shape, dtype=object), -V]]
        return gens + [[B.astype(object) @ Q, -(B.T.astype(object) @ K), zero_V] for B in basis]

    return Parametrization(
        name=f"transport d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d)),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        predicted=2 * a * d + d * d_out - len(basis) - 1,
    )


def learned_transport_parametrization(d: int, d_out: int, a: int, t: int = 3) -> Parametrization:
    """Learned transport per offset for the rank engine (blocks ``Q, K, V, T_{−(t−1)}, …, T_{t−1}``).

    Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    d, d_out, a : int
    t : int
        Tokens per input (at least 2): ``2t − 1`` transport blocks ``(a, a)``.

    Returns
    -------
    lsa_lib.rank.Parametrization
        Generators: ``GL_a`` on the query side (``δQ = EQ``, ``δT_k = −T_k E``), on the key
        side (``δK = EK``, ``δT_k = −Eᵀ T_k``), the value scaling (``δV = −V``, ``δT_k = T_k``)
        and, for ``a = d``, the invisible antisymmetric part of ``Kᵀ T_0 Q``
        (``δT_0 = adj(K)ᵀ S adj(Q)``). ``predicted`` (the book's, for ``a ≤ d``, else None):
        ``P − 2a² − 1 − C(2a − d, 2)`` (offset 0 occurs only for ``i = j``, so the
        antisymmetric matrices ``Kᵀ T_0 Q``, supported on the ``(2a − d)``-dimensional
        intersection of the row spaces of ``K`` and ``Q``, are invisible).
    """
    d, d_out, a = (_checks.size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a")))
    t = _checks.tokens(t, minimum=2)
    n_off = 2 * t - 1
    E = [np.diag(np.eye(t, dtype=np.int64)[i]) for i in range(t)]
    P = 2 * a * d + d * d_out + n_off * a * a
    m = max(0, 2 * a - d)

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V, *T = params
        KXt, QX = (K @ X).mT, Q @ X
        S = None
        for i in range(t):
            for j in range(t):
                term = _const(E[i], X) @ (KXt @ (T[j - i + t - 1] @ QX)) @ _const(E[j], X)
                S = term if S is None else S + term
        return (V @ X) @ S

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        Pm = [_obj(p) for p in params]
        Q, K, V, *T = Pm
        g = _zeros_like(Pm)
        g[2], g[3:] = -V, [Tk.copy() for Tk in T]
        gens = [g]
        for r in range(a):
            for s in range(a):
                Er = np.zeros((a, a), dtype=object)
                Er[r, s] = 1
                g = _zeros_like(Pm)
                g[0], g[3:] = Er @ Q, [-(Tk @ Er) for Tk in T]
                h = _zeros_like(Pm)
                h[1], h[3:] = Er @ K, [-(Er.T @ Tk) for Tk in T]
                gens += [g, h]
        if a == d:
            adjK, adjQ = _adj(K), _adj(Q)
            for r in range(d):
                for s in range(r + 1, d):
                    S = np.zeros((d, d), dtype=object)
                    S[r, s], S[s, r] = 1, -1
                    g = _zeros_like(Pm)
                    g[3 + t - 1] = adjK.T @ S @ adjQ
                    gens.append(g)
        return gens

    return Parametrization(
        name=f"learned transport d={d} d'={d_out} a={a} t={t}",
        shapes=((a, d), (a, d), (d_out, d)) + ((a, a),) * n_off,
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        predicted=P - 2 * a * a - 1 - m * (m - 1) // 2 if a <= d else None,
    )

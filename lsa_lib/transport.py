"""Positional transport: scores ``s_ij = (K x_i)ᵀ T_{j−i} (Q x_j)`` (:doc:`/book/notes/transport`).

Tokens are numbered ``0, …, t−1`` in sentence order, and ``T_{j−i}`` transports the query's
vector from position ``j`` to the key's position ``i``: a *discrete connection* on the
positions, the Riemannian-attention post's replacement for position encodings. The post
proposes to learn the maps between positions; how to index them is the book's choice:

* one map per **offset** ``k = j − i`` (only relative positions matter; the book's layers),
  either the powers ``T_k = R^k`` of one invertible ``R`` (:func:`transported_attention`; an
  orthogonal ``R`` is rotary position encoding) or one learned map per offset
  (:func:`learned_transport_attention`);
* **causal** attention (keys ``i ≤ j``, offsets ``k ≥ 0``), where the powers of a *learned*
  ``R`` stay polynomial (``causal=True, flat=True``);
* one map per **edge** ``(i, j)`` (a general connection on the complete graph of positions),
  which :func:`holonomy` accepts for comparison; the book builds no layer on it.

A connection is flat when transport around every loop of positions is the identity: the
powers of one map are (the holonomy of :func:`holonomy` is ``R^0``), independent maps per
offset generically are not. With a fixed ``R`` the symmetries shrink from ``GL_a`` to the
centralizer of ``R`` (:func:`commutant_basis`); a learned flat connection keeps ``GL_a``
acting by conjugation; a learned curved one has independent bases for keys and queries.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from math import lcm
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from . import _backend, _checks, _exact, _generators, _kernel, _limits
from ._checks import Array
from .rank import Parametrization

__all__ = [
    "transported_attention",
    "transport_scores",
    "learned_transport_attention",
    "rational_rotation",
    "commutant_basis",
    "transport_parametrization",
    "learned_transport_parametrization",
    "holonomy",
]


def _transported_layer(X: Any, Q: Any, K: Any, V: Any, keys: Any, queries: Any) -> Any:
    """The one forward of fixed transport: key ``i`` moved by ``keys[i]``, query ``j`` by ``queries[j]``.

    ``keys`` and ``queries`` are ``t`` constant ``(a, a)`` matrices; the moved keys and queries
    go through the lightning kernel (time linear in ``t``). The public functions pass
    ``(R^{−i})ᵀ`` and ``R^j``; the exact parametrization integer multiples of them.
    """
    KX = _backend.per_column(keys, K @ X)
    QX = _backend.per_column(queries, Q @ X)
    return _kernel.layer(X, Q, K, V, KX=KX, QX=QX)


def _powers(R: Any, t: int) -> tuple[list[Any], list[Any]]:
    """``([(R^{−i})ᵀ], [R^j])`` for ``i, j = 0, …, t − 1`` (float), refused if they overflow."""
    a = R.shape[0]
    R = R.detach().cpu().numpy() if _checks.is_torch(R) else np.asarray(R)
    _, Rinv = _checks.inverse(R, a, "R")
    pos, neg = [np.eye(a)], [np.eye(a)]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused below
        for _ in range(1, t):
            pos.append(pos[-1] @ R)
            neg.append(neg[-1] @ Rinv.T)
    if not (np.isfinite(pos[-1]).all() and np.isfinite(neg[-1]).all()):
        raise ValueError(
            f"the powers R^k overflow float64 over t = {t} tokens (‖R‖₂ = "
            f"{np.linalg.norm(R, 2):.3g}, ‖R⁻¹‖₂ = {np.linalg.norm(Rinv, 2):.3g}): use a "
            "rotation, or fewer tokens"
        )
    return neg, pos


def _inputs(X: Any, Q: Any, K: Any, R: Any, V: Any = None) -> tuple[Any, ...]:
    X, Q, K, V, like = _checks.layer_input(X, Q, K, K if V is None else V, R)
    R = _checks.array(R, "R", like=like)
    if tuple(R.shape) != (Q.shape[0], Q.shape[0]):
        raise ValueError(f"R must have shape ({Q.shape[0]}, {Q.shape[0]}), got {tuple(R.shape)}")
    return X, Q, K, V, R


def transport_scores(X: ArrayLike, Q: ArrayLike, K: ArrayLike, R: ArrayLike) -> Array:
    """The transported scores ``s_ij = (K x_i)ᵀ R^{j−i} (Q x_j)`` (:doc:`/book/notes/transport`).

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
    keys, queries = _powers(R, X.shape[-1])
    scores = _backend.per_column(keys, K @ X).mT @ _backend.per_column(queries, Q @ X)
    return _checks.finite_result(scores, "transport_scores")


def transported_attention(
    X: ArrayLike, Q: ArrayLike, K: ArrayLike, V: ArrayLike, R: ArrayLike
) -> Array:
    """Lightning attention with positional transport: column ``j`` is ``Σ_i s_ij V x_i``.

    Linear in ``t``: keys and queries are moved before the usual lightning contraction.
    ``R = I`` is plain lightning attention. Explained in :doc:`/book/notes/transport`.

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
    keys, queries = _powers(R, X.shape[-1])
    Y = _transported_layer(X, Q, K, V, keys, queries)
    return _checks.finite_result(Y, "transported_attention")


def _causal(causal: Any) -> bool:
    return _checks.flag(causal, "causal")


def learned_transport_attention(
    X: ArrayLike, Q: ArrayLike, K: ArrayLike, V: ArrayLike, T: ArrayLike, *, causal: bool = False
) -> Array:
    """Lightning attention with a learned transport per offset, ``s_ij = (K x_i)ᵀ T_{j−i} (Q x_j)``.

    Quadratic in ``t`` (one score matrix per offset). Explained in :doc:`/book/notes/transport`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]
    V : array-like, shape=[d_out, d]
    T : array-like, shape=[2t − 1, a, a] or [t, a, a] (causal)
        ``T[k + t − 1]`` transports the offset ``k = j − i``; with ``causal``, ``T[k]`` the
        offset ``k ≥ 0``.
    causal : bool
        Keys ``i ≤ j`` only (``s_ij = 0`` for ``i > j``). For the flat connection pass the
        powers ``T[k] = R^k``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
    """
    causal = _causal(causal)
    X, Q, K, V, like = _checks.layer_input(X, Q, K, V, T)
    t, a = X.shape[-1], Q.shape[0]
    T = _checks.array(T, "T", min_ndim=3, like=like)
    n = t if causal else 2 * t - 1
    if tuple(T.shape) != (n, a, a):
        what = "(t, a, a)" if causal else "(2t - 1, a, a)"
        raise ValueError(
            f"T must have shape {what} = {(n, a, a)} for t = {t} tokens"
            f"{' (causal)' if causal else ''}, got {tuple(T.shape)}"
        )
    return _checks.finite_result(
        _learned_layer(X, Q, K, V, T, causal), "learned_transport_attention"
    )


def _learned_layer(X: Any, Q: Any, K: Any, V: Any, T: Sequence[Any], causal: bool) -> Any:
    """The one forward of learned transport: ``s_ij = (K x_i)ᵀ T_{j−i} (Q x_j)``, then ``V X S``.

    ``T[k + t − 1]`` (or ``T[k]`` when ``causal``) transports the offset ``k = j − i``; the
    public function passes an array, the parametrizations their blocks (or the powers of a
    learned ``R``). One ``t × t`` score matrix per offset, masked to its diagonal.
    """
    t = X.shape[-1]
    KXt, QX = (K @ X).mT, Q @ X
    offsets = np.subtract.outer(np.arange(t), np.arange(t)).T  # [i, j] → j − i
    S = None
    for k in range(0 if causal else -(t - 1), t):
        term = _backend.const(offsets == k, X) * ((KXt @ T[k if causal else k + t - 1]) @ QX)
        S = term if S is None else S + term
    return (V @ X) @ S


def rational_rotation(
    triples: Sequence[tuple[int, int, int]], a: int | None = None
) -> tuple[NDArray[np.int64], int]:
    """A block rotation with rational entries, as an integer matrix and a common scale.

    Each Pythagorean triple ``p² + q² = s²`` gives the block ``[[p, −q], [q, p]] / s``;
    rational rotations keep every computation exact. Explained in :doc:`/book/notes/transport`.

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
    Computed exactly. Explained in :doc:`/book/notes/transport`.

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
    _limits.fits(40 * a**4, f"the {a * a} × {a * a} linear system of the commutant")
    # E ↦ E R − R E on the entries of E (row-major): I ⊗ Rᵀ − R ⊗ I
    system = np.kron(np.eye(a, dtype=np.int64), Ri.T) - np.kron(Ri, np.eye(a, dtype=np.int64))
    return [np.array(v, dtype=np.int64).reshape(a, a) for v in _exact.nullspace(system)]


def transport_parametrization(
    d: int, d_out: int, R: ArrayLike, scale: int = 1, t: int = 3
) -> Parametrization:
    """Positional transport ``s_ij = (K x_i)ᵀ R^{j−i} (Q x_j)`` for the rank engine.

    Explained in :doc:`/book/notes/transport`.

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
    basis = commutant_basis(Ri)

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V = params  # orthogonal R/s: (R^{−i})ᵀ = R^i, so keys and queries move alike
        return _transported_layer(X, Q, K, V, C, C)

    def generators(params: Sequence[Any]) -> np.ndarray:
        T = _generators.Tangents([_backend.exact(p) for p in params])
        T.scaling(0, 2)
        Q, K, _ = T.blocks
        for B in basis:  # the commutant of R: (E Q, −Eᵀ K) with E R = R E
            T.add({0: B.astype(object) @ Q, 1: -(B.T.astype(object) @ K)})
        return T.matrix()

    return Parametrization(
        name=f"transport d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d)),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        predicted=2 * a * d + d * d_out - len(basis) - 1,
    )


def learned_transport_parametrization(
    d: int, d_out: int, a: int, t: int = 3, *, causal: bool = False, flat: bool = False
) -> Parametrization:
    """Learned transport per offset for the rank engine (:doc:`/book/notes/transport`).

    Three connections, all lightning: the curved one, one learned ``a × a`` map per offset
    (blocks ``Q, K, V, T_{−(t−1)}, …, T_{t−1}``, or ``Q, K, V, T_0, …, T_{t−1}`` when
    ``causal``), and the flat one, ``T_k = R^k`` with ``R`` learned (``flat``, causal only,
    blocks ``Q, K, V, R``).

    Parameters
    ----------
    d, d_out, a : int
    t : int
        Tokens per input (at least 2).
    causal : bool
        Keys ``i ≤ j`` only: offsets ``0, …, t − 1``.
    flat : bool
        ``T_k = R^k`` (needs ``causal``: negative powers of a learned ``R`` are not polynomial).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Curved: generators ``GL_a`` on the query side (``δQ = EQ``, ``δT_k = −T_k E``), on the
        key side (``δK = EK``, ``δT_k = −Eᵀ T_k``), the value scaling (``δV = −V``,
        ``δT_k = T_k``) and the invisible antisymmetric part of ``Kᵀ T_0 Q``
        (``δT_0 = adj(K)ᵀ S adj(Q)`` for ``a = d``; for ``a < d``, ``δT_0 = α₁β₂ᵀ − α₂β₁ᵀ`` from
        cofactor vectors ``(α; β)`` of ``[Kᵀ | −Qᵀ]``); ``predicted`` (the book's, for ``a ≤ d``, else None):
        ``P − 2a² − 1 − C(2a − d, 2)`` (offset 0 occurs only for ``i = j``, so the
        antisymmetric matrices ``Kᵀ T_0 Q``, supported on the ``(2a − d)``-dimensional
        intersection of the row spaces of ``K`` and ``Q``, are invisible). Flat: generators
        ``GL_a`` by conjugation (``δQ = EQ``, ``δK = −Eᵀ K``, ``δR = ER − RE``), the value
        scaling and, for ``t = 2``, the invisible antisymmetric part of ``Kᵀ Q``
        (``δQ = det Q · adj(K)ᵀ W``, ``δR = −R adj(K)ᵀ W adj(Q)``, ``W`` antisymmetric, for
        ``a = d``; ``δQ = NQ``, ``δR = −RN`` with the same ``N`` as above for ``a < d``);
        ``predicted = P − a² − 1 = 2ad + dd' − 1`` for ``a ≤ d`` and ``t ≥ 3`` (for ``t = 2``
        the curved count, ``C(2a − d, 2)`` less: with two tokens there is no loop, and the two
        connections give the same functions), None for ``a > d``.

    Raises
    ------
    ValueError
        If ``flat`` without ``causal``.
    """
    d, d_out, a = (_checks.size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a")))
    t, causal = _checks.tokens(t, minimum=2), _causal(causal)
    if _checks.flag(flat, "flat"):
        if not causal:
            raise ValueError(
                "a flat learned connection T_k = R^k needs causal=True (negative offsets would "
                "need powers of R⁻¹, which are not polynomial in R)"
            )
        return _flat_parametrization(d, d_out, a, t)
    offsets = list(range(0 if causal else -(t - 1), t))
    zero = offsets.index(0)  # the block of T_0
    P = 2 * a * d + d * d_out + len(offsets) * a * a
    m = max(0, 2 * a - d)

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V, *T = params
        return _learned_layer(X, Q, K, V, T, causal)

    def generators(params: Sequence[Any]) -> np.ndarray:
        Tg = _generators.Tangents([_backend.exact(p) for p in params])
        Q, K, V, *T = Tg.blocks
        n = len(T)
        Tg.add({2: -V} | {3 + k: T[k] for k in range(n)})  # the value scaling (V / c, c T_k)
        for r in range(a):
            for s in range(a):
                E = np.zeros((a, a), dtype=object)
                E[r, s] = 1
                Tg.add({0: E @ Q} | {3 + k: -(T[k] @ E) for k in range(n)})  # query side
                Tg.add({1: E @ K} | {3 + k: -(E.T @ T[k]) for k in range(n)})  # key side
        if a == d:
            adjK, adjQ = _exact.adj(K), _exact.adj(Q)
            for r in range(d):
                for s in range(r + 1, d):
                    S = np.zeros((d, d), dtype=object)
                    S[r, s], S[s, r] = 1, -1
                    Tg.add({3 + zero: adjK.T @ S @ adjQ})
        else:
            for N in _invisible_offset_zero(Q, K):
                Tg.add({3 + zero: N})
        return Tg.matrix()

    return Parametrization(
        name=f"learned transport d={d} d'={d_out} a={a} t={t}" + (" causal" if causal else ""),
        shapes=((a, d), (a, d), (d_out, d)) + ((a, a),) * len(offsets),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        predicted=P - 2 * a * a - 1 - m * (m - 1) // 2 if a <= d else None,
    )


def _invisible_offset_zero(Q: Any, K: Any) -> list[NDArray[np.object_]]:
    """``a × a`` integer matrices ``N``, polynomial in ``Q, K``, with ``Kᵀ N Q`` antisymmetric.

    For ``a < d``: kernel vectors ``(α; β)`` of ``[Kᵀ | −Qᵀ]`` (``Kᵀ α = Qᵀ β = u``, a vector of
    the intersection of the row spaces of ``K`` and ``Q``) are cofactor vectors, polynomial in
    the weights; for two of them ``N = α₁ β₂ᵀ − α₂ β₁ᵀ`` gives ``Kᵀ N Q = u₁ u₂ᵀ − u₂ u₁ᵀ``.
    Generically the ``2a − d`` kernel vectors give the ``C(2a − d, 2)`` antisymmetric matrices
    on the intersection that offset 0 cannot see (:doc:`/book/notes/transport`).
    """
    a, d = Q.shape
    rows = [[int(x) for x in K[:, c]] + [-int(x) for x in Q[:, c]] for c in range(d)]
    kernel = _exact.kernel_vectors(rows, 2 * a, d)
    out = []
    for w1, w2 in itertools.combinations(kernel, 2):
        alpha1, beta1 = np.array(w1[:a], dtype=object), np.array(w1[a:], dtype=object)
        alpha2, beta2 = np.array(w2[:a], dtype=object), np.array(w2[a:], dtype=object)
        out.append(np.outer(alpha1, beta2) - np.outer(alpha2, beta1))
    return out


def _flat_parametrization(d: int, d_out: int, a: int, t: int) -> Parametrization:
    """Causal transport by the powers of a learned ``R`` (blocks ``Q, K, V, R``)."""
    m = max(0, 2 * a - d)

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V, R = params
        powers = [_backend.eye(a, X)]  # T_k = R^k
        for _ in range(1, t):
            powers.append(R if len(powers) == 1 else powers[-1] @ R)
        return _learned_layer(X, Q, K, V, powers, causal=True)

    def generators(params: Sequence[Any]) -> np.ndarray:
        T = _generators.Tangents([_backend.exact(p) for p in params])
        Q, K, V, R = T.blocks
        T.scaling(0, 2)
        for r in range(a):
            for s in range(a):  # GL_a by conjugation: (E Q, −Eᵀ K, E R − R E)
                E = np.zeros((a, a), dtype=object)
                E[r, s] = 1
                T.add({0: E @ Q, 1: -(E.T @ K), 3: E @ R - R @ E})
        if t == 2 and a == d:  # no loop: the antisymmetric part of Kᵀ Q is invisible too
            adjK, adjQ, detQ = _exact.adj(K), _exact.adj(Q), _exact.det(Q)
            for r in range(d):
                for s in range(r + 1, d):
                    W = np.zeros((d, d), dtype=object)
                    W[r, s], W[s, r] = 1, -1
                    # δ(Kᵀ Q) = det K det Q · W, δ(Kᵀ R Q) = 0
                    T.add({0: detQ * (adjK.T @ W), 3: -(R @ adjK.T @ W @ adjQ)})
        elif t == 2:  # a < d: δQ = N Q, δR = −R N move Kᵀ Q by Kᵀ N Q (antisymmetric) only
            for N in _invisible_offset_zero(Q, K):
                T.add({0: N @ Q, 3: -(R @ N)})
        return T.matrix()

    return Parametrization(
        name=f"flat learned transport d={d} d'={d_out} a={a} t={t} causal",
        shapes=((a, d), (a, d), (d_out, d), (a, a)),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        predicted=2 * a * d + d * d_out - 1 - (m * (m - 1) // 2 if t == 2 else 0)
        if a <= d
        else None,
    )


def _step(T: Any, i: int, j: int, kind: str, t: int, exact: bool) -> Any:
    """The transport from position ``j`` to position ``i``."""
    if kind == "edge":
        return T[i][j]
    if kind == "offset":
        return T[j - i + t - 1]
    if j >= i:
        return T[j - i]
    M = T[i - j]
    if exact:
        if M.det() == 0:
            raise ValueError(
                f"T_{i - j} is not invertible: the reverse step {j} → {i} is undefined"
            )
        return M.inv()
    return _checks.inverse(M, M.shape[0], f"T_{i - j} (for the reverse step {j} → {i})")[1]


def holonomy(
    T: ArrayLike, loop: Sequence[int], *, causal: bool = False
) -> NDArray[np.float64] | sympy.Matrix:
    """Transport around a closed loop of token positions (:doc:`/book/notes/transport/holonomy`).

    With ``τ(j → i)`` the map from position ``j`` to position ``i``, the holonomy of the loop
    ``p_0 → p_1 → … → p_m = p_0`` is ``τ(p_{m−1} → p_m) ⋯ τ(p_0 → p_1)`` (the first step
    acts first). The identity for every loop means the connection is flat: transport does not
    depend on the path. Per offset ``τ(j → i) = T_{j−i}``; for ``T_k = R^k`` every holonomy is
    ``R^0 = I``.

    Parameters
    ----------
    T : array-like, shape=[2t − 1, a, a], [t, a, a] (causal) or [t, t, a, a] (per edge)
        Per offset (the book's layers): ``T[k + t − 1]`` is ``T_k``, ``k = j − i``. Causal
        (``causal=True``): ``T[k]`` for ``k ≥ 0``, and a step backwards, from ``j`` to
        ``i > j``, is ``T_{i−j}⁻¹`` (a connection is invertible). Per edge (a 4-dimensional
        ``T``): ``T[i, j] = τ(j → i)``. Integers, fractions or sympy entries give an exact
        sympy result; floats a numpy one.
    loop : sequence of int
        Positions ``p_0, …, p_m`` in ``0, …, t − 1`` with ``p_m = p_0`` and ``m ≥ 1``.
    causal : bool
        A 3-dimensional ``T`` holds the offsets ``0, …, t − 1`` only.

    Returns
    -------
    numpy.ndarray or sympy.Matrix, shape=[a, a]

    Raises
    ------
    ValueError
        On a loop that is not closed or leaves the positions, a ``T`` of the wrong shape, or a
        backward causal step through a map that is not invertible.
    """
    causal = _causal(causal)
    exact = not _checks.is_torch(T) and _checks.is_exact(np.asarray(T, dtype=object).ravel()[None])
    shape = _checks.shape(np.asarray(T, dtype=object) if not _checks.is_torch(T) else T, "T")
    if len(shape) == 4:
        kind, t = "edge", shape[0]
        ok = shape[0] == shape[1] and shape[2] == shape[3]
    elif len(shape) == 3:
        kind = "causal" if causal else "offset"
        t = shape[0] if causal else (shape[0] + 1) // 2
        ok = shape[1] == shape[2] and (causal or shape[0] % 2 == 1)
    else:
        ok = False
    if not ok or 0 in shape:
        raise ValueError(
            "T must have shape (2t - 1, a, a) (per offset), (t, a, a) with causal=True, or "
            f"(t, t, a, a) (per edge); got {tuple(shape)}"
        )
    if kind == "edge" and causal:
        raise ValueError("causal applies to transports per offset, not per edge")
    if isinstance(loop, (str, bytes)) or not isinstance(loop, Sequence) or len(loop) < 2:
        raise ValueError(f"loop must list at least two positions p_0, …, p_m = p_0, got {loop!r}")
    pos = [_checks.index(p, t - 1, f"loop[{n}] (a position)", low=0) for n, p in enumerate(loop)]
    if pos[0] != pos[-1]:
        raise ValueError(f"loop must be closed (p_m = p_0), got {pos[0]} … {pos[-1]}")
    a = shape[-1]
    if exact:
        arr = np.asarray(T, dtype=object)
        flat = [sympy.Matrix(_checks.rational_matrix(M, "T")) for M in arr.reshape(-1, a, a)]
        mats: Any = np.empty(arr.shape[:-2], dtype=object)
        for n, M in zip(np.ndindex(*arr.shape[:-2]), flat, strict=True):
            mats[n] = M
        out: Any = sympy.eye(a)
    else:
        mats = _checks.array(T, "T", min_ndim=3)
        mats = mats.detach().cpu().numpy() if _checks.is_torch(mats) else mats
        out = np.eye(a)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused below
        for p, q in zip(pos[:-1], pos[1:], strict=True):
            out = _step(mats, q, p, kind, t, exact) @ out
    if not exact and not np.isfinite(out).all():
        raise ValueError(
            f"the holonomy overflows float64 along the {len(pos) - 1} steps of the loop (a "
            "product of that many transports); use exact entries (integers or fractions)"
        )
    return out

"""Content-dependent metrics in the scores, after the Riemannian-attention post (:doc:`/book/notes/metric`).

Two designs of the book's own:

* a scalar content weight, ``s_ij = m(x_i) m(x_j) (K x_i)ᵀ(Q x_j)`` with the linear
  ``m(x) = μᵀ x`` (:func:`metric_attention`) or the affine ``m(x) = μᵀ x + c``
  (:func:`affine_metric_parametrization`): a polynomial of degree 5 in ``X``; besides the
  scaling and ``GL_a`` it has the metric scaling ``(Q, μ, c) ↦ (λ⁻² Q, λ μ, λ c)``. It can be
  negative, so it is a weight, not a metric;
* a metric tensor, ``s_ij = (K x_i)ᵀ g(x_j) (Q x_j)`` with ``g(x) = I_a + Σ_k (B_k x)(B_k x)ᵀ``
  positive definite at every token (:func:`riemannian_attention`), lightning or softmax; of
  ``GL_a`` only the conformal group ``R^* × O(a)`` survives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _backend, _checks, _generators, _kernel
from ._checks import Array
from .rank import Parametrization

__all__ = [
    "metric_attention",
    "metric_parametrization",
    "affine_metric_parametrization",
    "riemannian_attention",
    "riemannian_parametrization",
]


def _forward(X: Any, Q: Any, K: Any, V: Any, mu: Any, c: Any = None) -> Any:
    """``(V X D)(K X)ᵀ(Q X D)``, ``D = diag(m(x_j))``; ``c`` of shape ``(1, 1)`` or None.

    The row of ones that ``c`` multiplies is a constant of the input's backend
    (:func:`lsa_lib._backend.ones_like`): numpy, torch or the exact engine's dual numbers.
    """
    m = mu @ X  # m(x_j) = μᵀ x_j, shape (..., 1, t)
    if c is not None:
        m = m + c * _backend.ones_like(m)
    XD = X * m  # column j scaled by m(x_j)
    return _kernel.layer(X, Q, K, V, VX=V @ XD, QX=Q @ XD)


def metric_attention(
    X: ArrayLike, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mu: ArrayLike, c: float = 0.0
) -> Array:
    """Lightning attention with the content weight ``m(x) = μᵀ x + c`` (:doc:`/book/notes/metric`).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]
    V : array-like, shape=[d_out, d]
    mu : array-like, shape=[d] or [1, d]
    c : float
        The constant term of the affine weight (``0``: the linear weight ``μᵀ x``).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
        ``(V X D)(K X)ᵀ(Q X D)`` with ``D = diag(μᵀ X + c)``.
    """
    X, Q, K, V, like = _checks.layer_input(X, Q, K, V, mu)
    mu = _checks.array(mu, "mu", min_ndim=1, like=like)
    if tuple(mu.shape) not in ((Q.shape[1],), (1, Q.shape[1])):
        raise ValueError(
            f"mu must have shape ({Q.shape[1]},) or (1, {Q.shape[1]}), got {tuple(mu.shape)}"
        )
    c = _checks.real(c, "c")
    const = None if c == 0 else _checks.array([[c]], "c", like=like)
    Y = _forward(X, Q, K, V, mu.reshape(1, -1), const)
    return _checks.finite_result(Y, "metric_attention")


def metric_parametrization(d: int, d_out: int, a: int, t: int = 3) -> Parametrization:
    """The content metric as a map for the rank engine (blocks ``Q, K, V, μ``).

    Explained in :doc:`/book/notes/metric`.

    Parameters
    ----------
    d, d_out, a : int
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        ``μ`` is the block of shape ``(1, d)``. Generators: ``GL_a``, the scaling ``(Q, −V)``
        and the metric scaling ``(−2Q, μ)``; ``predicted = P − (2ad − r(2d − r) + 2)``,
        ``r = min(a, d)``.
    """
    d, d_out, a = (_checks.size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a")))
    t = _checks.tokens(t, minimum=2)

    def generators(params: Sequence[Any]) -> np.ndarray:
        T = _generators.Tangents(params)
        T.triples(1)  # the scaling (Q, 0, −V) and GL_a
        T.add({0: -2 * T.blocks[0], 3: T.blocks[3]})  # the metric scaling (s⁻² Q, s μ)
        return T.matrix()

    return Parametrization(
        name=f"metric d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d), (1, d)),
        input_shape=(d, t),
        forward=lambda params, X: _forward(X, *params),
        generators=generators,
        predicted=2 * a * d + d * d_out + d - _generators.attention_fiber_dimension(a, d) - 2,
    )


def affine_metric_parametrization(d: int, d_out: int, a: int, t: int = 3) -> Parametrization:
    """The affine content weight ``m(x) = μᵀ x + c`` for the rank engine (blocks ``Q, K, V, μ, c``).

    The layer of :func:`metric_attention` with ``c`` as a parameter: one more than the linear
    weight. Explained in :doc:`/book/notes/metric` (an exercise builds it).

    Parameters
    ----------
    d, d_out, a : int
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        ``μ`` is the block of shape ``(1, d)``, ``c`` the block of shape ``(1, 1)``.
        Generators: ``GL_a`` as ``(E Q, −Eᵀ K)``, the value scaling ``(Q, −V)`` and the
        metric scaling, which now moves ``μ`` and ``c`` together, ``(−2Q, μ, c)``;
        ``predicted = P − (2ad − r(2d − r) + 2)`` with ``P = 2ad + dd' + d + 1`` and
        ``r = min(a, d)``.
    """
    d, d_out, a = (_checks.size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a")))
    t = _checks.tokens(t, minimum=2)

    def generators(params: Sequence[Any]) -> np.ndarray:
        T = _generators.Tangents(params)
        T.triples(1)  # the scaling (Q, 0, −V) and GL_a
        Q, mu, c = T.blocks[0], T.blocks[3], T.blocks[4]
        T.add({0: -2 * Q, 3: mu, 4: c})  # the metric scaling (λ⁻² Q, λ μ, λ c)
        return T.matrix()

    P = 2 * a * d + d * d_out + d + 1
    return Parametrization(
        name=f"affine metric d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d), (1, d), (1, 1)),
        input_shape=(d, t),
        forward=lambda params, X: _forward(X, *params),
        generators=generators,
        predicted=P - _generators.attention_fiber_dimension(a, d) - 2,
    )


# =========================================================================================
# a genuine metric: g(x) = I_a + Σ_k (B_k x)(B_k x)ᵀ at the query
# =========================================================================================
def _metric_queries(X: Any, Q: Any, B: Any, r: int) -> Any:
    """``z_j = g(x_j) Q x_j = Q x_j + Σ_k (B_k x_j) ((B_k x_j) · (Q x_j))``, shape ``(..., a, t)``.

    ``B`` is stacked ``(r a, d)``: rows ``k a … (k+1) a − 1`` are ``B_k``. Only ``@``, ``*``,
    ``+`` and integer constants, so that the exact engine runs it too.
    """
    a = Q.shape[0]
    QX, BX = Q @ X, B @ X
    ones = _backend.ones((1, a), X)
    Z = QX
    for k in range(r):
        sel = np.zeros((a, r * a))
        sel[np.arange(a), k * a + np.arange(a)] = 1
        U = _backend.const(sel, X) @ BX
        Z = Z + U * (ones @ (U * QX))
    return Z


def _metric_block(B: Any, a: int, d: int, like: Any) -> tuple[Any, int]:
    """``B`` of shape ``(r, a, d)`` or ``(a, d)`` as the stacked ``(r a, d)`` block, and ``r``."""
    B = _checks.array(B, "B", like=like)
    shape = tuple(B.shape)
    if len(shape) == 2 and shape == (a, d):
        return B, 1
    if len(shape) == 3 and shape[1:] == (a, d):
        return B.reshape(shape[0] * a, d), shape[0]
    raise ValueError(
        f"B must have shape (r, a, d) = (r, {a}, {d}) or (a, d) = ({a}, {d}), got {shape}"
    )


def riemannian_attention(
    X: ArrayLike,
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    B: ArrayLike,
    normalizer: str | None = None,
) -> Array:
    """Attention with a content-dependent metric tensor: ``s_ij = (K x_i)ᵀ g(x_j) (Q x_j)``.

    ``g(x) = I_a + Σ_k (B_k x)(B_k x)ᵀ`` is symmetric positive definite (at least ``I_a``) for
    every token, so ``⟨u, v⟩_x = uᵀ g(x) v`` is an inner product on the attention space at
    ``x``, one per token: a Riemannian metric sampled at the tokens. The book's design (the
    Riemannian-attention post names the idea, not a formula): the metric is the one at the
    *query* ``x_j``, where the key is compared with it; the identity keeps it positive definite
    without constraints; the learned term has rank ``≤ r``. Column ``j`` of the output is
    ``Σ_i w_ij V x_i`` with ``w_ij = s_ij`` (lightning, still linear in ``t``:
    ``(V X)(K X)ᵀ Z`` with ``z_j = g(x_j) Q x_j``) or the normalized scores. Explained in
    :doc:`/book/notes/metric`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]
    V : array-like, shape=[d_out, d]
    B : array-like, shape=[r, a, d] or [a, d]
        The learned term ``B_1, …, B_r`` of ``g`` (a matrix is ``r = 1``).
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (``"exp"``).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
    """
    S = _kernel.normalizer(normalizer)
    X, Q, K, V, like = _checks.layer_input(X, Q, K, V, B)
    Bs, r = _metric_block(B, Q.shape[0], Q.shape[1], like)
    Y = _kernel.layer(X, Q, K, V, S, QX=_metric_queries(X, Q, Bs, r))
    return _checks.finite_result(Y, "riemannian_attention")


def _riemannian_generators(params: Sequence[Any], r: int, lightning: bool) -> np.ndarray:
    """O(a) on ``(Q, K, B_k)``, the scalar ``(c Q, K / c)``, O(r) on the ``B_k``, the scaling."""
    T = _generators.Tangents(params)
    Q, K, V, B = T.blocks
    a = Q.shape[0]
    for p in range(a):
        for q in range(p + 1, a):
            W = np.zeros((a, a), dtype=Q.dtype)
            W[p, q], W[q, p] = 1, -1
            WB = np.concatenate([W @ B[k * a : (k + 1) * a] for k in range(r)])
            T.add({0: W @ Q, 1: W @ K, 3: WB})
    T.scaling(0, 1)  # (c Q, K / c)
    for k in range(r):
        for m in range(k + 1, r):
            mix = np.zeros_like(B)
            mix[k * a : (k + 1) * a] = B[m * a : (m + 1) * a]
            mix[m * a : (m + 1) * a] = -B[k * a : (k + 1) * a]
            T.add({3: mix})
    if lightning:
        T.scaling(0, 2)
    return T.matrix()


def riemannian_parametrization(
    d: int, d_out: int, a: int, r: int = 1, t: int = 3, normalizer: str | None = None
) -> Parametrization:
    """The metric-tensor layer of :func:`riemannian_attention` for the rank engine.

    Explained in :doc:`/book/notes/metric`.

    Parameters
    ----------
    d, d_out, a : int
    r : int
        The rank of the learned term of ``g``.
    t : int
        Tokens per input (at least 2).
    normalizer : str, optional
        None (lightning: polynomial of degree 5 in ``X``) or a key of
        :data:`lsa_lib.lightning.NORMALIZERS` (the float engine only).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q, K, V`` and ``B`` stacked as ``(r a, d)``. Generators: ``O(a)`` acting on
        ``Q, K`` and every ``B_k`` (``Ω ∈ so(a)``), the scalar ``(c Q, c⁻¹ K)`` (together the
        conformal group ``R^* × O(a)``, what is left of ``GL_a``), ``O(r)`` mixing the ``B_k``
        and, lightning only, the value scaling ``(c Q, c⁻¹ V)``. ``predicted`` is ``P`` minus
        their orbit dimension, ``so(a)`` counted with its stabilizer ``so(a − m)``,
        ``m = min(a, (2 + r) d)``, and ``so(r)`` with its stabilizer ``so(r − ad)`` (the
        ``r`` blocks ``B_k``, vectors of ``R^{ad}``, span at most ``ad`` dimensions).
    """
    d, d_out, a = (_checks.size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a")))
    r, t, S = _checks.size(r, "r"), _checks.tokens(t, minimum=2), _kernel.normalizer(normalizer)
    m = min(a, (2 + r) * d)
    n = max(r - a * d, 0)  # O(r) fixes the B_k (r vectors in R^{ad}) up to O(r − ad)
    orbit = a * (a - 1) // 2 - (a - m) * (a - m - 1) // 2 + 1 + r * (r - 1) // 2 - n * (n - 1) // 2
    orbit += 1 if S is None else 0

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V, B = params
        return _kernel.layer(X, Q, K, V, S, QX=_metric_queries(X, Q, B, r))

    return Parametrization(
        name=f"metric tensor d={d} d'={d_out} a={a} r={r} {normalizer or 'lightning'}",
        shapes=((a, d), (a, d), (d_out, d), (r * a, d)),
        input_shape=(d, t),
        forward=forward,
        generators=lambda params: _riemannian_generators(params, r, S is None),
        polynomial=S is None,
        predicted=2 * a * d + d * d_out + r * a * d - orbit,
    )

"""Several lightning heads summed: ``X ↦ Σ_h V_h X Xᵀ K_hᵀ Q_h X`` (:doc:`/book/07_beyond`).

Each head has its own ``(Q_h, K_h, V_h)`` and there is no output projection (a projection
``W_O`` only multiplies each ``V_h`` on the left: more parameters, no more functions). Head
indices are 1-based. Besides the per-head scaling and change of basis
(:func:`lsa_lib.symmetries.scale_layers`, :func:`lsa_lib.symmetries.change_attention_basis`)
and the permutations of the heads, the book finds head mixing (:func:`mix_heads`, ``a ≥ d``),
rank-keeping moves of one head's attention matrix inside the span of all of them
(``a = d − 1``), and for scalar outputs the moves of :func:`exchange_values`. A variant the
book investigates on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from . import _checks
from ._checks import Array
from .lightning import Layer, _layer
from .rank import Parametrization
from .symmetries import (
    _adj,
    _attention_fiber_dimension,
    _det,
    _obj,
    _triple_generators,
    _zeros_like,
)

__all__ = [
    "multihead_attention",
    "mix_heads",
    "exchange_values",
    "cubic_map_dimension",
    "multihead_parametrization",
]


def _heads(heads: Any, like: Any = None) -> list[tuple[Any, ...]]:
    checked = _checks.layers(heads, chain=False, like=like)
    (a, d), d_out = checked[0][0].shape, checked[0][2].shape[0]
    for h, (Q, _, V) in enumerate(checked, start=1):
        if tuple(Q.shape) != (a, d) or V.shape[0] != d_out:
            raise ValueError(
                f"all heads must have Q, K of shape (a, d) = {(a, d)} and V of shape "
                f"(d_out, d) = {(d_out, d)}; head {h} has Q {tuple(Q.shape)}, V {tuple(V.shape)}"
            )
    return checked


def multihead_attention(X: ArrayLike, heads: Sequence[Layer]) -> Array:
    """The sum of ``H`` lightning heads ``Σ_h V_h X Xᵀ K_hᵀ Q_h X`` (:doc:`/book/07_beyond`).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    heads : sequence of (Q, K, V)
        Every head with ``Q_h, K_h`` of shape ``(a, d)`` and ``V_h`` of shape ``(d_out, d)``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
    """
    like = _checks.torch_like(X, heads)
    checked = _heads(heads, like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, checked[0][0])
    out = _layer(X, *checked[0])
    for head in checked[1:]:
        out = out + _layer(X, *head)
    return out


def _realize(A: Any, a: int) -> tuple[Any, Any]:
    """``(Q, K)`` with ``Kᵀ Q = A`` and ``a ≥ d`` rows: ``Q = [I_d; 0]``, ``K = [Aᵀ; 0]``."""
    d, tor = A.shape[0], _checks.is_torch(A)
    Q, K = (torch.zeros((a, d), dtype=A.dtype) if tor else np.zeros((a, d)) for _ in range(2))
    Q[:d] = torch.eye(d, dtype=A.dtype) if tor else np.eye(d)
    K[:d] = A.T
    return Q, K


def mix_heads(heads: Sequence[Layer], G: ArrayLike) -> list[Layer]:
    """Mix heads by ``G ∈ GL_H`` (needs ``a ≥ d``): the sum of the heads is unchanged.

    ``V'_h = Σ_k G_hk V_k`` and ``A'_h = Σ_k (G⁻¹)_kh A_k``, realized as ``Q'_h = [I_d; 0]``,
    ``K'_h = [A'_hᵀ; 0]``. Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
        ``H`` heads with ``a ≥ d``.
    G : array-like, shape=[H, H]
        Invertible.

    Returns
    -------
    list of (Q, K, V)

    Raises
    ------
    ValueError
        If ``a < d`` (then ``A'_h`` would need rank ``> a``).
    """
    like = _checks.torch_like(heads, G)
    checked = _heads(heads, like)
    (a, d), H = checked[0][0].shape, len(checked)
    if a < d:
        raise ValueError(
            f"mixing heads needs a ≥ d (attention matrices of any rank); got a={a}, d={d}"
        )
    G, Gi = _checks.inverse(G, H, "G", like=checked[0][0])
    As = [K.T @ Q for Q, K, _ in checked]
    out = []
    for h in range(H):
        Vn = sum(G[h, k] * checked[k][2] for k in range(H))
        out.append((*_realize(sum(Gi[k, h] * As[k] for k in range(H)), a), Vn))
    return out


def exchange_values(heads: Sequence[Layer], h: int, l: int, u: ArrayLike) -> list[Layer]:
    """Scalar outputs (``d_out = 1``, ``a ≥ d``): ``A_h ↦ A_h + w_l uᵀ``, ``A_l ↦ A_l − w_h uᵀ``.

    With ``V_h = w_hᵀ`` the change adds ``(w_h·x_i)(w_l·x_i)(u·x_j) − (w_l·x_i)(w_h·x_i)(u·x_j)
    = 0``: the values are numbers, which commute. Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
        ``V_h`` of shape ``(1, d)``, ``a ≥ d``.
    h, l : int
        Two different heads, 1-based.
    u : array-like, shape=[d]

    Returns
    -------
    list of (Q, K, V)
        Heads ``h`` and ``l`` realized as ``Q' = [I_d; 0]``, ``K' = [A'ᵀ; 0]``.
    """
    like = _checks.torch_like(heads, u)
    checked = _heads(heads, like)
    (a, d), H = checked[0][0].shape, len(checked)
    if checked[0][2].shape[0] != 1 or a < d:
        raise ValueError(
            f"exchange_values needs d_out = 1 and a ≥ d, got d_out={checked[0][2].shape[0]}, "
            f"a={a}, d={d}"
        )
    h, l = _checks.index(h, H, "h"), _checks.index(l, H, "l")
    if h == l:
        raise ValueError("h and l must be different heads")
    u = _checks.array(u, "u", min_ndim=1, like=like).reshape(1, -1)
    if u.shape[1] != d:
        raise ValueError(f"u must have {d} entries, got {u.shape[1]}")
    out = list(checked)
    for k, B in ((h, checked[l - 1][2].T @ u), (l, -(checked[h - 1][2].T @ u))):
        Q, K, V = checked[k - 1]
        out[k - 1] = (*_realize(K.T @ Q + B, a), V)
    return out


def cubic_map_dimension(d: int, d_out: int) -> int:
    """``d_out · d · d(d+1)/2``: the dimension of the cubic maps ``X ↦ [Σ_i T(x_i, x_i, x_j)]_j``.

    Every sum of heads is such a map (``T`` symmetric in its first two slots; different ``T``
    give different maps for ``t ≥ 2``): a bound for the dimension of any number of heads.
    Explained in :doc:`/book/07_beyond`.

    Parameters
    ----------
    d, d_out : int

    Returns
    -------
    int
    """
    d, d_out = _checks.size(d, "d"), _checks.size(d_out, "d_out")
    return d_out * d * d * (d + 1) // 2


def _mixing_generators(params: Sequence[Any], H: int, a: int, d: int) -> list[list[Any]]:
    """Head mixing for ``a ≥ d``, exchange moves for ``d_out = 1``, rank-keeping moves for ``a = d − 1``."""
    P = [_obj(p) for p in params]
    Qs, Ks, Vs = P[0::3], P[1::3], P[2::3]
    gens = []
    if a >= d:
        for h in range(H):
            for l in range(H):
                if h != l:
                    M = Qs[l].T @ Qs[l]  # (d, d), invertible for generic Q_l with a ≥ d
                    g = _zeros_like(P)
                    g[3 * h + 2] = _det(M) * Vs[l]
                    g[3 * l + 1] = -(Ks[h].T @ Qs[h] @ _adj(M) @ Qs[l].T).T
                    gens.append(g)
        if Vs[0].shape[0] == 1:  # A_h ↦ A_h + w_l uᵀ, A_l ↦ A_l − w_h uᵀ with u = e_r
            Ms = [Q.T @ Q for Q in Qs]
            dets, adjs = [_det(M) for M in Ms], [_adj(M) for M in Ms]
            for h in range(H):
                for l in range(h + 1, H):
                    for r in range(d):
                        u = np.zeros((1, d), dtype=object)
                        u[0, r] = 1
                        g = _zeros_like(P)
                        g[3 * h + 1] = dets[l] * (Vs[l].T @ u @ adjs[h] @ Qs[h].T).T
                        g[3 * l + 1] = dets[h] * (-(Vs[h].T @ u) @ adjs[l] @ Qs[l].T).T
                        gens.append(g)
    if a == d - 1 and H >= 3:
        As = [K.T @ Q for Q, K in zip(Qs, Ks, strict=True)]
        for h in range(H):
            Q, K = Qs[h], Ks[h]
            adjA, GQ, GK = _adj(As[h]), Q @ Q.T, K @ K.T
            dQQ, dKK = _det(GQ), _det(GK)
            others = [l for l in range(H) if l != h]
            tau = {l: np.trace(adjA @ As[l]) for l in others}
            for i, l in enumerate(others):
                for m in others[i + 1 :]:
                    B = tau[m] * As[l] - tau[l] * As[m]  # tangent to {det = 0} at A_h
                    g = _zeros_like(P)
                    # lift B to (δQ_h, δK_h) with δK_hᵀ Q_h + K_hᵀ δQ_h = dQQ·dKK·B
                    g[3 * h + 1] = dKK * (_adj(GQ).T @ Q @ B.T)
                    proj = dQQ * np.eye(d, dtype=int).astype(object) - Q.T @ _adj(GQ) @ Q
                    g[3 * h] = _adj(GK) @ K @ B @ proj
                    g[3 * l + 2] = -(dQQ * dKK * tau[m]) * Vs[h]
                    g[3 * m + 2] = (dQQ * dKK * tau[l]) * Vs[h]
                    gens.append(g)
    return gens


def multihead_parametrization(
    d: int, d_out: int, a: int, H: int, t: int = 3, mixing: bool = True
) -> Parametrization:
    """``H`` summed heads as a map for the rank engine (:doc:`/book/07_beyond`).

    Parameters
    ----------
    d, d_out, a : int
        Input width, output width, attention dimension of every head.
    H : int
        The number of heads.
    t : int
        Tokens per input (at least 2).
    mixing : bool
        Include, besides per-head scaling and ``GL_a``, the head-mixing tangents (``a ≥ d``),
        the rank-keeping moves (``a = d − 1``) and the exchange moves (``d_out = 1``).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q_1, K_1, V_1, …, Q_H, K_H, V_H``. ``predicted``: with ``mixing``, the book's
        conjecture ``min(cubic_map_dimension, P − H·f − H·max(1, H − (d − r)²))`` with ``f``
        the fiber dimension of ``(Q, K) ↦ A`` and ``r = min(a, d)`` (None for ``d_out = 1``,
        ``H ≥ 2``: scalar values allow further moves); without, the per-head count
        ``P − H (f + 1)``.
    """
    d, d_out = _checks.size(d, "d"), _checks.size(d_out, "d_out")
    a, H, t = _checks.size(a, "a"), _checks.size(H, "H"), _checks.tokens(t, minimum=2)
    mixing = _checks.flag(mixing, "mixing")
    P, f, r = H * (2 * a * d + d_out * d), _attention_fiber_dimension(a, d), min(a, d)
    if not mixing:
        predicted: int | None = P - H * (f + 1)
    elif d_out == 1 and H > 1:
        predicted = None
    else:
        predicted = min(cubic_map_dimension(d, d_out), P - H * f - H * max(1, H - (d - r) ** 2))

    def forward(params: Sequence[Any], X: Any) -> Any:
        out = _layer(X, *params[0:3])
        for h in range(1, H):
            out = out + _layer(X, *params[3 * h : 3 * h + 3])
        return out

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        gens = _triple_generators(params, H)
        return gens + _mixing_generators(params, H, a, d) if mixing else gens

    return Parametrization(
        name=f"{H} heads d={d} d'={d_out} a={a}",
        shapes=tuple(s for _ in range(H) for s in ((a, d), (a, d), (d_out, d))),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
        predicted=predicted,
    )

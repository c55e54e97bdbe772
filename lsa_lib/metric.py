"""Attention with a content-dependent metric, scores ``m(x_i) m(x_j) (K x_i)ᵀ(Q x_j)``.

With the linear ``m(x) = μᵀ x`` the layer is a polynomial of degree 5 in ``X``; besides the
scaling and ``GL_a`` it has the metric scaling ``(Q, μ) ↦ (s⁻² Q, s μ)``. A variant the book
investigates on its own, after the Riemannian-attention seed (:doc:`/book/07_beyond`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from ._checks import Array
from .rank import Parametrization
from .symmetries import _attention_fiber_dimension, _obj, _triple_generators

__all__ = ["metric_attention", "metric_parametrization"]


def _forward(X: Any, Q: Any, K: Any, V: Any, mu: Any) -> Any:
    XD = X * (mu @ X)  # column j scaled by m(x_j)
    return ((V @ XD) @ (K @ X).mT) @ (Q @ XD)


def metric_attention(
    X: ArrayLike, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mu: ArrayLike
) -> Array:
    """Lightning attention with the content metric ``m(x) = μᵀ x`` (:doc:`/book/07_beyond`).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]
    V : array-like, shape=[d_out, d]
    mu : array-like, shape=[d] or [1, d]

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
        ``(V X D)(K X)ᵀ(Q X D)`` with ``D = diag(μᵀ X)``.
    """
    like = _checks.torch_like(X, Q, K, V, mu)
    Q, K, V = _checks.layer(Q, K, V, like=like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, Q)
    mu = _checks.array(mu, "mu", min_ndim=1, like=like)
    if tuple(mu.shape) not in ((Q.shape[1],), (1, Q.shape[1])):
        raise ValueError(
            f"mu must have shape ({Q.shape[1]},) or (1, {Q.shape[1]}), got {tuple(mu.shape)}"
        )
    return _forward(X, Q, K, V, mu.reshape(1, -1))


def metric_parametrization(d: int, d_out: int, a: int, t: int = 3) -> Parametrization:
    """The content metric as a map for the rank engine (blocks ``Q, K, V, μ``).

    Explained in :doc:`/book/07_beyond`.

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

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        P = [_obj(p) for p in params]
        zero_mu = np.zeros(P[3].shape, dtype=object)
        gens = [g + [zero_mu] for g in _triple_generators(P[:3], 1)]
        Q, K, V, mu = P
        return gens + [
            [-2 * Q, np.zeros(K.shape, dtype=object), np.zeros(V.shape, dtype=object), mu.copy()]
        ]

    return Parametrization(
        name=f"metric d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d), (1, d)),
        input_shape=(d, t),
        forward=lambda params, X: _forward(X, *params),
        generators=generators,
        predicted=2 * a * d + d * d_out + d - _attention_fiber_dimension(a, d) - 2,
    )

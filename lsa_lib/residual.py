"""Residual lightning layers ``X ↦ X + V X Xᵀ Kᵀ Q X`` (:doc:`/book/notes/residual`).

A variant the book investigates on its own (none of its results are the paper's). The skip
connection keeps the scaling and the change of attention basis of each layer
(:func:`lsa_lib.symmetries.scale_layers`, :func:`lsa_lib.symmetries.change_attention_basis`)
but breaks the pass-through between layers, and the network is no longer homogeneous in ``X``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numpy.typing import ArrayLike

from . import _checks
from ._checks import Array
from .lightning import Layer, _layer
from .rank import Parametrization
from .symmetries import _attention_fiber_dimension, _triple_generators

__all__ = ["residual_attention", "residual_parametrization"]


def residual_attention(X: ArrayLike, layers: Sequence[Layer]) -> Array:
    """A stack of residual lightning layers ``X ↦ X + V X Xᵀ Kᵀ Q X`` (:doc:`/book/notes/residual`).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
    layers : sequence of (Q, K, V)
        ``Q_i, K_i`` of shape ``(a_i, d)``, ``V_i`` square ``(d, d)``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d, t]
    """
    like = _checks.torch_like(X, layers)
    mats = _checks.layers(layers, like=like)
    X = _checks.array(X, "X", like=like)
    d = X.shape[-2]
    for i, (Q, _, V) in enumerate(mats, start=1):
        if Q.shape[1] != d or tuple(V.shape) != (d, d):
            raise ValueError(
                f"residual layer {i} needs Q, K of shape (a, {d}) and V of shape ({d}, {d}), "
                f"got Q {tuple(Q.shape)} and V {tuple(V.shape)}"
            )
    for Q, K, V in mats:
        X = X + _layer(X, Q, K, V)
    return X


def residual_parametrization(d: int, attn: Sequence[int], t: int = 3) -> Parametrization:
    """The residual network of width ``d`` as a map for the rank engine (:doc:`/book/notes/residual`).

    Parameters
    ----------
    d : int
        The width (input = hidden = output).
    attn : sequence of int
        ``(a_1, …, a_l)``.
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q_1, K_1, V_1, Q_2, …``; generators: per-layer scaling and ``GL_{a_i}``;
        ``predicted = P − Σ_i (2 a_i d − r_i(2d − r_i) + 1)`` with ``r_i = min(a_i, d)`` (the
        fibers of ``(Q_i, K_i) ↦ A_i`` and the scaling, per layer).
    """
    d, t = _checks.size(d, "d"), _checks.tokens(t, minimum=2)
    if isinstance(attn, (str, bytes)) or not isinstance(attn, Sequence) or not attn:
        raise ValueError(f"attn must be a non-empty sequence (a_1, ..., a_l), got {attn!r}")
    attn = tuple(_checks.size(a, f"attn[{i}]") for i, a in enumerate(attn))
    l = len(attn)
    shapes = tuple(s for a in attn for s in ((a, d), (a, d), (d, d)))

    def forward(params: Sequence[Any], X: Any) -> Any:
        for i in range(l):
            X = X + _layer(X, *params[3 * i : 3 * i + 3])
        return X

    n_params = sum(2 * a * d + d * d for a in attn)
    return Parametrization(
        name=f"residual d={d} a={attn}",
        shapes=shapes,
        input_shape=(d, t),
        forward=forward,
        generators=lambda params: _triple_generators(params, l),
        predicted=n_params - sum(_attention_fiber_dimension(a, d) + 1 for a in attn),
    )

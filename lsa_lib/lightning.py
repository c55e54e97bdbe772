"""The lightning map and its normalized siblings: one forward pass (:doc:`/book/01_lightning_map`).

A layer with weights ``W = (Q, K, V)`` sends tokens ``X = [x_1 | … | x_t]`` (shape ``(d, t)``)
to ``V X S`` where ``S = Xᵀ Kᵀ Q X`` holds the scores ``s_ij = K x_i · Q x_j``. Lightning
attention [HMK25] uses the scores as they are, ``φ_W(X) = V X (Xᵀ Kᵀ Q X)``; a normalized
layer replaces each query's column of scores by ``S(s_ij) / Σ_k S(s_kj)`` for a positive
function ``S`` (:data:`NORMALIZERS`; ``"exp"`` is softmax). A network is a list of layers.

The private kernel ``_layer`` uses only ``@``, ``.mT``, ``+`` and ``*`` for lightning layers,
so the rank engine runs it on torch tensors under ``torch.func`` and on exact dual numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from . import _checks
from ._checks import Array

__all__ = [
    "NORMALIZERS",
    "attention_matrix",
    "attention_scores",
    "attention_layer",
    "deep_attention",
    "random_layers",
    "parameter_count",
    "flop_count",
]

Layer = tuple[ArrayLike, ArrayLike, ArrayLike]


@dataclass(frozen=True)
class Normalizer:
    """A function ``S`` turning scores into unnormalized weights (see :data:`NORMALIZERS`)."""

    name: str
    formula: str
    positive: bool
    homogeneous_degree: int | None
    function: Callable[[Any], Any]


def _square_plus_one(s: Any) -> Any:
    return s * s + 1


def _taylor2(s: Any) -> Any:
    return 1 + s + s * s * 0.5


def _square(s: Any) -> Any:
    return s * s


#: The normalizers of the book, by name (:doc:`/book/06_softmax`). Each is a ``Normalizer``
#: with fields ``name``, ``formula`` (``S(x)`` written out), ``positive`` (``S > 0`` on all
#: reals), ``homogeneous_degree`` (``k`` if ``S(cx) = cᵏ S(x)`` for ``c > 0``, else None) and
#: ``function`` (numpy or torch in, same out). ``"exp"`` is softmax; ``"square_plus_one"``
#: (``x² + 1``) and ``"taylor2"`` (``1 + x + x²/2``) are positive and not homogeneous;
#: ``"square"`` (``x²``) is homogeneous of degree 2 and only non-negative.
NORMALIZERS: dict[str, Normalizer] = {
    "exp": Normalizer("exp", "exp(x)", True, None, np.exp),
    "square_plus_one": Normalizer("square_plus_one", "x² + 1", True, None, _square_plus_one),
    "taylor2": Normalizer("taylor2", "1 + x + x²/2", True, None, _taylor2),
    "square": Normalizer("square", "x²", False, 2, _square),
}


def _normalizer(name: Any) -> Normalizer | None:
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"normalizer must be None or one of {sorted(NORMALIZERS)}, got {name!r}")
    return NORMALIZERS[_checks.choice(name, "normalizer", sorted(NORMALIZERS))]


def _normalize(S: Any, normalizer: Normalizer) -> Any:
    """Weights ``S(s_ij) / Σ_k S(s_kj)``: each query column sums to 1 over the keys (axis -2)."""
    if normalizer.name == "exp":  # shifted, numerically stable softmax
        if _checks.is_torch(S):
            return S.softmax(dim=-2)
        E = np.exp(S - S.max(axis=-2, keepdims=True))
    else:
        E = normalizer.function(S)
    return E / E.sum(-2, keepdims=True) if isinstance(E, np.ndarray) else E / E.sum(-2, True)


def _layer(
    X: Any, Q: Any, K: Any, V: Any, normalizer: Normalizer | None = None, QX: Any = None
) -> Any:
    """The one kernel. ``K=None`` stands for the identity (a layer in ``(A, V)`` coordinates).

    ``QX``, when given, replaces the queries ``Q @ X`` (``(..., a, t)``; a layer whose queries
    depend on the tokens in another way, e.g. through a content-dependent metric).
    """
    KX = X if K is None else K @ X
    QX = Q @ X if QX is None else QX
    if normalizer is None:  # (V X)(K X)ᵀ is (d_out, a): O(t d (d_out + a)), no t × t matrix
        return ((V @ X) @ KX.mT) @ QX
    return (V @ X) @ _normalize(KX.mT @ QX, normalizer)


def _const(c: ArrayLike, like: Any) -> Any:
    """An integer constant in the backend of ``like``: a torch tensor of its dtype, or float64.

    (Exact dual numbers take float64 arrays of integers as constants.)
    """
    if _checks.is_torch(like):
        return torch.as_tensor(np.asarray(c, dtype=np.float64), dtype=like.dtype)
    return np.asarray(c, dtype=np.float64)


def _deep(X: Any, layers: Sequence[Layer], normalizer: Normalizer | None = None) -> Any:
    for Q, K, V in layers:
        X = _layer(X, Q, K, V, normalizer)
    return X


def attention_matrix(Q: ArrayLike, K: ArrayLike) -> Array:
    """The attention matrix ``A = Kᵀ Q`` (:doc:`/book/01_lightning_map`).

    Parameters
    ----------
    Q, K : array-like, shape=[a, d]

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[d, d]
        Its rank is at most ``min(a, d)``; the layer depends on ``(Q, K)`` only through it.
    """
    Q, K, _ = _checks.layer(Q, K, K)
    return K.mT @ Q


def attention_scores(X: ArrayLike, Q: ArrayLike, K: ArrayLike) -> Array:
    """The scores ``S = Xᵀ Kᵀ Q X``, ``S[i, j] = K x_i · Q x_j`` (:doc:`/book/01_lightning_map`).

    Parameters
    ----------
    X : array-like, shape=[..., d, t]
    Q, K : array-like, shape=[a, d]

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., t, t]
        Row ``i`` is the key token, column ``j`` the query token.
    """
    X, Q, K, _, _ = _checks.layer_input(X, Q, K, K)
    return (K @ X).mT @ (Q @ X)


def attention_layer(
    X: ArrayLike,
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    normalizer: str | None = None,
    *,
    order: Literal["linear", "quadratic"] = "linear",
    query_block: int | None = None,
) -> Array:
    """One self-attention layer: lightning (``normalizer=None``) or normalized.

    Column ``j`` of the output is ``Σ_i w_ij V x_i`` with ``w_ij = K x_i · Q x_j`` (lightning,
    ``φ_W(X) = V X (Xᵀ Kᵀ Q X)``) or ``w_ij = S(s_ij) / Σ_k S(s_kj)`` (normalized over the keys
    ``i`` for each query ``j``). Explained in :doc:`/book/01_lightning_map`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns, optionally batched.
    Q, K : array-like or torch.Tensor, shape=[a, d]
    V : array-like or torch.Tensor, shape=[d_out, d]
    normalizer : str, optional
        None (lightning) or a key of :data:`NORMALIZERS` (``"exp"``: softmax).
    order : {"linear", "quadratic"}
        Lightning only: ``"linear"`` evaluates ``((V X)(K X)ᵀ)(Q X)`` in time linear in ``t``;
        ``"quadratic"`` forms the ``t × t`` scores first. A normalized layer must form them.
    query_block : int, optional
        Normalized only: process the queries in blocks of this many columns (memory
        ``t × query_block`` instead of ``t²``; the same arithmetic).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
        Torch in, torch out (its dtype); otherwise float64 numpy.

    Raises
    ------
    ValueError
        On shapes that do not fit, empty sizes, non-finite entries or unknown options.
    """
    S = _normalizer(normalizer)
    _checks.choice(order, "order", ("linear", "quadratic"))
    X, Q, K, V, like = _checks.layer_input(X, Q, K, V)
    if S is None:
        return _layer(X, Q, K, V) if order == "linear" else (V @ X) @ ((K @ X).mT @ (Q @ X))
    block = X.shape[-1] if query_block is None else _checks.size(query_block, "query_block")
    VX, KXt, QX = V @ X, (K @ X).mT, Q @ X
    parts = [VX @ _normalize(KXt @ QX[..., j : j + block], S) for j in range(0, X.shape[-1], block)]
    if len(parts) == 1:
        return parts[0]
    return torch.cat(parts, dim=-1) if like is not None else np.concatenate(parts, axis=-1)


def deep_attention(X: ArrayLike, layers: Sequence[Layer], normalizer: str | None = None) -> Array:
    """A deep network ``φ = φ_l ∘ … ∘ φ_1`` (one head, no skips, no MLPs).

    Explained in :doc:`/book/01_lightning_map` and :doc:`/book/03_symmetries`.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d_0, t]
    layers : sequence of (Q, K, V)
        Layer ``i`` has ``Q_i, K_i`` of shape ``(a_i, d_{i-1})`` and ``V_i`` of shape
        ``(d_i, d_{i-1})``.
    normalizer : str, optional
        None for lightning layers, or a key of :data:`NORMALIZERS` for every layer.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_l, t]
    """
    S = _normalizer(normalizer)
    like = _checks.torch_like(X, layers)
    checked = _checks.layers(layers, like=like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, checked[0][0], "Q_1 and K_1")
    return _deep(X, checked, S)


def random_layers(
    widths: Sequence[int], attn: Sequence[int], rng: np.random.Generator | int | None = 0
) -> list[tuple[NDArray[np.float64], ...]]:
    """Standard normal float64 weights for an architecture (:doc:`/book/01_lightning_map`).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    rng : numpy.random.Generator or int, optional
        A generator or a seed (default 0).

    Returns
    -------
    list of (Q, K, V)
        ``Q_i, K_i`` of shape ``(a_i, d_{i-1})``, ``V_i`` of shape ``(d_i, d_{i-1})``.
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return [
        tuple(gen.standard_normal(s) for s in shapes)
        for shapes in _checks.layer_shapes(widths, attn)
    ]


def parameter_count(widths: Sequence[int], attn: Sequence[int]) -> int:
    """The number of weights ``Σ_i (2 a_i d_{i-1} + d_i d_{i-1})`` (:doc:`/book/04_dimension`).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.

    Returns
    -------
    int
    """
    return sum(2 * q[0] * q[1] + v[0] * v[1] for q, _, v in _checks.layer_shapes(widths, attn))


def flop_count(d: int, d_out: int, a: int, t: int, order: Literal["linear", "quadratic"]) -> int:
    """Scalar multiplications in the matrix products of one layer (:doc:`/book/01_lightning_map`).

    An ``(m, n) @ (n, p)`` product counts ``m n p``.

    Parameters
    ----------
    d, d_out, a, t : int
        Input width, output width, attention dimension, number of tokens.
    order : {"linear", "quadratic"}
        ``((V X)(K X)ᵀ)(Q X)``: ``t (d d' + 2ad + 2ad')``, linear in ``t``;
        ``(V X)((K X)ᵀ(Q X))``: ``t (d d' + 2ad) + t² (a + d')``, the order a normalized layer
        must use.

    Returns
    -------
    int
    """
    d, d_out, a, t = (
        _checks.size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a"), (t, "t"))
    )
    projections = d_out * d * t + 2 * a * d * t  # V X, K X, Q X
    if _checks.choice(order, "order", ("linear", "quadratic")) == "linear":
        return projections + 2 * d_out * t * a  # (VX)(KX)ᵀ, then times QX
    return projections + t * a * t + d_out * t * t  # (KX)ᵀ(QX), then VX times it

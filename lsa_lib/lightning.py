"""The lightning map and its normalized sibling (chapter "The lightning map").

A lightning self-attention layer with weights ``W = (Q, K, V)`` sends tokens
``X = [x_1 | ... | x_t]`` (shape ``(d, t)``) to

    φ_W(X) = V X (Xᵀ Kᵀ Q X),

whose column ``j`` is ``Σ_i (K x_i · Q x_j) V x_i`` [HMK25]. The normalized ("traditional")
layer divides each query's scores by their sum after applying ``exp`` (softmax over the keys).

The private ``_lightning``, ``_softmax`` and ``_deep`` kernels use only ``@``, ``.mT``, ``+``
and ``*`` (plus ``exp`` for softmax), so the rank engine can run them on torch tensors under
``torch.func`` and on exact modular dual numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ._core import Layer, _is_torch, as_array, check_layer, check_layers

__all__ = [
    "attention_matrix",
    "lightning_attention",
    "softmax_attention",
    "deep_attention",
    "attention_scores",
]


def _lightning(X: Any, Q: Any, K: Any, V: Any) -> Any:
    # (V X)(K X)ᵀ is (d_out, a): cost O(t d (d_out + a)); the t×t matrix is never formed.
    return ((V @ X) @ (K @ X).mT) @ (Q @ X)


def _lightning_quadratic(X: Any, Q: Any, K: Any, V: Any) -> Any:
    return (V @ X) @ ((K @ X).mT @ (Q @ X))


def _softmax_columns(S: Any) -> Any:
    """Softmax over the keys (axis -2) for each query column, shifted for stability."""
    if _is_torch(S):
        return S.softmax(dim=-2)
    S = S - S.max(axis=-2, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-2, keepdims=True)


def _softmax(X: Any, Q: Any, K: Any, V: Any) -> Any:
    return (V @ X) @ _softmax_columns((K @ X).mT @ (Q @ X))


def _deep(X: Any, layers: Sequence[Layer], normalized: bool = False) -> Any:
    kernel = _softmax if normalized else _lightning
    for Q, K, V in layers:
        X = kernel(X, Q, K, V)
    return X


def _check_input(X: Any, like: Any = None) -> Any:
    return as_array(X, "X", min_ndim=2, like=like)


def _torch_like(*arrays: Any) -> Any:
    return next((a for a in arrays if _is_torch(a)), None)


def attention_matrix(Q: Any, K: Any) -> Any:
    """The attention matrix ``A = Kᵀ Q``.

    Parameters
    ----------
    Q, K : array-like, shape=[a, d]
        Query and key matrices.

    Returns
    -------
    array, shape=[d, d]
        ``Kᵀ Q``; its rank is at most ``min(a, d)``. The layer depends on ``(Q, K)`` only
        through ``A`` (chapter "The lightning map").
    """
    like = _torch_like(Q, K)
    Q = as_array(Q, "Q", like=like)
    K = as_array(K, "K", like=like)
    if len(Q.shape) != 2 or tuple(Q.shape) != tuple(K.shape):
        raise ValueError(
            f"Q and K must be matrices of the same shape (a, d), got Q {tuple(Q.shape)} "
            f"and K {tuple(K.shape)}"
        )
    return K.mT @ Q


def attention_scores(X: Any, Q: Any, K: Any) -> Any:
    """The score matrix ``S = Xᵀ Kᵀ Q X`` with ``S[i, j] = K x_i · Q x_j``.

    Parameters
    ----------
    X : array-like, shape=[..., d, t]
        Tokens as columns.
    Q, K : array-like, shape=[a, d]
        Query and key matrices.

    Returns
    -------
    array, shape=[..., t, t]
        Row ``i`` is the key token, column ``j`` the query token.
    """
    like = _torch_like(X, Q, K)
    X = _check_input(X, like)
    Q, K, _ = check_layer(Q, K, K, d=X.shape[-2], like=like)
    return (K @ X).mT @ (Q @ X)


def lightning_attention(
    X: Any, Q: Any, K: Any, V: Any, *, order: Literal["linear", "quadratic"] = "linear"
) -> Any:
    """One lightning self-attention layer ``φ_W(X) = V X (Xᵀ Kᵀ Q X)``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns (``t`` tokens of width ``d``), optionally batched.
    Q, K : array-like or torch.Tensor, shape=[a, d]
        Query and key matrices.
    V : array-like or torch.Tensor, shape=[d_out, d]
        Value matrix.
    order : {"linear", "quadratic"}
        ``"linear"`` (default) evaluates ``((V X)(K X)ᵀ)(Q X)`` in time linear in ``t``;
        ``"quadratic"`` forms the ``t × t`` score matrix first (for comparison only).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
        Column ``j`` is ``Σ_i (K x_i · Q x_j) V x_i``. Torch in, torch out; numpy in,
        float64 numpy out.

    Raises
    ------
    ValueError
        On shapes that do not fit ``(d, t)``, ``(a, d)``, ``(d_out, d)``, empty sizes or
        non-finite entries.

    Notes
    -----
    Explained in the chapter "The lightning map".
    """
    if order not in ("linear", "quadratic"):
        raise ValueError(f"order must be 'linear' or 'quadratic', got {order!r}")
    like = _torch_like(X, Q, K, V)
    X = _check_input(X, like)
    Q, K, V = check_layer(Q, K, V, d=X.shape[-2], like=like)
    return (_lightning if order == "linear" else _lightning_quadratic)(X, Q, K, V)


def softmax_attention(X: Any, Q: Any, K: Any, V: Any) -> Any:
    """One normalized (softmax) self-attention layer.

    Column ``j`` of the output is ``Σ_i softmax_i(K x_i · Q x_j) V x_i``: for each query
    ``j``, the scores are normalized over the keys ``i``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns.
    Q, K : array-like or torch.Tensor, shape=[a, d]
        Query and key matrices.
    V : array-like or torch.Tensor, shape=[d_out, d]
        Value matrix.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]
        The layer's output; it costs time quadratic in ``t``.

    Notes
    -----
    Explained in the chapter "The lightning map"; its identifiability is the subject of the
    chapter "The softmax conjecture".
    """
    like = _torch_like(X, Q, K, V)
    X = _check_input(X, like)
    Q, K, V = check_layer(Q, K, V, d=X.shape[-2], like=like)
    return _softmax(X, Q, K, V)


def deep_attention(X: Any, layers: Sequence[Layer], normalized: bool = False) -> Any:
    """A deep self-attention network ``φ = φ_l ∘ ... ∘ φ_1`` (one head, no skips, no MLPs).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d_0, t]
        Tokens as columns.
    layers : sequence of (Q, K, V)
        Layer ``i`` has ``Q_i, K_i`` of shape ``(a_i, d_{i-1})`` and ``V_i`` of shape
        ``(d_i, d_{i-1})``.
    normalized : bool
        ``False`` (default) for lightning layers, ``True`` for softmax layers.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_l, t]

    Notes
    -----
    Explained in the chapters "The lightning map" and "Deep symmetries".
    """
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"normalized must be True or False, got {normalized!r}")
    like = _torch_like(X, *(m for layer in layers for m in layer)) if isinstance(
        layers, Sequence
    ) else None
    X = _check_input(X, like)
    checked = check_layers(layers, d=X.shape[-2], like=like)
    return _deep(X, checked, bool(normalized))

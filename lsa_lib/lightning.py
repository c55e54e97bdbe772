"""The lightning map and its normalized siblings: one forward pass (:doc:`/book/01_lightning_map`).

A layer with weights ``W = (Q, K, V)`` sends tokens ``X = [x_1 | … | x_t]`` (shape ``(d, t)``)
to ``V X S`` where ``S = Xᵀ Kᵀ Q X`` holds the scores ``s_ij = K x_i · Q x_j``. Lightning
attention [HMK25] uses the scores as they are, ``φ_W(X) = V X (Xᵀ Kᵀ Q X)``; a normalized
layer replaces each query's column of scores by ``S(s_ij) / Σ_k S(s_kj)`` for a positive
function ``S`` (:data:`NORMALIZERS`; ``"exp"`` is softmax). A network is a list of layers.

Every model of the library runs one private kernel (``lsa_lib._kernel``), which uses only
``@``, ``.mT``, ``+`` and ``*`` for lightning layers, so the rank engine runs it on torch
tensors under ``torch.func`` and on exact dual numbers; the functions here check their input,
and that finite input gave a finite output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _backend, _checks, _kernel, _limits
from ._checks import Array
from ._kernel import Normalizer

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

#: The normalizers of the book, by name (:doc:`/book/06_softmax`). Each is a ``Normalizer``
#: with fields ``name``, ``formula`` (``S(x)`` written out), ``positive`` (``S > 0`` on all
#: reals), ``homogeneous_degree`` (``k`` if ``S(cx) = cᵏ S(x)`` for ``c > 0``, else None) and
#: ``function`` (numpy or torch in, same out). ``"exp"`` is softmax; ``"square_plus_one"``
#: (``x² + 1``) and ``"taylor2"`` (``1 + x + x²/2``) are positive and not homogeneous;
#: ``"square"`` (``x²``) is homogeneous of degree 2 and only non-negative.
NORMALIZERS: dict[str, Normalizer] = _kernel.NORMALIZERS


# numpy's overflow warnings are silenced where the result is checked (a clear error instead)
def _quiet() -> np.errstate:
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


def _finite_layer(Y: Any, X: Any, Q: Any, K: Any, V: Any, S: Normalizer | None, tag: str) -> Any:
    """``Y`` if finite; otherwise a ``ValueError`` naming what overflowed (inputs are finite)."""
    if _checks.all_finite(Y):
        return Y
    with _quiet():
        scores = (K @ X).mT @ (Q @ X)
    if not _checks.all_finite(scores):
        raise ValueError(
            f"the attention scores{tag} overflow float64 (|K x_i · Q x_j| > 1.8e308): scale "
            "the weights or the tokens down"
        )
    if S is not None and not S.positive:
        with _quiet():
            weights = S.function(scores.detach() if _checks.is_torch(scores) else scores)
        sums = weights.sum(-2)
        if not bool((sums != 0).all()):
            raise ValueError(
                f"the normalizer {S.name!r}{tag} divides by Σ_k {S.formula.replace('x', 's_kj')} "
                "= 0: some query has all its scores 0, and its weights are undefined"
            )
    raise ValueError(
        f"the output{tag} overflows float64 (entries beyond 1.8e308) although the input is "
        "finite: scale the weights or the tokens down"
    )


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
    S = _kernel.normalizer(normalizer)
    _checks.choice(order, "order", ("linear", "quadratic"))
    X, Q, K, V, like = _checks.layer_input(X, Q, K, V)
    t = X.shape[-1]
    if S is None:
        with _quiet():  # overflow is refused by _finite_layer
            Y = _kernel.layer(X, Q, K, V) if order == "linear" else (V @ X) @ ((K @ X).mT @ (Q @ X))
        return _finite_layer(Y, X, Q, K, V, S, "")
    if query_block is None:
        batch = int(np.prod(tuple(X.shape[:-2]), dtype=np.int64))
        _limits.fits(
            8 * 3 * batch * t * t,
            f"the {t} × {t} scores of a normalized layer",
            "pass query_block (memory t × query_block, the same arithmetic)",
        )
        block = t
    else:
        block = _checks.size(query_block, "query_block")
    with _quiet():
        VX, KXt, QX = V @ X, (K @ X).mT, Q @ X
        parts = [
            VX @ _kernel.normalize(KXt @ QX[..., j : j + block], S) for j in range(0, t, block)
        ]
    Y = parts[0] if len(parts) == 1 else _backend.concat(parts, like)
    return _finite_layer(Y, X, Q, K, V, S, "")


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
    S = _kernel.normalizer(normalizer)
    like = _checks.torch_like(X, layers)
    checked = _checks.layers(layers, like=like)
    X = _checks.array(X, "X", like=like)
    _checks.tokens_fit(X, checked[0][0], "Q_1 and K_1")
    for i, (Q, K, V) in enumerate(checked, start=1):
        with _quiet():
            Y = _kernel.layer(X, Q, K, V, S)
        X = _finite_layer(Y, X, Q, K, V, S, f" of layer {i}")
    return X


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
    shapes = _checks.layer_shapes(widths, attn)
    n = sum(int(np.prod(s)) for layer in shapes for s in layer)
    _limits.fits(8 * n, f"{n} weights (float64)")
    gen = _checks.generator(rng)
    return [tuple(gen.standard_normal(s) for s in layer) for layer in shapes]


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

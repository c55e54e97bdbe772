"""The one attention kernel every model runs (private core of the library).

:func:`layer` is ``V X N(Xᵀ Kᵀ Q X)`` with ``N`` the identity (lightning) or a normalizer of
:data:`NORMALIZERS`; :func:`deep` chains layers. Both follow the array protocol of
:mod:`lsa_lib._backend` (lightning layers use only ``@``, ``.mT`` and ``*``), so the same code
runs on numpy and torch arrays, under ``torch.func``, and on the exact dual numbers. The public
faces are :func:`lsa_lib.lightning.attention_layer` and :func:`lsa_lib.lightning.deep_attention`,
which check their input and output; models (heads, residual layers, metrics, transport) call
the kernel with their own keys, queries or values through the hooks ``KX``, ``QX`` and ``VX``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _backend, _checks

__all__: list[str] = []


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


NORMALIZERS: dict[str, Normalizer] = {
    "exp": Normalizer("exp", "exp(x)", True, None, np.exp),
    "square_plus_one": Normalizer("square_plus_one", "x² + 1", True, None, _square_plus_one),
    "taylor2": Normalizer("taylor2", "1 + x + x²/2", True, None, _taylor2),
    "square": Normalizer("square", "x²", False, 2, _square),
}


def normalizer(name: Any) -> Normalizer | None:
    """The :class:`Normalizer` of a name (None for lightning), checked."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"normalizer must be None or one of {sorted(NORMALIZERS)}, got {name!r}")
    return NORMALIZERS[_checks.choice(name, "normalizer", sorted(NORMALIZERS))]


def normalize(S: Any, nz: Normalizer) -> Any:
    """Weights ``S(s_ij) / Σ_k S(s_kj)``: each query column sums to 1 over the keys (axis -2).

    Softmax is shifted by each column's maximum first (no overflow for large finite scores).
    """
    if nz.name == "exp":
        if _backend.is_torch(S):
            return S.softmax(dim=-2)
        E = np.exp(S - S.max(axis=-2, keepdims=True))
    else:
        E = nz.function(S)
    return E / E.sum(-2, keepdims=True) if isinstance(E, np.ndarray) else E / E.sum(-2, True)


def layer(
    X: Any,
    Q: Any,
    K: Any,
    V: Any,
    nz: Normalizer | None = None,
    *,
    QX: Any = None,
    KX: Any = None,
    VX: Any = None,
) -> Any:
    """``(V X) N((K X)ᵀ (Q X))``; ``K=None`` stands for the identity (``(A, V)`` coordinates).

    The hooks replace ``Q X``, ``K X`` or ``V X`` (shape ``(..., a, t)`` or ``(..., d_out, t)``)
    for layers whose queries, keys or values depend on the tokens in another way (a content
    metric, positional transport). Lightning layers are contracted in the order
    ``((V X)(K X)ᵀ)(Q X)``: time linear in ``t``, no ``t × t`` matrix.
    """
    KX = (X if K is None else K @ X) if KX is None else KX
    QX = Q @ X if QX is None else QX
    # V X is formed inside the product, not kept: its buffer is freed before the result's is
    # allocated (a large saving of allocator time for long sequences)
    if nz is None:
        return ((V @ X if VX is None else VX) @ KX.mT) @ QX
    return (V @ X if VX is None else VX) @ normalize(KX.mT @ QX, nz)


def deep(X: Any, layers: Sequence[tuple[Any, Any, Any]], nz: Normalizer | None = None) -> Any:
    """``φ_l ∘ … ∘ φ_1`` on ``X`` (every layer with the same normalizer)."""
    for Q, K, V in layers:
        X = layer(X, Q, K, V, nz)
    return X

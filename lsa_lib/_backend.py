"""The array protocol every forward pass follows (private core of the library).

One forward pass of a model runs on four kinds of arrays:

* **torch tensors**, under ``torch.func`` (the float rank engine differentiates it);
* **numpy arrays** (the public functions on numpy input);
* :class:`lsa_lib._modp.ModDual`, exact dual numbers modulo a prime (the exact engine);
* :class:`lsa_lib._ball.BallDual`, dual numbers over real balls (the softmax certificate).

So a forward pass uses only ``@``, ``.mT``, ``+``, ``-``, ``*``, ``reshape`` and ``.shape``
on its arrays (a non-polynomial one also ``/``, ``numpy.exp``, ``.sum`` and ``.max`` over the
key axis), and it makes every other array through this module: constants (:func:`const`,
:func:`ones`, :func:`eye`, :func:`selector`), which each backend lifts in its own way, and the
per-column products of :func:`per_column`. Symmetry tangents are computed on exact copies
(:func:`exact`, Python integers when the weights are integer-valued, so products of
determinants stay exact) and zero tangents keep each block's kind (:func:`zeros`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

__all__: list[str] = []


def is_torch(x: Any) -> bool:
    """Whether ``x`` is a torch tensor (batched tensors under ``torch.func`` included)."""
    return isinstance(x, torch.Tensor)


def const(c: ArrayLike, like: Any) -> Any:
    """A constant array in the backend of ``like``.

    Torch: a tensor of ``like``'s dtype. Every other backend takes float64 numpy arrays as
    constants (the exact dual numbers check that they hold integers; ball duals read the
    binary rationals exactly). Object arrays (exact generator algebra) stay object arrays.
    """
    if is_torch(like):
        return torch.as_tensor(np.asarray(c, dtype=np.float64), dtype=like.dtype)
    if isinstance(like, np.ndarray) and like.dtype == object:
        return np.asarray(c).astype(object)
    return np.asarray(c, dtype=np.float64)


def ones(shape: Sequence[int], like: Any) -> Any:
    """An array of ones of ``shape`` in the backend of ``like``."""
    return const(np.ones(tuple(shape)), like)


def ones_like(x: Any) -> Any:
    """Ones of ``x``'s shape in its backend (instead of tricks like ``x * 0 + 1``)."""
    return ones(tuple(x.shape), x)


def eye(n: int, like: Any) -> Any:
    """The ``n × n`` identity in the backend of ``like``."""
    return const(np.eye(n), like)


def selector(t: int, j: int, like: Any) -> Any:
    """``E_j = diag(e_j)`` (``t × t``): ``Y @ E_j`` keeps column ``j`` of ``Y`` and zeroes the rest."""
    E = np.zeros((t, t))
    E[j, j] = 1.0
    return const(E, like)


def per_column(maps: Sequence[Any], Y: Any) -> Any:
    """Column ``j`` of ``Y`` multiplied by ``maps[j]``: ``[maps[0] y_0 | … | maps[t-1] y_{t-1}]``.

    ``Y`` has shape ``(..., a, t)`` and ``maps`` holds ``t`` constant ``(b, a)`` matrices (numpy
    arrays). Numpy and torch: one batched product (time linear in ``t``). Dual numbers:
    ``Σ_j M_j Y E_j`` with the selectors :func:`selector`, which uses only ``@`` and ``+``.
    """
    t = len(maps)
    if is_torch(Y):
        stack = torch.as_tensor(np.stack([np.asarray(M, dtype=np.float64) for M in maps]))
        return torch.einsum("jab,...bj->...aj", stack.to(Y.dtype), Y)
    if isinstance(Y, np.ndarray) and Y.dtype != object:
        return np.einsum("jab,...bj->...aj", np.stack([np.asarray(M) for M in maps]), Y)
    out = None
    for j in range(t):
        term = const(maps[j], Y) @ Y @ selector(t, j, Y)
        out = term if out is None else out + term
    return out


def exact(M: Any) -> NDArray[np.object_]:
    """An exact copy for generator algebra: Python ints if integer-valued, else Python floats."""
    arr = np.asarray(M.detach().cpu().numpy() if is_torch(M) else M)
    if arr.dtype != object and np.array_equal(arr, np.round(arr)):
        return np.vectorize(int, otypes=[object])(np.round(arr)) if arr.size else arr.astype(object)
    return arr.astype(object)


def zeros(blocks: Sequence[Any]) -> list[NDArray[Any]]:
    """A zero tangent: one zero array per block, of the block's shape and kind."""
    out = []
    for b in blocks:
        arr = np.asarray(b.detach().cpu().numpy() if is_torch(b) else b)
        out.append(np.zeros(arr.shape, dtype=arr.dtype if arr.dtype != object else object))
    return out


def concat(parts: Sequence[Any], like: Any) -> Any:
    """``parts`` joined along the token axis (the last), in the backend of ``like``."""
    return torch.cat(list(parts), dim=-1) if is_torch(like) else np.concatenate(parts, axis=-1)

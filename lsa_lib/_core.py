"""Shared checks and conventions used by every chapter's module.

Conventions (see the notation page of the book):

* tokens are columns: an input ``X`` has shape ``(d, t)`` or, batched, ``(..., d, t)``;
* one layer is a triple ``(Q, K, V)`` with ``Q, K`` of shape ``(a, d)`` and ``V`` of shape
  ``(d_out, d)``; its attention matrix is ``A = Kᵀ Q``;
* an architecture is ``widths = (d_0, ..., d_l)`` and ``attn = (a_1, ..., a_l)``;
* arrays are float64 unless the caller passes torch tensors of another floating dtype.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

try:  # torch is optional for the numpy-only parts of the library
    import torch
except ImportError:  # pragma: no cover - torch is in requirements.txt
    torch = None  # type: ignore[assignment]

__all__ = [
    "as_array",
    "check_layer",
    "check_layers",
    "check_architecture",
    "layer_shapes",
    "random_layers",
    "parameter_count",
    "flatten_layers",
    "unflatten_layers",
]

Layer = tuple[Any, Any, Any]


def _is_torch(x: Any) -> bool:
    return torch is not None and isinstance(x, torch.Tensor)


def as_array(x: Any, name: str, *, min_ndim: int = 2, like: Any = None) -> Any:
    """Return ``x`` as a finite floating array (numpy float64 or a floating torch tensor).

    Part of the shared conventions of every chapter (see the notation page).

    Parameters
    ----------
    x : array-like or torch.Tensor
        The value to check.
    name : str
        The name used in error messages (``"X"``, ``"Q"``, ...).
    min_ndim : int
        The least number of dimensions accepted.
    like : array or torch.Tensor, optional
        If a torch tensor, ``x`` is converted to a torch tensor of its dtype.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        A floating array; numpy inputs become float64, torch tensors keep a floating dtype
        (integer tensors become float64).

    Raises
    ------
    TypeError
        If ``x`` is not numeric.
    ValueError
        If ``x`` has fewer than ``min_ndim`` dimensions, an empty size, or a non-finite entry.
    """
    if _is_torch(x) or _is_torch(like):
        if not _is_torch(x):
            try:
                x = torch.as_tensor(np.asarray(x, dtype=np.float64))
            except (TypeError, ValueError) as err:
                raise TypeError(f"{name} must be numeric, got {type(x).__name__}") from err
        if not (x.is_floating_point()):
            if x.is_complex() or x.dtype == torch.bool:
                raise TypeError(f"{name} must be real, got dtype {x.dtype}")
            x = x.to(torch.float64)
        if _is_torch(like) and like.is_floating_point() and x.dtype != like.dtype:
            x = x.to(like.dtype)
        shape = tuple(x.shape)
        finite = bool(torch.isfinite(x).all()) if x.numel() else True
    else:
        if isinstance(x, (str, bytes)):
            raise TypeError(f"{name} must be numeric, got {type(x).__name__}")
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be numeric, got {type(x).__name__}") from err
        if arr.dtype == object or not (
            np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
        ):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
        if np.iscomplexobj(arr):
            raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
        x = arr.astype(np.float64, copy=False)
        shape = x.shape
        finite = bool(np.isfinite(x).all())
    if len(shape) < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {shape}")
    if any(s == 0 for s in shape):
        raise ValueError(f"{name} has an empty size: shape {shape}")
    if not finite:
        raise ValueError(f"{name} has non-finite entries (nan or inf)")
    return x


def _check_layer_shapes(Q: Any, K: Any, V: Any, tag: str = "") -> None:
    """Raise unless ``Q, K`` are matrices of one shape ``(a, d)`` and ``V`` is ``(d_out, d)``."""
    for name, M in (("Q", Q), ("K", K), ("V", V)):
        if len(M.shape) != 2:
            raise ValueError(f"{name}{tag} must be a matrix, got shape {tuple(M.shape)}")
    if tuple(Q.shape) != tuple(K.shape):
        raise ValueError(
            f"Q{tag} and K{tag} must have the same shape (a, d), "
            f"got Q {tuple(Q.shape)} and K {tuple(K.shape)}"
        )
    if V.shape[1] != Q.shape[1]:
        raise ValueError(
            f"V{tag} must have shape (d_out, d) with d = {Q.shape[1]} (the columns of Q), "
            f"got V {tuple(V.shape)}"
        )


def _layer_triples(layers: Any) -> list[tuple[Any, Any, Any]]:
    """Check that ``layers`` is a non-empty list of ``(Q, K, V)`` triples; return the triples."""
    if isinstance(layers, tuple) and len(layers) == 3 and hasattr(layers[0], "shape"):
        if len(layers[0].shape) == 2:
            raise TypeError(
                "layers must be a list of (Q, K, V) triples; wrap one layer as [(Q, K, V)]"
            )
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence) or not layers:
        raise ValueError("layers must be a non-empty list of (Q, K, V) triples")
    for i, layer in enumerate(layers, start=1):
        if not isinstance(layer, (tuple, list)) or len(layer) != 3:
            raise TypeError(f"layer {i} must be a (Q, K, V) triple")
    return [tuple(layer) for layer in layers]


def check_layer(
    Q: Any, K: Any, V: Any, *, d: int | None = None, index: int | None = None, like: Any = None
) -> Layer:
    """Check one layer ``(Q, K, V)`` and return it as floating arrays.

    Part of the shared conventions of every chapter (see the notation page).

    Parameters
    ----------
    Q, K : array-like, shape=[a, d]
        Query and key matrices.
    V : array-like, shape=[d_out, d]
        Value matrix.
    d : int, optional
        The input width the layer must accept.
    index : int, optional
        The layer's position (1-based), used in error messages.
    like : array or torch.Tensor, optional
        Convert to torch when this is a torch tensor.

    Returns
    -------
    tuple
        ``(Q, K, V)`` as floating arrays.
    """
    tag = "" if index is None else f" of layer {index}"
    if _is_torch(Q) or _is_torch(K) or _is_torch(V):
        like = next(m for m in (like, Q, K, V) if _is_torch(m))
    Q = as_array(Q, "Q" + tag, like=like)
    K = as_array(K, "K" + tag, like=like)
    V = as_array(V, "V" + tag, like=like)
    _check_layer_shapes(Q, K, V, tag)
    if d is not None and Q.shape[1] != d:
        raise ValueError(
            f"layer{tag or ''} expects input width {Q.shape[1]} (Q has shape "
            f"{tuple(Q.shape)}), but its input has width {d}"
        )
    return Q, K, V


def check_layers(layers: Sequence[Layer], *, d: int | None = None, like: Any = None) -> list[Layer]:
    """Check a list of layers ``[(Q_1, K_1, V_1), ...]`` whose widths chain.

    Part of the shared conventions of every chapter (see the notation page).

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Layer ``i`` has ``Q_i, K_i`` of shape ``(a_i, d_{i-1})`` and ``V_i`` of shape
        ``(d_i, d_{i-1})``.
    d : int, optional
        The input width ``d_0`` the first layer must accept.
    like : array or torch.Tensor, optional
        Convert to torch when this is a torch tensor.

    Returns
    -------
    list of tuple
        The checked layers.
    """
    out = []
    width = d
    for i, layer in enumerate(_layer_triples(layers), start=1):
        Q, K, V = check_layer(*layer, d=width, index=i, like=like)
        out.append((Q, K, V))
        width = V.shape[0]
    return out


def _check_size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def _check_t(t: Any) -> int:
    """The number of tokens ``t``: a positive integer (``ValueError`` otherwise)."""
    return _check_size(t, "t (the number of tokens)")


def check_architecture(
    widths: Sequence[int], attn: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Check an architecture ``widths = (d_0, ..., d_l)``, ``attn = (a_1, ..., a_l)``.

    Part of the shared conventions of every chapter (see the notation page).

    Returns
    -------
    tuple
        ``(widths, attn)`` as tuples of Python ints.

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``widths`` has fewer than two entries, or
        ``len(attn) != len(widths) - 1``.
    """
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence):
        raise ValueError(f"widths must be a sequence (d_0, ..., d_l), got {widths!r}")
    if isinstance(attn, (str, bytes)) or not isinstance(attn, Sequence):
        raise ValueError(f"attn must be a sequence (a_1, ..., a_l), got {attn!r}")
    if len(widths) < 2:
        raise ValueError(f"widths must list at least (d_0, d_1), got {tuple(widths)}")
    if len(attn) != len(widths) - 1:
        raise ValueError(
            f"attn must have one entry per layer: widths {tuple(widths)} describe "
            f"{len(widths) - 1} layer(s), but attn {tuple(attn)} has {len(attn)}"
        )
    w = tuple(_check_size(x, f"widths[{i}]") for i, x in enumerate(widths))
    a = tuple(_check_size(x, f"attn[{i}]") for i, x in enumerate(attn))
    return w, a


def layer_shapes(widths: Sequence[int], attn: Sequence[int]) -> list[tuple[tuple[int, int], ...]]:
    """The shapes ``((a_i, d_{i-1}), (a_i, d_{i-1}), (d_i, d_{i-1}))`` of each layer.

    Part of the shared conventions of every chapter (see the notation page).
    """
    w, a = check_architecture(widths, attn)
    return [((a[i], w[i]), (a[i], w[i]), (w[i + 1], w[i])) for i in range(len(a))]


def parameter_count(widths: Sequence[int], attn: Sequence[int]) -> int:
    """Number of weights ``Σ_i (2 a_i d_{i-1} + d_i d_{i-1})`` of the architecture.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, ..., d_l)``.
    attn : sequence of int
        ``(a_1, ..., a_l)``.

    Returns
    -------
    int
        The parameter count. Explained in the chapter "Dimension formulas".
    """
    return sum(2 * q[0] * q[1] + v[0] * v[1] for q, _, v in layer_shapes(widths, attn))


def random_layers(
    widths: Sequence[int], attn: Sequence[int], rng: np.random.Generator | int | None = 0
) -> list[Layer]:
    """Standard normal weights for an architecture, as float64 numpy arrays.

    Part of the shared conventions of every chapter (see the notation page).

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture.
    rng : numpy.random.Generator or int, optional
        A generator or a seed (default 0, so results are reproducible).

    Returns
    -------
    list of (Q, K, V)
        ``Q_i, K_i`` of shape ``(a_i, d_{i-1})``, ``V_i`` of shape ``(d_i, d_{i-1})``.
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return [
        tuple(gen.standard_normal(shape) for shape in shapes)  # type: ignore[misc]
        for shapes in layer_shapes(widths, attn)
    ]


def flatten_layers(layers: Sequence[Layer]) -> Any:
    """Concatenate the weights into one parameter vector, in the book's fixed order.

    Part of the shared conventions of every chapter (see the notation page).

    The order is ``Q_1, K_1, V_1, Q_2, K_2, V_2, ...``, each matrix flattened row-major.
    The dtype (float, integer) and the kind of array (numpy, torch) are kept.

    Parameters
    ----------
    layers : sequence of (Q, K, V)

    Returns
    -------
    array, shape=[P]
        ``P = parameter_count(widths, attn)``.
    """
    mats = [m for layer in layers for m in layer]
    if any(_is_torch(m) for m in mats):
        return torch.cat([torch.as_tensor(m).reshape(-1) for m in mats])
    return np.concatenate([np.asarray(m).reshape(-1) for m in mats])


def unflatten_layers(vector: Any, widths: Sequence[int], attn: Sequence[int]) -> list[Layer]:
    """Inverse of :func:`flatten_layers` for the architecture ``(widths, attn)``.

    Part of the shared conventions of every chapter (see the notation page).

    Parameters
    ----------
    vector : array, shape=[P]
        A parameter vector (numpy or torch); also accepted with leading batch axes
        ``(..., P)``.
    widths, attn : sequence of int
        The architecture.

    Returns
    -------
    list of (Q, K, V)
        Views into ``vector`` reshaped to ``(..., a_i, d_{i-1})`` and ``(..., d_i, d_{i-1})``.
    """
    shapes = layer_shapes(widths, attn)
    P = sum(int(np.prod(s)) for layer in shapes for s in layer)
    if vector.shape[-1] != P:
        raise ValueError(
            f"parameter vector has length {vector.shape[-1]}, but widths {tuple(widths)} and "
            f"attn {tuple(attn)} need {P}"
        )
    lead = tuple(vector.shape[:-1])
    out, pos = [], 0
    for layer in shapes:
        mats = []
        for s in layer:
            n = s[0] * s[1]
            mats.append(vector[..., pos : pos + n].reshape(*lead, *s))
            pos += n
        out.append(tuple(mats))
    return out

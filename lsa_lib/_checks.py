"""Every input check of the library, in one place (private).

Conventions (the notation page of the book): tokens are columns, ``X`` of shape ``(d, t)`` or
``(..., d, t)``; a layer is ``(Q, K, V)`` with ``Q, K`` of shape ``(a, d)`` and ``V`` of shape
``(d_out, d)``; an architecture is ``widths = (d_0, …, d_l)``, ``attn = (a_1, …, a_l)``; layer
indices are 1-based as in the paper. Bad input raises ``ValueError`` (a wrong value or shape) or
``TypeError`` (a wrong kind of object), naming what was wrong and what was expected.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
import torch

from . import _backend, tolerances

#: What the forward passes return: float numpy arrays, or torch tensors for torch input.
Array = np.ndarray | torch.Tensor
#: A precision: a name ("float64", "float32"), a numpy dtype or a torch dtype.
DType = str | type | np.dtype | torch.dtype


is_torch = _backend.is_torch


def torch_like(*arrays: Any) -> torch.Tensor | None:
    """The first torch tensor among ``arrays`` (looking one level into sequences), or None."""
    for a in arrays:
        if is_torch(a):
            return a
        if isinstance(a, (list, tuple)):
            found = torch_like(*a)
            if found is not None:
                return found
    return None


# ------------------------------------------------------------------------------------------
# scalars and options
# ------------------------------------------------------------------------------------------
def size(value: Any, name: str, minimum: int = 1) -> int:
    """A Python int ``≥ minimum`` (bools and non-integers are refused)."""
    if type(value) is int and value >= minimum:  # the common case, without the ABC checks
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
        raise ValueError(f"{name} must be {what}, got {value}")
    return int(value)


def tokens(t: Any, minimum: int = 1) -> int:
    """The number of tokens ``t``; with ``minimum=2`` the message says why one is not enough."""
    t = size(t, "t (the number of tokens)")
    if t < minimum:
        raise ValueError(
            f"t must be at least {minimum} (with t = 1 only the symmetric part of A is seen), "
            f"got {t}"
        )
    return t


def seed(value: Any, name: str = "seed") -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """A numpy ``Generator``: given, or seeded by a non-negative integer (None: fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral) or rng < 0:
        raise ValueError(
            f"{name} must be a numpy.random.Generator or a non-negative integer seed, got {rng!r}"
        )
    return np.random.default_rng(int(rng))


def flag(value: Any, name: str) -> bool:
    """``True`` or ``False`` (numpy booleans too); anything else is a ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(value: Any, name: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def real(value: Any, name: str, *, positive: bool = False, nonzero: bool = False) -> float:
    """A finite real number (optionally positive or non-zero) as a float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if not np.isfinite(x) or (positive and x <= 0) or (nonzero and x == 0):
        kind = "positive " if positive else "non-zero " if nonzero else ""
        raise ValueError(f"{name} must be a finite {kind}number, got {value!r}")
    return x


def min_gap(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 1 < value < np.inf:
        raise ValueError(f"min_gap must be a finite number > 1, got {value!r}")
    return float(value)


def dtype(value: Any) -> str:
    """``"float64"`` or ``"float32"`` from a name, a numpy dtype or a torch dtype."""
    name = str(value).removeprefix("torch.") if isinstance(value, torch.dtype) else None
    if name is None:
        try:
            name = np.dtype(value).name
        except TypeError as err:
            raise ValueError(f"dtype must be float64 or float32, got {value!r}") from err
    if name not in ("float64", "float32"):
        raise ValueError(f"dtype must be float64 or float32, got {name}")
    return name


def index(i: Any, high: int, what: str, low: int = 1) -> int:
    """An index ``low ≤ i ≤ high`` (1-based by default; positions pass ``low=0``)."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
        raise ValueError(f"{what} must be an integer in {low}..{high}, got {i!r}")
    if not low <= i <= high:
        base = " (1-based)" if low == 1 else " (0-based)" if low == 0 else ""
        raise ValueError(f"{what} must be in {low}..{high}{base}, got {i}")
    return int(i)


# ------------------------------------------------------------------------------------------
# architectures
# ------------------------------------------------------------------------------------------
def sequence(value: Any, name: str, form: str) -> list[Any]:
    """A list from a sequence or a one-dimensional numpy array (``form`` names the expected)."""
    if type(value) is tuple or type(value) is list:  # the common case, without the ABC check
        return list(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return list(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a sequence {form}, got {value!r}")
    return list(value)


def sizes(value: Any, name: str, form: str) -> tuple[int, ...]:
    """A non-empty sequence (or 1-D array) of positive integers, as a tuple of ints."""
    items = sequence(value, name, form)
    if not items:
        raise ValueError(f"{name} must be a non-empty sequence {form}, got {value!r}")
    return tuple(size(x, f"{name}[{i}]") for i, x in enumerate(items))


def architecture(widths: Any, attn: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(widths, attn)`` as tuples of ints: ``len(widths) ≥ 2``, one ``a_i`` per layer."""
    widths = sequence(widths, "widths", "(d_0, ..., d_l)")
    attn = sequence(attn, "attn", "(a_1, ..., a_l)")
    if len(widths) < 2:
        raise ValueError(f"widths must list at least (d_0, d_1), got {tuple(widths)}")
    if len(attn) != len(widths) - 1:
        raise ValueError(
            f"attn must have one entry per layer: widths {tuple(widths)} describe "
            f"{len(widths) - 1} layer(s), but attn {tuple(attn)} has {len(attn)}"
        )
    w = tuple(size(x, f"widths[{i}]") for i, x in enumerate(widths))
    a = tuple(size(x, f"attn[{i}]") for i, x in enumerate(attn))
    return w, a


def table_rows(rows: Any) -> list[dict[str, Any]]:
    """The rows of a table: a sequence of mappings ``column name → value``."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, (Sequence, np.ndarray)):
        raise TypeError(
            f"rows must be a list of mappings column → value (one per row), got {type(rows).__name__}"
        )
    for k, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"row {k} must be a mapping column → value (a dict), got {type(row).__name__} {row!r}"
            )
    return [dict(r) for r in rows]


def architectures(items: Any) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    if isinstance(items, (str, bytes)):
        raise TypeError("architectures must be a list of (widths, attn) pairs")
    out = []
    for k, arch in enumerate(items):
        if not isinstance(arch, (tuple, list)) or len(arch) != 2:
            raise TypeError(f"architecture {k} must be a (widths, attn) pair, got {arch!r}")
        out.append(architecture(*arch))
    if not out:
        raise ValueError("architectures is empty: give at least one (widths, attn) pair")
    return out


def layer_shapes(widths: Any, attn: Any) -> list[tuple[tuple[int, int], ...]]:
    """``((a_i, d_{i-1}), (a_i, d_{i-1}), (d_i, d_{i-1}))`` for each layer."""
    w, a = architecture(widths, attn)
    return [((a[i], w[i]), (a[i], w[i]), (w[i + 1], w[i])) for i in range(len(a))]


# ------------------------------------------------------------------------------------------
# arrays
# ------------------------------------------------------------------------------------------
def all_finite(x: Any) -> bool:
    """Whether every entry of a float array (numpy or torch) is finite (one pass when it is)."""
    if is_torch(x):
        x = x.detach()
        return bool(torch.isfinite(x.sum())) or bool(torch.isfinite(x).all())
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(np.sum(x))) or bool(np.isfinite(x).all())


def finite_result(x: Any, what: str) -> Any:
    """``x`` if every entry is finite, else a ``ValueError``: finite input overflowed."""
    if not all_finite(x):
        raise ValueError(
            f"{what} overflows float64 (entries beyond 1.8e308) although the input is finite"
        )
    return x


def array(x: Any, name: str, *, min_ndim: int = 2, like: Any = None) -> Any:
    """A finite floating array: numpy float64, or a torch tensor (when ``x`` or ``like`` is one).

    Torch tensors keep a floating dtype (integer tensors become float64) or take ``like``'s.
    """
    if is_torch(x) or is_torch(like):
        if not is_torch(x):
            try:
                x = torch.as_tensor(np.asarray(x, dtype=np.float64))
            except (TypeError, ValueError) as err:
                raise TypeError(f"{name} must be numeric, got {type(x).__name__}") from err
        if not x.is_floating_point():
            if x.is_complex() or x.dtype == torch.bool:
                raise TypeError(f"{name} must be real, got dtype {x.dtype}")
            x = x.to(torch.float64)
        if is_torch(like) and like.is_floating_point() and x.dtype != like.dtype:
            x = x.to(like.dtype)
        finite = bool(torch.isfinite(x).all()) if x.numel() else True
    else:
        if isinstance(x, (str, bytes)):
            raise TypeError(f"{name} must be numeric, got {type(x).__name__}")
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be numeric, got {type(x).__name__}") from err
        if arr.dtype == object:
            if not all(isinstance(v, numbers.Number) for v in arr.flat):
                raise TypeError(f"{name} must be numeric, got dtype object")
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError) as err:
                raise TypeError(f"{name} must be numeric, got dtype object") from err
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
        if np.iscomplexobj(arr):
            raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
        x = arr.astype(np.float64, copy=False)
        finite = bool(np.isfinite(x).all())
    shape = tuple(x.shape)
    if len(shape) < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {shape}")
    if any(s == 0 for s in shape):
        raise ValueError(f"{name} has an empty size: shape {shape}")
    if not finite:
        raise ValueError(f"{name} has non-finite entries (nan or inf)")
    return x


def matrix(M: Any, name: str, *, like: Any = None) -> Any:
    """A finite float matrix (sympy matrices and arrays of rationals are converted)."""
    if isinstance(M, sympy.MatrixBase):
        try:
            M = np.array(M.tolist(), dtype=np.float64)
        except TypeError as err:
            raise TypeError(f"{name} must have numeric entries, got {M!r}") from err
    M = array(M, name, like=like)
    if len(M.shape) != 2:
        raise ValueError(f"{name} must be a matrix, got shape {tuple(M.shape)}")
    return M


def tokens_fit(X: Any, Q: Any, what: str = "Q and K") -> None:
    if X.shape[-2] != Q.shape[1]:
        raise ValueError(
            f"X must have shape (..., d, t) with d = {Q.shape[1]} (the columns of {what}, "
            f"shape {tuple(Q.shape)}), got X {tuple(X.shape)}"
        )


# ------------------------------------------------------------------------------------------
# layers
# ------------------------------------------------------------------------------------------
def layer_shapes_fit(Q: Any, K: Any, V: Any, tag: str = "") -> None:
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


def triples(layers: Any, what: str = "layers") -> list[tuple[Any, Any, Any]]:
    """A non-empty list of ``(Q, K, V)`` triples (structure only)."""
    if isinstance(layers, tuple) and len(layers) == 3 and hasattr(layers[0], "shape"):
        if len(layers[0].shape) == 2:
            raise TypeError(
                f"{what} must be a list of (Q, K, V) triples; wrap one layer as [(Q, K, V)]"
            )
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence) or not layers:
        raise ValueError(f"{what} must be a non-empty list of (Q, K, V) triples")
    for i, layer in enumerate(layers, start=1):
        if not isinstance(layer, (tuple, list)) or len(layer) != 3:
            raise TypeError(f"layer {i} must be a (Q, K, V) triple")
    return [tuple(layer) for layer in layers]


def layer(
    Q: Any, K: Any, V: Any, *, d: int | None = None, index: int | None = None, like: Any = None
) -> Any:
    """One float layer ``(Q, K, V)`` (torch if any of them or ``like`` is), of input width ``d``."""
    tag = "" if index is None else f" of layer {index}"
    like = like if like is not None else torch_like(Q, K, V)
    Q, K, V = (array(M, n + tag, like=like) for M, n in ((Q, "Q"), (K, "K"), (V, "V")))
    layer_shapes_fit(Q, K, V, tag)
    if d is not None and Q.shape[1] != d:
        which = "the layer" if index is None else f"layer {index}"
        raise ValueError(
            f"{which} expects input width {Q.shape[1]} (Q has shape "
            f"{tuple(Q.shape)}), but its input has width {d}"
        )
    return Q, K, V


def layer_input(X: Any, Q: Any, K: Any, V: Any, *extra: Any) -> tuple[Any, ...]:
    """``(X, Q, K, V, like)`` for one layer's forward pass: float arrays of one kind (torch if
    ``X``, the layer or any of ``extra`` is; ``like`` is that tensor or None), the layer checked
    as in :func:`layer` and ``X`` of shape ``(..., d, t)`` with ``d`` the layer's input width."""
    like = torch_like(X, Q, K, V, *extra)
    Q, K, V = layer(Q, K, V, like=like)
    X = array(X, "X", like=like)
    tokens_fit(X, Q)
    return X, Q, K, V, like


def layers(
    items: Any, *, d: int | None = None, chain: bool = True, like: Any = None
) -> list[tuple[Any, ...]]:
    """Float layers (torch if any matrix or ``like`` is); with ``chain`` the widths chain."""
    raw = triples(items)
    like = like if like is not None else torch_like(*raw)
    out, width = [], d
    for i, (Q, K, V) in enumerate(raw, start=1):
        out.append(layer(Q, K, V, d=width, index=i, like=like))
        width = out[-1][2].shape[0] if chain else None
    return out


def exact_layers(items: Any, d: int | None = None) -> list[tuple[np.ndarray, ...]]:
    """Layers as numpy arrays keeping their dtype (int, float or object); widths must chain
    (from the input width ``d``, when given)."""
    out, width = [], d
    for i, triple in enumerate(triples(items), start=1):
        mats = []
        for name, m in zip("QKV", triple, strict=True):
            arr = np.asarray(m.detach().cpu().numpy() if is_torch(m) else m)
            if arr.dtype.kind not in "iuf" and arr.dtype != object:
                raise TypeError(
                    f"{name} of layer {i} must be a real integer or float array, "
                    f"got dtype {arr.dtype}"
                )
            if 0 in arr.shape:
                raise ValueError(f"{name} of layer {i} has an empty size: shape {arr.shape}")
            mats.append(arr)
        layer_shapes_fit(*mats, f" of layer {i}")
        if width is not None and mats[0].shape[1] != width:
            source = f"layer {i - 1} outputs" if i > 1 else "its input X has"
            raise ValueError(
                f"layer {i} expects input width {mats[0].shape[1]}, but {source} width {width}"
            )
        width = mats[2].shape[0]
        out.append(tuple(mats))
    return out


def params(
    shapes: Sequence[tuple[int, ...]], name: str, values: Any, *, exact: bool
) -> list[np.ndarray]:
    """A parametrization's point: one array per block of ``shapes`` (``exact``: any dtype)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError("params must be a list of arrays, one per parameter block")
    if len(values) != len(shapes):
        raise ValueError(f"params has {len(values)} blocks, but {name} has {len(shapes)}")
    out = []
    for i, (p, s) in enumerate(zip(values, shapes, strict=True)):
        p = p.detach().cpu().numpy() if is_torch(p) else p
        arr = np.asarray(p) if exact else array(p, f"params[{i}]", min_ndim=0)
        if tuple(arr.shape) != tuple(s):
            raise ValueError(f"params[{i}] must have shape {s}, got {tuple(arr.shape)}")
        out.append(arr)
    return out


def symbolic_layers(items: Any) -> bool:
    """Whether ``items`` is a list of triples of sympy matrices (mixing is refused)."""
    flags = [
        isinstance(m, sympy.MatrixBase)
        for layer in (items if isinstance(items, Sequence) else [])
        if isinstance(layer, (tuple, list))
        for m in layer
    ]
    if any(flags) and not all(flags):
        raise TypeError("mixing sympy matrices and numeric arrays in one network is not supported")
    return bool(flags) and all(flags)


# ------------------------------------------------------------------------------------------
# exact (integer, rational, sympy) input
# ------------------------------------------------------------------------------------------
def _exact_scalar(x: Any) -> bool:
    if isinstance(x, (bool, np.bool_, numbers.Integral, Fraction)):
        return True
    return isinstance(x, sympy.Basic) and bool(getattr(x, "is_Rational", False))


def is_exact(M: Any) -> bool:
    """A sympy matrix or an array of integers / rationals (no floats)."""
    if isinstance(M, sympy.MatrixBase):
        return all(_exact_scalar(x) for x in M)
    if is_torch(M):
        return not (M.is_floating_point() or M.is_complex())
    if isinstance(M, (str, bytes)):
        return False
    arr = np.asarray(M)
    if arr.dtype.kind in "iub":
        return True
    return arr.dtype == object and arr.size > 0 and all(_exact_scalar(x) for x in arr.flat)


def shape(M: Any, name: str) -> tuple[int, ...]:
    if isinstance(M, sympy.MatrixBase) or is_torch(M):
        return tuple(M.shape)
    if isinstance(M, (str, bytes)):
        raise TypeError(f"{name} must be a numeric matrix, got {type(M).__name__}")
    return np.asarray(M, dtype=object).shape


def rational_matrix(M: Any, name: str) -> sympy.Matrix:
    """A sympy matrix of rationals; floats become the binary rationals they store."""
    if is_torch(M):
        M = M.detach().cpu().numpy()
    if isinstance(M, sympy.MatrixBase):
        rows, cols, entries = M.rows, M.cols, list(M)
    elif isinstance(M, (str, bytes)):
        raise TypeError(f"{name} must be a numeric matrix, got {type(M).__name__}")
    else:
        arr = np.asarray(M, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {arr.shape}")
        (rows, cols), entries = arr.shape, list(arr.flat)
    if rows == 0 or cols == 0:
        raise ValueError(f"{name} has an empty size: shape {(rows, cols)}")
    out = []
    for x in entries:
        if isinstance(x, np.generic):
            x = x.item()
        if isinstance(x, float) and not np.isfinite(x):
            raise ValueError(f"{name} has non-finite entries (nan or inf)")
        if isinstance(x, (bool, numbers.Integral, Fraction, float)) or (
            isinstance(x, sympy.Basic) and (x.is_Rational or x.is_Float)
        ):
            out.append(sympy.Rational(int(x) if isinstance(x, bool) else x))
            continue
        raise TypeError(f"{name} must have real rational or float entries, got {x!r}")
    return sympy.Matrix(rows, cols, out)


def integer_matrix(M: Any, name: str) -> np.ndarray:
    """An int64 matrix from integer-valued input (integer arrays, integral floats, sympy)."""
    if isinstance(M, sympy.MatrixBase) or (not is_torch(M) and np.asarray(M).dtype == object):
        E = rational_matrix(M, name)
        if not all(x.is_Integer for x in E):
            raise ValueError(f"{name} must have integer entries")
        return np.array([[int(x) for x in E.row(i)] for i in range(E.rows)], dtype=np.int64)
    arr = np.asarray(M.detach().cpu().numpy() if is_torch(M) else M)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) or np.iscomplexobj(arr):
        raise TypeError(f"{name} must be a real numeric matrix, got dtype {arr.dtype}")
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"{name} must be a non-empty matrix, got shape {arr.shape}")
    if not np.isfinite(arr).all() or not np.array_equal(arr, np.round(arr)):
        raise ValueError(f"{name} must have integer entries (scale a rational matrix first)")
    if np.abs(arr).max() >= 2**62:
        raise ValueError(f"{name} has entries too large for int64")
    return np.round(arr).astype(np.int64)


def pair_shapes(A_shape: tuple[int, ...], V_shape: tuple[int, ...]) -> tuple[int, int]:
    """``(d, d_out)`` for an attention matrix ``(d, d)`` and a value matrix ``(d_out, d)``."""
    if len(A_shape) != 2 or A_shape[0] != A_shape[1]:
        raise ValueError(f"A must be a square matrix of shape (d, d), got shape {A_shape}")
    if len(V_shape) != 2 or V_shape[1] != A_shape[0]:
        raise ValueError(
            f"V must have shape (d_out, d) with d = {A_shape[0]} (the size of A), got V {V_shape}"
        )
    if min(A_shape) == 0 or min(V_shape) == 0:
        raise ValueError(f"A and V must be non-empty, got A {A_shape} and V {V_shape}")
    return A_shape[0], V_shape[0]


def pair(A: Any, V: Any) -> tuple[np.ndarray, np.ndarray]:
    """A float ``(A, V)`` pair: ``A`` square ``(d, d)``, ``V`` of shape ``(d_out, d)``."""
    A, V = matrix(A, "A"), matrix(V, "V")
    pair_shapes(tuple(A.shape), tuple(V.shape))
    return A, V


# ------------------------------------------------------------------------------------------
# invertibility
# ------------------------------------------------------------------------------------------
def inverse(G: Any, n: int, name: str, *, like: Any = None) -> tuple[Any, Any]:
    """``(G, G⁻¹)`` for an invertible ``n × n`` matrix.

    Sympy matrices must have a non-zero determinant (decided exactly); float matrices (numpy or
    torch) a 2-norm condition number at most :data:`lsa_lib.tolerances.MAX_CONDITION`.
    """
    if isinstance(G, sympy.MatrixBase):
        if G.shape != (n, n):
            raise ValueError(f"{name} must have shape ({n}, {n}), got {G.shape}")
        if sympy.simplify(G.det()) == 0:
            raise ValueError(f"{name} is not invertible (its determinant is exactly 0)")
        return G, G.inv()
    G = array(G, name, like=like if is_torch(like) else None)
    if tuple(G.shape) != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}), got {tuple(G.shape)}")
    cond = np.linalg.cond(G.detach().cpu().numpy() if is_torch(G) else G)
    if not np.isfinite(cond) or cond > tolerances.MAX_CONDITION:
        raise ValueError(
            f"{name} is not (numerically) invertible: its condition number {cond:.3g} exceeds "
            f"MAX_CONDITION = {tolerances.MAX_CONDITION:.0e}"
        )
    return G, (torch.linalg.inv(G) if is_torch(G) else np.linalg.inv(G))


def prime(p: Any) -> int:
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Integral):
        raise ValueError(f"prime must be an integer, got {p!r}")
    p = int(p)
    if not 2 < p < 2**20:
        raise ValueError(f"prime must satisfy 2 < p < 2^20 (so that products are exact), got {p}")
    if any(p % q == 0 for q in range(2, int(p**0.5) + 1)):
        raise ValueError(f"{p} is not prime")
    return p

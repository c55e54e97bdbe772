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

import time
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

from ._core import Layer, _check_size, _is_torch, as_array, check_layer, check_layers

__all__ = [
    "attention_matrix",
    "lightning_attention",
    "softmax_attention",
    "deep_attention",
    "attention_scores",
    "flop_count",
    "forward_time",
    "ForwardTiming",
    "symbolic_matrix",
    "symbolic_lightning",
    "symbolic_layer",
    "SymbolicLayer",
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


def _softmax_blocked(X: Any, Q: Any, K: Any, V: Any, block: int) -> Any:
    # The same arithmetic as _softmax, one block of query columns at a time, so only a
    # t × block slice of the score matrix is held in memory.
    VX, KXt, QX = V @ X, (K @ X).mT, Q @ X
    t = X.shape[-1]
    parts = [VX @ _softmax_columns(KXt @ QX[..., j : j + block]) for j in range(0, t, block)]
    if _is_torch(X):
        import torch

        return torch.cat(parts, dim=-1)
    return np.concatenate(parts, axis=-1)


def _deep(X: Any, layers: Sequence[Layer], normalized: bool = False) -> Any:
    kernel = _softmax if normalized else _lightning
    for Q, K, V in layers:
        X = kernel(X, Q, K, V)
    return X


def _check_input(X: Any, like: Any = None) -> Any:
    return as_array(X, "X", min_ndim=2, like=like)


def _check_x_fits(X: Any, Q: Any, what: str = "Q and K") -> None:
    if X.shape[-2] != Q.shape[1]:
        raise ValueError(
            f"X must have shape (..., d, t) with d = {Q.shape[1]} (the columns of {what}, "
            f"shape {tuple(Q.shape)}), got X {tuple(X.shape)}"
        )


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

    Explained in the chapter "The lightning map".

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
    Q, K, _ = check_layer(Q, K, K, like=like)
    _check_x_fits(X, Q)
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
    Q, K, V = check_layer(Q, K, V, like=like)
    _check_x_fits(X, Q)
    return (_lightning if order == "linear" else _lightning_quadratic)(X, Q, K, V)


def softmax_attention(X: Any, Q: Any, K: Any, V: Any, *, query_block: int | None = None) -> Any:
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
    query_block : int, optional
        If given, process the queries in blocks of this many columns, so memory grows like
        ``t × query_block`` instead of ``t²``; the arithmetic (and the result) is the same.

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
    if query_block is not None:
        query_block = _check_size(query_block, "query_block")
    X = _check_input(X, like)
    Q, K, V = check_layer(Q, K, V, like=like)
    _check_x_fits(X, Q)
    if query_block is None or query_block >= X.shape[-1]:
        return _softmax(X, Q, K, V)
    return _softmax_blocked(X, Q, K, V, query_block)


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
    like = (
        _torch_like(X, *(m for layer in layers for m in layer))
        if isinstance(layers, Sequence)
        else None
    )
    X = _check_input(X, like)
    checked = check_layers(layers, like=like)
    _check_x_fits(X, checked[0][0], "Q_1 and K_1")
    return _deep(X, checked, bool(normalized))


def flop_count(d: int, d_out: int, a: int, t: int, order: Literal["linear", "quadratic"]) -> int:
    """Scalar multiplications in the matrix products of one layer, for an evaluation order.

    A product of an ``(m, n)`` and an ``(n, p)`` matrix counts ``m n p`` multiplications (and
    as many additions, not counted).

    Parameters
    ----------
    d, d_out, a, t : int
        Input width, output width, attention dimension and number of tokens.
    order : {"linear", "quadratic"}
        ``"linear"``: ``((V X)(K X)ᵀ)(Q X)``, which costs
        ``t (d d' + 2 a d + 2 a d')``, linear in ``t``.
        ``"quadratic"``: ``(V X)((K X)ᵀ(Q X))``, which forms the ``t × t`` score matrix and
        costs ``t (d d' + 2 a d) + t² (a + d')``. The softmax layer must use this order (its
        normalization acts on the scores), plus ``t²`` exponentials.

    Returns
    -------
    int
        The number of multiplications.

    Notes
    -----
    Explained in the chapter "The lightning map".
    """
    d, d_out, a, t = (
        _check_size(v, n) for v, n in ((d, "d"), (d_out, "d_out"), (a, "a"), (t, "t"))
    )
    projections = d_out * d * t + 2 * a * d * t  # V X, K X, Q X
    if order == "linear":
        return projections + d_out * t * a + d_out * a * t  # (VX)(KX)ᵀ, then times QX
    if order == "quadratic":
        return projections + t * a * t + d_out * t * t  # (KX)ᵀ(QX), then VX times it
    raise ValueError(f"order must be 'linear' or 'quadratic', got {order!r}")


class ForwardTiming(NamedTuple):
    """Median times of one forward pass, in seconds (see :func:`forward_time`).

    Explained in the chapter "The lightning map".

    ``wall`` is the median wall-clock time (``time.perf_counter``); ``cpu`` the median CPU
    time of the process (``time.process_time``), which, unlike wall-clock time, does not count
    the time other programs on a busy machine hold the processor.
    """

    wall: float
    cpu: float


def forward_time(
    kind: Literal["lightning", "softmax"],
    t: int,
    d: int = 64,
    d_out: int = 64,
    a: int = 16,
    *,
    repeats: int = 5,
    backend: Literal["numpy", "torch"] = "numpy",
    seed: int = 0,
    query_block: int | None = 2048,
) -> ForwardTiming:
    """Median wall-clock and CPU time of one forward pass on random float64 data.

    Parameters
    ----------
    kind : {"lightning", "softmax"}
        Which layer to time (the lightning layer in its linear order), called through the
        public functions (input checks included).
    t, d, d_out, a : int
        Sizes: ``X`` is ``(d, t)``, ``Q, K`` are ``(a, d)``, ``V`` is ``(d_out, d)``.
    repeats : int
        Number of timed runs (after one untimed warm-up); medians are returned.
    backend : {"numpy", "torch"}
        Run on numpy arrays or on torch tensors (both float64, CPU). The number of threads is
        the caller's business (e.g. ``torch.set_num_threads(1)``); with several threads the
        CPU time adds up the threads' times.
    seed : int
        Seed of the random data.
    query_block : int, optional
        Passed to :func:`softmax_attention` (bounds its memory; same arithmetic).

    Returns
    -------
    ForwardTiming
        ``(wall, cpu)`` medians in seconds. Times depend on the machine and its load: show
        them, never assert on them.

    Notes
    -----
    Explained in the chapter "The lightning map"; used by ``benchmarks/bench_lightning.py``.
    """
    t, d, d_out, a, repeats = (
        _check_size(v, n)
        for v, n in ((t, "t"), (d, "d"), (d_out, "d_out"), (a, "a"), (repeats, "repeats"))
    )
    if kind not in ("lightning", "softmax"):
        raise ValueError(f"kind must be 'lightning' or 'softmax', got {kind!r}")
    if backend not in ("numpy", "torch"):
        raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((d, t)) / np.sqrt(d)
    Q, K = rng.standard_normal((a, d)) / np.sqrt(d), rng.standard_normal((a, d)) / np.sqrt(d)
    V = rng.standard_normal((d_out, d))
    if backend == "torch":
        import torch

        X, Q, K, V = (torch.from_numpy(m) for m in (X, Q, K, V))
    if kind == "lightning":

        def run() -> Any:
            return lightning_attention(X, Q, K, V)
    else:

        def run() -> Any:
            return softmax_attention(X, Q, K, V, query_block=query_block)

    run()
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return ForwardTiming(float(np.median(wall)), float(np.median(cpu)))


class SymbolicLayer(NamedTuple):
    """Symbolic matrices of one layer and its output (see :func:`symbolic_layer`).

    Explained in the chapter "The lightning map".
    """

    X: Any
    Q: Any
    K: Any
    V: Any
    phi: Any


def symbolic_matrix(name: str, rows: int, cols: int) -> Any:
    """A sympy matrix of fresh real symbols ``name_{i j}`` (1-based indices).

    Parameters
    ----------
    name : str
        The symbols' stem, e.g. ``"q"``.
    rows, cols : int
        The shape.

    Returns
    -------
    sympy.Matrix, shape=[rows, cols]

    Notes
    -----
    Explained in the chapter "The lightning map".
    """
    import sympy

    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be an identifier such as 'q', got {name!r}")
    rows, cols = _check_size(rows, "rows"), _check_size(cols, "cols")
    return sympy.Matrix(rows, cols, lambda i, j: sympy.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def symbolic_lightning(X: Any, Q: Any, K: Any, V: Any) -> Any:
    """The lightning map ``V X (Xᵀ Kᵀ Q X)`` of sympy matrices (exact, expanded).

    Parameters
    ----------
    X : sympy.Matrix, shape=[d, t]
    Q, K : sympy.Matrix, shape=[a, d]
    V : sympy.Matrix, shape=[d_out, d]

    Returns
    -------
    sympy.Matrix, shape=[d_out, t]
        Each entry expanded as a polynomial.

    Notes
    -----
    Explained in the chapter "The lightning map".
    """
    import sympy

    for nm, M in (("X", X), ("Q", Q), ("K", K), ("V", V)):
        if not isinstance(M, sympy.MatrixBase):
            raise TypeError(f"{nm} must be a sympy Matrix, got {type(M).__name__}")
    if Q.shape != K.shape:
        raise ValueError(
            f"Q and K must have the same shape (a, d), got Q {Q.shape} and K {K.shape}"
        )
    if V.shape[1] != Q.shape[1] or X.shape[0] != Q.shape[1]:
        raise ValueError(
            f"shapes do not fit: expected X (d, t), Q and K (a, d), V (d_out, d); "
            f"got X {X.shape}, Q {Q.shape}, V {V.shape}"
        )
    return (V * X * (X.T * K.T * Q * X)).applyfunc(sympy.expand)


def symbolic_layer(d: int, d_out: int, a: int, t: int) -> SymbolicLayer:
    """Generic symbolic weights and input for one layer, and the layer's output.

    Parameters
    ----------
    d, d_out, a, t : int
        Input width, output width, attention dimension, number of tokens.

    Returns
    -------
    SymbolicLayer
        ``(X, Q, K, V, phi)``: matrices of symbols ``x_ij``, ``q_ij``, ``k_ij``, ``v_ij`` of
        shapes ``(d, t)``, ``(a, d)``, ``(a, d)``, ``(d_out, d)`` and
        ``phi = symbolic_lightning(X, Q, K, V)`` of shape ``(d_out, t)``.

    Notes
    -----
    Explained in the chapter "The lightning map".
    """
    X = symbolic_matrix("x", d, t)
    Q, K = symbolic_matrix("q", a, d), symbolic_matrix("k", a, d)
    V = symbolic_matrix("v", d_out, d)
    return SymbolicLayer(X, Q, K, V, symbolic_lightning(X, Q, K, V))

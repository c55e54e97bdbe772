"""Deep symmetries and virtual weights (:doc:`/book/03_symmetries`).

Three kinds of weight changes leave a deep lightning network ``φ = φ_l ∘ … ∘ φ_1`` unchanged
[HMK25, as reported]; layer indices are 1-based as in the paper:

1. **scaling** ``(Q_i, V_i) ↦ (c_i Q_i, c_i⁻¹ V_i)`` (lightning only: normalizers break it);
2. **change of attention basis** ``(Q_i, K_i) ↦ (G Q_i, G⁻ᵀ K_i)``, ``G ∈ GL_{a_i}``;
3. **pass-through** between layers ``i`` and ``i+1``, ``C ∈ GL_{d_i}``: ``V_i ↦ C V_i`` and
   ``Q_{i+1}, K_{i+1}, V_{i+1} ↦ Q_{i+1} C⁻¹, K_{i+1} C⁻¹, V_{i+1} C⁻¹``.

The function depends on the weights only through the **virtual weights** ``L = V_l ⋯ V_1`` and
``M_i = L_{i-1}ᵀ A_i L_{i-1}``. The actions accept float layers (numpy or torch) or sympy
layers (exact checks); their tangent vectors give the network's :class:`~lsa_lib.rank.Parametrization`
(:func:`network_parametrization`) its certified upper bound. The virtual weights are explained
in :doc:`/book/03_symmetries/virtual_weights`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy
import torch
from numpy.typing import ArrayLike, NDArray

from . import _checks
from ._checks import Array
from .lightning import Layer, _deep, _normalize, _normalizer
from .rank import Parametrization

__all__ = [
    "scale_layers",
    "change_attention_basis",
    "pass_through",
    "symmetry_generators",
    "orbit_dimension_count",
    "virtual_weights",
    "virtual_forward",
    "network_parametrization",
]


def _attention_fiber_dimension(a: int, d: int) -> int:
    """The fibers of ``(Q, K) ↦ Kᵀ Q`` (``Q, K`` of shape ``(a, d)``): ``2ad − r(2d − r)``."""
    r = min(a, d)
    return 2 * a * d - r * (2 * d - r)


def _det(M: Any) -> Any:
    """The exact determinant of a square matrix of Python integers (Bareiss' elimination)."""
    A = [list(row) for row in np.asarray(M, dtype=object).tolist()]
    n = len(A)
    if n == 0:
        return 1
    sign, prev = 1, 1
    for k in range(n - 1):
        if A[k][k] == 0:
            swap = next((r for r in range(k + 1, n) if A[r][k] != 0), None)
            if swap is None:
                return 0
            A[k], A[swap] = A[swap], A[k]
            sign = -sign
        for r in range(k + 1, n):
            for c in range(k + 1, n):
                A[r][c] = (A[r][c] * A[k][k] - A[r][k] * A[k][c]) // prev
        prev = A[k][k]
    return sign * A[n - 1][n - 1]


def _adj(M: Any) -> NDArray[np.object_]:
    """The adjugate (``adj(M) M = det(M) I``) of a square integer matrix, exactly."""
    M = np.asarray(M, dtype=object)
    n = M.shape[0]
    out = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(M, j, axis=0), i, axis=1)
            out[i, j] = (-1) ** (i + j) * _det(minor)
    return out


def _obj(M: Any) -> NDArray[np.object_]:
    """An exact copy for generator algebra: Python ints if integer-valued, else Python floats."""
    arr = np.asarray(M.detach().cpu().numpy() if _checks.is_torch(M) else M)
    if arr.dtype != object and np.array_equal(arr, np.round(arr)):
        return np.vectorize(int, otypes=[object])(np.round(arr)) if arr.size else arr.astype(object)
    return arr.astype(object)


def _zeros_like(params: Sequence[Any]) -> list[NDArray[np.object_]]:
    return [np.zeros(np.shape(p), dtype=object) for p in params]


def _triple_generators(params: Sequence[Any], n_triples: int) -> list[list[Any]]:
    """Scaling ``(Q, 0, −V)`` and the ``GL_a`` tangents ``(E Q, −Eᵀ K, 0)`` of each triple.

    For parameter lists ``[Q_1, K_1, V_1, Q_2, …]`` of models whose triples do not pass
    changes of basis to each other (heads, residual layers, one transported layer).
    """
    P = [_obj(p) for p in params]
    gens = []
    for h in range(n_triples):
        Q, K, V = P[3 * h : 3 * h + 3]
        g = _zeros_like(P)
        g[3 * h], g[3 * h + 2] = Q.copy(), -V
        gens.append(g)
        for r in range(Q.shape[0]):
            for s in range(Q.shape[0]):
                g = _zeros_like(P)
                g[3 * h][r] = Q[s]  # E_rs Q: row r is row s of Q
                g[3 * h + 1][s] = -K[r]  # −E_rsᵀ K: row s is −row r of K
                gens.append(g)
    return gens


def _actions_input(layers: Any) -> tuple[list[tuple[Any, ...]], bool]:
    """Checked triples (any chaining) and whether they are sympy matrices."""
    mats = _checks.triples(layers)
    if _checks.symbolic_layers(mats):
        for i, (Q, K, V) in enumerate(mats, start=1):
            _checks.layer_shapes_fit(Q, K, V, f" of layer {i}")
        return mats, True
    return _checks.layers(mats, chain=False), False


def _copy(M: Any) -> Any:
    return M if isinstance(M, sympy.MatrixBase) else M.clone() if _checks.is_torch(M) else M.copy()


def scale_layers(layers: Sequence[Layer], c: Sequence[Any]) -> list[Layer]:
    """The scaling symmetry ``(Q_i, K_i, V_i) ↦ (c_i Q_i, K_i, c_i⁻¹ V_i)`` of every layer.

    Explained in :doc:`/book/03_symmetries`; it also applies to the heads of a multi-head layer.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float matrices (numpy, or torch: torch out) or sympy matrices.
    c : sequence of float, length=l
        One non-zero factor per layer (sympy expressions for sympy layers).

    Returns
    -------
    list of (Q, K, V)
        New layers (the input is not modified).
    """
    mats, symbolic = _actions_input(layers)
    if isinstance(c, (str, bytes)) or not isinstance(c, (Sequence, np.ndarray)):
        raise ValueError(f"c must be a sequence of {len(mats)} nonzero scalars, got {c!r}")
    if len(c) != len(mats):
        raise ValueError(f"c must have one scalar per layer ({len(mats)}), got {len(c)}")
    out = []
    for i, ((Q, K, V), ci) in enumerate(zip(mats, c, strict=True), start=1):
        if symbolic:
            ci = sympy.sympify(ci)
            if ci == 0:
                raise ValueError(f"c[{i - 1}] (layer {i}) must be nonzero")
        else:
            ci = _checks.real(ci, f"c[{i - 1}] (layer {i}), a nonzero scalar,", nonzero=True)
        out.append((ci * Q, _copy(K), V / ci))
    return out


def change_attention_basis(
    layers: Sequence[Layer], i: int, G: ArrayLike | sympy.MatrixBase
) -> list[Layer]:
    """``(Q_i, K_i) ↦ (G Q_i, G⁻ᵀ K_i)`` in layer ``i``; ``A_i = K_iᵀ Q_i`` is unchanged.

    Explained in :doc:`/book/03_symmetries`. It holds for every normalizer, and for the heads
    of a multi-head layer.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float matrices (numpy or torch) or sympy matrices.
    i : int
        The layer, 1-based.
    G : array-like or sympy.Matrix, shape=[a_i, a_i]
        Invertible (see :func:`lsa_lib.tolerances.MAX_CONDITION` for float matrices).

    Returns
    -------
    list of (Q, K, V)
        New layers; only layer ``i`` changes.
    """
    mats, symbolic = _actions_input(layers)
    i = _checks.index(i, len(mats), "layer index i")
    Q, K, V = mats[i - 1]
    name = f"G (for layer {i}, a_{i} = {Q.shape[0]})"
    G, Ginv = _checks.inverse(sympy.Matrix(G) if symbolic else G, Q.shape[0], name, like=Q)
    out = [tuple(_copy(M) for M in layer) for layer in mats]
    out[i - 1] = (G @ Q, Ginv.T @ K, _copy(V))
    return out


def pass_through(layers: Sequence[Layer], i: int, C: ArrayLike | sympy.MatrixBase) -> list[Layer]:
    """Pass ``C ∈ GL_{d_i}`` from layer ``i``'s output to layer ``i+1``'s input.

    ``V_i ↦ C V_i`` and ``(Q_{i+1}, K_{i+1}, V_{i+1}) ↦ (Q_{i+1} C⁻¹, K_{i+1} C⁻¹, V_{i+1} C⁻¹)``.
    Explained in :doc:`/book/03_symmetries`; it holds for every normalizer.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float matrices (numpy or torch) or sympy matrices, at least two layers.
    i : int
        The hidden width, 1-based (``1 ≤ i ≤ l − 1``).
    C : array-like or sympy.Matrix, shape=[d_i, d_i]
        Invertible.

    Returns
    -------
    list of (Q, K, V)
        New layers; layers ``i`` and ``i+1`` change.
    """
    mats, symbolic = _actions_input(layers)
    if len(mats) < 2:
        raise ValueError("pass_through needs at least two layers (a hidden width to act on)")
    i = _checks.index(i, len(mats) - 1, "hidden-width index i")
    V = mats[i - 1][2]
    C, Cinv = _checks.inverse(
        sympy.Matrix(C) if symbolic else C,
        V.shape[0],
        f"C (for width d_{i} = {V.shape[0]})",
        like=V,
    )
    out = [tuple(_copy(M) for M in layer) for layer in mats]
    out[i - 1] = (out[i - 1][0], out[i - 1][1], C @ V)
    out[i] = tuple(M @ Cinv for M in mats[i])
    return out


def symmetry_generators(layers: Sequence[Layer], normalizer: str | None = None) -> NDArray[Any]:
    """Tangent vectors of the three symmetry groups at the point ``layers``.

    Rows are flattened in the order ``Q_1, K_1, V_1, Q_2, …`` (row-major): first one scaling
    row per layer, ``(Q_i, 0, −V_i)`` (dropped with a normalizer, which breaks the scaling);
    then ``a_i²`` rows per layer for ``E = E_rs``, ``(E Q_i, −Eᵀ K_i, 0)``; then ``d_i²`` rows per
    hidden width, ``E V_i`` on layer ``i`` and ``(−Q_{i+1} E, −K_{i+1} E, −V_{i+1} E)`` on layer
    ``i+1``. Explained in :doc:`/book/03_symmetries`.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Numpy (or torch) arrays of an integer, float or object dtype; the dtype is kept, so
        integer weights give integer rows (the exact engine reduces them modulo a prime).
    normalizer : str, optional
        None for lightning layers; any key of :data:`lsa_lib.lightning.NORMALIZERS` drops the
        scaling rows.

    Returns
    -------
    numpy.ndarray, shape=[n_generators, P]
        ``n_generators =`` :func:`orbit_dimension_count`.
    """
    scaling = _normalizer(normalizer) is None
    mats = _checks.exact_layers(layers)
    dtype = np.result_type(*(M for layer in mats for M in layer))
    offsets, pos = [], 0
    for Q, K, V in mats:
        offsets.append((pos, pos + Q.size, pos + Q.size + K.size))
        pos += Q.size + K.size + V.size
    rows: list[NDArray[Any]] = []

    def row(*blocks: tuple[int, NDArray[Any]]) -> None:
        r = np.zeros(pos, dtype=dtype)
        for start, M in blocks:
            r[start : start + M.size] = M.reshape(-1)
        rows.append(r)

    if scaling:
        for (Q, _, V), (oq, _, ov) in zip(mats, offsets, strict=True):
            row((oq, Q), (ov, -V))
    for (Q, K, _), (oq, ok, _) in zip(mats, offsets, strict=True):
        for r in range(Q.shape[0]):
            for s in range(Q.shape[0]):
                EQ, EtK = np.zeros_like(Q, dtype=dtype), np.zeros_like(K, dtype=dtype)
                EQ[r], EtK[s] = Q[s], K[r]  # E_rs Q: row r is row s of Q; E_rsᵀ K: row s is row r
                row((oq, EQ), (ok, -EtK))
    for i in range(len(mats) - 1):
        V, nxt = mats[i][2], mats[i + 1]
        for r in range(V.shape[0]):
            for s in range(V.shape[0]):
                EV = np.zeros_like(V, dtype=dtype)
                EV[r] = V[s]
                moved = []
                for M in nxt:
                    ME = np.zeros_like(M, dtype=dtype)
                    ME[:, s] = M[:, r]  # M E_rs: column s is column r of M
                    moved.append(-ME)
                row((offsets[i][2], EV), *zip(offsets[i + 1], moved, strict=True))
    return np.stack(rows) if rows else np.zeros((0, pos), dtype=dtype)


def orbit_dimension_count(
    widths: Sequence[int], attn: Sequence[int], normalizer: str | None = None
) -> int:
    """The number of symmetry generators ``Σ a_i² + Σ_{i<l} d_i² + l`` (:doc:`/book/03_symmetries`).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    normalizer : str, optional
        With a normalizer the ``l`` scaling directions are not counted.

    Returns
    -------
    int
        The dimension of ``(R^*)^l × Π GL_{a_i} × Π_{i<l} GL_{d_i}``; it is the orbit dimension
        at generic weights only where the action is locally free (not when ``a_i > d_{i-1}``).
    """
    w, a = _checks.architecture(widths, attn)
    scaling = len(a) if _normalizer(normalizer) is None else 0
    return sum(x * x for x in a) + sum(d * d for d in w[1:-1]) + scaling


def virtual_weights(layers: Sequence[Layer]) -> tuple[list[Any], Any]:
    """The virtual weights ``(M_1, …, M_l)`` and ``L = V_l ⋯ V_1``.

    Explained in :doc:`/book/03_symmetries/virtual_weights`.

    With ``L_0 = I`` and ``L_i = V_i L_{i-1}``: ``M_i = L_{i-1}ᵀ A_i L_{i-1}``, ``A_i = K_iᵀ Q_i``.
    The change of basis and the pass-through leave them unchanged; scaling by ``(c_1, …, c_l)``
    sends ``M_i`` to ``c_i (c_1 ⋯ c_{i-1})⁻² M_i`` and ``L`` to ``(c_1 ⋯ c_l)⁻¹ L``.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float matrices (numpy or torch).

    Returns
    -------
    M_list : list of array, each shape=[d_0, d_0]
    L : array, shape=[d_l, d_0]
    """
    mats = _checks.layers(layers)
    Q0 = mats[0][0]
    L = torch.eye(Q0.shape[1], dtype=Q0.dtype) if _checks.is_torch(Q0) else np.eye(Q0.shape[1])
    M_list = []
    for Q, K, V in mats:
        M_list.append(L.mT @ (K.mT @ Q) @ L)
        L = V @ L
    return M_list, L


def virtual_forward(
    X: ArrayLike, M_list: Sequence[ArrayLike], L: ArrayLike, normalizer: str | None = None
) -> Array:
    """The network in virtual weights: ``φ(X) = L X Γ_l``.

    Explained in :doc:`/book/03_symmetries/virtual_weights`.

    ``Γ_0 = I_t`` and ``Γ_i = Γ_{i-1} N(Γ_{i-1}ᵀ Xᵀ M_i X Γ_{i-1})`` with ``N`` the identity
    (lightning) or the normalization of each query column.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d_0, t]
    M_list : sequence of array-like, each shape=[d_0, d_0]
    L : array-like, shape=[d_l, d_0]
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_l, t]
        Equal to :func:`lsa_lib.lightning.deep_attention` on the layers the weights came from.
    """
    S = _normalizer(normalizer)
    if isinstance(M_list, (str, bytes)) or not isinstance(M_list, Sequence) or not M_list:
        raise ValueError("M_list must be a non-empty list of (d_0, d_0) matrices")
    like = _checks.torch_like(X, L, *M_list)
    X, L = _checks.array(X, "X", like=like), _checks.array(L, "L", like=like)
    d0, t = X.shape[-2], X.shape[-1]
    if len(L.shape) != 2 or L.shape[1] != d0:
        raise ValueError(f"L must have shape (d_l, {d0}) to match X, got {tuple(L.shape)}")
    Gamma = torch.eye(t, dtype=X.dtype) if like is not None else np.eye(t)
    for i, M in enumerate(M_list, start=1):
        M = _checks.array(M, f"M_{i}", like=like)
        if tuple(M.shape) != (d0, d0):
            raise ValueError(f"M_{i} must have shape ({d0}, {d0}), got {tuple(M.shape)}")
        XG = X @ Gamma
        scores = XG.mT @ M @ XG
        Gamma = Gamma @ (scores if S is None else _normalize(scores, S))
    return L @ X @ Gamma


def network_parametrization(
    widths: Sequence[int], attn: Sequence[int], t: int = 3, normalizer: str | None = None
) -> Parametrization:
    """The deep network ``W = (Q_1, K_1, V_1, …) ↦ φ_W`` as a map for the rank engine.

    Explained in :doc:`/book/04_dimension` and :doc:`/book/notes/rank_engine`.

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    t : int
        Tokens per input (the dimension formulas assume ``t ≥ 2``).
    normalizer : str, optional
        None (lightning: polynomial, with the three symmetries as generators) or a key of
        :data:`lsa_lib.lightning.NORMALIZERS` (not polynomial: the float engine only).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q_1, K_1, V_1, Q_2, …``; generators :func:`symmetry_generators`.
    """
    widths, attn = _checks.architecture(widths, attn)
    t, S = _checks.tokens(t), _normalizer(normalizer)
    n = len(attn)

    def split(params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return [tuple(params[3 * i : 3 * i + 3]) for i in range(n)]

    return Parametrization(
        name=f"{normalizer or 'lightning'} network, widths={widths}, attn={attn}, t={t}",
        shapes=tuple(s for layer in _checks.layer_shapes(widths, attn) for s in layer),
        input_shape=(widths[0], t),
        forward=lambda params, X: _deep(X, split(params), S),
        generators=lambda params: symmetry_generators(split(params), normalizer),
        polynomial=S is None,
    )

"""Deep symmetries and virtual weights (chapter "Deep symmetries and virtual weights").

A deep lightning network ``φ = φ_l ∘ … ∘ φ_1`` with layers ``(Q_i, K_i, V_i)`` has three kinds
of weight changes that leave the function unchanged [HMK25, as reported]:

1. **scaling** of a layer: ``(Q_i, V_i) ↦ (c_i Q_i, c_i⁻¹ V_i)``, i.e. ``(A_i, V_i) ↦
   (c_i A_i, c_i⁻¹ V_i)`` (lightning only: softmax breaks it);
2. **change of attention basis** inside a layer: ``(Q_i, K_i) ↦ (G Q_i, G⁻ᵀ K_i)`` with
   ``G ∈ GL_{a_i}`` (it fixes ``A_i = K_iᵀ Q_i``);
3. **pass-through** between layers ``i`` and ``i+1``, ``C ∈ GL_{d_i}``: ``V_i ↦ C V_i`` and
   ``Q_{i+1}, K_{i+1}, V_{i+1} ↦ Q_{i+1} C⁻¹, K_{i+1} C⁻¹, V_{i+1} C⁻¹``.

The function depends on the weights only through the **virtual weights**
``L = V_l ⋯ V_1`` and ``M_i = L_{i-1}ᵀ A_i L_{i-1}`` (``L_i = V_i ⋯ V_1``, ``L_0 = I``).

Invertibility checks: float group elements are rejected when their 2-norm condition number
exceeds :data:`MAX_CONDITION` (so a numerically singular element is refused, not inverted);
exact (integer, rational or sympy) elements are rejected when their determinant is exactly 0.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._core import (
    Layer,
    _check_layer_shapes,
    _is_torch,
    _layer_triples,
    as_array,
    check_architecture,
    check_layers,
)
from .lightning import _softmax_columns

__all__ = [
    "MAX_CONDITION",
    "symmetry_generators",
    "orbit_dimension_count",
    "scale_layers",
    "change_attention_basis",
    "pass_through",
    "virtual_weights",
    "virtual_forward",
    "symbolic_layers",
    "symbolic_tokens",
    "symbolic_deep_lightning",
    "symbolic_difference",
]

#: Float group elements with a larger 2-norm condition number are treated as non-invertible.
MAX_CONDITION = 1e10


# --------------------------------------------------------------------------------------------
# generators (Lie-algebra directions)
# --------------------------------------------------------------------------------------------


def _check_exact_layers(layers: Sequence[Layer]) -> list[tuple[np.ndarray, ...]]:
    """Check shapes of a layer list, keeping each matrix's numpy dtype (int, float, object)."""
    out = []
    width = None
    for i, layer in enumerate(_layer_triples(layers), start=1):
        mats = []
        for name, m in zip("QKV", layer):
            if _is_torch(m):
                m = m.detach().cpu().numpy()
            arr = np.asarray(m)
            if arr.dtype.kind not in "iuf" and arr.dtype != object:
                raise TypeError(
                    f"{name} of layer {i} must be a real integer or float array, "
                    f"got dtype {arr.dtype}"
                )
            if 0 in arr.shape:
                raise ValueError(f"{name} of layer {i} has an empty size: shape {arr.shape}")
            mats.append(arr)
        Q, K, V = mats
        _check_layer_shapes(Q, K, V, f" of layer {i}")
        if width is not None and Q.shape[1] != width:
            raise ValueError(
                f"layer {i} expects input width {Q.shape[1]}, but layer {i - 1} outputs width "
                f"{width}"
            )
        width = V.shape[0]
        out.append((Q, K, V))
    return out


def symmetry_generators(layers: Sequence[Layer], normalized: bool = False) -> np.ndarray:
    """Tangent vectors of the three symmetry groups at the point ``layers``.

    The rows are the derivatives at the identity of the one-parameter subgroups through the
    elementary directions, flattened in :func:`lsa_lib._core.flatten_layers` order
    ``(Q_1, K_1, V_1, Q_2, …)``, row-major. In this order:

    1. scaling, one row per layer ``i`` (omitted when ``normalized``, since softmax breaks it):
       ``(Q_i, 0, -V_i)`` on layer ``i``;
    2. change of attention basis, ``a_i²`` rows per layer ``i``: for each unit matrix
       ``E = E_rs`` (``r, s`` row-major), ``(E Q_i, -Eᵀ K_i, 0)`` on layer ``i``;
    3. pass-through, ``d_i²`` rows for each hidden width ``i = 1, …, l-1``: for ``E = E_rs``,
       ``E V_i`` on layer ``i`` and ``(-Q_{i+1} E, -K_{i+1} E, -V_{i+1} E)`` on layer ``i+1``.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        ``Q_i, K_i`` of shape ``(a_i, d_{i-1})``, ``V_i`` of shape ``(d_i, d_{i-1})``; numpy
        (or torch, converted to numpy) arrays of an integer, float or object dtype.
    normalized : bool
        ``True`` for softmax layers (drops the scaling rows).

    Returns
    -------
    numpy.ndarray, shape=[n_generators, P]
        ``n_generators = Σ a_i² + Σ_{i<l} d_i² + l`` (``- l`` when normalized); the dtype is
        the common dtype of the weights (integers stay integers, so the rows can be reduced
        modulo a prime). The entries are the weights themselves, their negatives, or 0.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights". The rank of these rows is
    the dimension of the orbit of the three groups through ``layers``, so
    ``P - rank`` bounds the dimension of the neuromanifold from above.
    """
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"normalized must be True or False, got {normalized!r}")
    mats = _check_exact_layers(layers)
    dtype = np.result_type(*(m for layer in mats for m in layer))
    # offsets of each block in the parameter vector
    offsets = []
    pos = 0
    for Q, K, V in mats:
        offsets.append((pos, pos + Q.size, pos + Q.size + K.size))
        pos += Q.size + K.size + V.size
    P = pos
    n_layers = len(mats)
    attn = [Q.shape[0] for Q, _, _ in mats]
    hidden = [V.shape[0] for _, _, V in mats[:-1]]
    n = sum(a * a for a in attn) + sum(d * d for d in hidden) + (0 if normalized else n_layers)
    rows = np.zeros((n, P), dtype=dtype)

    def put(row: int, block: int, value: np.ndarray) -> None:
        rows[row, block : block + value.size] = value.reshape(-1)

    r = 0
    if not normalized:
        for (Q, _, V), (oq, _, ov) in zip(mats, offsets):
            put(r, oq, Q)
            put(r, ov, -V)
            r += 1
    for (Q, K, _), (oq, ok, _) in zip(mats, offsets):
        a = Q.shape[0]
        for p in range(a):
            for s in range(a):
                EQ = np.zeros_like(Q, dtype=dtype)
                EQ[p] = Q[s]  # E_ps Q: row p of the result is row s of Q
                EtK = np.zeros_like(K, dtype=dtype)
                EtK[s] = K[p]  # E_psᵀ K = E_sp K: row s is row p of K
                put(r, oq, EQ)
                put(r, ok, -EtK)
                r += 1
    for i in range(n_layers - 1):
        V = mats[i][2]
        Qn, Kn, Vn = mats[i + 1]
        ov = offsets[i][2]
        oq, ok, ovn = offsets[i + 1]
        d = V.shape[0]
        for p in range(d):
            for s in range(d):
                EV = np.zeros_like(V, dtype=dtype)
                EV[p] = V[s]  # E_ps V
                put(r, ov, EV)
                for block, M in ((oq, Qn), (ok, Kn), (ovn, Vn)):
                    ME = np.zeros_like(M, dtype=dtype)
                    ME[:, s] = M[:, p]  # M E_ps: column s is column p of M
                    put(r, block, -ME)
                r += 1
    assert r == n
    return rows


def orbit_dimension_count(
    widths: Sequence[int], attn: Sequence[int], normalized: bool = False
) -> int:
    """The number of symmetry generators, ``Σ a_i² + Σ_{i<l} d_i² + l``.

    Parameters
    ----------
    widths : sequence of int
        ``(d_0, …, d_l)``.
    attn : sequence of int
        ``(a_1, …, a_l)``.
    normalized : bool
        ``True`` for softmax layers: the ``l`` scaling directions are dropped.

    Returns
    -------
    int
        The dimension of the product group ``(R^*)^l × Π GL_{a_i} × Π_{i<l} GL_{d_i}``
        (without ``(R^*)^l`` when normalized). It equals the orbit dimension at generic weights
        only when the action is locally free there; when ``a_i > d_{i-1}`` it over-counts.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights".
    """
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"normalized must be True or False, got {normalized!r}")
    w, a = check_architecture(widths, attn)
    return sum(x * x for x in a) + sum(d * d for d in w[1:-1]) + (0 if normalized else len(a))


# --------------------------------------------------------------------------------------------
# group actions
# --------------------------------------------------------------------------------------------


def _is_sympy_matrix(m: Any) -> bool:
    try:
        import sympy
    except ImportError:  # pragma: no cover
        return False
    return isinstance(m, sympy.MatrixBase)


def _symbolic(layers: Sequence[Layer]) -> bool:
    flags = [
        _is_sympy_matrix(m) for layer in layers if isinstance(layer, (tuple, list)) for m in layer
    ]
    if any(flags) and not all(flags):
        raise TypeError("mixing sympy matrices and numeric arrays in one network is not supported")
    return bool(flags) and all(flags)


def _layers(layers: Sequence[Layer]) -> tuple[list[Layer], bool]:
    """Checked layers and whether they are symbolic (sympy matrices)."""
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence) or not layers:
        raise ValueError("layers must be a non-empty list of (Q, K, V) triples")
    for i, layer in enumerate(layers, start=1):
        if not isinstance(layer, (tuple, list)) or len(layer) != 3:
            raise TypeError(f"layer {i} must be a (Q, K, V) triple")
    if _symbolic(layers):
        width = None
        for i, (Q, K, V) in enumerate(layers, start=1):
            if Q.shape != K.shape or V.shape[1] != Q.shape[1]:
                raise ValueError(
                    f"layer {i}: Q, K must be (a, d) and V (d_out, d), got "
                    f"{Q.shape}, {K.shape}, {V.shape}"
                )
            if width is not None and Q.shape[1] != width:
                raise ValueError(f"layer {i} expects input width {Q.shape[1]}, got {width}")
            width = V.shape[0]
        return [tuple(layer) for layer in layers], True
    return check_layers(layers), False


def _check_index(i: Any, low: int, high: int, what: str) -> int:
    if isinstance(i, bool) or not isinstance(i, numbers.Integral):
        raise ValueError(f"{what} must be an integer in {low}..{high}, got {i!r}")
    if not low <= i <= high:
        raise ValueError(f"{what} must be in {low}..{high} (1-based), got {i}")
    return int(i)


def _copy(m: Any) -> Any:
    return m.clone() if _is_torch(m) else m.copy()


def _inverse(G: Any, n: int, name: str, symbolic: bool, like: Any = None) -> tuple[Any, Any]:
    """Check that ``G`` is an invertible ``n × n`` matrix; return ``(G, G⁻¹)``."""
    if symbolic:
        import sympy

        G = sympy.Matrix(G)
        if G.shape != (n, n):
            raise ValueError(f"{name} must have shape ({n}, {n}), got {G.shape}")
        if sympy.simplify(G.det()) == 0:
            raise ValueError(f"{name} is not invertible (its determinant is exactly 0)")
        return G, G.inv()
    G = as_array(G, name, like=like if _is_torch(like) else None)
    if tuple(G.shape) != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}), got {tuple(G.shape)}")
    G_np = G.detach().cpu().numpy() if _is_torch(G) else G
    cond = np.linalg.cond(G_np)
    if not np.isfinite(cond) or cond > MAX_CONDITION:
        raise ValueError(
            f"{name} is not (numerically) invertible: its condition number {cond:.3g} exceeds "
            f"MAX_CONDITION = {MAX_CONDITION:.0e}"
        )
    if _is_torch(G):
        import torch

        return G, torch.linalg.inv(G)
    return G, np.linalg.inv(G)


def _T(M: Any) -> Any:
    return M.T


def scale_layers(layers: Sequence[Layer], c: Sequence[float]) -> list[Layer]:
    """Apply the scaling symmetry: ``(Q_i, K_i, V_i) ↦ (c_i Q_i, K_i, c_i⁻¹ V_i)``.

    Each layer's attention matrix becomes ``c_i A_i`` and its value matrix ``c_i⁻¹ V_i``, so
    each lightning layer (trilinear in ``A_i`` and ``V_i``) computes the same function.
    Softmax layers are *not* invariant.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float arrays (numpy, or torch: torch in, torch out), or sympy matrices for an exact
        check.
    c : sequence of float, length=l
        One nonzero scalar per layer (sympy expressions allowed for symbolic layers).

    Returns
    -------
    list of (Q, K, V)
        New layers (the input is not modified).

    Raises
    ------
    ValueError
        If ``len(c)`` differs from the number of layers or some ``c_i`` is 0 (or not finite).

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights".
    """
    mats, symbolic = _layers(layers)
    if isinstance(c, (str, bytes)) or not isinstance(c, (Sequence, np.ndarray)):
        raise ValueError(f"c must be a sequence of {len(mats)} nonzero scalars, got {c!r}")
    if len(c) != len(mats):
        raise ValueError(f"c must have one scalar per layer ({len(mats)}), got {len(c)}")
    out = []
    for i, ((Q, K, V), ci) in enumerate(zip(mats, c), start=1):
        if symbolic:
            import sympy

            ci = sympy.sympify(ci)
            if ci == 0:
                raise ValueError(f"c[{i - 1}] (layer {i}) must be nonzero")
            out.append((ci * Q, K, V / ci))
            continue
        if isinstance(ci, bool) or not isinstance(ci, numbers.Real):
            raise ValueError(f"c[{i - 1}] (layer {i}) must be a real scalar, got {ci!r}")
        ci = float(ci)
        if ci == 0.0 or not np.isfinite(ci):
            raise ValueError(f"c[{i - 1}] (layer {i}) must be a finite nonzero scalar, got {ci}")
        out.append((ci * Q, _copy(K), V / ci))
    return out


def change_attention_basis(layers: Sequence[Layer], i: int, G: Any) -> list[Layer]:
    """Apply ``(Q_i, K_i) ↦ (G Q_i, G⁻ᵀ K_i)`` to layer ``i``; ``A_i = K_iᵀ Q_i`` is unchanged.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float arrays (numpy, or torch: torch in, torch out), or sympy matrices for an exact
        check.
    i : int
        The layer, 1-based (``1 ≤ i ≤ l``).
    G : array-like, shape=[a_i, a_i]
        An invertible matrix. Float matrices must have condition number at most
        :data:`MAX_CONDITION`; sympy matrices a nonzero determinant.

    Returns
    -------
    list of (Q, K, V)
        New layers; only layer ``i`` changes.

    Raises
    ------
    ValueError
        On a wrong layer index, a wrongly sized ``G`` or a (numerically) singular ``G``.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights". Holds for lightning and
    softmax layers alike.
    """
    mats, symbolic = _layers(layers)
    i = _check_index(i, 1, len(mats), "layer index i")
    Q, K, V = mats[i - 1]
    G, Ginv = _inverse(G, Q.shape[0], f"G (for layer {i}, a_{i} = {Q.shape[0]})", symbolic, Q)
    out = [tuple(m if symbolic else _copy(m) for m in layer) for layer in mats]
    out[i - 1] = (G @ Q, _T(Ginv) @ K, V if symbolic else _copy(V))
    return out


def pass_through(layers: Sequence[Layer], i: int, C: Any) -> list[Layer]:
    """Pass ``C ∈ GL_{d_i}`` from layer ``i``'s output to layer ``i+1``'s input.

    ``V_i ↦ C V_i`` and ``(Q_{i+1}, K_{i+1}, V_{i+1}) ↦ (Q_{i+1} C⁻¹, K_{i+1} C⁻¹,
    V_{i+1} C⁻¹)``: layer ``i`` now outputs ``C Y`` instead of ``Y``, and layer ``i+1``, being
    linear in its ``Q, K, V`` applied to its input, undoes ``C`` first.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float arrays (numpy, or torch: torch in, torch out), or sympy matrices for an exact
        check.
    i : int
        The hidden width, 1-based (``1 ≤ i ≤ l - 1``).
    C : array-like, shape=[d_i, d_i]
        An invertible matrix (condition number at most :data:`MAX_CONDITION` for floats, nonzero
        determinant for sympy).

    Returns
    -------
    list of (Q, K, V)
        New layers; layers ``i`` and ``i+1`` change.

    Raises
    ------
    ValueError
        On a network with one layer, a wrong index, a wrongly sized or singular ``C``.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights". Holds for lightning and
    softmax layers alike.
    """
    mats, symbolic = _layers(layers)
    if len(mats) < 2:
        raise ValueError("pass_through needs at least two layers (a hidden width to act on)")
    i = _check_index(i, 1, len(mats) - 1, "hidden-width index i")
    Q, K, V = mats[i - 1]
    Qn, Kn, Vn = mats[i]
    C, Cinv = _inverse(C, V.shape[0], f"C (for width d_{i} = {V.shape[0]})", symbolic, V)
    out = [tuple(m if symbolic else _copy(m) for m in layer) for layer in mats]
    out[i - 1] = (out[i - 1][0], out[i - 1][1], C @ V)
    out[i] = (Qn @ Cinv, Kn @ Cinv, Vn @ Cinv)
    return out


# --------------------------------------------------------------------------------------------
# virtual weights
# --------------------------------------------------------------------------------------------


def virtual_weights(layers: Sequence[Layer]) -> tuple[list[Any], Any]:
    """The virtual weights ``(M_1, …, M_l)`` and ``L = V_l ⋯ V_1``.

    With ``L_0 = I_{d_0}`` and ``L_i = V_i L_{i-1}``, ``M_i = L_{i-1}ᵀ A_i L_{i-1}`` where
    ``A_i = K_iᵀ Q_i``.

    Parameters
    ----------
    layers : sequence of (Q, K, V)
        Float arrays (numpy or torch).

    Returns
    -------
    M_list : list of array, each shape=[d_0, d_0]
        ``M_i``: the attention matrix of layer ``i`` pulled back to the input tokens.
    L : array, shape=[d_l, d_0]
        The product of the value matrices.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights". All three symmetries of
    the lightning network except scaling leave ``(M, L)`` unchanged; scaling by ``(c_1, …, c_l)``
    sends ``M_i`` to ``c_i (c_1 ⋯ c_{i-1})⁻² M_i`` and ``L`` to ``(c_1 ⋯ c_l)⁻¹ L``.
    """
    like = (
        next((m for layer in layers for m in layer if _is_torch(m)), None)
        if isinstance(layers, Sequence)
        else None
    )
    mats = check_layers(layers, like=like)
    d0 = mats[0][0].shape[1]
    if like is not None:
        import torch

        L = torch.eye(d0, dtype=mats[0][0].dtype)
    else:
        L = np.eye(d0)
    M_list = []
    for Q, K, V in mats:
        M_list.append(L.mT @ (K.mT @ Q) @ L)
        L = V @ L
    return M_list, L


def virtual_forward(X: Any, M_list: Sequence[Any], L: Any, normalized: bool = False) -> Any:
    """The network written in virtual weights: ``φ(X) = L X Γ_l``.

    ``Γ_0 = I_t`` and ``Γ_i = Γ_{i-1} N(Γ_{i-1}ᵀ Xᵀ M_i X Γ_{i-1})`` with ``N`` the identity
    (lightning) or the softmax over the keys in each column (normalized).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d_0, t]
        Tokens as columns.
    M_list : sequence of array, each shape=[d_0, d_0]
        The virtual attention matrices.
    L : array-like, shape=[d_l, d_0]
        The product of the value matrices.
    normalized : bool
        ``True`` for softmax layers.

    Returns
    -------
    array, shape=[..., d_l, t]
        Equal to :func:`lsa_lib.lightning.deep_attention` on the layers the virtual weights
        came from.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights".
    """
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"normalized must be True or False, got {normalized!r}")
    if isinstance(M_list, (str, bytes)) or not isinstance(M_list, Sequence) or not M_list:
        raise ValueError("M_list must be a non-empty list of (d_0, d_0) matrices")
    like = next((m for m in (X, L, *M_list) if _is_torch(m)), None)
    X = as_array(X, "X", like=like)
    L = as_array(L, "L", like=like)
    d0, t = X.shape[-2], X.shape[-1]
    if len(L.shape) != 2 or L.shape[1] != d0:
        raise ValueError(f"L must have shape (d_l, {d0}) to match X, got {tuple(L.shape)}")
    Ms = []
    for i, M in enumerate(M_list, start=1):
        M = as_array(M, f"M_{i}", like=like)
        if tuple(M.shape) != (d0, d0):
            raise ValueError(f"M_{i} must have shape ({d0}, {d0}), got {tuple(M.shape)}")
        Ms.append(M)
    if like is not None:
        import torch

        Gamma = torch.eye(t, dtype=X.dtype)
    else:
        Gamma = np.eye(t)
    for M in Ms:
        XG = X @ Gamma
        S = XG.mT @ M @ XG
        Gamma = Gamma @ (_softmax_columns(S) if normalized else S)
    return L @ X @ Gamma


# --------------------------------------------------------------------------------------------
# exact (symbolic) checks
# --------------------------------------------------------------------------------------------


def symbolic_layers(widths: Sequence[int], attn: Sequence[int]) -> list[Layer]:
    """Layers whose entries are independent sympy symbols (``q1_rs``, ``k1_rs``, ``v1_rs``, …).

    Parameters
    ----------
    widths, attn : sequence of int
        The architecture.

    Returns
    -------
    list of (sympy.Matrix, sympy.Matrix, sympy.Matrix)

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights" (exact invariance checks).
    """
    import sympy

    w, a = check_architecture(widths, attn)
    out = []
    for i in range(len(a)):
        mats = []
        for name, (rows, cols) in (
            ("q", (a[i], w[i])),
            ("k", (a[i], w[i])),
            ("v", (w[i + 1], w[i])),
        ):
            entries = [
                [sympy.Symbol(f"{name}{i + 1}_{r}{s}") for s in range(cols)] for r in range(rows)
            ]
            mats.append(sympy.Matrix(entries))
        out.append(tuple(mats))
    return out


def symbolic_tokens(d: int, t: int) -> Any:
    """A ``d × t`` sympy matrix of independent symbols ``x_rj`` (tokens as columns).

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights".
    """
    import sympy

    w, _ = check_architecture((d, t), (1,))
    return sympy.Matrix(w[0], w[1], lambda r, j: sympy.Symbol(f"x_{r}{j}"))


def _field(*matrices: Any) -> Any:
    """The field of rational functions over QQ in every symbol of ``matrices``."""
    import sympy
    from sympy import QQ

    syms: set = set()
    for m in matrices:
        syms |= m.free_symbols
    ordered = sorted(syms, key=str) or [sympy.Symbol("_unused")]
    return QQ.frac_field(*ordered)


def _domain_forward(X: Any, layers: Sequence[Layer], K: Any) -> Any:
    from sympy.polys.matrices import DomainMatrix

    def conv(m: Any) -> Any:
        return DomainMatrix.from_Matrix(m).convert_to(K)

    Y = conv(X)
    for Q, Kk, V in layers:
        Q, Kk, V = conv(Q), conv(Kk), conv(V)
        Y = (V * Y) * ((Kk * Y).transpose() * (Q * Y))
    return Y


def _check_symbolic_pair(X: Any, layers: Sequence[Layer]) -> list[Layer]:
    mats, symbolic = _layers(layers)
    if not symbolic or not _is_sympy_matrix(X):
        raise TypeError("symbolic evaluation needs sympy matrices for X and every weight")
    if X.shape[0] != mats[0][0].shape[1]:
        raise ValueError(f"X has {X.shape[0]} rows, layer 1 expects {mats[0][0].shape[1]}")
    return mats


def symbolic_deep_lightning(X: Any, layers: Sequence[Layer]) -> Any:
    """The deep lightning network evaluated exactly on sympy matrices.

    The products are computed in the field of rational functions over the rationals in all the
    symbols involved (sympy's ``DomainMatrix``), which is much faster than expression trees.

    Parameters
    ----------
    X : sympy.Matrix, shape=[d_0, t]
        Tokens (symbols or rationals).
    layers : sequence of (sympy.Matrix, sympy.Matrix, sympy.Matrix)

    Returns
    -------
    sympy.Matrix, shape=[d_l, t]
        ``φ_l(… φ_1(X))`` with ``φ_i(Y) = V_i Y (Yᵀ K_iᵀ Q_i Y)``, in canonical (expanded,
        cancelled) form.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights".
    """
    mats = _check_symbolic_pair(X, layers)
    K = _field(X, *(m for layer in mats for m in layer))
    return _domain_forward(X, mats, K).to_Matrix()


def symbolic_difference(X: Any, layers: Sequence[Layer], other: Sequence[Layer]) -> Any:
    """Exact difference of two deep lightning networks on the same symbolic input.

    Parameters
    ----------
    X : sympy.Matrix, shape=[d_0, t]
        Tokens (symbols or rationals).
    layers, other : sequence of (sympy.Matrix, sympy.Matrix, sympy.Matrix)
        Two networks with the same ``d_0`` and ``d_l`` (typically ``other`` is ``layers`` moved
        by a symmetry with symbolic group element).

    Returns
    -------
    sympy.Matrix, shape=[d_l, t]
        ``φ_other(X) - φ_layers(X)`` as rational functions in canonical form: the zero matrix
        exactly when the two networks agree identically in all symbols.

    Notes
    -----
    Explained in the chapter "Deep symmetries and virtual weights".
    """
    mats = _check_symbolic_pair(X, layers)
    mats2 = _check_symbolic_pair(X, other)
    K = _field(X, *(m for layer in mats + mats2 for m in layer))
    diff = _domain_forward(X, mats2, K) - _domain_forward(X, mats, K)
    return diff.to_Matrix()

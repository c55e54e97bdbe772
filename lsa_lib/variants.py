"""Polynomial variants of lightning attention (chapter "Beyond the paper").

The paper studies one-head lightning layers without skip connections [HMK25]. This module
implements four polynomial variants that the book investigates on its own (none of the
results about them are the paper's):

* (a) **residual** layers ``X ↦ X + V X Xᵀ Kᵀ Q X`` (``V`` square), stacked;
* (b) **H heads summed**, ``X ↦ Σ_h V_h X Xᵀ K_hᵀ Q_h X``, each head with its own
  ``(Q_h, K_h, V_h)`` and no output projection (an output projection ``W_O`` would only
  multiply each ``V_h`` on the left, so it adds parameters but no functions);
* (c) **positional transport**: scores ``s_ij = (K x_i)ᵀ R^{j-i} (Q x_j)`` for a fixed invertible
  ``R`` (tokens numbered ``0, …, t-1``); an orthogonal ``R`` gives rotary position encoding,
  the "discrete connection" of the Riemannian-attention seed with constant transport;
  or **learned transport** ``s_ij = (K x_i)ᵀ T_{j-i} (Q x_j)`` with one learned ``a × a`` map
  per offset, the seed's learned discrete connection;
* (d) a **content-dependent metric**: scores ``m(x_i) m(x_j) (K x_i)ᵀ (Q x_j)`` with the linear
  ``m(x) = μᵀ x``.

For each variant there is a forward pass for users (validated inputs, numpy or torch), the
actions of its symmetries, the dimension its symmetries predict, and a
:class:`~lsa_lib.rank.Parametrization` for the rank engine whose forward uses only the
engine's operations (``@``, ``.mT``, ``+``, ``*`` with integer constants), so the exact
engine modulo a prime applies, together with the tangent vectors of the derived symmetries.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from fractions import Fraction
from math import lcm
from typing import Any

import numpy as np

from ._core import _check_size, _is_torch, as_array, check_layer
from .lightning import _lightning

__all__ = [
    "residual_attention",
    "multihead_attention",
    "transported_attention",
    "transport_scores",
    "learned_transport_attention",
    "metric_attention",
    "rational_rotation",
    "commutant_basis",
    "scale_head",
    "change_head_basis",
    "permute_heads",
    "mix_heads",
    "exchange_values",
    "change_transport_basis",
    "scale_metric",
    "attention_fiber_dimension",
    "cubic_map_dimension",
    "residual_symmetry_dimension",
    "multihead_symmetry_dimension",
    "multihead_predicted_dimension",
    "transport_symmetry_dimension",
    "metric_symmetry_dimension",
    "residual_parametrization",
    "multihead_parametrization",
    "transport_parametrization",
    "metric_parametrization",
    "learned_transport_parametrization",
    "learned_transport_predicted_dimension",
]

Triple = tuple[Any, Any, Any]


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------


def _torch_like(*arrays: Any) -> Any:
    return next((a for a in arrays if _is_torch(a)), None)


def _check_triples(triples: Any, what: str, like: Any = None) -> list[Triple]:
    if isinstance(triples, tuple) and len(triples) == 3 and hasattr(triples[0], "shape"):
        raise TypeError(f"{what} must be a list of (Q, K, V) triples; wrap one as [(Q, K, V)]")
    if isinstance(triples, (str, bytes)) or not isinstance(triples, Sequence) or not triples:
        raise ValueError(f"{what} must be a non-empty list of (Q, K, V) triples")
    out = []
    for i, tr in enumerate(triples):
        if not isinstance(tr, (tuple, list)) or len(tr) != 3:
            raise TypeError(f"{what}[{i}] must be a (Q, K, V) triple")
        out.append(check_layer(*tr, index=i, like=like))
    return out


def _check_heads(heads: Any, like: Any = None) -> list[Triple]:
    checked = _check_triples(heads, "heads", like)
    a, d = checked[0][0].shape
    d_out = checked[0][2].shape[0]
    for h, (Q, _, V) in enumerate(checked):
        if tuple(Q.shape) != (a, d) or V.shape[0] != d_out:
            raise ValueError(
                f"all heads must have Q, K of shape (a, d) = {(a, d)} and V of shape "
                f"(d_out, d) = {(d_out, d)}; head {h} has Q {tuple(Q.shape)}, V {tuple(V.shape)}"
            )
    return checked


def _flat_like(triples: Any) -> Any:
    if isinstance(triples, Sequence) and not isinstance(triples, (str, bytes)):
        return _torch_like(*(m for tr in triples if isinstance(tr, (tuple, list)) for m in tr))
    return None


def _check_X(X: Any, like: Any, d: int | None = None) -> Any:
    X = as_array(X, "X", min_ndim=2, like=like)
    if d is not None and X.shape[-2] != d:
        raise ValueError(f"X must have shape (..., d, t) with d = {d}, got {tuple(X.shape)}")
    return X


def _square(M: Any, name: str, n: int | None = None) -> Any:
    if len(M.shape) != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {tuple(M.shape)}")
    if n is not None and M.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n}, {n}), got {tuple(M.shape)}")
    return M


def _inv(M: Any, name: str) -> Any:
    if _is_torch(M):
        import torch

        cond = float(torch.linalg.cond(M))
        if not np.isfinite(cond) or cond > 1e12:
            raise ValueError(f"{name} must be invertible (condition number {cond:.3g})")
        return torch.linalg.inv(M)
    cond = float(np.linalg.cond(M))
    if not np.isfinite(cond) or cond > 1e12:
        raise ValueError(f"{name} must be invertible (condition number {cond:.3g})")
    return np.linalg.inv(M)


# --------------------------------------------------------------------------------------------
# forward passes
# --------------------------------------------------------------------------------------------


def residual_attention(X: Any, layers: Sequence[Triple]) -> Any:
    """A stack of residual lightning layers ``X ↦ X + V X Xᵀ Kᵀ Q X``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns.
    layers : sequence of (Q, K, V)
        Layer ``i`` has ``Q_i, K_i`` of shape ``(a_i, d)`` and a square ``V_i`` of shape
        ``(d, d)`` (the skip connection needs ``d_out = d``).

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d, t]

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _torch_like(X, _flat_like(layers))
    checked = _check_triples(layers, "layers", like)
    X = _check_X(X, like, checked[0][0].shape[1])
    d = X.shape[-2]
    for i, (Q, _, V) in enumerate(checked):
        if Q.shape[1] != d or tuple(V.shape) != (d, d):
            raise ValueError(
                f"residual layer {i} needs Q, K of shape (a, {d}) and V of shape ({d}, {d}), "
                f"got Q {tuple(Q.shape)} and V {tuple(V.shape)}"
            )
    for Q, K, V in checked:
        X = X + _lightning(X, Q, K, V)
    return X


def multihead_attention(X: Any, heads: Sequence[Triple]) -> Any:
    """The sum of ``H`` lightning heads ``Σ_h V_h X Xᵀ K_hᵀ Q_h X`` (no output projection).

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns.
    heads : sequence of (Q, K, V)
        Every head has ``Q_h, K_h`` of shape ``(a, d)`` and ``V_h`` of shape ``(d_out, d)``.

    Returns
    -------
    numpy.ndarray or torch.Tensor, shape=[..., d_out, t]

    Notes
    -----
    An output projection ``W_O`` applied to the concatenated heads equals this sum with
    ``V_h`` replaced by ``W_O^{(h)} V_h``, so it is left out. Explained in the chapter
    "Beyond the paper".
    """
    like = _torch_like(X, _flat_like(heads))
    checked = _check_heads(heads, like)
    X = _check_X(X, like, checked[0][0].shape[1])
    out = _lightning(X, *checked[0])
    for tr in checked[1:]:
        out = out + _lightning(X, *tr)
    return out


def _powers(R: Any, t: int) -> tuple[Any, Any]:
    """``(R^j)_{j<t}`` and ``((R^{-i})ᵀ)_{i<t}`` stacked along a first axis."""
    Rinv_T = _inv(R, "R").mT if _is_torch(R) else _inv(R, "R").T
    pos, neg = [R * 0 + _eye_like(R)], [R * 0 + _eye_like(R)]
    for _ in range(1, t):
        pos.append(pos[-1] @ R)
        neg.append(neg[-1] @ Rinv_T)
    if _is_torch(R):
        import torch

        return torch.stack(pos), torch.stack(neg)
    return np.stack(pos), np.stack(neg)


def _eye_like(R: Any) -> Any:
    if _is_torch(R):
        import torch

        return torch.eye(R.shape[0], dtype=R.dtype)
    return np.eye(R.shape[0])


def _transport_columns(P: Any, Y: Any) -> Any:
    """Column ``j`` of ``Y`` (shape ``(..., a, t)``) multiplied by ``P[j]``."""
    if _is_torch(Y):
        import torch

        return torch.einsum("jab,...bj->...aj", P, Y)
    return np.einsum("jab,...bj->...aj", P, Y)


def _check_transport(X: Any, Q: Any, K: Any, R: Any, V: Any = None) -> tuple[Any, ...]:
    like = _torch_like(X, Q, K, R, V)
    if V is None:
        Q, K, _ = check_layer(Q, K, np.zeros((1, np.shape(Q)[-1])), like=like)
    else:
        Q, K, V = check_layer(Q, K, V, like=like)
    X = _check_X(X, like, Q.shape[1])
    R = _square(as_array(R, "R", like=like), "R", Q.shape[0])
    return X, Q, K, V, R


def transport_scores(X: Any, Q: Any, K: Any, R: Any) -> Any:
    """The transported scores ``s_ij = (K x_i)ᵀ R^{j-i} (Q x_j)``, tokens numbered from 0.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns.
    Q, K : array-like, shape=[a, d]
        Query and key matrices.
    R : array-like, shape=[a, a]
        An invertible transport (a rotation gives rotary position encoding).

    Returns
    -------
    array, shape=[..., t, t]
        Entry ``(i, j)``: key ``i`` against query ``j``. Computed as
        ``((R^{-i})ᵀ K x_i)ᵀ (R^j Q x_j)``, since ``R^{j-i} = R^{-i} R^j``.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    X, Q, K, _, R = _check_transport(X, Q, K, R)
    pos, neg = _powers(R, X.shape[-1])
    return _transport_columns(neg, K @ X).mT @ _transport_columns(pos, Q @ X)


def transported_attention(X: Any, Q: Any, K: Any, V: Any, R: Any) -> Any:
    """Lightning attention with positional transport: column ``j`` is ``Σ_i s_ij V x_i``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns, in sentence order (token ``i`` sits at position ``i``).
    Q, K : array-like, shape=[a, d]
        Query and key matrices.
    V : array-like, shape=[d_out, d]
        Value matrix.
    R : array-like, shape=[a, a]
        An invertible transport; ``s_ij = (K x_i)ᵀ R^{j-i} (Q x_j)``.

    Returns
    -------
    array, shape=[..., d_out, t]
        Costs time linear in ``t``: each key is moved by ``(R^{-i})ᵀ`` and each query by
        ``R^j`` before the usual lightning contraction.

    Notes
    -----
    ``R = I`` gives plain lightning attention. Explained in the chapter "Beyond the paper".
    """
    X, Q, K, V, R = _check_transport(X, Q, K, R, V)
    pos, neg = _powers(R, X.shape[-1])
    Kt = _transport_columns(neg, K @ X)
    Qt = _transport_columns(pos, Q @ X)
    return ((V @ X) @ Kt.mT) @ Qt


def learned_transport_attention(X: Any, Q: Any, K: Any, V: Any, T: Any) -> Any:
    """Lightning attention with one learned transport per offset: ``s_ij = (K x_i)ᵀ T_{j-i} (Q x_j)``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns, in sentence order.
    Q, K : array-like, shape=[a, d]
        Query and key matrices.
    V : array-like, shape=[d_out, d]
        Value matrix.
    T : array-like, shape=[2t - 1, a, a]
        ``T[k + t - 1]`` transports the offset ``k = j - i`` (``-(t-1) ≤ k ≤ t-1``).

    Returns
    -------
    array, shape=[..., d_out, t]
        Column ``j`` is ``Σ_i s_ij V x_i``. Costs time quadratic in ``t`` (one score matrix per
        offset).

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _torch_like(X, Q, K, V, T)
    Q, K, V = check_layer(Q, K, V, like=like)
    X = _check_X(X, like, Q.shape[1])
    t, a = X.shape[-1], Q.shape[0]
    T = as_array(T, "T", min_ndim=3, like=like)
    if tuple(T.shape) != (2 * t - 1, a, a):
        raise ValueError(
            f"T must have shape (2t - 1, a, a) = {(2 * t - 1, a, a)} for t = {t} tokens, "
            f"got {tuple(T.shape)}"
        )
    KX, QX = K @ X, Q @ X
    offsets = np.subtract.outer(np.arange(t), np.arange(t)).T  # [i, j] -> j - i
    S = 0
    for k in range(-(t - 1), t):
        mask = _const((offsets == k).astype(np.int64), X)
        S = S + mask * (KX.mT @ T[k + t - 1] @ QX)
    return (V @ X) @ S


def metric_attention(X: Any, Q: Any, K: Any, V: Any, mu: Any) -> Any:
    """Lightning attention with a linear content metric: scores ``m(x_i) m(x_j) (K x_i)ᵀ(Q x_j)``.

    Parameters
    ----------
    X : array-like or torch.Tensor, shape=[..., d, t]
        Tokens as columns.
    Q, K : array-like, shape=[a, d]
        Query and key matrices.
    V : array-like, shape=[d_out, d]
        Value matrix.
    mu : array-like, shape=[d] or [1, d]
        The metric's weight: ``m(x) = μᵀ x``.

    Returns
    -------
    array, shape=[..., d_out, t]
        ``(V X D)(K X)ᵀ(Q X D)`` with ``D = diag(μᵀ X)``; a polynomial of degree 5 in ``X``.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _torch_like(X, Q, K, V, mu)
    Q, K, V = check_layer(Q, K, V, like=like)
    X = _check_X(X, like, Q.shape[1])
    mu = as_array(mu, "mu", min_ndim=1, like=like)
    if tuple(mu.shape) not in ((Q.shape[1],), (1, Q.shape[1])):
        raise ValueError(
            f"mu must have shape ({Q.shape[1]},) or (1, {Q.shape[1]}), got {tuple(mu.shape)}"
        )
    XD = X * (mu.reshape(1, -1) @ X)
    return ((V @ XD) @ (K @ X).mT) @ (Q @ XD)


# --------------------------------------------------------------------------------------------
# exact transports and their commutants
# --------------------------------------------------------------------------------------------


def rational_rotation(
    triples: Sequence[tuple[int, int, int]], a: int | None = None
) -> tuple[np.ndarray, int]:
    """A block rotation with rational entries, as an integer matrix and a common scale.

    Parameters
    ----------
    triples : sequence of (p, q, s)
        Pythagorean triples ``p² + q² = s²``; each gives the 2×2 block
        ``[[p, -q], [q, p]] / s``, the rotation by ``atan2(q, p)``.
    a : int, optional
        The size; if larger than ``2 len(triples)``, the remaining axes are left fixed.

    Returns
    -------
    R_int : numpy.ndarray of int, shape=[a, a]
        ``s · R`` with ``s`` the least common multiple of the hypotenuses.
    s : int
        The scale: ``R = R_int / s`` is orthogonal, ``R_int R_intᵀ = s² I``.

    Notes
    -----
    Rotations with rational entries keep every computation exact (over the integers after
    clearing the denominators ``s^i``). Explained in the chapter "Beyond the paper".
    """
    if isinstance(triples, (str, bytes)) or not isinstance(triples, Sequence) or not triples:
        raise ValueError("triples must be a non-empty list of Pythagorean triples (p, q, s)")
    clean = []
    for tr in triples:
        if not isinstance(tr, (tuple, list)) or len(tr) != 3:
            raise ValueError(f"each triple must be (p, q, s), got {tr!r}")
        p, q, s = tr
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in tr):
            raise ValueError(f"triple entries must be integers, got {tr!r}")
        if s <= 0 or p * p + q * q != s * s:
            raise ValueError(f"({p}, {q}, {s}) is not a Pythagorean triple p² + q² = s², s > 0")
        clean.append((int(p), int(q), int(s)))
    size = 2 * len(clean)
    a = size if a is None else _check_size(a, "a")
    if a < size:
        raise ValueError(f"a = {a} is too small for {len(clean)} rotation blocks (need {size})")
    s = lcm(*(tr[2] for tr in clean))
    R = np.zeros((a, a), dtype=np.int64)
    for b, (p, q, h) in enumerate(clean):
        f = s // h
        R[2 * b : 2 * b + 2, 2 * b : 2 * b + 2] = [[p * f, -q * f], [q * f, p * f]]
    for k in range(size, a):
        R[k, k] = s
    return R, s


def _as_int_matrix(R: Any, name: str = "R") -> np.ndarray:
    arr = np.asarray(R.detach().cpu().numpy() if hasattr(R, "detach") else R)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must be a numeric matrix, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {arr.shape}")
    if not np.isfinite(arr).all() or not np.array_equal(arr, np.round(arr)):
        raise ValueError(f"{name} must have integer entries (scale a rational matrix first)")
    return np.round(arr).astype(np.int64)


def commutant_basis(R: Any) -> list[np.ndarray]:
    """An integer basis of the commutant ``{E : E R = R E}`` of an integer matrix ``R``.

    Parameters
    ----------
    R : array-like of int, shape=[a, a]
        An integer matrix (for a rational ``R`` pass ``s R``: the commutant is the same).

    Returns
    -------
    list of numpy.ndarray of int, shape=[a, a]
        A basis of the Lie algebra of the centralizer of ``R`` in ``GL_a``; its length is the
        centralizer's dimension (``a`` for distinct eigenvalues, ``a²`` for ``R = c I``).

    Notes
    -----
    Computed exactly (rational null space, denominators cleared). Explained in the chapter
    "Beyond the paper".
    """
    import sympy

    Ri = _as_int_matrix(R)
    a = Ri.shape[0]
    # vec(E R - R E) = (Rᵀ ⊗ I - I ⊗ R) vec(E) for column-major vec; use row-major directly
    rows = []
    for i in range(a):
        for j in range(a):
            row = [0] * (a * a)
            for k in range(a):
                row[i * a + k] += int(Ri[k, j])  # (E R)_ij = Σ_k E_ik R_kj
                row[k * a + j] -= int(Ri[i, k])  # (R E)_ij = Σ_k R_ik E_kj
            rows.append(row)
    basis = []
    for v in sympy.Matrix(rows).nullspace():
        den = lcm(*(Fraction(str(x)).denominator for x in v))
        ints = [int(Fraction(str(x)) * den) for x in v]
        basis.append(np.array(ints, dtype=np.int64).reshape(a, a))
    return basis


# --------------------------------------------------------------------------------------------
# symmetry actions
# --------------------------------------------------------------------------------------------


def _index(h: Any, n: int, what: str) -> int:
    if isinstance(h, bool) or not isinstance(h, numbers.Integral) or not 0 <= h < n:
        raise ValueError(f"{what} must be an integer in [0, {n}), got {h!r}")
    return int(h)


def _nonzero(c: Any, name: str) -> float:
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not np.isfinite(c) or c == 0:
        raise ValueError(f"{name} must be a finite non-zero number, got {c!r}")
    return float(c)


def scale_head(triples: Sequence[Triple], h: int, c: float) -> list[Triple]:
    """Scaling of one head (or one residual layer): ``(Q_h, V_h) ↦ (c Q_h, c⁻¹ V_h)``.

    Parameters
    ----------
    triples : sequence of (Q, K, V)
        The heads of a multi-head layer, or the layers of a residual network.
    h : int
        Which triple, 0-based.
    c : float
        A non-zero factor.

    Returns
    -------
    list of (Q, K, V)
        New triples; ``A_h = K_hᵀ Q_h`` becomes ``c A_h`` and ``V_h`` becomes ``V_h / c``, so
        ``V_h X Xᵀ A_h X`` is unchanged. Explained in the chapter "Beyond the paper".
    """
    checked = _check_triples(triples, "triples", _flat_like(triples))
    h = _index(h, len(checked), "h")
    c = _nonzero(c, "c")
    out = list(checked)
    Q, K, V = out[h]
    out[h] = (c * Q, K, V / c)
    return out


def change_head_basis(triples: Sequence[Triple], h: int, G: Any) -> list[Triple]:
    """Change of attention basis in one head: ``(Q_h, K_h) ↦ (G Q_h, G⁻ᵀ K_h)``.

    Parameters
    ----------
    triples : sequence of (Q, K, V)
        Heads, or residual layers.
    h : int
        Which triple, 0-based.
    G : array-like, shape=[a_h, a_h]
        Invertible.

    Returns
    -------
    list of (Q, K, V)
        ``K_hᵀ Q_h`` is unchanged. Explained in the chapter "Beyond the paper".
    """
    like = _flat_like(triples)
    checked = _check_triples(triples, "triples", like)
    h = _index(h, len(checked), "h")
    Q, K, V = checked[h]
    G = _square(as_array(G, "G", like=like), "G", Q.shape[0])
    Gi = _inv(G, "G")
    out = list(checked)
    out[h] = (G @ Q, Gi.mT @ K if _is_torch(Gi) else Gi.T @ K, V)
    return out


def permute_heads(heads: Sequence[Triple], perm: Sequence[int]) -> list[Triple]:
    """Reorder the heads: head ``h`` of the result is head ``perm[h]`` of the input.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
    perm : sequence of int
        A permutation of ``0, …, H-1``.

    Returns
    -------
    list of (Q, K, V)
        The sum over heads is unchanged (a discrete symmetry: it has no tangent vector).
        Explained in the chapter "Beyond the paper".
    """
    checked = _check_heads(heads, _flat_like(heads))
    if isinstance(perm, (str, bytes)) or sorted(int(p) for p in perm) != list(range(len(checked))):
        raise ValueError(f"perm must be a permutation of 0..{len(checked) - 1}, got {perm!r}")
    return [checked[int(p)] for p in perm]


def mix_heads(heads: Sequence[Triple], G: Any) -> list[Triple]:
    """Mix heads whose attention matrices are unconstrained (``a ≥ d``) by ``G ∈ GL_H``.

    ``V'_h = Σ_k G_hk V_k`` and ``A'_h = Σ_l (G⁻¹)_lh A_l``, so ``Σ_h V'_h ⊗ A'_h`` and hence
    the layer are unchanged. ``A'_h`` is realized as ``Q'_h = [I_d; 0]``, ``K'_h = [A'_hᵀ; 0]``.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
        ``H`` heads with ``a ≥ d``.
    G : array-like, shape=[H, H]
        Invertible.

    Returns
    -------
    list of (Q, K, V)

    Raises
    ------
    ValueError
        If ``a < d``: then ``A'_h`` would need rank ``> a`` in general (see the chapter).

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _flat_like(heads)
    checked = _check_heads(heads, like)
    a, d = checked[0][0].shape
    H = len(checked)
    if a < d:
        raise ValueError(
            f"mixing heads needs a ≥ d (attention matrices of any rank); got a={a}, d={d}"
        )
    G = _square(as_array(G, "G", like=like), "G", H)
    Gi = _inv(G, "G")
    As = [K.mT @ Q if _is_torch(K) else K.T @ Q for Q, K, _ in checked]
    out = []
    for h in range(H):
        Vn = sum(G[h, k] * checked[k][2] for k in range(H))
        An = sum(Gi[k, h] * As[k] for k in range(H))
        if _is_torch(An):
            import torch

            Qn = torch.zeros((a, d), dtype=An.dtype)
            Qn[:d] = torch.eye(d, dtype=An.dtype)
            Kn = torch.zeros((a, d), dtype=An.dtype)
            Kn[:d] = An.mT
        else:
            Qn = np.zeros((a, d))
            Qn[:d] = np.eye(d)
            Kn = np.zeros((a, d))
            Kn[:d] = An.T
        out.append((Qn, Kn, Vn))
    return out


def exchange_values(heads: Sequence[Triple], h: int, l: int, u: Any) -> list[Triple]:
    """For scalar outputs (``d_out = 1``, ``a ≥ d``): ``A_h ↦ A_h + w_l uᵀ``, ``A_l ↦ A_l - w_h uᵀ``.

    With ``V_h = w_hᵀ`` the layer is ``Σ_i Σ_h (w_h·x_i) x_iᵀ A_h x_j``; the change adds
    ``(w_h·x_i)(w_l·x_i)(u·x_j) - (w_l·x_i)(w_h·x_i)(u·x_j) = 0``. Not a group action of the
    kind found for ``d_out ≥ 2``: it exists because the values are numbers, which commute.
    The new attention matrices are realized as ``Q' = [I_d; 0]``, ``K' = [A'ᵀ; 0]``.

    Parameters
    ----------
    heads : sequence of (Q, K, V)
        Heads with ``V_h`` of shape ``(1, d)`` and ``a ≥ d``.
    h, l : int
        Two different heads, 0-based.
    u : array-like, shape=[d]
        Any vector.

    Returns
    -------
    list of (Q, K, V)

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _flat_like(heads)
    checked = _check_heads(heads, like)
    a, d = checked[0][0].shape
    if checked[0][2].shape[0] != 1 or a < d:
        raise ValueError(
            f"exchange_values needs d_out = 1 and a ≥ d, got d_out={checked[0][2].shape[0]}, "
            f"a={a}, d={d}"
        )
    h = _index(h, len(checked), "h")
    l = _index(l, len(checked), "l")
    if h == l:
        raise ValueError("h and l must be different heads")
    u = as_array(u, "u", min_ndim=1, like=like).reshape(1, -1)
    if u.shape[1] != d:
        raise ValueError(f"u must have {d} entries, got {u.shape[1]}")
    out = list(checked)
    for k, B in ((h, checked[l][2].T @ u), (l, -(checked[h][2].T @ u))):
        Q, K, V = checked[k]
        A = (K.mT if _is_torch(K) else K.T) @ Q + B
        Qn, Kn = Q * 0, K * 0
        Qn[:d] = _eye_like(A)
        Kn[:d] = A.mT if _is_torch(A) else A.T
        out[k] = (Qn, Kn, V)
    return out


def change_transport_basis(Q: Any, K: Any, G: Any, R: Any) -> tuple[Any, Any]:
    """The centralizer of ``R`` acting on a transported head: ``(Q, K) ↦ (G Q, G⁻ᵀ K)``.

    Parameters
    ----------
    Q, K : array-like, shape=[a, d]
    G : array-like, shape=[a, a]
        Invertible and commuting with ``R``.
    R : array-like, shape=[a, a]
        The transport.

    Returns
    -------
    (Q', K')
        Every transported score ``(K x_i)ᵀ R^k (Q x_j)`` is unchanged, because
        ``G⁻¹ R^k G = R^k``.

    Raises
    ------
    ValueError
        If ``G`` does not commute with ``R`` (relative error above 1e-10): then the scores
        change, and the map is not a symmetry.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _torch_like(Q, K, G, R)
    Q, K, _ = check_layer(Q, K, np.zeros((1, np.shape(Q)[-1])), like=like)
    a = Q.shape[0]
    G = _square(as_array(G, "G", like=like), "G", a)
    R = _square(as_array(R, "R", like=like), "R", a)
    comm = G @ R - R @ G
    scale = float(abs(G).max() * abs(R).max()) or 1.0
    if float(abs(comm).max()) > 1e-10 * scale:
        raise ValueError("G must commute with R (G R = R G) to preserve the transported scores")
    Gi = _inv(G, "G")
    return G @ Q, (Gi.mT if _is_torch(Gi) else Gi.T) @ K


def scale_metric(Q: Any, mu: Any, s: float) -> tuple[Any, Any]:
    """The metric's scaling: ``(Q, μ) ↦ (s⁻² Q, s μ)`` leaves :func:`metric_attention` unchanged.

    Parameters
    ----------
    Q : array-like, shape=[a, d]
    mu : array-like, shape=[d] or [1, d]
    s : float
        Non-zero (``s = -1`` is the sign symmetry ``μ ↦ -μ``).

    Returns
    -------
    (Q', mu')

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    like = _torch_like(Q, mu)
    Q = as_array(Q, "Q", like=like)
    mu = as_array(mu, "mu", min_ndim=1, like=like)
    s = _nonzero(s, "s")
    return Q / (s * s), s * mu


# --------------------------------------------------------------------------------------------
# dimension counts
# --------------------------------------------------------------------------------------------


def attention_fiber_dimension(a: int, d: int) -> int:
    """Dimension of the fibers of ``(Q, K) ↦ Kᵀ Q`` for ``Q, K`` of shape ``(a, d)``.

    ``2ad − r(2d − r)`` with ``r = min(a, d)``: ``a²`` (the group ``GL_a``) when ``a ≤ d``.
    Explained in the chapter "Beyond the paper".
    """
    a, d = _check_size(a, "a"), _check_size(d, "d")
    r = min(a, d)
    return 2 * a * d - r * (2 * d - r)


def cubic_map_dimension(d: int, d_out: int) -> int:
    """Dimension ``d_out · d · d(d+1)/2`` of the maps ``X ↦ [Σ_i T(x_i, x_i, x_j)]_j``.

    Every (multi-head) lightning layer is such a map, with ``T`` symmetric in its first two
    slots; for ``t ≥ 2`` different ``T`` give different maps. An upper bound for the
    dimension of any sum of heads. Explained in the chapter "Beyond the paper".
    """
    d, d_out = _check_size(d, "d"), _check_size(d_out, "d_out")
    return d_out * d * d * (d + 1) // 2


def residual_symmetry_dimension(d: int, attn: Sequence[int]) -> int:
    """``Σ_i (fiber(a_i, d) + 1)``: per-layer scaling and change of attention basis survive.

    Explained in the chapter "Beyond the paper".
    """
    d = _check_size(d, "d")
    return sum(attention_fiber_dimension(a, d) + 1 for a in attn)


def multihead_symmetry_dimension(d: int, a: int, H: int, mixing: bool = True) -> int:
    """Dimension of the continuous symmetries of ``H`` summed heads.

    Per head: scaling and the fibers of ``(Q_h, K_h) ↦ A_h``. With ``mixing=True`` and
    ``a ≥ d`` also ``GL_H`` mixing (``H² − H`` more directions; its diagonal is the scaling).
    Head permutations are discrete and add nothing. Explained in the chapter "Beyond the paper".
    """
    d, a, H = _check_size(d, "d"), _check_size(a, "a"), _check_size(H, "H")
    n = H * (attention_fiber_dimension(a, d) + 1)
    if mixing and a >= d:
        n += H * H - H
    return n


def multihead_predicted_dimension(d: int, d_out: int, a: int, H: int) -> int:
    """The book's conjectured dimension of ``H`` summed heads (checked on a grid, not proved).

    ``min(cubic_map_dimension(d, d_out), P − H·fiber(a, d) − H·max(1, H − (d − r)²))`` with
    ``r = min(a, d)``: besides the per-head symmetries, each ``A_h`` can move inside the span
    of all ``H`` attention matrices as long as it keeps rank ``≤ r``, a set of dimension
    ``H − (d − r)²`` (expected codimension of the rank condition). Not for ``d_out = 1`` with
    ``H ≥ 2`` (raises ``ValueError``): scalar values allow the further moves of
    :func:`exchange_values`. Explained in the chapter "Beyond the paper".
    """
    d, d_out = _check_size(d, "d"), _check_size(d_out, "d_out")
    a, H = _check_size(a, "a"), _check_size(H, "H")
    if d_out == 1 and H > 1:
        raise ValueError(
            "no prediction for d_out = 1 with several heads: scalar values allow further moves "
            "(see exchange_values); use the certified bounds instead"
        )
    r = min(a, d)
    P = H * (2 * a * d + d_out * d)
    return min(
        cubic_map_dimension(d, d_out),
        P - H * attention_fiber_dimension(a, d) - H * max(1, H - (d - r) ** 2),
    )


def transport_symmetry_dimension(R: Any) -> int:
    """``dim C(R) + 1``: the centralizer ``C(R)`` of the transport replaces ``GL_a``; scaling stays.

    Parameters
    ----------
    R : array-like of int, shape=[a, a]
        The transport (scaled to integers).

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    return len(commutant_basis(R)) + 1


def metric_symmetry_dimension(a: int, d: int) -> int:
    """``fiber(a, d) + 2``: ``GL_a``, the value scaling and the metric scaling ``(Q, μ) ↦ (s⁻²Q, sμ)``.

    Explained in the chapter "Beyond the paper".
    """
    return attention_fiber_dimension(a, d) + 2


# --------------------------------------------------------------------------------------------
# parametrizations for the rank engine
# --------------------------------------------------------------------------------------------
# The forwards below use only @, .mT, + and * (constants are integer matrices), so they run on
# torch float64 tensors under torch.func and on the exact modular dual numbers alike.


def _const(c: np.ndarray, like: Any) -> Any:
    """An integer constant in the backend of ``like`` (torch tensor, or a plain array)."""
    if _is_torch(like):
        import torch

        return torch.as_tensor(np.asarray(c, dtype=np.float64), dtype=like.dtype)
    return np.asarray(c, dtype=np.float64)


def _zeros_like(params: Sequence[Any]) -> list[Any]:
    return [np.zeros(np.shape(p), dtype=object) for p in params]


def _obj(M: Any) -> np.ndarray:
    """An exact copy (Python integers if integer-valued, else floats) for generator algebra."""
    arr = np.asarray(M.detach().cpu().numpy() if hasattr(M, "detach") else M)
    if np.issubdtype(arr.dtype, np.integer) or (
        arr.dtype != object and np.array_equal(arr, np.round(arr))
    ):
        return np.vectorize(int, otypes=[object])(np.round(arr)) if arr.size else arr.astype(object)
    return arr.astype(object)


def _det(M: np.ndarray) -> Any:
    """Determinant by cofactor expansion (exact on Python integers; small matrices only)."""
    n = M.shape[0]
    if n == 1:
        return M[0, 0]
    if n == 2:
        return M[0, 0] * M[1, 1] - M[0, 1] * M[1, 0]
    total = 0
    for j in range(n):
        minor = np.delete(np.delete(M, 0, axis=0), j, axis=1)
        total = total + (-1) ** j * M[0, j] * _det(minor)
    return total


def _adj(M: np.ndarray) -> np.ndarray:
    """The adjugate (``adj(M) M = det(M) I``), exact on Python integers."""
    n = M.shape[0]
    out = np.empty((n, n), dtype=object)
    if n == 1:
        out[0, 0] = 1
        return out
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(M, j, axis=0), i, axis=1)
            out[i, j] = (-1) ** (i + j) * _det(minor)
    return out


def _gl_directions(Q: np.ndarray, K: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Tangents ``(E Q, -Eᵀ K)`` of ``GL_a`` for the elementary matrices ``E = E_rs``."""
    a = Q.shape[0]
    out = []
    for r in range(a):
        for s in range(a):
            dQ = np.zeros(Q.shape, dtype=object)
            dK = np.zeros(K.shape, dtype=object)
            dQ[r] = Q[s]  # (E_rs Q) has row r equal to row s of Q
            dK[s] = -K[r]  # -(E_rs)ᵀ K = -E_sr K has row s equal to -row r of K
            out.append((dQ, dK))
    return out


def _triple_generators(params: Sequence[Any], n_triples: int) -> list[list[Any]]:
    """Per-triple scaling ``(Q, -V)`` and ``GL_a`` tangents, for ``[Q_1, K_1, V_1, Q_2, …]``."""
    P = [_obj(p) for p in params]
    gens = []
    for h in range(n_triples):
        Q, K, V = P[3 * h : 3 * h + 3]
        g = _zeros_like(P)
        g[3 * h], g[3 * h + 2] = Q.copy(), -V
        gens.append(g)
        for dQ, dK in _gl_directions(Q, K):
            g = _zeros_like(P)
            g[3 * h], g[3 * h + 1] = dQ, dK
            gens.append(g)
    return gens


def _check_t(t: Any) -> int:
    t = _check_size(t, "t")
    if t < 2:
        raise ValueError(f"t must be at least 2 (for t = 1 only sym(A) is seen), got {t}")
    return t


def residual_parametrization(d: int, attn: Sequence[int], t: int = 3) -> Any:
    """The residual network ``(id + φ_l) ∘ … ∘ (id + φ_1)`` of width ``d`` for the rank engine.

    Parameters
    ----------
    d : int
        The width (input = hidden = output).
    attn : sequence of int
        ``(a_1, …, a_l)``.
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q_1, K_1, V_1, Q_2, …``; generators: per-layer scaling and ``GL_{a_i}``
        (the pass-through ``GL_d`` between layers does not survive the skip connection).

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    from .rank import Parametrization

    d = _check_size(d, "d")
    t = _check_t(t)
    if isinstance(attn, (str, bytes)) or not isinstance(attn, Sequence) or not attn:
        raise ValueError(f"attn must be a non-empty sequence (a_1, ..., a_l), got {attn!r}")
    attn = tuple(_check_size(a, f"attn[{i}]") for i, a in enumerate(attn))
    shapes = tuple(s for a in attn for s in ((a, d), (a, d), (d, d)))
    l = len(attn)

    def forward(params: Sequence[Any], X: Any) -> Any:
        for i in range(l):
            X = X + _lightning(X, *params[3 * i : 3 * i + 3])
        return X

    return Parametrization(
        name=f"residual d={d} a={attn}",
        shapes=shapes,
        input_shape=(d, t),
        forward=forward,
        generators=lambda params: _triple_generators(params, l),
    )


def _mixing_generators(params: Sequence[Any], H: int, a: int, d: int) -> list[list[Any]]:
    """Head mixing for ``a ≥ d`` (pairs ``h ≠ l``) and rank-keeping moves for ``a = d - 1``."""
    P = [_obj(p) for p in params]
    Qs, Ks, Vs = P[0::3], P[1::3], P[2::3]
    gens = []
    if a >= d:
        for h in range(H):
            for l in range(H):
                if h == l:
                    continue
                M = Qs[l].T @ Qs[l]  # (d, d), invertible for generic Q_l with a ≥ d
                g = _zeros_like(P)
                g[3 * h + 2] = _det(M) * Vs[l]
                g[3 * l + 1] = -(Ks[h].T @ Qs[h] @ _adj(M) @ Qs[l].T).T
                gens.append(g)
    if a >= d and Vs[0].shape[0] == 1:
        # d_out = 1: the values are scalars, so (w_h·x)(w_l·x) is symmetric in h, l and
        # A_h ↦ A_h + w_l uᵀ, A_l ↦ A_l - w_h uᵀ keeps the sum (u = e_r)
        Ms = [Q.T @ Q for Q in Qs]
        dets = [_det(M) for M in Ms]
        adjs = [_adj(M) for M in Ms]
        for h in range(H):
            for l in range(h + 1, H):
                for r in range(d):
                    u = np.zeros((1, d), dtype=int).astype(object)
                    u[0, r] = 1
                    Bh = Vs[l].T @ u
                    Bl = -(Vs[h].T @ u)
                    g = _zeros_like(P)
                    g[3 * h + 1] = dets[l] * (Bh @ adjs[h] @ Qs[h].T).T
                    g[3 * l + 1] = dets[h] * (Bl @ adjs[l] @ Qs[l].T).T
                    gens.append(g)
    if a == d - 1 and H >= 3:
        As = [K.T @ Q for Q, K in zip(Qs, Ks)]
        for h in range(H):
            Q, K = Qs[h], Ks[h]
            adjA = _adj(As[h])
            GQ, GK = Q @ Q.T, K @ K.T
            dQQ, dKK = _det(GQ), _det(GK)
            others = [l for l in range(H) if l != h]
            tau = {l: np.trace(adjA @ As[l]) for l in others}
            for i, l in enumerate(others):
                for m in others[i + 1 :]:
                    B = tau[m] * As[l] - tau[l] * As[m]  # tangent to {det = 0} at A_h
                    g = _zeros_like(P)
                    # lift B to (δQ_h, δK_h) with δK_hᵀ Q_h + K_hᵀ δQ_h = dQQ·dKK·B
                    g[3 * h + 1] = dKK * (_adj(GQ).T @ Q @ B.T)
                    proj = dQQ * np.eye(d, dtype=int).astype(object) - Q.T @ _adj(GQ) @ Q
                    g[3 * h] = _adj(GK) @ K @ B @ proj
                    s = dQQ * dKK
                    g[3 * l + 2] = -(s * tau[m]) * Vs[h]
                    g[3 * m + 2] = (s * tau[l]) * Vs[h]
                    gens.append(g)
    return gens


def multihead_parametrization(
    d: int, d_out: int, a: int, H: int, t: int = 3, mixing: bool = True
) -> Any:
    """``H`` summed lightning heads (no output projection) for the rank engine.

    Parameters
    ----------
    d, d_out, a : int
        Input width, output width, attention dimension of every head.
    H : int
        The number of heads.
    t : int
        Tokens per input (at least 2).
    mixing : bool
        Include, besides per-head scaling and ``GL_a``, the head-mixing tangents: ``GL_H``
        mixing when ``a ≥ d``, the rank-keeping moves of one head's attention matrix
        inside the span of all of them when ``a = d - 1``, and for ``d_out = 1``, ``a ≥ d``
        the moves of :func:`exchange_values` (see the chapter).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q_1, K_1, V_1, …, Q_H, K_H, V_H``.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    from .rank import Parametrization

    d, d_out = _check_size(d, "d"), _check_size(d_out, "d_out")
    a, H, t = _check_size(a, "a"), _check_size(H, "H"), _check_t(t)
    if not isinstance(mixing, (bool, np.bool_)):
        raise TypeError(f"mixing must be True or False, got {mixing!r}")
    shapes = tuple(s for _ in range(H) for s in ((a, d), (a, d), (d_out, d)))

    def forward(params: Sequence[Any], X: Any) -> Any:
        out = _lightning(X, *params[0:3])
        for h in range(1, H):
            out = out + _lightning(X, *params[3 * h : 3 * h + 3])
        return out

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        gens = _triple_generators(params, H)
        if mixing:
            gens += _mixing_generators(params, H, a, d)
        return gens

    return Parametrization(
        name=f"{H} heads d={d} d'={d_out} a={a}",
        shapes=shapes,
        input_shape=(d, t),
        forward=forward,
        generators=generators,
    )


def transport_parametrization(d: int, d_out: int, R: Any, scale: int = 1, t: int = 3) -> Any:
    """Positional transport ``s_ij = (K x_i)ᵀ R^{j-i} (Q x_j)`` for the rank engine.

    Parameters
    ----------
    d, d_out : int
        Input and output widths.
    R : array-like of int, shape=[a, a]
        ``scale · R_true``; ``R_true = R / scale`` must be orthogonal (``R Rᵀ = scale² I``),
        e.g. from :func:`rational_rotation` or a signed permutation (``scale = 1``).
    scale : int
        The common denominator of ``R_true``.
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``Q, K, V``. The forward computes ``scale^{2(t-1)}`` times the layer (so that
        every constant is an integer): key ``i`` is multiplied by ``scale^{t-1-i} R^i``,
        query ``j`` by ``scale^{t-1-j} R^j``. A non-zero constant factor changes no rank.
        Generators: the commutant of ``R`` acting as ``(E Q, -Eᵀ K)``, and the scaling.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    from .rank import Parametrization

    Ri = _as_int_matrix(R)
    scale = _check_size(scale, "scale")
    d, d_out, t = _check_size(d, "d"), _check_size(d_out, "d_out"), _check_t(t)
    a = Ri.shape[0]
    if not np.array_equal(Ri @ Ri.T, scale * scale * np.eye(a, dtype=np.int64)):
        raise ValueError("R / scale must be orthogonal: R Rᵀ must equal scale² I")
    powers = [np.eye(a, dtype=object)]
    for _ in range(1, t):
        powers.append(powers[-1] @ Ri.astype(object))
    C = [np.asarray(scale ** (t - 1 - i) * powers[i], dtype=object) for i in range(t)]
    if max(abs(int(v)) for c in C for v in c.ravel()) >= 2**50:
        raise ValueError("R and t give constants too large for exact float64 arithmetic")
    E = [np.diag(np.eye(t, dtype=np.int64)[i]) for i in range(t)]
    basis = commutant_basis(Ri)

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V = params
        KX, QX = K @ X, Q @ X
        Kt = _const(C[0], X) @ KX @ _const(E[0], X)
        Qt = _const(C[0], X) @ QX @ _const(E[0], X)
        for i in range(1, t):
            Kt = Kt + _const(C[i], X) @ KX @ _const(E[i], X)
            Qt = Qt + _const(C[i], X) @ QX @ _const(E[i], X)
        return ((V @ X) @ Kt.mT) @ Qt

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        Q, K, V = (_obj(p) for p in params)
        gens = [[Q.copy(), np.zeros(K.shape, dtype=object), -V]]
        for B in basis:
            Bo = B.astype(object)
            gens.append([Bo @ Q, -(Bo.T @ K), np.zeros(V.shape, dtype=object)])
        return gens

    return Parametrization(
        name=f"transport d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d)),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
    )


def metric_parametrization(d: int, d_out: int, a: int, t: int = 3) -> Any:
    """The content metric ``m(x) = μᵀ x`` for the rank engine (blocks ``Q, K, V, μ``).

    Parameters
    ----------
    d, d_out, a : int
        Input width, output width, attention dimension.
    t : int
        Tokens per input (at least 2).

    Returns
    -------
    lsa_lib.rank.Parametrization
        ``μ`` is the block of shape ``(1, d)``. Generators: ``GL_a``, the scaling
        ``(Q, -V)`` and the metric scaling ``(-2Q, μ)``.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    from .rank import Parametrization

    d, d_out, a, t = (
        _check_size(d, "d"),
        _check_size(d_out, "d_out"),
        _check_size(a, "a"),
        _check_t(t),
    )

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V, mu = params
        XD = X * (mu @ X)
        return ((V @ XD) @ (K @ X).mT) @ (Q @ XD)

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        P = [_obj(p) for p in params]
        Q, K, V, mu = P
        gens = _triple_generators(P[:3], 1)
        gens = [g + [np.zeros(mu.shape, dtype=object)] for g in gens]
        gens.append(
            [-2 * Q, np.zeros(K.shape, dtype=object), np.zeros(V.shape, dtype=object), mu.copy()]
        )
        return gens

    return Parametrization(
        name=f"metric d={d} d'={d_out} a={a}",
        shapes=((a, d), (a, d), (d_out, d), (1, d)),
        input_shape=(d, t),
        forward=forward,
        generators=generators,
    )


def learned_transport_predicted_dimension(d: int, d_out: int, a: int, t: int = 3) -> int:
    """The book's predicted dimension of learned transport (``a ≤ d``, ``t ≥ 2``).

    ``P − 2a² − 1 − C(2a − d, 2)`` with ``P = 2ad + dd' + (2t − 1)a²``: the symmetries are
    ``GL_a × GL_a`` (independent bases for keys and queries, ``T_k ↦ H⁻ᵀ T_k G⁻¹``) and the
    value scaling; besides, the offset 0 occurs only for ``i = j``, so only the symmetric part
    of ``Kᵀ T_0 Q`` is seen, and the antisymmetric matrices of the form ``Kᵀ T_0 Q`` (supported
    on the ``(2a − d)``-dimensional intersection of the row spaces of ``K`` and ``Q``) are
    invisible.

    Raises
    ------
    ValueError
        For ``a > d`` (no prediction) or ``t < 2``.

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    d, d_out, a, t = (
        _check_size(d, "d"),
        _check_size(d_out, "d_out"),
        _check_size(a, "a"),
        _check_t(t),
    )
    if a > d:
        raise ValueError(f"no prediction for a > d (got a={a}, d={d})")
    m = max(0, 2 * a - d)
    P = 2 * a * d + d * d_out + (2 * t - 1) * a * a
    return P - 2 * a * a - 1 - m * (m - 1) // 2


def learned_transport_parametrization(d: int, d_out: int, a: int, t: int = 3) -> Any:
    """Learned transport per offset for the rank engine (blocks ``Q, K, V, T_{-(t-1)}, …, T_{t-1}``).

    Parameters
    ----------
    d, d_out, a : int
        Input width, output width, attention dimension.
    t : int
        Tokens per input (at least 2); there are ``2t - 1`` transport blocks of shape ``(a, a)``.

    Returns
    -------
    lsa_lib.rank.Parametrization
        Generators: ``GL_a`` on the query side (``δQ = EQ``, ``δT_k = -T_k E``), ``GL_a`` on the
        key side (``δK = EK``, ``δT_k = -Eᵀ T_k``), the value scaling (``δV = -V``,
        ``δT_k = T_k``) and, for ``a = d``, the invisible antisymmetric part of ``Kᵀ T_0 Q``
        (``δT_0 = adj(K)ᵀ S adj(Q)``, ``S`` antisymmetric).

    Notes
    -----
    Explained in the chapter "Beyond the paper".
    """
    from .rank import Parametrization

    d, d_out, a, t = (
        _check_size(d, "d"),
        _check_size(d_out, "d_out"),
        _check_size(a, "a"),
        _check_t(t),
    )
    n_off = 2 * t - 1
    E = [np.diag(np.eye(t, dtype=np.int64)[i]) for i in range(t)]

    def forward(params: Sequence[Any], X: Any) -> Any:
        Q, K, V = params[:3]
        T = params[3:]
        KXt, QX = (K @ X).mT, Q @ X
        S = None
        for i in range(t):
            for j in range(t):
                term = _const(E[i], X) @ (KXt @ (T[j - i + t - 1] @ QX)) @ _const(E[j], X)
                S = term if S is None else S + term
        return (V @ X) @ S

    def generators(params: Sequence[Any]) -> list[list[Any]]:
        P = [_obj(p) for p in params]
        Q, K, V = P[:3]
        T = P[3:]
        zero = _zeros_like(P)
        gens = []
        g = [z.copy() for z in zero]
        g[2] = -V
        for k in range(n_off):
            g[3 + k] = T[k].copy()
        gens.append(g)
        for r in range(a):
            for s_ in range(a):
                Er = np.zeros((a, a), dtype=object)
                Er[r, s_] = 1
                g = [z.copy() for z in zero]
                g[0] = Er @ Q
                for k in range(n_off):
                    g[3 + k] = -(T[k] @ Er)
                gens.append(g)
                g = [z.copy() for z in zero]
                g[1] = Er @ K
                for k in range(n_off):
                    g[3 + k] = -(Er.T @ T[k])
                gens.append(g)
        if a == d:
            adjK, adjQ = _adj(K), _adj(Q)
            for r in range(d):
                for s_ in range(r + 1, d):
                    S = np.zeros((d, d), dtype=object)
                    S[r, s_], S[s_, r] = 1, -1
                    g = [z.copy() for z in zero]
                    g[3 + t - 1] = adjK.T @ S @ adjQ
                    gens.append(g)
        return gens

    return Parametrization(
        name=f"learned transport d={d} d'={d_out} a={a} t={t}",
        shapes=((a, d), (a, d), (d_out, d)) + ((a, a),) * n_off,
        input_shape=(d, t),
        forward=forward,
        generators=generators,
    )

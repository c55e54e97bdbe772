"""The symmetry tangents of multi-head layers (private helper of :mod:`lsa_lib.heads`).

Per head, the changes of basis inside ``A_h = K_hᵀ Q_h`` and ``W_h = O_h V_h`` and the
lightning scaling come from the kit :class:`lsa_lib._generators.Tangents`. Lightning heads
have more: they can mix (``a ≥ d``), exchange values (``d_out = 1``) and move inside the span
of the other heads' attention matrices (``a = d − 1``). Those tangents are rational in the
weights; multiplied by determinants (:func:`lsa_lib._exact.det`, :func:`lsa_lib._exact.adj`)
they become polynomial with integer coefficients, as the exact engine needs. Every function
takes the exact copies of the weights (:func:`lsa_lib._backend.exact`) in a ``Tangents``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._exact import adj, det
from ._generators import Tangents

__all__: list[str] = []


def _identity(n: int) -> np.ndarray:
    return np.eye(n, dtype=int).astype(object)


def _kernel_vector(M: Any) -> Any:
    """The cofactor vector ``n`` of a ``(k − 1) × k`` matrix: ``M n = 0`` identically (exact)."""
    k = M.shape[1]
    return np.array(
        [(-1) ** c * det(M[:, [j for j in range(k) if j != c]]) for c in range(k)], dtype=object
    )


def _lift_corank_one(Q: Any, K: Any, B: Any) -> tuple[Any, Any, Any]:
    """``(δQ, δK, c)`` with ``δKᵀ Q + Kᵀ δQ = c B`` for ``Q, K`` of ``d − 1`` rows.

    ``c = det(Q Qᵀ) det(K Kᵀ)``; valid when ``nᵀ B m = 0`` for the kernel vectors ``K n = 0``,
    ``Q m = 0`` (``B`` tangent to the matrices of corank one at ``Kᵀ Q``).
    """
    GQ, GK = Q @ Q.T, K @ K.T
    dQQ, dKK = det(GQ), det(GK)
    proj = dQQ * _identity(Q.shape[1]) - Q.T @ adj(GQ) @ Q
    return adj(GK) @ K @ B @ proj, dKK * (adj(GQ).T @ Q @ B.T), dQQ * dKK


def _corank_exchange(
    As: Sequence[Any], ws: Sequence[Any], Qs: Sequence[Any], Ks: Sequence[Any], h: int, l: int
) -> list[tuple[Any, Any, Any, Any, Any]]:
    """Exchange moves between scalar-output heads ``h`` and ``l``, ``A_l`` of corank one.

    With ``w`` the value rows, ``n, m`` the kernel vectors of ``K_l`` and ``Q_l`` (so
    ``nᵀ A_l = 0 = A_l m``) and, for every row ``g`` of ``Q_h``, ``s = nᵀ A_h m`` and
    ``α = (nᵀ w_h)(gᵀ m)``: ``δw_h = c α w_l``, ``δK_h = −c s e_r w_lᵀ`` (row ``r``, so
    ``δA_h = −c s w_l gᵀ``) and ``δA_l = c (s w_h gᵀ − α A_h)``, which is tangent to the
    corank-one matrices at ``A_l``. The trilinear tensor ``Σ sym(w ⊗ A)`` does not change.
    Returns, per row ``r``, ``(r, δw_h, δK_h row, δQ_l, δK_l)`` with the common factor ``c``.
    """
    n, m = _kernel_vector(Ks[l]), _kernel_vector(Qs[l])
    s = n @ As[h] @ m
    nw = n @ ws[h]
    out = []
    for r in range(Qs[h].shape[0]):
        g = Qs[h][r]
        alpha = nw * (g @ m)
        B = s * np.outer(ws[h], g) - alpha * As[h]
        dQ, dK, c = _lift_corank_one(Qs[l], Ks[l], B)
        out.append((r, c * alpha * ws[l], -c * s * ws[l], dQ, dK))
    return out


def summed_moves(T: Tangents, H: int, a: int, d: int) -> None:
    """Head mixing for ``a ≥ d``, exchange moves for ``d_out = 1`` (``a ≥ d``, or ``a = d − 1``
    through an attention matrix of corank one), rank-keeping moves for ``a = d − 1``.

    The blocks of ``T`` are ``Q_1, K_1, V_1, Q_2, …`` (summed heads).
    """
    P = T.blocks
    Qs, Ks, Vs = P[0::3], P[1::3], P[2::3]
    if a >= d:
        for h in range(H):
            for l in range(H):
                if h != l:
                    M = Qs[l].T @ Qs[l]  # (d, d), invertible for generic Q_l with a ≥ d
                    T.add(
                        {
                            3 * h + 2: det(M) * Vs[l],
                            3 * l + 1: -(Ks[h].T @ Qs[h] @ adj(M) @ Qs[l].T).T,
                        }
                    )
        if Vs[0].shape[0] == 1:  # A_h ↦ A_h + w_l uᵀ, A_l ↦ A_l − w_h uᵀ with u = e_r
            Ms = [Q.T @ Q for Q in Qs]
            dets, adjs = [det(M) for M in Ms], [adj(M) for M in Ms]
            for h in range(H):
                for l in range(h + 1, H):
                    for r in range(d):
                        u = np.zeros((1, d), dtype=object)
                        u[0, r] = 1
                        T.add(
                            {
                                3 * h + 1: dets[l] * (Vs[l].T @ u @ adjs[h] @ Qs[h].T).T,
                                3 * l + 1: dets[h] * (-(Vs[h].T @ u) @ adjs[l] @ Qs[l].T).T,
                            }
                        )
    if a == d - 1 and Vs[0].shape[0] == 1:  # exchange through an A_l of corank one
        As = [K.T @ Q for Q, K in zip(Qs, Ks, strict=True)]
        ws = [V[0] for V in Vs]
        for l in range(H):
            for h in range(H):
                if h == l:
                    continue
                for r, dw, dk, dQ, dK in _corank_exchange(As, ws, Qs, Ks, h, l):
                    dKh = np.zeros_like(Ks[h])
                    dKh[r] = dk
                    T.add({3 * h + 2: dw[None, :], 3 * h + 1: dKh, 3 * l: dQ, 3 * l + 1: dK})
    if a == d - 1 and H >= 3:
        As = [K.T @ Q for Q, K in zip(Qs, Ks, strict=True)]
        for h in range(H):
            Q, K = Qs[h], Ks[h]
            adjA, GQ, GK = adj(As[h]), Q @ Q.T, K @ K.T
            dQQ, dKK = det(GQ), det(GK)
            others = [l for l in range(H) if l != h]
            tau = {l: np.trace(adjA @ As[l]) for l in others}
            for i, l in enumerate(others):
                for m in others[i + 1 :]:
                    B = tau[m] * As[l] - tau[l] * As[m]  # tangent to {det = 0} at A_h
                    # lift B to (δQ_h, δK_h) with δK_hᵀ Q_h + K_hᵀ δQ_h = dQQ·dKK·B
                    proj = dQQ * _identity(d) - Q.T @ adj(GQ) @ Q
                    T.add(
                        {
                            3 * h + 1: dKK * (adj(GQ).T @ Q @ B.T),
                            3 * h: adj(GK) @ K @ B @ proj,
                            3 * l + 2: -(dQQ * dKK * tau[m]) * Vs[h],
                            3 * m + 2: (dQQ * dKK * tau[l]) * Vs[h],
                        }
                    )


def _projector(M: Any) -> Any:
    """``det(M Mᵀ) I − Mᵀ adj(M Mᵀ) M``: a multiple of the projection onto ``ker M`` (exact)."""
    G = M @ M.T
    return det(G) * _identity(M.shape[1]) - M.T @ adj(G) @ M


def output_tangents(
    T: Tangents, sizes: Sequence[tuple[int, int]], lightning: bool, mixing: bool
) -> None:
    """Symmetry tangents of heads with output maps (blocks ``Q_h, K_h, V_h, O_h``)."""
    P = T.blocks
    H = len(sizes)
    d, d_out = P[0].shape[1], P[3].shape[0]
    for h, (_dk, dv) in enumerate(sizes):
        Q, K, V, O = P[4 * h : 4 * h + 4]
        T.attention_basis(4 * h, 4 * h + 1)  # GL_{d_k} on (Q, K): (E Q, −Eᵀ K)
        T.pass_through(4 * h + 2, (4 * h + 3,))  # GL_{d_v} on (V, O): (E V, −O E)
        # the rest of the fiber of (V, O) ↦ O V: V moves in ker O (d_v > d_out), O in ker Vᵀ
        # (d_v > d); beyond GL_{d_v} only when d_v lies strictly between d_out and d
        if dv > d_out:
            Pi = _projector(O)
            for r in range(dv):
                for c in range(d):
                    dV = np.zeros_like(V)
                    dV[:, c] = Pi[:, r]
                    T.add({4 * h + 2: dV})
        if dv > d:
            Pi = _projector(V.T)
            for r in range(d_out):
                for c in range(dv):
                    dO = np.zeros_like(O)
                    dO[r] = Pi[c]
                    T.add({4 * h + 3: dO})
        if lightning:  # the scaling (c Q_h, c⁻¹ O_h)
            T.scaling(4 * h, 4 * h + 3)
    if lightning and mixing and H > 1:
        _output_moves(T, sizes, d, d_out)


def _value_lift(V: Any, O: Any, d: int) -> tuple[Any, Any, Any]:
    """``(c, left, right)``: ``c δW = O (left δW)`` or ``= (δW right) V`` (``W = O V`` free)."""
    if V.shape[0] >= d:
        N = V.T @ V
        return det(N), None, adj(N) @ V.T  # δO = δW adj(N) Vᵀ
    M = O @ O.T
    return det(M), O.T @ adj(M), None  # δV = Oᵀ adj(M) δW


def _lift(parts: dict[int, Any], h: int, lift: tuple[Any, Any, Any], dW: Any) -> None:
    """Add the ``(δV_h, δO_h)`` with ``δ(O_h V_h) = c_h dW`` to the tangent ``parts``."""
    _, left, right = lift
    if left is not None:
        parts[4 * h + 2] = parts.get(4 * h + 2, 0) + left @ dW
    else:
        parts[4 * h + 3] = parts.get(4 * h + 3, 0) + dW @ right


def _output_moves(T: Tangents, sizes: Sequence[tuple[int, int]], d: int, d_out: int) -> None:
    """Lightning moves between heads with output maps, where the ranks allow them.

    With ``A_h = K_hᵀ Q_h`` and ``W_h = O_h V_h`` the layer depends on ``Σ_h W_h ⊗ A_h`` only.
    ``W_h`` is *free* when ``d_v ≥ min(d, d_out)``, ``A_l`` when ``d_k ≥ d``. Three families of
    tangents (each multiplied by determinants to stay polynomial):

    * mixing, ``W_h`` free and ``A_l`` free: ``δW_h ∝ W_l``, ``δA_l ∝ −A_h``;
    * exchange, ``d_out = 1`` and ``A_l`` free: ``δA_h ∝ w_l uᵀ``, ``δA_l ∝ −w_h uᵀ`` with
      ``u`` a row of ``Q_h`` (scalar values commute);
    * rank-keeping, ``d_k = d − 1`` for head ``h`` and ``W_l, W_m`` free:
      ``δA_h ∝ τ_m A_l − τ_l A_m`` with ``τ_l = tr(adj(A_h) A_l)`` (tangent to ``det = 0``),
      ``δW_l ∝ −τ_m W_h``, ``δW_m ∝ τ_l W_h``;
    * exchange through a corank-one ``A_l`` (``d_out = 1``, ``d_k = d − 1`` for head ``l``):
      :func:`_corank_exchange`;
    * the mirror of rank-keeping, ``d_out = d`` and ``d_v = d − 1`` for head ``h``, ``A_l, A_m``
      free: ``δW_h ∝ τ_m W_l − τ_l W_m`` with ``τ_l = tr(adj(W_h) W_l)``, ``δA_l ∝ −τ_m A_h``,
      ``δA_m ∝ τ_l A_h``. (Products of higher codimension move too when enough heads have a
      free ``A``; their tangents are not written here.)
    """
    P = T.blocks
    H = len(sizes)
    Qs, Ks, Vs, Os = P[0::4], P[1::4], P[2::4], P[3::4]
    As = [K.T @ Q for Q, K in zip(Qs, Ks, strict=True)]
    Ws = [O @ V for V, O in zip(Vs, Os, strict=True)]
    lifts = [
        _value_lift(Vs[h], Os[h], d) if dv >= min(d, d_out) else None
        for h, (_, dv) in enumerate(sizes)
    ]
    free_A = [dk >= d for dk, _ in sizes]
    Ms = [Q.T @ Q if free else None for Q, free in zip(Qs, free_A, strict=True)]
    for h in range(H):
        for l in range(H):
            if l == h or not free_A[l]:
                continue
            dM, lift_A = det(Ms[l]), adj(Ms[l]) @ Qs[l].T  # δK_l = −(B lift_A)ᵀ: δA_l = −dM B
            if lifts[h] is not None:  # mixing
                parts = {4 * l + 1: -lifts[h][0] * (As[h] @ lift_A).T}
                _lift(parts, h, lifts[h], dM * Ws[l])
                T.add(parts)
            if d_out == 1:  # exchange
                for r in range(min(sizes[h][0], d)):
                    u = Qs[h][r : r + 1]
                    dK = np.zeros_like(Ks[h])
                    dK[r] = dM * Ws[l][0]  # δK_hᵀ Q_h = dM w_l uᵀ
                    T.add({4 * h + 1: dK, 4 * l + 1: -(Ws[h].T @ u @ lift_A).T})
    if d_out == 1:  # exchange through an A_l of corank one (d_k = d − 1)
        ws = [W[0] for W in Ws]
        for l, (dk, _) in enumerate(sizes):
            if dk != d - 1:
                continue
            for h in range(H):
                if h == l or lifts[h] is None:
                    continue
                ch = lifts[h][0]
                for r, dw, dk_row, dQ, dK in _corank_exchange(As, ws, Qs, Ks, h, l):
                    dKh = np.zeros_like(Ks[h])
                    dKh[r] = ch * dk_row
                    parts = {4 * h + 1: dKh, 4 * l: ch * dQ, 4 * l + 1: ch * dK}
                    _lift(parts, h, lifts[h], dw[None, :])  # δW_h = c_h dw
                    T.add(parts)
    if d == d_out:  # a product of corank one moving in the span of the others (d_v = d − 1)
        for h, (_, dv) in enumerate(sizes):
            others = [l for l in range(H) if l != h and free_A[l]]
            if dv != d - 1 or len(others) < 2:
                continue
            adjW = adj(Ws[h])
            tau = {l: np.trace(adjW @ Ws[l]) for l in others}
            for i, l in enumerate(others):
                for m in others[i + 1 :]:
                    B = tau[m] * Ws[l] - tau[l] * Ws[m]  # tangent to {det = 0} at W_h
                    dV, dOt, c = _lift_corank_one(Vs[h], Os[h].T, B)  # δO V + O δV = c B
                    dMl, dMm = det(Ms[l]), det(Ms[m])
                    lift_l, lift_m = adj(Ms[l]) @ Qs[l].T, adj(Ms[m]) @ Qs[m].T
                    T.add(
                        {
                            4 * h + 2: dMl * dMm * dV,
                            4 * h + 3: dMl * dMm * dOt.T,
                            4 * l + 1: (-(c * dMm * tau[m]) * As[h] @ lift_l).T,  # δA_l ∝ −τ_m A_h
                            4 * m + 1: ((c * dMl * tau[l]) * As[h] @ lift_m).T,  # δA_m ∝ τ_l A_h
                        }
                    )
    for h, (dk, _) in enumerate(sizes):
        others = [l for l in range(H) if l != h and lifts[l] is not None]
        if dk != d - 1 or len(others) < 2:
            continue
        Q, K = Qs[h], Ks[h]
        adjA, GQ, GK = adj(As[h]), Q @ Q.T, K @ K.T
        dQQ, dKK = det(GQ), det(GK)
        proj = dQQ * _identity(d) - Q.T @ adj(GQ) @ Q
        tau = {l: np.trace(adjA @ As[l]) for l in others}
        for i, l in enumerate(others):
            for m in others[i + 1 :]:
                cl, cm = lifts[l][0], lifts[m][0]
                B = cl * cm * (tau[m] * As[l] - tau[l] * As[m])  # tangent to {det = 0} at A_h
                # δK_hᵀ Q_h + K_hᵀ δQ_h = dQQ dKK B (B is tangent: (1 − P_K) B (1 − P_Q) = 0)
                parts = {4 * h + 1: dKK * (adj(GQ).T @ Q @ B.T), 4 * h: adj(GK) @ K @ B @ proj}
                _lift(parts, l, lifts[l], -(dQQ * dKK * cm * tau[m]) * Ws[h])
                _lift(parts, m, lifts[m], (dQQ * dKK * cl * tau[l]) * Ws[h])
                T.add(parts)

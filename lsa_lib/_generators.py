"""The symmetry tangents every model composes (private core of the library).

The exact rank engine's upper bound is ``P`` minus the rank of the tangent vectors of known
symmetries at a point (:class:`lsa_lib.rank.Parametrization`). Every model's symmetries are
built from a few moves of its parameter blocks, written here once; :class:`Tangents` collects
them as the rows of one matrix, in the flattening order of the blocks:

* :meth:`Tangents.scaling`: ``(c M_up, c⁻¹ M_down)`` (a layer's ``(Q, V)``);
* :meth:`Tangents.attention_basis`: ``GL_a`` inside a layer, ``(Q, K) ↦ (G Q, G⁻ᵀ K)``,
  tangents ``(E Q, −Eᵀ K)`` for every elementary ``E = E_rs``;
* :meth:`Tangents.pass_through`: ``GL_d`` between the rows of one block and the columns of
  others, ``V ↦ C V`` and ``M ↦ M C⁻¹``, tangents ``(E V, −M E)`` (between layers, and inside
  a head with an output map);
* :meth:`Tangents.triples`: the scaling and ``GL_a`` of each ``(Q, K, V)`` triple of a model
  whose triples do not pass changes of basis to each other (heads, residual layers);
* :meth:`Tangents.add`: any other tangent, block by block.

The blocks keep their kind: integer weights give integer rows (the exact engine reduces them
modulo a prime), object arrays (:func:`lsa_lib._backend.exact`) exact products of
determinants, floats float rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import _backend

__all__: list[str] = []


def attention_fiber_dimension(a: int, d: int) -> int:
    """The fibers of ``(Q, K) ↦ Kᵀ Q`` (``Q, K`` of shape ``(a, d)``): ``2ad − r(2d − r)``.

    With ``r = min(a, d)``; it is ``a² − (a − d)²₊``, the dimension the ``a²`` tangents of
    :meth:`Tangents.attention_basis` span at generic ``(Q, K)`` (for ``a > d`` the action has a
    stabilizer of dimension ``(a − d)²``, and the orbit still fills the fiber).
    """
    r = min(a, d)
    return 2 * a * d - r * (2 * d - r)


class Tangents:
    """Symmetry tangents at a point, one row per tangent (flattening order of the blocks).

    Parameters
    ----------
    blocks : sequence of array
        The point, one array per parameter block (numpy or torch; object arrays for exact
        algebra). The rows take the common kind of the blocks.
    """

    def __init__(self, blocks: Sequence[Any]):
        self.blocks = [
            np.asarray(b.detach().cpu().numpy() if _backend.is_torch(b) else b) for b in blocks
        ]
        sizes = [b.size for b in self.blocks]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.n_params = int(self.offsets[-1])
        kinds = [b.dtype for b in self.blocks]
        self.dtype = object if object in kinds else np.result_type(*kinds)
        self._rows: list[NDArray[Any]] = []

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, parts: Mapping[int, Any]) -> None:
        """One tangent: ``parts[i]`` is its component on block ``i`` (the others are zero)."""
        row = np.zeros(self.n_params, dtype=self.dtype)
        for i, M in parts.items():
            arr = np.asarray(M)
            if arr.shape != self.blocks[i].shape:
                raise ValueError(
                    f"a tangent component of shape {arr.shape} on block {i} of shape "
                    f"{self.blocks[i].shape}"
                )
            row[self.offsets[i] : self.offsets[i + 1]] = arr.reshape(-1)
        self._rows.append(row)

    def scaling(self, up: int, down: int) -> None:
        """``(c M_up, c⁻¹ M_down)``: the tangent ``(M_up, −M_down)``."""
        self.add({up: self.blocks[up], down: -self.blocks[down]})

    def attention_basis(self, q: int, k: int) -> None:
        """``GL_a`` on the pair ``(Q, K) = (blocks q, k)``: the ``a²`` tangents ``(E Q, −Eᵀ K)``."""
        Q, K = self.blocks[q], self.blocks[k]
        for r in range(Q.shape[0]):
            for s in range(Q.shape[0]):
                EQ, EtK = np.zeros_like(Q), np.zeros_like(K)
                EQ[r], EtK[s] = Q[s], K[r]  # E_rs Q: row r is row s of Q; E_rsᵀ K: row s is row r
                self.add({q: EQ, k: -EtK})

    def pass_through(self, out: int, into: Sequence[int]) -> None:
        """``GL_d`` from the rows of block ``out`` to the columns of the blocks ``into``.

        ``V ↦ C V`` and ``M ↦ M C⁻¹``: the ``d²`` tangents ``E V`` on ``out`` and ``−M E`` on
        each block of ``into``.
        """
        V = self.blocks[out]
        for r in range(V.shape[0]):
            for s in range(V.shape[0]):
                EV = np.zeros_like(V)
                EV[r] = V[s]
                parts = {out: EV}
                for i in into:
                    M = self.blocks[i]
                    ME = np.zeros_like(M)
                    ME[:, s] = M[:, r]  # M E_rs: column s is column r of M
                    parts[i] = -ME
                self.add(parts)

    def triples(self, n: int, *, scaling: bool = True, first: int = 0) -> None:
        """The scaling ``(Q, 0, −V)`` (unless ``scaling=False``) and ``GL_a`` of ``n`` triples.

        The triples are the blocks ``first + 3h, first + 3h + 1, first + 3h + 2``.
        """
        for h in range(n):
            q = first + 3 * h
            if scaling:
                self.scaling(q, q + 2)
            self.attention_basis(q, q + 1)

    def matrix(self) -> NDArray[Any]:
        """The tangents as the rows of one ``(n_tangents, P)`` array."""
        if not self._rows:
            return np.zeros((0, self.n_params), dtype=self.dtype)
        return np.stack(self._rows)


def _flat_row(blocks: Any) -> NDArray[Any]:
    """One tangent's blocks as one flat row, integers kept exact.

    numpy promotes int64 beside uint64 (or beside the object array of a large Python integer)
    to float64, which rounds integers above 2**53: such rows are built as object arrays.
    """
    arrays = [np.asarray(b).reshape(-1) for b in blocks]
    kinds = {a.dtype.kind for a in arrays}
    if "O" in kinds or ("u" in kinds and "i" in kinds):
        arrays = [a.astype(object) for a in arrays]
    return np.concatenate(arrays)


def as_matrix(tangents: Any, n_params: int) -> NDArray[Any]:
    """A model's tangents as one ``(n, P)`` array: a matrix already, or lists of blocks."""
    if isinstance(tangents, np.ndarray) and tangents.ndim == 2:
        G = tangents
    else:
        rows = [_flat_row(g) for g in tangents]
        for r in rows:
            if r.shape != (n_params,):
                raise ValueError(f"a generator has {r.size} entries, expected P = {n_params}")
        G = np.stack(rows) if rows else np.zeros((0, n_params))
    if G.shape[1:] != (n_params,):
        raise ValueError(f"the generators have {G.shape[1]} entries each, expected P = {n_params}")
    return G

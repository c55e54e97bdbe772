"""Ball arithmetic for rigorous ranks of non-polynomial maps (private helper of the rank engine).

The exact engine of :mod:`lsa_lib.rank` computes modulo a prime, which needs a polynomial with
integer coefficients; a softmax network is not one. For such maps the engine proves a *lower*
bound on a Jacobian's rank with interval arithmetic instead: every number is a ball
``[m ± r]`` (python-flint's ``arb``) guaranteed to contain the exact real number, and every
operation returns a ball that contains the exact result. Weights and inputs are float64 numbers,
which are exact binary rationals, so the balls start with radius zero.

:class:`BallDual` is a forward-mode dual number over such balls: a 2-D value and one tangent
per differentiation direction, with the operations a forward pass uses (``@``, ``.mT``, ``+``,
``-``, ``*``, ``/``, ``numpy.exp``, ``sum`` and ``max`` over an axis). :func:`minor_excludes_zero`
decides whether a square matrix of balls is certainly invertible: if the ball of its
determinant does not contain 0, the exact matrix has full rank. Explained, step by step, in
:doc:`/book/notes/ball_arithmetic`.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable, Sequence
from typing import Any

import flint
import numpy as np
import torch
from numpy.typing import NDArray

__all__: list[str] = []


def _ball_matrix(M: Any) -> flint.arb_mat:
    """A float64 array (or a scalar) as an exact ``arb_mat`` (floats are binary rationals)."""
    A = np.atleast_2d(np.asarray(M, dtype=np.float64))
    if A.ndim != 2:
        raise ValueError(f"ball arithmetic handles 2-D values, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("ball arithmetic needs finite numbers")
    return flint.arb_mat([[flint.arb(float(x)) for x in row] for row in A])


def _entrywise(A: flint.arb_mat, B: flint.arb_mat, op: Callable[[Any, Any], Any]) -> flint.arb_mat:
    """``op`` entry by entry, broadcasting rows ``(1, c)``, columns ``(r, 1)`` and ``(1, 1)``.

    Sums and differences of equal shapes are flint's matrix operations (the same ball
    operations, entry by entry); otherwise the entries are read once, as flat lists.
    """
    (ar, ac), (br, bc) = (A.nrows(), A.ncols()), (B.nrows(), B.ncols())
    r, c = max(ar, br), max(ac, bc)
    if ar not in (1, r) or br not in (1, r) or ac not in (1, c) or bc not in (1, c):
        raise ValueError(f"cannot broadcast ({ar}, {ac}) and ({br}, {bc}) ball matrices")
    if (ar, ac) == (br, bc) and op is _add:
        return A + B
    if (ar, ac) == (br, bc) and op is _sub:
        return A - B
    a, b = _spread(A.entries(), ar, ac, r, c), _spread(B.entries(), br, bc, r, c)
    return flint.arb_mat(r, c, list(map(op, a, b)))


def _spread(entries: list[Any], rows: int, cols: int, r: int, c: int) -> list[Any]:
    """Row-major entries of a ``(rows, cols)`` matrix broadcast to ``(r, c)``."""
    if (rows, cols) == (r, c):
        return entries
    if rows == r:  # a column
        return [x for x in entries for _ in range(c)]
    if cols == c:  # a row
        return entries * r
    return entries * (r * c)  # one entry


_mul, _add, _sub, _div = operator.mul, operator.add, operator.sub, operator.truediv


def _broadcast(A: flint.arb_mat, rows: int, cols: int) -> flint.arb_mat:
    """``A`` broadcast to ``(rows, cols)`` (a new matrix)."""
    return flint.arb_mat(rows, cols, _spread(A.entries(), A.nrows(), A.ncols(), rows, cols))


class BallDual:
    """A 2-D matrix of balls and its derivatives in ``k`` directions (forward mode).

    Parameters
    ----------
    value : flint.arb_mat or array-like, shape=[m, n]
    tangents : list of flint.arb_mat, each shape=[m, n], or None
        The derivative of the value in each direction; None for a constant.
    """

    __array_priority__ = 1000

    def __init__(self, value: Any, tangents: list[flint.arb_mat] | None = None):
        self.value = value if isinstance(value, flint.arb_mat) else _ball_matrix(value)
        self.tangents = tangents

    # ------------------------------------------------------------------ helpers
    @property
    def shape(self) -> tuple[int, int]:
        return (self.value.nrows(), self.value.ncols())

    @property
    def ndim(self) -> int:
        return 2

    def _lift(self, other: Any) -> BallDual:
        return other if isinstance(other, BallDual) else BallDual(other)

    def _k(self, other: BallDual) -> int:
        tangents = self.tangents if self.tangents is not None else other.tangents
        return 0 if tangents is None else len(tangents)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy on ball duals: ``exp`` and the binary operations, with numpy operands lifted."""
        if method != "__call__" or kwargs:
            return NotImplemented
        if ufunc is np.exp and len(inputs) == 1:
            return self.exp()
        binary = {
            np.matmul: lambda a, b: a @ b,
            np.add: lambda a, b: a + b,
            np.subtract: lambda a, b: a - b,
            np.multiply: lambda a, b: a * b,
            np.true_divide: lambda a, b: a / b,
        }
        if ufunc in binary and len(inputs) == 2:
            a, b = (x if isinstance(x, BallDual) else BallDual(x) for x in inputs)
            return binary[ufunc](a, b)
        return NotImplemented

    # ------------------------------------------------------------------ structure
    @property
    def mT(self) -> BallDual:
        tangents = None if self.tangents is None else [T.transpose() for T in self.tangents]
        return BallDual(self.value.transpose(), tangents)

    def max(self, axis: int = -2, keepdims: bool = True) -> BallDual:
        """A *constant* upper bound of the midpoints along ``axis`` (for a stable softmax).

        Subtracting the same constant from every score of a column changes no weight of the
        normalized layer, exactly; so the shift carries no derivative.
        """
        if axis not in (-2, 0) or not keepdims:
            raise ValueError("BallDual.max supports axis=-2 (columns) with keepdims only")
        r, c = self.shape
        mids = [[float(self.value[i, j].mid()) for j in range(c)] for i in range(r)]
        return BallDual([[max(mids[i][j] for i in range(r)) for j in range(c)]])

    def sum(self, axis: int = -2, keepdims: bool = True) -> BallDual:
        """The column sums (``axis=-2``), kept as a row."""
        if axis not in (-2, 0) or not keepdims:
            raise ValueError("BallDual.sum supports axis=-2 (columns) with keepdims only")
        ones = flint.arb_mat([[1] * self.shape[0]])
        tangents = None if self.tangents is None else [ones * T for T in self.tangents]
        return BallDual(ones * self.value, tangents)

    # ------------------------------------------------------------------ arithmetic
    def _product(self, other: BallDual, times: Any) -> BallDual:
        """``times(self, other)`` with the product rule ``d(xy) = dx·y + x·dy`` for tangents."""
        value = times(self.value, other.value)
        if self.tangents is None and other.tangents is None:
            return BallDual(value)
        tangents = []
        for i in range(self._k(other)):
            parts = []
            if self.tangents is not None:
                parts.append(times(self.tangents[i], other.value))
            if other.tangents is not None:
                parts.append(times(self.value, other.tangents[i]))
            tangents.append(parts[0] if len(parts) == 1 else parts[0] + parts[1])
        return BallDual(value, tangents)

    def __matmul__(self, other: Any) -> BallDual:
        return self._product(self._lift(other), lambda x, y: x * y)

    def __rmatmul__(self, other: Any) -> BallDual:
        return self._lift(other) @ self

    def _scalar(self, c: Any) -> flint.arb_mat:
        return flint.arb_mat([[flint.arb(float(c))] * self.shape[1]] * self.shape[0])

    def __add__(self, other: Any) -> BallDual:
        if isinstance(other, numbers.Real):
            return BallDual(self.value + self._scalar(other), self.tangents)
        other = self._lift(other)
        value = _entrywise(self.value, other.value, _add)
        shape = (value.nrows(), value.ncols())
        if self.tangents is None and other.tangents is None:
            return BallDual(value)
        if other.tangents is None:
            return BallDual(value, [_broadcast(T, *shape) for T in self.tangents])
        if self.tangents is None:
            return BallDual(value, [_broadcast(T, *shape) for T in other.tangents])
        pairs = zip(self.tangents, other.tangents, strict=True)
        return BallDual(value, [_entrywise(a, b, _add) for a, b in pairs])

    __radd__ = __add__

    def __neg__(self) -> BallDual:
        tangents = None if self.tangents is None else [-T for T in self.tangents]
        return BallDual(-self.value, tangents)

    def __sub__(self, other: Any) -> BallDual:
        return self + (-other if isinstance(other, numbers.Real) else -self._lift(other))

    def __rsub__(self, other: Any) -> BallDual:
        return -self + other

    def __mul__(self, other: Any) -> BallDual:
        """Entrywise (or by a number)."""
        if isinstance(other, numbers.Real):
            c = flint.arb(float(other))
            tangents = None if self.tangents is None else [T * c for T in self.tangents]
            return BallDual(self.value * c, tangents)
        return self._product(self._lift(other), lambda x, y: _entrywise(x, y, _mul))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> BallDual:
        """Entrywise division; a row or column denominator broadcasts."""
        if isinstance(other, numbers.Real):
            return self * (1.0 / other) if other else self * float("inf")
        other = self._lift(other)
        value = _entrywise(self.value, other.value, _div)
        if self.tangents is None and other.tangents is None:
            return BallDual(value)
        tangents = []
        shape = (value.nrows(), value.ncols())
        for i in range(self._k(other)):  # (u / v)' = (u' - (u / v) v') / v
            num = self.tangents[i] if self.tangents is not None else flint.arb_mat(*shape)
            if other.tangents is not None:
                num = _entrywise(num, _entrywise(value, other.tangents[i], _mul), _sub)
            tangents.append(_entrywise(num, other.value, _div))
        return BallDual(value, tangents)

    def exp(self) -> BallDual:
        r, c = self.shape
        value = flint.arb_mat(r, c)
        for i in range(r):
            for j in range(c):
                value[i, j] = self.value[i, j].exp()
        tangents = (
            None if self.tangents is None else [_entrywise(T, value, _mul) for T in self.tangents]
        )
        return BallDual(value, tangents)


def jacobian_block(
    forward: Callable[[list[Any], Any], Any],
    shapes: Sequence[tuple[int, ...]],
    point: Sequence[NDArray[np.float64]],
    X: NDArray[np.float64],
    columns: Sequence[int],
) -> list[list[Any]]:
    """Balls around the Jacobian entries of one input's outputs in the given parameter columns.

    Parameters
    ----------
    forward : callable
        ``forward(params, X)`` of a :class:`lsa_lib.rank.Parametrization`, run here on
        :class:`BallDual` blocks and a 2-D ``X``.
    shapes : sequence of tuple of int
        The parameter blocks (2-D).
    point : sequence of numpy.ndarray
        The parameters (float64, exact binary rationals).
    X : numpy.ndarray, shape=[d_0, t]
        One input.
    columns : sequence of int
        Parameter indices (in flattening order) to differentiate along.

    Returns
    -------
    list of list of flint.arb
        ``rows × len(columns)``, rows in the order of ``forward(...).reshape(-1)``.
    """
    offsets = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    duals = []
    for b, (shape, block) in enumerate(zip(shapes, point, strict=True)):
        if len(shape) != 2:
            raise ValueError("ball arithmetic handles 2-D parameter blocks")
        tangents = []
        for col in columns:
            T = flint.arb_mat(*shape)
            if offsets[b] <= col < offsets[b + 1]:
                r, c = np.unravel_index(col - offsets[b], shape)
                T[int(r), int(c)] = flint.arb(1)
            tangents.append(T)
        duals.append(BallDual(block, tangents))
    Y = forward(duals, BallDual(X))
    if not isinstance(Y, BallDual) or Y.tangents is None:
        raise TypeError("forward did not return a ball matrix built from its parameters")
    rows, cols = Y.shape
    return [[T[i, j] for T in Y.tangents] for i in range(rows) for j in range(cols)]


def minor_excludes_zero(entries: Sequence[Sequence[Any]]) -> bool:
    """Whether the determinant's ball excludes 0 (then the exact matrix is invertible)."""
    det = flint.arb_mat([list(row) for row in entries]).det()
    return not det.contains(0)


def pivots(M: NDArray[np.float64], r: int) -> list[int]:
    """``r`` column indices chosen greedily by largest residual norm (pivoted Gram–Schmidt).

    A tall matrix is first reduced to its triangular QR factor ``R``: ``M = QR`` with ``Q``
    orthonormal, so the residual norms, and hence the choice, are the same and cheaper.
    """
    M = np.asarray(M, dtype=np.float64)
    if M.shape[0] > M.shape[1]:
        M = torch.linalg.qr(torch.as_tensor(M), mode="r")[1].numpy()
    R = np.array(M, copy=True)
    chosen: list[int] = []
    for _ in range(r):
        norms = np.einsum("ij,ij->j", R, R)
        norms[chosen] = -1.0
        c = int(np.argmax(norms))
        if norms[c] <= 0:
            break
        chosen.append(c)
        q = R[:, c] / np.sqrt(norms[c])
        R -= np.outer(q, q @ R)
    return chosen


def pivot_rows(M: NDArray[np.float64]) -> list[int]:
    """The ``n`` rows of a tall ``m × n`` matrix that LU with partial pivoting puts first."""
    _, piv = torch.linalg.lu_factor(torch.as_tensor(np.asarray(M, dtype=np.float64)))
    perm = list(range(M.shape[0]))
    for i, j in enumerate(piv.tolist()):  # LAPACK's sequential swaps, 1-based
        perm[i], perm[j - 1] = perm[j - 1], perm[i]
    return perm[: M.shape[1]]


#: Working precisions (bits) tried in turn for a certified rank.
PRECISIONS = (128, 256, 512)


def certified_rank(
    forward: Callable[[list[Any], Any], Any],
    shapes: Sequence[tuple[int, ...]],
    point: Sequence[NDArray[np.float64]],
    X: NDArray[np.float64],
    J: NDArray[np.float64],
    r: int,
    outputs: int,
    *,
    inputs: int | None = None,
) -> int:
    """A rank proven by ball arithmetic: the size of a minor whose determinant excludes zero.

    The float Jacobian ``J`` (of ``forward`` at ``point`` on inputs ``X``, ``outputs`` rows per
    input) only *chooses* ``r`` columns (pivoted Gram–Schmidt) and ``r`` rows (partial pivoting
    among the rows of the first ``inputs`` inputs, all by default: each input of the minor costs
    one forward pass in ball arithmetic); the entries of
    that minor are recomputed in ball arithmetic from the exact float inputs, so round-off in
    ``J`` cannot affect the proof. If the full minor's ball contains zero at every precision of
    :data:`PRECISIONS`, leading minors of the chosen order are tried, largest first (any one
    that excludes zero proves its size); 0 if none does.
    """
    cols = pivots(J, r)
    n_rows = J.shape[0] if inputs is None else inputs * outputs
    rows = pivot_rows(J[:n_rows, cols])
    entries: dict[int, list[Any]] = {}
    old = flint.ctx.prec
    try:
        for prec in PRECISIONS:
            flint.ctx.prec = prec
            for i in sorted({row // outputs for row in rows}):
                block = jacobian_block(forward, shapes, point, X[i], cols)
                entries.update({row: block[row % outputs] for row in rows if row // outputs == i})
            minor = [entries[row] for row in rows]
            if minor_excludes_zero(minor):
                return len(rows)
        for k in range(len(rows) - 1, 0, -1):
            if minor_excludes_zero([row[:k] for row in minor[:k]]):
                return k
        return 0
    finally:
        flint.ctx.prec = old

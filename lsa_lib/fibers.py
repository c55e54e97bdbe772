"""Single-layer fibers: which weights give the same function (chapter "Single-layer fibers").

One lightning layer ``φ_W(X) = V X (Xᵀ Kᵀ Q X)`` depends on ``W = (Q, K, V)`` only through the
attention matrix ``A = Kᵀ Q`` and ``V``. The **fiber** of a point is the set of weights with
the same function. In ``(A, V)`` coordinates and for ``t ≥ 2`` tokens the book checks that

* the generic fiber is the line ``{(cA, c⁻¹V) : c ≠ 0}`` (:func:`scaling_fiber`);
* for rank-1 ``A = b cᵀ`` and ``V = v wᵀ`` the weights ``(w cᵀ, v bᵀ)`` give the same function
  (:func:`swap`), so the fiber is two lines;
* ``φ = 0`` exactly when ``A = 0`` or ``V = 0``.

:func:`same_function` compares two layers (exactly with sympy, or numerically on random
inputs), :func:`rescaling_factor` tells whether two ``(A, V)`` points lie on one scaling line,
and :func:`fiber_dimension` reads the dimension of the kernel of the parametrization's
Jacobian at a point with the rank engine (:mod:`lsa_lib.rank`).

Exact versus float input: a matrix is *exact* when it is a sympy matrix, an integer (or
boolean) array, or an array of Python ``int``/``fractions.Fraction``/sympy rationals. Functions
that decide a rank or an equality (:func:`swap`, :func:`rank_one_factors`,
:func:`scaling_fiber`, :func:`rescaling_factor`) do so exactly, over the rationals, when all of
their matrix inputs are exact, and return sympy matrices; otherwise they work in float64 and
read ranks at the largest gap of the singular values (:func:`lsa_lib.rank.float_rank`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import sympy

from ._core import _check_t, _is_torch, as_array
from .lightning import _lightning
from .rank import DEFAULT_MIN_GAP, float_rank

__all__ = [
    "DEFAULT_RTOL",
    "MAX_SYMBOLIC_ENTRIES",
    "FunctionComparison",
    "FiberDimension",
    "same_function",
    "scaling_fiber",
    "rank_one_factors",
    "swap",
    "rescaling_factor",
    "fiber_dimension",
]

#: Default relative tolerance of the numeric comparison in :func:`same_function`.
DEFAULT_RTOL = 1e-9

#: The symbolic comparison refuses inputs with more than this many token entries ``d · t``.
MAX_SYMBOLIC_ENTRIES = 36


# --------------------------------------------------------------------------------------------
# exact / float conversion
# --------------------------------------------------------------------------------------------


def _is_exact_scalar(x: Any) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return True
    if isinstance(x, (numbers.Integral, Fraction)):
        return True
    return isinstance(x, sympy.Basic) and bool(getattr(x, "is_Rational", False))


def _is_exact(M: Any) -> bool:
    """True if ``M`` is a sympy matrix or an array of integers/rationals (no floats)."""
    if isinstance(M, sympy.MatrixBase):
        return all(_is_exact_scalar(x) for x in M)
    if _is_torch(M):
        return not (M.is_floating_point() or M.is_complex())
    arr = np.asarray(M) if not isinstance(M, (str, bytes)) else None
    if arr is None:
        return False
    if arr.dtype.kind in "iub":
        return True
    if arr.dtype == object:
        return arr.size > 0 and all(_is_exact_scalar(x) for x in arr.flat)
    return False


def _matrix_shape(M: Any, name: str) -> tuple[int, ...]:
    if isinstance(M, sympy.MatrixBase):
        return tuple(M.shape)
    if _is_torch(M):
        return tuple(M.shape)
    if isinstance(M, (str, bytes)):
        raise TypeError(f"{name} must be a numeric matrix, got {type(M).__name__}")
    return np.asarray(M, dtype=object).shape


def _to_float(M: Any, name: str) -> np.ndarray:
    """A float64 numpy matrix (sympy matrices and arrays of rationals are converted)."""
    if isinstance(M, sympy.MatrixBase):
        try:
            M = np.array([[float(x) for x in row] for row in M.tolist()], dtype=np.float64)
        except TypeError as err:
            raise TypeError(f"{name} must have numeric entries, got {M!r}") from err
    elif _is_torch(M):
        M = M.detach().cpu().numpy()
    elif not isinstance(M, (str, bytes)):
        arr = np.asarray(M)
        if arr.dtype == object:
            try:
                M = arr.astype(np.float64)
            except (TypeError, ValueError) as err:
                raise TypeError(f"{name} must have numeric entries") from err
    M = as_array(M, name)
    if M.ndim != 2:
        raise ValueError(f"{name} must be a matrix, got shape {M.shape}")
    return M


def _to_exact(M: Any, name: str) -> sympy.Matrix:
    """A sympy matrix with rational entries; floats become the binary rationals they store."""
    if _is_torch(M):
        M = M.detach().cpu().numpy()
    if not isinstance(M, sympy.MatrixBase):
        if isinstance(M, (str, bytes)):
            raise TypeError(f"{name} must be a numeric matrix, got {type(M).__name__}")
        arr = np.asarray(M, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {arr.shape}")
        M = sympy.Matrix(arr.tolist()) if arr.size else sympy.zeros(*arr.shape)
    if M.shape[0] == 0 or M.shape[1] == 0:
        raise ValueError(f"{name} has an empty size: shape {tuple(M.shape)}")
    out = []
    for x in M:
        if isinstance(x, (bool, np.bool_)):
            x = int(x)
        if isinstance(x, np.generic):
            x = x.item()
        if isinstance(x, float):
            if not np.isfinite(x):
                raise ValueError(f"{name} has non-finite entries (nan or inf)")
            out.append(sympy.Rational(x))
            continue
        if isinstance(x, (numbers.Integral, Fraction)):
            out.append(sympy.Rational(x))
            continue
        if isinstance(x, sympy.Basic) and (x.is_Rational or x.is_Float):
            out.append(sympy.Rational(x))
            continue
        raise TypeError(f"{name} must have real rational or float entries, got {x!r}")
    return sympy.Matrix(M.shape[0], M.shape[1], out)


def _check_pair_shapes(A_shape: tuple[int, ...], V_shape: tuple[int, ...]) -> tuple[int, int]:
    if len(A_shape) != 2 or A_shape[0] != A_shape[1]:
        raise ValueError(f"A must be a square matrix of shape (d, d), got shape {A_shape}")
    if len(V_shape) != 2 or V_shape[1] != A_shape[0]:
        raise ValueError(
            f"V must have shape (d_out, d) with d = {A_shape[0]} (the size of A), got V {V_shape}"
        )
    if min(A_shape) == 0 or min(V_shape) == 0:
        raise ValueError(f"A and V must be non-empty, got A {A_shape} and V {V_shape}")
    return A_shape[0], V_shape[0]


def _layer_to_pair(layer: Any, name: str, *, exact: bool) -> tuple[Any, Any]:
    """``(A, V)`` from a layer given as ``(Q, K, V)`` or ``(A, V)``; exact or float."""
    if isinstance(layer, (str, bytes)) or not isinstance(layer, (tuple, list)):
        raise TypeError(
            f"{name} must be a tuple (Q, K, V) or (A, V) of matrices, got {type(layer).__name__}"
        )
    conv = _to_exact if exact else _to_float
    if len(layer) == 3:
        Q, K, V = (conv(m, f"{letter} of {name}") for m, letter in zip(layer, "QKV"))
        if tuple(Q.shape) != tuple(K.shape):
            raise ValueError(
                f"Q and K of {name} must have the same shape (a, d), got Q {tuple(Q.shape)} "
                f"and K {tuple(K.shape)}"
            )
        A = K.T * Q if exact else K.T @ Q
    elif len(layer) == 2:
        A, V = (conv(m, f"{letter} of {name}") for m, letter in zip(layer, "AV"))
    else:
        raise TypeError(
            f"{name} must be a tuple (Q, K, V) or (A, V), got a sequence of length {len(layer)}"
        )
    _check_pair_shapes(tuple(A.shape), tuple(V.shape))
    return A, V


def _magnitude(layer: Any, A: np.ndarray) -> np.ndarray:
    """``|K|ᵀ|Q|`` for a layer ``(Q, K, V)``, ``|A|`` for ``(A, V)`` (entrywise absolute values)."""
    if len(layer) == 3:
        return np.abs(_to_float(layer[1], "K")).T @ np.abs(_to_float(layer[0], "Q"))
    return np.abs(A)


def _check_scalar(c: Any, name: str = "c") -> Any:
    if isinstance(c, bool) or not isinstance(c, (numbers.Real, sympy.Basic)):
        raise TypeError(f"{name} must be a real number, got {type(c).__name__}")
    if isinstance(c, sympy.Basic) and not (c.is_Rational or c.is_Float):
        raise TypeError(f"{name} must be a real number, got {c!r}")
    if isinstance(c, numbers.Real) and not np.isfinite(float(c)):
        raise ValueError(f"{name} must be finite, got {c!r}")
    if c == 0:
        raise ValueError(f"{name} must be nonzero (the scaling (cA, V/c) needs c ≠ 0), got {c!r}")
    return c


# --------------------------------------------------------------------------------------------
# comparing functions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionComparison:
    """The answer of :func:`same_function`; ``bool(result)`` is ``result.same``.

    Explained in the chapter "Single-layer fibers".

    Attributes
    ----------
    same : bool
        The verdict (see :func:`same_function` for what it means for each method).
    method : {"numeric", "symbolic"}
        How it was decided.
    rel_diff : float
        The relative difference of the two functions (0 if both vanish). Numeric:
        ``‖φ_a(X) − φ_b(X)‖ / max(‖|V_a| |X| |X|ᵀ |A_a| |X|‖, same for b)``, Frobenius norms
        over the stacked random inputs, ``|·|`` entrywise absolute values (``|A| = |K|ᵀ |Q|``
        for a layer given as ``(Q, K, V)``): the denominator is the size the outputs would have
        without cancellation, which bounds float64 round-off, so a layer whose function is zero
        up to round-off (e.g. skew ``A`` at ``t = 1``) compares as equal to the zero layer.
        Symbolic: ``‖coef_a − coef_b‖ / max(‖coef_a‖, ‖coef_b‖)`` for the exact coefficient
        vectors of the two polynomial maps (computed exactly, then rounded).
    t : int
        The number of tokens of the inputs the functions were compared on.
    rtol : float or None
        The tolerance of the numeric method (``None`` for the symbolic one).
    n_inputs : int or None
        The number of random inputs of the numeric method (``None`` for the symbolic one).
    """

    same: bool
    method: str
    rel_diff: float
    t: int
    rtol: float | None = None
    n_inputs: int | None = None

    def __bool__(self) -> bool:
        return self.same


def _symbolic_tokens(d: int, t: int) -> sympy.Matrix:
    return sympy.Matrix(d, t, lambda i, j: sympy.Symbol(f"x_{i + 1}{j + 1}"))


def _coefficients(A: sympy.Matrix, V: sympy.Matrix, X: sympy.Matrix) -> dict:
    """The polynomial map ``X ↦ V X Xᵀ A X`` as {(entry, monomial): coefficient}."""
    Y = V * X * (X.T * A * X)
    gens = list(X)
    coeffs = {}
    for k, y in enumerate(Y):
        for mono, coef in sympy.Poly(y, *gens).terms():
            if coef != 0:
                coeffs[(k, mono)] = coef
    return coeffs


def same_function(
    layer_a: Any,
    layer_b: Any,
    *,
    method: Literal["numeric", "symbolic"] = "numeric",
    t: int = 3,
    n_inputs: int = 16,
    rtol: float = DEFAULT_RTOL,
    seed: int = 0,
) -> FunctionComparison:
    """Decide whether two single lightning layers compute the same function on ``t`` tokens.

    Parameters
    ----------
    layer_a, layer_b : tuple
        Each a triple ``(Q, K, V)`` (``Q, K``: array-like, shape=[a, d]; ``V``: array-like,
        shape=[d_out, d]) or a pair ``(A, V)`` (``A``: array-like, shape=[d, d]), read as the
        layer ``X ↦ V X Xᵀ A X``. The two layers may have different ``a`` but must share
        ``d`` and ``d_out``.
    method : {"numeric", "symbolic"}
        ``"symbolic"``: exact. The weights are converted to rationals (integers, fractions and
        sympy rationals as they are, floats as the exact binary numbers they store) and the two
        polynomial maps ``X ↦ V X Xᵀ A X`` on a ``d × t`` matrix of symbols are expanded and
        compared coefficient by coefficient. ``True`` means the two maps are identical on all
        real (indeed complex) ``d × t`` inputs. Refused when ``d · t`` exceeds
        :data:`MAX_SYMBOLIC_ENTRIES`.
        ``"numeric"`` (default): both layers are evaluated in float64 on ``n_inputs`` inputs
        ``X`` with independent standard normal entries (seeded by ``seed``), and ``True``
        means ``rel_diff ≤ rtol`` (see :class:`FunctionComparison` for the scale it is
        relative to) — agreement to relative precision ``rtol``, not exact
        equality. (If the functions differ, their difference is a nonzero polynomial and is
        nonzero at random inputs with probability one, but it may be smaller than ``rtol``.)
    t : int
        The number of tokens; functions are compared on inputs of shape ``(d, t)``. (The answer
        can depend on ``t``: for ``t = 1`` only the symmetric part of ``A`` matters.)
    n_inputs : int
        Number of random inputs (numeric method).
    rtol : float
        Relative tolerance (numeric method), default :data:`DEFAULT_RTOL` ``= 1e-9``: far
        above float64 round-off for moderate sizes, far below any difference of practical size.
    seed : int
        Seed of the random inputs (numeric method).

    Returns
    -------
    FunctionComparison
        Truthy exactly when the layers were found to compute the same function; it carries the
        relative difference ``rel_diff``.

    Raises
    ------
    ValueError
        On shapes that do not form layers, layers with different ``d`` or ``d_out``, a bad
        ``method``, ``t``, ``n_inputs`` or ``rtol``, or a symbolic problem that is too large.
    TypeError
        If a layer is not a tuple of numeric matrices.

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    if method not in ("numeric", "symbolic"):
        raise ValueError(f"method must be 'numeric' or 'symbolic', got {method!r}")
    t = _check_t(t)
    exact = method == "symbolic"
    A1, V1 = _layer_to_pair(layer_a, "layer_a", exact=exact)
    A2, V2 = _layer_to_pair(layer_b, "layer_b", exact=exact)
    if A1.shape[0] != A2.shape[0] or V1.shape[0] != V2.shape[0]:
        raise ValueError(
            "the layers map between different spaces: layer_a has (d, d_out) = "
            f"{(A1.shape[0], V1.shape[0])}, layer_b has {(A2.shape[0], V2.shape[0])}"
        )
    d = A1.shape[0]
    if exact:
        if d * t > MAX_SYMBOLIC_ENTRIES:
            raise ValueError(
                f"the symbolic comparison handles d · t ≤ {MAX_SYMBOLIC_ENTRIES} token entries, "
                f"got d = {d}, t = {t}; use method='numeric'"
            )
        X = _symbolic_tokens(d, t)
        ca, cb = _coefficients(A1, V1, X), _coefficients(A2, V2, X)
        keys = set(ca) | set(cb)
        diff2 = sum(((ca.get(k, 0) - cb.get(k, 0)) ** 2 for k in keys), sympy.Integer(0))
        na2 = sum((v**2 for v in ca.values()), sympy.Integer(0))
        nb2 = sum((v**2 for v in cb.values()), sympy.Integer(0))
        big = max(na2, nb2)
        rel = 0.0 if diff2 == 0 else float(sympy.sqrt(diff2 / big))
        return FunctionComparison(diff2 == 0, "symbolic", rel, t)
    if isinstance(n_inputs, bool) or not isinstance(n_inputs, numbers.Integral) or n_inputs < 1:
        raise ValueError(f"n_inputs must be a positive integer, got {n_inputs!r}")
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not 0 <= rtol < 1:
        raise ValueError(f"rtol must be a real number in [0, 1), got {rtol!r}")
    X = np.random.default_rng(seed).standard_normal((int(n_inputs), d, t))
    eye = np.eye(d)
    Y1 = _lightning(X, A1, eye, V1)
    Y2 = _lightning(X, A2, eye, V2)
    aX = np.abs(X)
    scale = max(
        np.linalg.norm(_lightning(aX, _magnitude(layer, A), eye, np.abs(V)))
        for layer, A, V in ((layer_a, A1, V1), (layer_b, A2, V2))
    )
    rel = 0.0 if scale == 0 else float(np.linalg.norm(Y1 - Y2) / scale)
    return FunctionComparison(rel <= rtol, "numeric", rel, t, float(rtol), int(n_inputs))


# --------------------------------------------------------------------------------------------
# the two kinds of fiber
# --------------------------------------------------------------------------------------------


def scaling_fiber(A: Any, V: Any, c: Any) -> tuple[Any, Any]:
    """The point ``(cA, c⁻¹V)`` of the scaling line through ``(A, V)``.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Attention matrix.
    V : array-like, shape=[d_out, d]
        Value matrix.
    c : real number
        The scale, nonzero.

    Returns
    -------
    tuple
        ``(c A, V / c)``: sympy matrices (exact) when ``A``, ``V`` and ``c`` are all exact
        (integers/rationals), float64 numpy arrays otherwise. It computes the same function as
        ``(A, V)`` for every ``t``, since ``φ`` is linear in ``A`` and in ``V``.

    Raises
    ------
    ValueError
        If ``c = 0`` or is not finite, or the shapes are not ``(d, d)`` and ``(d_out, d)``.
    TypeError
        If ``c`` is not a real number.

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    c = _check_scalar(c)
    _check_pair_shapes(_matrix_shape(A, "A"), _matrix_shape(V, "V"))
    if _is_exact(A) and _is_exact(V) and _is_exact_scalar(c):
        cq = sympy.Rational(c)
        return _to_exact(A, "A") * cq, _to_exact(V, "V") / cq
    c = float(c)
    return c * _to_float(A, "A"), _to_float(V, "V") / c


def rank_one_factors(M: Any, name: str = "M", *, min_gap: float = DEFAULT_MIN_GAP):
    """Factor a rank-1 matrix as ``M = u zᵀ``.

    Parameters
    ----------
    M : array-like, shape=[m, n]
        A matrix of rank exactly 1.
    name : str
        Its name in error messages.
    min_gap : float
        Float input only: the gap needed to read the rank (see :func:`lsa_lib.rank.float_rank`).

    Returns
    -------
    tuple
        ``(u, z)`` with ``M = u zᵀ``. Exact input: sympy column vectors, ``u`` the first nonzero
        column of ``M`` divided by the gcd of its entries (so integer ``M`` gives integer
        ``u`` and ``z``), signed so that its first nonzero entry is positive. Float input: numpy
        vectors of shapes ``(m,)`` and ``(n,)``, ``u = √σ₁ u₁``, ``z = √σ₁ v₁`` from the SVD
        (so ``‖u‖ = ‖z‖``). The factors are unique up to ``(s u, z / s)``.

    Raises
    ------
    ValueError
        If ``M`` does not have rank 1 — decided exactly over the rationals for exact input, and
        at the largest gap of the singular values for float input
        (:class:`lsa_lib.rank.RankAmbiguityError`, a ``ValueError``, when no gap of at least
        ``min_gap`` exists).

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    if _is_exact(M):
        E = _to_exact(M, name)
        r = E.rank()
        if r != 1:
            raise ValueError(f"{name} must have rank 1, but it has rank {r} (exact)")
        i, j = next((i, j) for i in range(E.rows) for j in range(E.cols) if E[i, j] != 0)
        u = E[:, j] / (sympy.gcd(list(E[:, j])) * sympy.sign(E[i, j]))
        return u, (E[i, :] / u[i]).T
    F = _to_float(M, name)
    reading = float_rank(F, min_gap=min_gap)
    if reading.rank != 1:
        raise ValueError(
            f"{name} must have rank 1, but its float rank is {reading.rank} "
            f"(singular-value gap {reading.gap:.3g})"
        )
    U, s, Wt = np.linalg.svd(F)
    root = np.sqrt(s[0])
    return root * U[:, 0], root * Wt[0]


def swap(A: Any, V: Any, *, min_gap: float = DEFAULT_MIN_GAP) -> tuple[Any, Any]:
    """The swap partner of a rank-1 point: ``(b cᵀ, v wᵀ) ↦ (w cᵀ, v bᵀ)``.

    Column ``j`` of ``φ(X)`` at ``A = b cᵀ``, ``V = v wᵀ`` is
    ``v (Σ_i (w·x_i)(b·x_i)) (c·x_j)``, symmetric in ``b`` and ``w``; so the partner computes
    the same function (for every ``t``). It is a rescaling of ``(A, V)`` only when ``w`` is
    parallel to ``b``.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        An attention matrix of rank 1.
    V : array-like, shape=[d_out, d]
        A value matrix of rank 1.
    min_gap : float
        Float input only: the singular-value gap needed to read a rank.

    Returns
    -------
    tuple
        ``(A', V') = (w cᵀ, v bᵀ)``, with the factors of :func:`rank_one_factors`. The
        factorizations are unique only up to ``(s b, c / s)`` and ``(r v, w / r)``, which
        changes the partner to ``(A' / (rs), rs V')``: the partner is well defined up to the
        scaling line. Exact input (both matrices integer/rational): sympy matrices, ranks decided
        exactly. Otherwise float64 arrays, ranks read with :func:`lsa_lib.rank.float_rank`.

    Raises
    ------
    ValueError
        If ``A`` or ``V`` does not have rank 1, or the shapes are not ``(d, d)``, ``(d_out, d)``.

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    _check_pair_shapes(_matrix_shape(A, "A"), _matrix_shape(V, "V"))
    exact = _is_exact(A) and _is_exact(V)
    if not exact:  # both factorizations in float
        A, V = _to_float(A, "A"), _to_float(V, "V")
    b, c = rank_one_factors(A, "A", min_gap=min_gap)
    v, w = rank_one_factors(V, "V", min_gap=min_gap)
    if exact:
        return w * c.T, v * b.T
    return np.outer(w, c), np.outer(v, b)


def rescaling_factor(
    pair_a: tuple[Any, Any], pair_b: tuple[Any, Any], *, rtol: float = DEFAULT_RTOL
) -> Any:
    """The ``c`` with ``(A_b, V_b) = (c A_a, V_a / c)``, or ``None`` if there is none.

    Parameters
    ----------
    pair_a, pair_b : tuple of (A, V)
        ``A``: array-like, shape=[d, d]; ``V``: array-like, shape=[d_out, d].
    rtol : float
        Float input only: the relative tolerance of the two matrix equations.

    Returns
    -------
    number or None
        Exact input (all four matrices integer/rational): a sympy rational, decided exactly.
        Float input: the least-squares ``c`` (a float) if both equations hold to relative
        precision ``rtol`` (in Frobenius norm), else ``None``.

    Raises
    ------
    ValueError
        On shapes that do not fit or differ between the pairs.

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    for name, pair in (("pair_a", pair_a), ("pair_b", pair_b)):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"{name} must be a pair (A, V)")
    shapes = [(_matrix_shape(p[0], "A"), _matrix_shape(p[1], "V")) for p in (pair_a, pair_b)]
    for s in shapes:
        _check_pair_shapes(*s)
    if shapes[0] != shapes[1]:
        raise ValueError(f"the pairs have different shapes: {shapes[0]} and {shapes[1]}")
    if all(_is_exact(m) for m in (*pair_a, *pair_b)):
        Aa, Va = (_to_exact(m, n) for m, n in zip(pair_a, "AV"))
        Ab, Vb = (_to_exact(m, n) for m, n in zip(pair_b, "AV"))
        if Aa.is_zero_matrix or Ab.is_zero_matrix:
            if not (Aa.is_zero_matrix and Ab.is_zero_matrix):
                return None
            if Va.is_zero_matrix or Vb.is_zero_matrix:
                return sympy.Integer(1) if Va.is_zero_matrix and Vb.is_zero_matrix else None
            i = next(k for k in range(len(Vb)) if Vb[k] != 0)
            c = Va[i] / Vb[i]
        else:
            i = next(k for k in range(len(Aa)) if Aa[k] != 0)
            c = Ab[i] / Aa[i]
            if c == 0:
                return None
        return c if (Ab == c * Aa and Vb == Va / c) else None
    Aa, Va = (_to_float(m, n) for m, n in zip(pair_a, "AV"))
    Ab, Vb = (_to_float(m, n) for m, n in zip(pair_b, "AV"))

    def close(X: np.ndarray, Y: np.ndarray) -> bool:
        return bool(np.linalg.norm(X - Y) <= rtol * max(np.linalg.norm(X), np.linalg.norm(Y)))

    nA = float(np.sum(Aa * Aa))
    if nA == 0:
        if np.any(Ab):
            return None
        nV = float(np.sum(Vb * Vb))
        if nV == 0:
            return 1.0 if not np.any(Va) else None
        c = float(np.sum(Va * Vb)) / nV
    else:
        c = float(np.sum(Ab * Aa)) / nA
    if c == 0 or not np.isfinite(c):
        return None
    return c if close(Ab, c * Aa) and close(Vb, Va / c) else None


# --------------------------------------------------------------------------------------------
# fiber dimension
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FiberDimension:
    """The answer of :func:`fiber_dimension`.

    Explained in the chapter "Single-layer fibers".

    Attributes
    ----------
    dimension : int
        ``n_params − rank``: the dimension of the kernel of the Jacobian at the point.
    rank : int
        The rank of the Jacobian of the parametrization at the point: read in float64 at the
        largest gap of its singular values (``method="numeric"``), or certified by exact
        arithmetic modulo a prime (``method="exact"``).
    gap : float
        The factor by which the singular values drop at that rank (``inf`` for the exact
        method, which reads no float singular values).
    n_params : int
        The number of coordinates (``d² + d_out d`` or ``2ad + d_out d``).
    coordinates : {"AV", "QKV"}
    t : int
    method : {"numeric", "exact"}
    details : object
        The rank engine's full result: :class:`lsa_lib.rank.NumericalDimension` (numeric) or
        :class:`lsa_lib.rank.CertifiedDimension` (exact).
    """

    dimension: int
    rank: int
    gap: float
    n_params: int
    coordinates: str
    t: int
    method: str
    details: Any = field(repr=False)


def _balanced_factors(A: np.ndarray, a: int, min_gap: float) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, K)`` of shape ``(a, d)`` with ``Kᵀ Q = A`` (from the SVD; needs rank A ≤ a ≤ d)."""
    d = A.shape[0]
    if a > d:
        raise ValueError(f"a must be at most d = {d} to factor A into (Q, K), got a = {a}")
    if np.any(A):
        r = float_rank(A, min_gap=min_gap).rank
        if r > a:
            raise ValueError(f"A has rank {r}, so it is not Kᵀ Q with Q, K of shape ({a}, {d})")
    U, s, Wt = np.linalg.svd(A)
    root = np.sqrt(s[:a])
    return root[:, None] * Wt[:a], root[:, None] * U[:, :a].T


def _integer_matrix(M: Any, name: str) -> np.ndarray:
    """An int64 numpy matrix from exact integer input (refusing floats and non-integers)."""
    if not _is_exact(M):
        raise TypeError(f"method='exact' needs integer weights, but {name} has float entries")
    E = _to_exact(M, name)
    if not all(x.is_Integer for x in E):
        raise ValueError(f"method='exact' needs integer weights, but {name} has a non-integer")
    return np.array([[int(x) for x in E.row(i)] for i in range(E.rows)], dtype=np.int64)


def fiber_dimension(
    *weights: Any,
    t: int = 3,
    coordinates: Literal["AV", "QKV"] | None = None,
    a: int | None = None,
    method: Literal["numeric", "exact"] = "numeric",
    n_inputs: int | None = None,
    seed: int = 0,
    min_gap: float = DEFAULT_MIN_GAP,
) -> FiberDimension:
    """The dimension of the fiber through a point: parameters minus the Jacobian's rank there.

    The Jacobian of the parametrization (weights ↦ outputs on random inputs with ``t`` tokens)
    is computed by the rank engine, and ``P − rank`` is returned: the dimension of the kernel
    of the differential at the point. That is the dimension of the fiber through the point when
    the Jacobian has locally constant rank there (at generic points); in general it bounds the
    dimension of the fiber's tangent space from above (at special points the kernel can be
    larger than the fiber).

    Parameters
    ----------
    *weights : array-like
        Either ``A, V`` (``A``: shape=[d, d], ``V``: shape=[d_out, d]) or ``Q, K, V``
        (``Q, K``: shape=[a, d]).
    t : int
        Number of tokens of the inputs (``t ≥ 2`` for the book's results; ``t = 1`` sees only
        the symmetric part of ``A``).
    coordinates : {"AV", "QKV"}, optional
        The coordinates of the parameter space: ``"AV"`` (``P = d² + d_out d``, the
        parametrization :func:`lsa_lib.rank.attention_value_parametrization`) or ``"QKV"``
        (``P = 2ad + d_out d``, :func:`lsa_lib.rank.lightning_parametrization`). Default: the
        coordinates of the given weights. Given ``Q, K, V`` and ``"AV"``, the point is
        ``(Kᵀ Q, V)``. Given ``A, V`` and ``"QKV"``, the point is ``(Q, K, V)`` with ``(Q, K)``
        the balanced SVD factors of ``A`` with ``a`` rows (default ``a = d``; needs
        ``rank A ≤ a ≤ d``); with ``method="exact"`` it is ``(A, I_d, V)`` (``a = d`` only).
    a : int, optional
        Only for ``A, V`` in ``"QKV"`` coordinates, see above.
    method : {"numeric", "exact"}
        ``"numeric"`` (default): :func:`lsa_lib.rank.numerical_rank`, float64, the rank read at
        the largest gap of the singular values (at least ``min_gap``).
        ``"exact"``: :func:`lsa_lib.rank.certified_rank` at the given **integer** point, exact
        arithmetic modulo a large prime. Its lower bound (rank of the sampled Jacobian mod
        ``p``) and upper bound (``P`` minus the rank of the known symmetry directions — the
        scaling, and in ``"QKV"`` coordinates also ``GL_a`` — at the point) are both proven;
        when they meet the rank is certified, otherwise a ``ValueError`` reports the bounds
        (e.g. at points where the kernel is larger than the symmetries, such as ``A = 0``).
    n_inputs : int, optional
        Number of random inputs; default ``⌈2P / (d_out t)⌉ + 2``, so that the sampled
        outputs outnumber the parameters twice (at special points, such as rank-1 weights, each
        input carries less information than at generic ones).
    seed : int
        Seed of the random inputs.
    min_gap : float
        Numeric method: the least singular-value gap at which a rank is trusted.

    Returns
    -------
    FiberDimension
        ``dimension = n_params − rank``, with the rank, its gap and the engine's result.

    Raises
    ------
    ValueError
        On shapes that do not fit, a bad ``coordinates``/``t``/``a``/``method``, weights given
        in a way that does not match (e.g. ``a`` with ``Q, K, V``), non-integer weights for the
        exact method, or exact bounds that do not meet.
    TypeError
        If the number of weight matrices is not 2 or 3, or the exact method gets floats.
    lsa_lib.rank.RankAmbiguityError
        Numeric method: if the singular values have no gap of at least ``min_gap``.

    Notes
    -----
    Explained in the chapter "Single-layer fibers".
    """
    from .rank import (  # the engine's parametrizations
        attention_value_parametrization,
        certified_rank,
        lightning_parametrization,
        numerical_rank,
    )

    t = _check_t(t)
    if coordinates not in (None, "AV", "QKV"):
        raise ValueError(f"coordinates must be 'AV' or 'QKV', got {coordinates!r}")
    if method not in ("numeric", "exact"):
        raise ValueError(f"method must be 'numeric' or 'exact', got {method!r}")
    exact = method == "exact"
    conv = _integer_matrix if exact else _to_float
    if len(weights) == 2:
        A, V = conv(weights[0], "A"), conv(weights[1], "V")
        d, d_out = _check_pair_shapes(A.shape, V.shape)
        coordinates = coordinates or "AV"
        if coordinates == "QKV":
            a_rows = d if a is None else a
            if isinstance(a_rows, bool) or not isinstance(a_rows, numbers.Integral) or a_rows < 1:
                raise ValueError(f"a must be a positive integer, got {a!r}")
            if exact:
                if a_rows != d:
                    raise ValueError(
                        f"method='exact' factors A as Kᵀ Q with K = I, so a must be d = {d}; "
                        "pass integer Q, K, V for other a"
                    )
                Q, K = A, np.eye(d, dtype=np.int64)
            else:
                Q, K = _balanced_factors(A, int(a_rows), min_gap)
        elif a is not None:
            raise ValueError("a is only used for (A, V) in 'QKV' coordinates")
    elif len(weights) == 3:
        if a is not None:
            raise ValueError("a is read from Q and K; do not pass it with (Q, K, V)")
        Q, K, V = (conv(m, n) for m, n in zip(weights, "QKV"))
        if Q.shape != K.shape:
            raise ValueError(
                f"Q and K must have the same shape (a, d), got Q {Q.shape} and K {K.shape}"
            )
        A = K.T @ Q
        d, d_out = _check_pair_shapes(A.shape, V.shape)
        coordinates = coordinates or "QKV"
    else:
        raise TypeError(
            f"fiber_dimension takes the weights A, V or Q, K, V; got {len(weights)} arrays"
        )
    if coordinates == "AV":
        param = attention_value_parametrization(d, d_out, t)
        params = [A, V]
    else:
        param = lightning_parametrization((d, d_out), (Q.shape[0],), t)
        params = [Q, K, V]
    if n_inputs is None:  # twice as many sampled outputs as parameters (special points need more)
        n_inputs = -(-2 * param.n_params // (d_out * t)) + 2
    if exact:
        cert = certified_rank(param, params, seed=seed, n_inputs=n_inputs)
        if not cert.exact:
            raise ValueError(
                f"the exact bounds do not meet at this point: {cert.lower} ≤ rank ≤ {cert.upper}, "
                f"so {cert.n_params - cert.upper} ≤ fiber dimension ≤ "
                f"{cert.n_params - cert.lower}; the known symmetries do not span the kernel here "
                "(use method='numeric')"
            )
        rank, gap, result = int(cert.lower), float("inf"), cert
    else:
        result = numerical_rank(param, params, n_inputs=n_inputs, seed=seed, min_gap=min_gap)
        rank, gap = int(result.rank), float(result.gap)
    return FiberDimension(
        dimension=int(param.n_params - rank),
        rank=rank,
        gap=gap,
        n_params=int(param.n_params),
        coordinates=coordinates,
        t=t,
        method=method,
        details=result,
    )

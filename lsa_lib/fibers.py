"""Single-layer fibers: which weights give the same function (:doc:`/book/02_fibers`).

One lightning layer depends on ``W = (Q, K, V)`` only through ``A = Kᵀ Q`` and ``V``. For
``t ≥ 2`` tokens the book checks that the generic fiber in ``(A, V)`` coordinates is the line
``{(cA, c⁻¹V)}``, that a rank-one point ``(b cᵀ, v wᵀ)`` has a second line through its swap
partner ``(w cᵀ, v bᵀ)`` (:func:`swap`), and that ``φ = 0`` exactly when ``A = 0`` or ``V = 0``.

A layer is given as ``(Q, K, V)`` or as ``(A, V)``. Exact input (sympy matrices, integer
arrays, arrays of ``int``/``Fraction``/sympy rationals) is decided exactly over the rationals;
float input in float64, ranks read at the largest gap (:func:`lsa_lib.rank.float_rank`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import sympy
from numpy.typing import ArrayLike

from . import _checks
from .lightning import _layer, _normalizer, attention_matrix
from .rank import ExactRank, FloatRank, Parametrization, exact_rank, float_rank
from .symbolic import symbolic_attention, symbolic_matrix
from .symmetries import network_parametrization
from .tolerances import GAP_MIN

__all__ = [
    "FunctionComparison",
    "FiberReading",
    "FiberCertificate",
    "same_function",
    "swap",
    "rescaling_factor",
    "fiber_dimension",
    "attention_value_parametrization",
]

_SAME_RTOL = 1e-9  # the float comparison's default relative tolerance
_MAX_EXACT_ENTRIES = 36  # the exact comparison refuses inputs with more token entries d · t


def _as_pair(layer: Any, name: str, *, exact: bool) -> tuple[Any, Any]:
    """``(A, V)`` from a layer given as ``(Q, K, V)`` or ``(A, V)``; exact or float."""
    if isinstance(layer, (str, bytes)) or not isinstance(layer, (tuple, list)):
        raise TypeError(f"{name} must be a tuple (Q, K, V) or (A, V) of matrices")
    if len(layer) not in (2, 3):
        raise TypeError(
            f"{name} must be (Q, K, V) or (A, V), got a sequence of length {len(layer)}"
        )
    conv = _checks.rational_matrix if exact else _checks.matrix
    mats = [conv(M, f"{x} of {name}") for M, x in zip(layer, "AV" if len(layer) == 2 else "QKV")]
    if len(mats) == 3:
        Q, K, V = mats
        if tuple(Q.shape) != tuple(K.shape):
            raise ValueError(
                f"Q and K of {name} must have the same shape (a, d), got Q {tuple(Q.shape)} "
                f"and K {tuple(K.shape)}"
            )
        mats = [K.T @ Q, V]
    _checks.pair_shapes(tuple(mats[0].shape), tuple(mats[1].shape))
    return mats[0], mats[1]


@dataclass(frozen=True)
class FunctionComparison:
    """The answer of :func:`same_function`; ``bool(result)`` is ``result.same``.

    Explained in :doc:`/book/02_fibers`.

    Attributes
    ----------
    same : bool
    method : {"float", "exact"}
    rel_diff : float
        Float: ``‖φ_a(X) − φ_b(X)‖ / max(‖|V| |X| |X|ᵀ |A| |X|‖)`` over the two layers
        (Frobenius norms over the random inputs, ``|·|`` entrywise, ``|A| = |K|ᵀ|Q|`` for a
        layer given as ``(Q, K, V)``): the size the outputs would have without cancellation,
        which bounds the round-off. Exact: the relative difference of the coefficient vectors.
    t : int
    rtol : float or None
        The float method's tolerance.
    n_inputs : int or None
        The float method's number of random inputs.
    """

    same: bool
    method: str
    rel_diff: float
    t: int
    rtol: float | None = None
    n_inputs: int | None = None

    def __bool__(self) -> bool:
        return self.same


def _coefficients(A: sympy.Matrix, V: sympy.Matrix, t: int) -> dict[tuple[int, Any], Any]:
    X = symbolic_matrix("x", A.shape[0], t)
    Y = symbolic_attention(X, [(A, sympy.eye(A.shape[0]), V)])
    return {
        (k, mono): c for k, y in enumerate(Y) for mono, c in sympy.Poly(y, *X).terms() if c != 0
    }


def same_function(
    layer_a: tuple[Any, ...],
    layer_b: tuple[Any, ...],
    *,
    method: Literal["float", "exact"] = "float",
    t: int = 3,
    n_inputs: int = 16,
    rtol: float = _SAME_RTOL,
    seed: int = 0,
) -> FunctionComparison:
    """Whether two lightning layers compute the same function on ``t`` tokens.

    Explained in :doc:`/book/02_fibers`.

    Parameters
    ----------
    layer_a, layer_b : tuple
        ``(Q, K, V)`` (``Q, K``: shape=[a, d], ``V``: shape=[d_out, d]) or ``(A, V)``
        (``A``: shape=[d, d]); the two may differ in ``a`` but share ``d`` and ``d_out``.
    method : {"float", "exact"}
        ``"exact"``: the weights become rationals (floats: the binary numbers they store) and
        the two polynomial maps on a ``d × t`` matrix of symbols are compared coefficient by
        coefficient; ``True`` means identical on all inputs (refused for ``d · t > 36``).
        ``"float"``: both layers on ``n_inputs`` standard normal inputs in float64; ``True``
        means ``rel_diff ≤ rtol``, agreement to relative precision ``rtol``.
    t : int
        Tokens per input; the answer can depend on it (``t = 1`` sees only sym(A)).
    n_inputs, rtol, seed
        The float method's inputs, tolerance (default ``1e-9``) and seed.

    Returns
    -------
    FunctionComparison

    Raises
    ------
    ValueError
        On shapes that do not form layers or differ in ``d`` or ``d_out``, bad options, or an
        exact problem that is too large.
    TypeError
        If a layer is not a tuple of numeric matrices.
    """
    _checks.choice(method, "method", ("float", "exact"))
    t, exact = _checks.tokens(t), method == "exact"
    A1, V1 = _as_pair(layer_a, "layer_a", exact=exact)
    A2, V2 = _as_pair(layer_b, "layer_b", exact=exact)
    if A1.shape[0] != A2.shape[0] or V1.shape[0] != V2.shape[0]:
        raise ValueError(
            "the layers map between different spaces: layer_a has (d, d_out) = "
            f"{(A1.shape[0], V1.shape[0])}, layer_b has {(A2.shape[0], V2.shape[0])}"
        )
    d = A1.shape[0]
    if exact:
        if d * t > _MAX_EXACT_ENTRIES:
            raise ValueError(
                f"the exact comparison handles d · t ≤ {_MAX_EXACT_ENTRIES} token entries, got "
                f"d = {d}, t = {t}; use method='float'"
            )
        ca, cb = _coefficients(A1, V1, t), _coefficients(A2, V2, t)
        diff2 = sum(((ca.get(k, 0) - cb.get(k, 0)) ** 2 for k in set(ca) | set(cb)), sympy.S(0))
        big = max(sum((v**2 for v in c.values()), sympy.S(0)) for c in (ca, cb))
        rel = 0.0 if diff2 == 0 else float(sympy.sqrt(diff2 / big))
        return FunctionComparison(diff2 == 0, "exact", rel, t)
    n_inputs = _checks.size(n_inputs, "n_inputs")
    rtol = _checks.real(rtol, "rtol")
    if not 0 <= rtol < 1:
        raise ValueError(f"rtol must be a real number in [0, 1), got {rtol!r}")
    X = np.random.default_rng(_checks.seed(seed)).standard_normal((n_inputs, d, t))
    diff = _layer(X, A1, None, V1) - _layer(X, A2, None, V2)

    def magnitude(layer: Any, A: Any, V: Any) -> float:
        absA = np.abs(A)
        if len(layer) == 3:
            absA = np.abs(_checks.matrix(layer[1], "K")).T @ np.abs(_checks.matrix(layer[0], "Q"))
        return float(np.linalg.norm(_layer(np.abs(X), absA, None, np.abs(V))))

    scale = max(magnitude(layer_a, A1, V1), magnitude(layer_b, A2, V2))
    rel = 0.0 if scale == 0 else float(np.linalg.norm(diff) / scale)
    return FunctionComparison(rel <= rtol, "float", rel, t, rtol, n_inputs)


def _rank_one_factors(M: Any, name: str, min_gap: float) -> tuple[Any, Any]:
    """``(u, z)`` with ``M = u zᵀ`` for a matrix of rank exactly 1 (exact or float)."""
    if _checks.is_exact(M):
        E = _checks.rational_matrix(M, name)
        r = exact_rank(E).lower
        if r != 1:
            raise ValueError(f"{name} must have rank 1, but it has rank {r} (exact)")
        i, j = next((i, j) for i in range(E.rows) for j in range(E.cols) if E[i, j] != 0)
        u = E[:, j] / (sympy.gcd(list(E[:, j])) * sympy.sign(E[i, j]))
        return u, (E[i, :] / u[i]).T
    F = _checks.matrix(M, name)
    reading = float_rank(F, min_gap=min_gap)
    if reading.rank != 1:
        raise ValueError(
            f"{name} must have rank 1, but its float rank is {reading.rank} "
            f"(singular-value gap {reading.gap:.3g})"
        )
    U, s, Wt = np.linalg.svd(F)
    return np.sqrt(s[0]) * U[:, 0], np.sqrt(s[0]) * Wt[0]


def swap(A: ArrayLike, V: ArrayLike, *, min_gap: float = GAP_MIN) -> tuple[Any, Any]:
    """The swap partner of a rank-one point: ``(b cᵀ, v wᵀ) ↦ (w cᵀ, v bᵀ)``.

    Column ``j`` of ``φ(X)`` at ``A = b cᵀ``, ``V = v wᵀ`` is ``v (Σ_i (w·x_i)(b·x_i)) (c·x_j)``,
    symmetric in ``b`` and ``w``: the partner computes the same function, for every ``t``.
    Explained in :doc:`/book/02_fibers/swap`.

    Parameters
    ----------
    A : array-like, shape=[d, d]
        Of rank 1.
    V : array-like, shape=[d_out, d]
        Of rank 1.
    min_gap : float
        Float input: the gap needed to read the ranks.

    Returns
    -------
    tuple
        ``(w cᵀ, v bᵀ)``: sympy matrices (ranks decided exactly) when both inputs are exact,
        float64 arrays otherwise. Defined up to the scaling line (the factors are unique up to
        ``(s b, c / s)`` and ``(r v, w / r)``).

    Raises
    ------
    ValueError
        If ``A`` or ``V`` does not have rank 1, or the shapes do not fit.
    """
    _checks.pair_shapes(_checks.shape(A, "A"), _checks.shape(V, "V"))
    exact = _checks.is_exact(A) and _checks.is_exact(V)
    if not exact:
        A, V = _checks.pair(A, V)
    b, c = _rank_one_factors(A, "A", min_gap)
    v, w = _rank_one_factors(V, "V", min_gap)
    return (w * c.T, v * b.T) if exact else (np.outer(w, c), np.outer(v, b))


def rescaling_factor(
    pair_a: tuple[Any, Any], pair_b: tuple[Any, Any], *, rtol: float = _SAME_RTOL
) -> sympy.Rational | float | None:
    """The ``c`` with ``(A_b, V_b) = (c A_a, V_a / c)``, or None (:doc:`/book/02_fibers/swap`).

    Parameters
    ----------
    pair_a, pair_b : tuple of (A, V)
        ``A``: array-like, shape=[d, d]; ``V``: array-like, shape=[d_out, d].
    rtol : float
        Float input: the relative tolerance of the two matrix equations (Frobenius norm).

    Returns
    -------
    sympy.Rational, float or None
        Exact input (all four matrices exact): decided exactly. Float input: the least-squares
        ``c`` if both equations hold to ``rtol``.
    """
    for name, p in (("pair_a", pair_a), ("pair_b", pair_b)):
        if not isinstance(p, (tuple, list)) or len(p) != 2:
            raise TypeError(f"{name} must be a pair (A, V)")
    shapes = [(_checks.shape(p[0], "A"), _checks.shape(p[1], "V")) for p in (pair_a, pair_b)]
    for s in shapes:
        _checks.pair_shapes(*s)
    if shapes[0] != shapes[1]:
        raise ValueError(f"the pairs have different shapes: {shapes[0]} and {shapes[1]}")
    if all(_checks.is_exact(M) for M in (*pair_a, *pair_b)):
        Aa, Va, Ab, Vb = (_checks.rational_matrix(M, n) for M, n in zip((*pair_a, *pair_b), "AVAV"))
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
    Aa, Va, Ab, Vb = (_checks.matrix(M, n) for M, n in zip((*pair_a, *pair_b), "AVAV"))

    def close(X: np.ndarray, Y: np.ndarray) -> bool:
        return bool(np.linalg.norm(X - Y) <= rtol * max(np.linalg.norm(X), np.linalg.norm(Y)))

    if not np.any(Aa):
        if np.any(Ab):
            return None
        if not np.any(Vb):
            return 1.0 if not np.any(Va) else None
        c = float(np.sum(Va * Vb)) / float(np.sum(Vb * Vb))
    else:
        c = float(np.sum(Ab * Aa)) / float(np.sum(Aa * Aa))
    if c == 0 or not np.isfinite(c):
        return None
    return c if close(Ab, c * Aa) and close(Vb, Va / c) else None


def attention_value_parametrization(
    d: int, d_out: int, t: int = 3, normalizer: str | None = None
) -> Parametrization:
    """One layer in ``(A, V)`` coordinates, ``(A, V) ↦ (X ↦ V X N(Xᵀ A X))``, for the engine.

    Explained in :doc:`/book/02_fibers` and :doc:`/book/02_fibers/certificate` (lightning) and
    :doc:`/book/06_softmax` (normalized).

    Parameters
    ----------
    d, d_out : int
        ``A`` has shape ``(d, d)``, ``V`` shape ``(d_out, d)``.
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning, polynomial, generator: the scaling ``(A, −V)``) or a key of
        :data:`lsa_lib.lightning.NORMALIZERS` (float engine only, no generators).

    Returns
    -------
    lsa_lib.rank.Parametrization
        Blocks ``[A, V]`` (``d² + d·d_out`` parameters).
    """
    d, d_out, t = _checks.size(d, "d"), _checks.size(d_out, "d_out"), _checks.tokens(t)
    S = _normalizer(normalizer)
    return Parametrization(
        name=f"{normalizer or 'lightning'} layer in (A, V), d={d}, d'={d_out}, t={t}",
        shapes=((d, d), (d_out, d)),
        input_shape=(d, t),
        forward=lambda params, X: _layer(X, params[0], None, params[1], S),
        generators=None if S else (lambda params: [[params[0], -params[1]]]),
        polynomial=S is None,
    )


@dataclass(frozen=True)
class FiberReading(FloatRank):
    """A float reading of :func:`fiber_dimension` that prints the fiber's dimension.

    A :class:`lsa_lib.rank.FloatRank` of the Jacobian (``.rank``, ``.gap``,
    ``.singular_values``, …) whose ``str`` is ``.nullity``, the dimension of the kernel, with
    ``?`` when the gap is below the threshold. Explained in :doc:`/book/02_fibers`.
    """

    def __str__(self) -> str:
        return str(self.nullity) if self.trusted else f"{self.nullity}?"


@dataclass(frozen=True)
class FiberCertificate(ExactRank):
    """An exact answer of :func:`fiber_dimension` that prints the fiber's dimension.

    A :class:`lsa_lib.rank.ExactRank` of the Jacobian (``.rank``, ``.lower``, ``.upper``, …)
    whose ``str`` is the certified ``.nullity``, or the range ``P − upper..P − lower`` when the
    bounds do not meet. Explained in :doc:`/book/02_fibers/certificate`.
    """

    def __str__(self) -> str:
        if self.certified:
            return str(self.nullity)
        return f"{self.n_params - self.upper}..{self.n_params - self.lower}"


def _as_fiber(result: FloatRank | ExactRank) -> FiberReading | FiberCertificate:
    """The same result, as the fiber type that prints the fiber dimension."""
    cls = FiberReading if isinstance(result, FloatRank) else FiberCertificate
    values = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.init}
    return cls(**values)


def _balanced_factors(A: np.ndarray, a: int, min_gap: float) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, K)`` of shape ``(a, d)`` with ``Kᵀ Q = A`` (from the SVD; needs rank A ≤ a ≤ d)."""
    d = A.shape[0]
    if a > d:
        raise ValueError(f"a must be at most d = {d} to factor A into (Q, K), got a = {a}")
    if np.any(A) and (r := float_rank(A, min_gap=min_gap).rank) > a:
        raise ValueError(f"A has rank {r}, so it is not Kᵀ Q with Q, K of shape ({a}, {d})")
    U, s, Wt = np.linalg.svd(A)
    root = np.sqrt(s[:a])
    return root[:, None] * Wt[:a], root[:, None] * U[:, :a].T


def fiber_dimension(
    *weights: ArrayLike,
    t: int = 3,
    normalizer: str | None = None,
    coordinates: Literal["AV", "QKV"] | None = None,
    a: int | None = None,
    method: Literal["float", "exact"] = "float",
    n_inputs: int | None = None,
    seed: int = 0,
    min_gap: float = GAP_MIN,
) -> FiberReading | FiberCertificate:
    """The Jacobian rank of one layer's parametrization at a point; its ``nullity`` is the fiber.

    ``P − rank`` is the dimension of the kernel of the differential at the point: the fiber
    dimension where the rank is locally constant (generic points); at special points an upper
    bound for the fiber's tangent space. Explained in :doc:`/book/02_fibers`.

    Parameters
    ----------
    *weights : array-like
        ``A, V`` (``A``: shape=[d, d], ``V``: shape=[d_out, d]) or ``Q, K, V`` (``Q, K``:
        shape=[a, d]).
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (float only).
    coordinates : {"AV", "QKV"}, optional
        Default: those of the weights. ``Q, K, V`` in ``"AV"``: the point ``(Kᵀ Q, V)``.
        ``A, V`` in ``"QKV"``: ``(Q, K)`` the balanced SVD factors of ``A`` with ``a`` rows
        (default ``a = d``; needs ``rank A ≤ a ≤ d``); exact: ``(A, I_d, V)``.
    a : int, optional
        Only for ``A, V`` in ``"QKV"`` coordinates.
    method : {"float", "exact"}
        ``"float"``: :func:`lsa_lib.rank.float_rank` (rank at the largest gap, ≥ ``min_gap``).
        ``"exact"``: :func:`lsa_lib.rank.exact_rank` at the given integer point; bounds that do
        not meet raise ``ValueError`` (e.g. at ``A = 0`` the kernel exceeds the symmetries).
    n_inputs : int, optional
        Default ``⌈2P / (d_out t)⌉ + 2``: twice as many sampled outputs as parameters.
    seed : int
        Seed of the inputs.
    min_gap : float
        Float: the least gap trusted.

    Returns
    -------
    FiberReading or FiberCertificate
        A :class:`lsa_lib.rank.FloatRank` or :class:`lsa_lib.rank.ExactRank` of the Jacobian:
        ``.rank`` and ``.nullity`` (the fiber dimension, which is what it prints); the float
        reading carries its gap.

    Raises
    ------
    ValueError
        On shapes that do not fit, bad options, non-integer weights for the exact method, or
        exact bounds that do not meet.
    lsa_lib.rank.RankAmbiguityError
        Float: no gap of ``min_gap``.
    """
    t, S = _checks.tokens(t), _normalizer(normalizer)
    _checks.choice(method, "method", ("float", "exact"))
    if coordinates is not None:
        _checks.choice(coordinates, "coordinates", ("AV", "QKV"))
    exact = method == "exact"
    if exact and S is not None:
        raise ValueError("method='exact' needs a polynomial layer: use normalizer=None")
    if exact and not all(_checks.is_exact(W) for W in weights):
        raise TypeError("method='exact' needs integer weights, but some have float entries")
    conv = _checks.integer_matrix if exact else _checks.matrix
    mats = [conv(W, n) for W, n in zip(weights, "AV" if len(weights) == 2 else "QKV")]
    if len(mats) == 2:
        A, V = mats
        d, d_out = _checks.pair_shapes(A.shape, V.shape)
        coordinates = coordinates or "AV"
        if coordinates == "QKV":
            rows = d if a is None else _checks.size(a, "a")
            if exact and rows != d:
                raise ValueError(
                    f"method='exact' factors A as Kᵀ Q with K = I, so a must be d = {d}"
                )
            Q, K = (A, np.eye(d, dtype=np.int64)) if exact else _balanced_factors(A, rows, min_gap)
        elif a is not None:
            raise ValueError("a is only used for (A, V) in 'QKV' coordinates")
    elif len(mats) == 3:
        if a is not None:
            raise ValueError("a is read from Q and K; do not pass it with (Q, K, V)")
        Q, K, V = mats
        A = attention_matrix(Q, K) if not exact else K.T @ Q
        d, d_out = _checks.pair_shapes(A.shape, V.shape)
        coordinates = coordinates or "QKV"
    else:
        raise TypeError(f"fiber_dimension takes A, V or Q, K, V; got {len(weights)} arrays")
    if coordinates == "AV":
        param, params = attention_value_parametrization(d, d_out, t, normalizer), [A, V]
    else:
        param = network_parametrization((d, d_out), (Q.shape[0],), t, normalizer)
        params = [Q, K, V]
    default = -(-2 * param.n_params // (d_out * t)) + 2
    n = default if n_inputs is None else _checks.size(n_inputs, "n_inputs")
    if not exact:
        return _as_fiber(float_rank(param, params, n_inputs=n, seed=seed, min_gap=min_gap))
    cert = exact_rank(param, params, seed=seed, n_inputs=n)
    if not cert.certified:
        raise ValueError(
            f"the exact bounds do not meet at this point: {cert.lower} ≤ rank ≤ {cert.upper}, "
            f"so {cert.n_params - cert.upper} ≤ fiber dimension ≤ {cert.n_params - cert.lower}; "
            "the known symmetries do not span the kernel here (use method='float')"
        )
    return _as_fiber(cert)

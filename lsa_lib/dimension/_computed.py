"""The computed dimensions (part of :mod:`lsa_lib.dimension`).

Certified bounds from the exact engine, float readings, and tables of both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from .. import _checks
from .._checks import DType
from ..lightning import parameter_count
from ..rank import ExactRank, FloatRank, exact_rank, float_rank
from ..report import Table
from ..symmetries import network_parametrization
from ..tolerances import GAP_MIN
from ._fibers import _families, _fiber_generators
from ._formulas import expected_dimension, failed_hypotheses


def exact_dimension(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalizer: str | None = None,
    *,
    beyond_symmetries: bool = False,
    families: Sequence[str] | None = None,
    seed: int = 0,
    n_inputs: int | None = None,
) -> ExactRank:
    """Certified bounds on the dimension of a deep network's neuromanifold.

    :func:`lsa_lib.rank.exact_rank` of :func:`lsa_lib.symmetries.network_parametrization`:
    for lightning networks modulo a prime at a random integer point (explained in
    :doc:`/book/04_dimension` and :doc:`/book/notes/rank_engine`), for normalized ones
    (softmax) with a lower bound proven in ball arithmetic at a random float point (explained
    in :doc:`/book/06_softmax`).

    Parameters
    ----------
    widths, attn : sequence of int
        ``(d_0, …, d_l)`` and ``(a_1, …, a_l)``.
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`.
    beyond_symmetries : bool
        Subtract :func:`extra_fiber_directions` (those of the normalizer, if any) too in the
        upper bound. Lightning: use ``⌈3P / (d_l t)⌉ + 2`` inputs by default (architectures
        whose outputs carry less information per input still get a tight lower bound); if the
        bounds do not meet, the engine's own rounds of inputs are tried too and the better
        bounds kept.
    families : sequence of str, optional
        With ``beyond_symmetries``: only these of :data:`FIBER_FAMILIES` (default: all).
    seed : int
        Seeds the point, the inputs and the compression.
    n_inputs : int, optional
        Default: added in rounds until the bounds meet (or as above).

    Returns
    -------
    lsa_lib.rank.ExactRank
        ``.certified`` when the bounds meet; then ``.rank`` is the dimension.
    """
    w, a = _checks.architecture(widths, attn)
    t = _checks.tokens(t)
    param = network_parametrization(w, a, t, normalizer)
    beyond = _checks.flag(beyond_symmetries, "beyond_symmetries")
    if families is not None and not beyond:
        raise ValueError("families selects extra fiber directions: pass beyond_symmetries=True")
    if beyond:
        generators = _fiber_generators(
            w, a, t, normalizer, None if families is None else _families(families)
        )
        param = replace(
            param, name=param.name + " (with extra fiber directions)", generators=generators
        )
        if n_inputs is None and normalizer is None:
            generous = -(-3 * parameter_count(w, a) // (w[-1] * t)) + 2
            cert = exact_rank(param, seed=seed, n_inputs=generous)
            if cert.certified:
                return cert
            other = exact_rank(param, seed=seed)  # both bound pairs are proofs: keep the best
            return replace(
                cert, lower=max(cert.lower, other.lower), upper=min(cert.upper, other.upper)
            )
    return exact_rank(param, seed=seed, n_inputs=n_inputs)


def float_dimension(
    widths: Sequence[int],
    attn: Sequence[int],
    t: int = 3,
    normalizer: str | None = None,
    *,
    n_inputs: int | None = None,
    seed: int = 0,
    weight_scale: float = 1.0,
    dtype: DType = "float64",
    min_gap: float = GAP_MIN,
    strict: bool = True,
) -> FloatRank:
    """The float estimate of the dimension: the Jacobian rank at a random point.

    :func:`lsa_lib.rank.float_rank` of :func:`lsa_lib.symmetries.network_parametrization`, at
    ``weight_scale`` times standard normal weights, on random normal inputs. Explained in
    :doc:`/book/04_dimension/float_failure` and :doc:`/book/notes/rank_engine` (lightning) and
    :doc:`/book/06_softmax` (Figure 3, float32).

    Parameters
    ----------
    widths, attn : sequence of int
    t : int
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS`.
    n_inputs, seed, weight_scale, dtype, min_gap, strict
        As in :func:`lsa_lib.rank.float_rank` (``weight_scale = 1/√δ`` keeps the scores of
        wide softmax networks of order one).

    Returns
    -------
    lsa_lib.rank.FloatRank

    Raises
    ------
    lsa_lib.rank.RankAmbiguityError
        If ``strict`` and no gap reaches ``min_gap`` (deep lightning networks are badly
        conditioned: use :func:`exact_dimension`).
    """
    param = network_parametrization(widths, attn, t, normalizer)
    return float_rank(
        param,
        n_inputs=n_inputs,
        seed=seed,
        weight_scale=weight_scale,
        dtype=dtype,
        min_gap=min_gap,
        strict=strict,
    )


def dimension_table(
    architectures: Iterable[tuple[Sequence[int], Sequence[int]]],
    t: int = 3,
    normalizer: str | None = None,
    *,
    methods: Sequence[str] = ("exact", "float"),
    n_inputs: int | None = None,
    seed: int = 0,
    weight_scale: float = 1.0,
    dtype: DType = "float64",
    min_gap: float = GAP_MIN,
) -> Table:
    """Parameter count, expected and computed dimensions of many architectures.

    Explained in :doc:`/book/04_dimension` and :doc:`/book/06_softmax`.

    Parameters
    ----------
    architectures : iterable of (widths, attn)
    t : int
        Tokens per input.
    normalizer : str, optional
        None (lightning) or a key of :data:`lsa_lib.lightning.NORMALIZERS` (float only).
    methods : sequence of {"exact", "float"}
        ``"exact"``: :func:`lsa_lib.dimension.exact_dimension` with the extra fiber directions;
        ``"float"``: :func:`lsa_lib.dimension.float_dimension`, an untrusted reading kept
        (shown with a ``?``), not raised.
    n_inputs : int, optional
        Random inputs of both methods; default ``⌈3P / (d_l t)⌉ + 2``.
    seed, weight_scale, dtype, min_gap
        As in :func:`lsa_lib.dimension.float_dimension`.

    Returns
    -------
    Table
        Columns ``widths``, ``attn``, ``P``, ``expected`` (:func:`lsa_lib.dimension.expected_dimension`, None
        where a hypothesis fails), then ``exact`` (an :class:`~lsa_lib.rank.ExactRank`, shown
        as ``36`` or ``34..40``) and ``P / dim``, and ``float`` (a
        :class:`~lsa_lib.rank.FloatRank`) and ``gap ≥`` (its order of magnitude).
    """
    archs = _checks.architectures(architectures)
    t = _checks.tokens(t)
    if isinstance(methods, str) or not isinstance(methods, Sequence) or not methods:
        raise ValueError(f"methods must list one or both of 'exact', 'float'; got {methods!r}")
    for m in methods:
        _checks.choice(m, "method", ("exact", "float"))
    if "exact" in methods and normalizer is not None:
        raise ValueError("the exact method needs lightning layers: use methods=('float',)")
    options = {"seed": seed, "weight_scale": weight_scale, "dtype": dtype, "min_gap": min_gap}
    rows = []
    for w, a in archs:
        P = parameter_count(w, a)
        n = n_inputs or -(-3 * P // (w[-1] * t)) + 2
        row: dict[str, Any] = {"widths": w, "attn": a, "P": P}
        row["expected"] = (
            None
            if failed_hypotheses(w, a, t, normalizer)
            else expected_dimension(w, a, t, normalizer)
        )
        if "exact" in methods:
            cert = exact_dimension(w, a, t, beyond_symmetries=True, seed=seed, n_inputs=n)
            row["exact"] = cert
            row["P / dim"] = P / cert.lower if cert.certified and cert.lower else None
        if "float" in methods:
            reading = float_dimension(w, a, t, normalizer, n_inputs=n, strict=False, **options)
            row["float"], row["gap ≥"] = reading, reading.gap
        rows.append(row)
    return Table(rows, formats={"gap ≥": "order", "P / dim": ".2f"})

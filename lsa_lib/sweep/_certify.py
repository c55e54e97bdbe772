"""One architecture certified and checked against the rules (part of :mod:`lsa_lib.sweep`).

:func:`certify_architecture` computes what the atlas and the sweep record of one case: the
exact bounds on the lightning network's dimension (every fiber family in the upper bound) and
the families the bound needed, optionally the softmax network's bounds and float reading, and
which rules' domains hold the case and which of them disagree with a certified value.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections.abc import Iterator
from typing import Any

from .. import _checks
from ..dimension import exact_dimension, needed_fiber_families
from ..lightning import parameter_count
from ..rules import RULES

DEEP_RULES = [r for r in RULES if r.model in ("lightning", "softmax")]


class TimeLimitExceeded(Exception):
    """Raised inside a computation that ran past its time limit (see :func:`deadline`)."""


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in this thread once ``seconds`` have passed.

    The exception is delivered the next time the thread runs Python code (a long call into
    compiled code finishes first), so the limit is soft by at most one such call.
    """
    if seconds is None:
        yield
        return
    target = ctypes.c_ulong(threading.get_ident())
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    target, ctypes.py_object(TimeLimitExceeded)
                )

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["fired"]:  # not delivered yet: take it back, so it cannot leave the block
                ctypes.pythonapi.PyThreadState_SetAsyncExc(target, None)


def softmax_bounds(
    widths: tuple[int, ...], attn: tuple[int, ...], t: int, seed: int = 0, points: int = 3
) -> dict[str, Any]:
    """The softmax network's certified bounds and float64 reading, at up to ``points`` points.

    Used by the sweep and by the atlas (:doc:`/book/notes/sweep`, :doc:`/book/atlas`).

    The bounds (a Jacobian minor proven non-zero in ball arithmetic; ``P`` minus the
    symmetries that survive the softmax and the fiber families that are softmax symmetries
    too) are computed at up to ``points`` random points until they meet, the best
    of each kept (every pair is a proof). The reading is the float64 rank of the Jacobian that
    chose the minor, the largest trusted one over the points, with its gap (None when no point
    gives a trusted reading; the gap is then the largest drop seen). Explained in
    :doc:`/book/06_softmax`.

    Parameters
    ----------
    widths, attn : tuple of int
    t : int
    seed : int
        The first point's seed (the others: ``seed + 1``, ``seed + 2``, …).
    points : int
        The most points tried.

    Returns
    -------
    dict
        ``softmax_lower``, ``softmax_upper``, ``softmax_points``, ``softmax_rank`` (or None),
        ``softmax_gap``.
    """
    certs = []
    for k in range(_checks.size(points, "points")):
        certs.append(exact_dimension(widths, attn, t, "exp", beyond_symmetries=True, seed=seed + k))
        lower, upper = max(c.lower for c in certs), min(c.upper for c in certs)
        if lower == upper:
            break
    readings = [c.reading for c in certs]
    trusted = [r for r in readings if r is not None and r.trusted]
    entry: dict[str, Any] = {
        "softmax_lower": lower,
        "softmax_upper": upper,
        "softmax_points": len(certs),
    }
    if not trusted:
        gaps = [float(r.gap) for r in readings if r is not None]
        return {**entry, "softmax_rank": None, "softmax_gap": max(gaps) if gaps else None}
    best = max(trusted, key=lambda r: (r.rank, r.gap))
    return {**entry, "softmax_rank": best.rank, "softmax_gap": float(best.gap)}


def rule_verdicts(
    widths: tuple[int, ...], attn: tuple[int, ...], t: int, dims: dict[str, int | None]
) -> dict[str, list[str]]:
    """The deep rules whose domain holds the case, and those whose value differs from ``dims``.

    ``dims`` maps a model (``"lightning"``, ``"softmax"``) to its certified dimension, or None
    where it is not certified (its rules are then listed in ``rules`` but never disagree).
    Also the rules the case is *just* outside of (``near``), and which of those the formula
    misses (``near_disagree``): why each domain is what it is.
    """
    case = {"widths": widths, "attn": attn, "t": t}
    out: dict[str, list[str]] = {"rules": [], "disagreements": [], "near": [], "near_disagree": []}
    for r in DEEP_RULES:
        dim = dims.get(r.model)
        if r.in_domain(**case):
            out["rules"].append(r.name)
            if dim is not None and r.formula(**case) != dim:
                out["disagreements"].append(r.name)
        elif r.near(**case):
            out["near"].append(r.name)
            if dim is not None and r.formula(**case) != dim:
                out["near_disagree"].append(r.name)
    return out


def certify_architecture(
    widths: tuple[int, ...],
    attn: tuple[int, ...],
    t: int,
    *,
    seed: int = 0,
    softmax: bool = False,
    time_limit: float | None = None,
) -> dict[str, Any]:
    """Everything the sweep records of one architecture (plain values, for a table).

    Explained in :doc:`/book/notes/sweep`. The lightning network's certified bounds
    ``lower``/``upper`` (:func:`lsa_lib.dimension.exact_dimension` with every fiber family),
    ``upper_symmetries`` (the upper bound with the symmetries alone) and ``families`` (the
    families the bound needed, :func:`lsa_lib.dimension.needed_fiber_families` at another
    point); with ``softmax`` the columns of :func:`softmax_bounds`; the verdicts of
    ``rule_verdicts``; ``seconds``; ``status``: ``"ok"`` or ``"time limit"`` (then the
    bounds are None and the rules are listed without verdicts).

    Parameters
    ----------
    widths, attn : tuple of int
    t : int
    seed : int
        Seeds the certificates' points (the families' point is ``seed + 7``).
    softmax : bool
        Certify the softmax network too.
    time_limit : float, optional
        Seconds for the whole case (see ``deadline``).

    Returns
    -------
    dict
    """
    start = time.perf_counter()
    record: dict[str, Any] = {"P": parameter_count(widths, attn), "status": "ok"}
    dims: dict[str, int | None] = {"lightning": None, "softmax": None}
    try:
        with deadline(time_limit):
            cert = exact_dimension(widths, attn, t, beyond_symmetries=True, seed=seed)
            bounds = needed_fiber_families(widths, attn, t, seed=seed + 7)
            record.update(
                lower=cert.lower,
                upper=cert.upper,
                upper_symmetries=bounds.symmetries,
                families=list(bounds.needed),
            )
            if cert.certified:
                dims["lightning"] = cert.lower
            if softmax:
                sm = softmax_bounds(widths, attn, t, seed=seed)
                record.update(sm)
                if sm["softmax_lower"] == sm["softmax_upper"]:
                    dims["softmax"] = sm["softmax_lower"]
    except TimeLimitExceeded:
        record["status"] = "time limit"
    record.update(rule_verdicts(widths, attn, t, dims))
    record["seconds"] = time.perf_counter() - start
    return record

"""What this machine can hold: size guards run before anything large is allocated (private).

The rank and dimension engines, the forward passes and the other builders of large arrays
estimate the memory (and, where memory is not the limit, the work) of a computation from its
sizes, and refuse, naming the size and the limit, what cannot run here, instead of failing
inside numpy or torch with an allocation error (or running for hours). The limits never refuse
what runs in about a minute on the book's machine.
"""

from __future__ import annotations

import os

__all__: list[str] = []


def memory_limit() -> int:
    """The bytes a computation may allocate: the machine's physical memory."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not a POSIX system
        return 16 * 2**30


def _bytes(n: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} bytes"


def fits(n_bytes: float, what: str, hint: str = "") -> None:
    """Refuse, before allocating, what needs more memory than the machine has."""
    limit = memory_limit()
    if n_bytes > limit:
        raise ValueError(
            f"{what} would need about {_bytes(n_bytes)} of memory, more than this machine's "
            f"{_bytes(limit)}" + (f": {hint}" if hint else "")
        )


def square(n_params: int, bytes_per_entry: float, what: str) -> None:
    """Refuse a rank computation on ``P`` parameters whose ``~P × P`` matrices cannot fit.

    Checked before anything is allocated (the point itself, for widths of 10⁶, would not fit).
    """
    size = bytes_per_entry * n_params * n_params
    fits(size, f"{what} (P = {n_params} parameters)")


def work(n: float, what: str, limit: float, why: str) -> None:
    """Refuse a computation whose size ``n`` exceeds ``limit``; ``why`` says what it would cost."""
    if n > limit:
        raise ValueError(f"{what} is {n:.3g}, above the limit {limit:.3g}: {why}")

"""One clause of a hypothesis or of a rule's domain: its words and its test (private core).

The hypotheses of the dimension formulas (:mod:`lsa_lib.dimension`) and the domains of the
book's rules (:mod:`lsa_lib.rules`) are lists of :class:`Clause`. The same object gives the
words the ledger and the atlas print and the predicate the tests evaluate, so a domain cannot
say one thing in the text and another in code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__: list[str] = []


@dataclass(frozen=True)
class Clause:
    """A condition on a case (keyword arguments such as ``widths, attn, t``).

    Attributes
    ----------
    text : str
        The condition in words, for any case ("t ≥ 2 tokens").
    holds : callable
        ``holds(**case) -> bool``.
    why : callable, optional
        ``why(**case) -> str``: a sentence saying how this case breaks the condition (default:
        the condition's words).
    """

    text: str
    holds: Callable[..., bool]
    why: Callable[..., str] | None = None

    def explain(self, **case: Any) -> str:
        """The sentence that says how ``case`` breaks this clause."""
        return self.why(**case) if self.why is not None else f"the condition “{self.text}” fails"


def failing(clauses: tuple[Clause, ...], **case: Any) -> list[Clause]:
    """The clauses of ``clauses`` that ``case`` breaks, in order."""
    return [c for c in clauses if not c.holds(**case)]

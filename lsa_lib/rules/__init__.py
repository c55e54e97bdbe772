"""The book's general statements about families of networks, with their domains written in code.

A :class:`Rule` is a statement of the form "on this domain, the dimension (or a count) equals
this formula". Its :attr:`~Rule.in_domain` is a predicate, not only a sentence: :meth:`Rule.value`
returns the formula's value on the domain and ``None`` outside it, so no caller can apply a rule
beyond the cases that check it. Every rule is checked by the tests against every certified
entry of the atlas of dimensions (rules about lightning and softmax networks) and against a fresh
random sample of cases certified in the test, in and just outside its domain; a rule whose
domain admits a certified counterexample fails the tests. The ledger page ("What is checked")
shows each rule's domain, the number of certified cases it was checked on, and how many
certified cases just outside the domain disagree with the formula — the reason the domain is
what it is.

Cases are keyword arguments. Rules about deep lightning or softmax networks (``model`` is
``"lightning"`` or ``"softmax"``) take ``widths``, ``attn`` and ``t``; the atlas stores exactly
these (``t = 3``). A rule about another model names its own arguments and supplies
:attr:`~Rule.cases` (a random sample of cases) and :attr:`~Rule.certify` (the exact
certificate of one case, an :class:`~lsa_lib.rank.ExactRank`).

Explained in :doc:`/book/checked` (the rules and their checks) and in the chapters that state
them (each rule carries the label of its box): the invariant counts of one output coordinate in
:doc:`/book/notes/invariants`, the singular locus of one layer in
:doc:`/book/05_singularities/locus`; the rules about variants of the lightning layer (residual
networks, several heads, positional transport, content-dependent metrics) in the research notes,
:doc:`/book/notes/index`.
"""

from __future__ import annotations

from ._core import Rule, check_rule
from ._core import RuleCheck as RuleCheck  # what check_rule returns
from ._lightning import LIGHTNING_RULES
from ._one_coordinate import COORDINATE_RULES
from ._refuted import REFUTED_RULES
from ._singular_locus import SINGULAR_RULES
from ._softmax import SOFTMAX_RULES
from ._variants import VARIANT_RULES

__all__ = ["Rule", "RULES", "REFUTED", "rule", "check_rule"]

#: The book's rules, each checked by the tests; the ledger (:doc:`/book/checked`) lists them.
#:
#: :meta hide-value:
RULES: list[Rule] = [
    *LIGHTNING_RULES,
    *SOFTMAX_RULES,
    *COORDINATE_RULES,
    *SINGULAR_RULES,
    *VARIANT_RULES,
]

#: Rules the book once stated and a certified counterexample inside their domain refutes, each
#: with the box that shows it (:doc:`/book/notes/general_widths`); the tests check that they
#: stay refuted.
#:
#: :meta hide-value:
REFUTED: list[Rule] = list(REFUTED_RULES)


def rule(name: str) -> Rule:
    """The rule of :data:`RULES` or :data:`REFUTED` with this name (:doc:`/book/checked`).

    Parameters
    ----------
    name : str
        The rule's :attr:`Rule.name`.

    Returns
    -------
    Rule

    Raises
    ------
    KeyError
        Naming the known rules, if none has this name.
    """
    for r in (*RULES, *REFUTED):
        if r.name == name:
            return r
    known = [r.name for r in (*RULES, *REFUTED)]
    raise KeyError(f"no rule named {name!r}; the rules are {known}")

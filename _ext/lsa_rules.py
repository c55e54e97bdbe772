"""Rules stated from their objects: the ``{rule}`` role and the check on general sentences.

Two halves, so that the site build and the tests read the book the same way:

* pure functions (no Sphinx): :func:`rule_parts` gathers what the book says about a rule from
  :mod:`lsa_lib.rules` (statement, domain), the counts of ``site_data/rules.json`` (atlas, sweep,
  sample) and the status of the rule's box; :func:`general_sentences` lists every sentence of
  general form in the course and the research notes that neither cites a rule nor names where
  it was seen;
* the Sphinx extension (:func:`setup`): the role ``{rule}`name``, which renders the rule's
  statement, domain, status and counts and links its row of the ledger ("What is checked"), and
  a warning for every general sentence left (the ``-W`` build fails on any).

A sentence of general form is one with a quantifier ("for every", "always", "wherever", "in
general", "drops by", "back to the … formula", "none occurs", …) about the book's subject
(dimensions, formulas, ranks, fibers, symmetries, collapse, reading). It passes when it uses
the ``{rule}`` role, cites a box (``{prf:ref}``, whose badge says how it is known), or names
where it was seen (the grid, the atlas, the sweep, a table or cell of its page); or when it is
listed in ``_ext/general_sentences.yml`` with the reason it is not a rule (a proved statement
of its own proof, a definition, a question).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RULES_DATA = ROOT / "site_data" / "rules.json"
ALLOWED = Path(__file__).resolve().parent / "general_sentences.yml"
LEDGER = "book/checked"

# ---- general sentences ---------------------------------------------------------------------

#: Quantifiers that make a sentence a general statement.
GENERAL = re.compile(
    r"\b(holds wherever|wherever|for every|for all|always|in general|drops by|"
    r"back to the [^.]*formula|none occurs|no \w+ occurs|whenever|exactly when|never)\b",
    re.IGNORECASE,
)
#: The book's subject: a general sentence about these is a rule, or says where it was seen.
SUBJECT = re.compile(
    r"(dimension|formula|rank|fib(?:er|re)|identifi|symmetr|collapse|\bread\b|certif)",
    re.IGNORECASE,
)
#: What makes a general sentence honest: a rule, a box, or where it was seen.
CITES = re.compile(
    r"(\{rule\}|\{prf:ref\}|\{ref\}|\{numref\}|\bgrids?\b|\batlas\b|\bsweep\b|\btables?\b|\bcells?\b|"
    r"\bexample\b|\bon these\b|\bchecked on\b|\bcertified (?:on|in)\b)",
    re.IGNORECASE,
)
# Text that is not prose: display math, code, directive headers and their options.
_DISPLAY = re.compile(r"\$\$.*?\$\$|```.*?```|`[^`\n]*`", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(\[{$])|\n\s*\n")
# claim boxes and proofs: their badge and footer say how they are known
_BOXED = re.compile(r"^(`{3,}|:{3,})\{prf:(\w+)\}.*?^\1\s*$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Sentence:
    """A sentence of general form: where it is and what it says (whitespace normalized)."""

    page: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}: {self.text}"


def _markdown(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return [path.read_text(encoding="utf-8")]


def _prose(markdown: str) -> str:
    """The markdown without claim boxes, proofs, math displays, code and option lines."""
    text = _BOXED.sub("\n\n", markdown)
    # the role's own text is cited, keep a marker in its place before code spans go
    text = re.sub(r"\{rule\}`[^`]*`", "{rule}", text)
    text = re.sub(r"\{(prf:ref|ref|numref)\}`[^`]*`", r"{\1}", text)
    text = _DISPLAY.sub(" ", text)
    lines = [
        line for line in text.splitlines() if not re.match(r"\s*(:[\w-]+:|(`{3,}|:{3,})|#|%)", line)
    ]
    return "\n".join(lines)


def sentences(markdown: str) -> list[str]:
    """The prose sentences of a markdown text (boxes, proofs, math and code left out)."""
    found = []
    for s in _SENTENCE_END.split(_prose(markdown)):
        s = " ".join(s.split())
        if s:
            found.append(s)
    return found


def is_general(sentence: str) -> bool:
    """Whether a sentence states something general about the book's subject."""
    return bool(GENERAL.search(sentence) and SUBJECT.search(sentence))


def cites(sentence: str) -> bool:
    """Whether a general sentence cites a rule or a box, or names where it was seen."""
    return bool(CITES.search(sentence))


def allowed() -> dict[str, list[str]]:
    """Page -> the starts of the sentences listed as not rules (with their reasons)."""
    if not ALLOWED.exists():
        return {}
    data = yaml.safe_load(ALLOWED.read_text(encoding="utf-8")) or {}
    return {
        page: [" ".join(e["starts"].split()) for e in entries] for page, entries in data.items()
    }


def book_pages(root: Path = ROOT) -> list[tuple[str, Path]]:
    """The course's and the research notes' pages, in the order of the table of contents."""
    from lsa_claims import toc_files

    pages = []
    for name in toc_files(root / "_toc.yml"):
        if not name.startswith(("book/0", "book/notes")):
            continue
        for suffix in (".ipynb", ".md"):
            if (root / f"{name}{suffix}").exists():
                pages.append((name, root / f"{name}{suffix}"))
                break
    return pages


def general_sentences(root: Path = ROOT) -> list[Sentence]:
    """Every general sentence of the course and the notes that cites nothing (must be none).

    Returns
    -------
    list of Sentence
        The sentences of general form (:func:`is_general`) that neither cite a rule or a box
        nor name where they were seen (:func:`cites`), and are not listed with a reason in
        ``_ext/general_sentences.yml``.
    """
    allow = allowed()
    left = []
    for page, path in book_pages(root):
        starts = allow.get(page, [])
        for markdown in _markdown(path):
            for s in sentences(markdown):
                if is_general(s) and not cites(s) and not any(s.startswith(a) for a in starts):
                    left.append(Sentence(page, s))
    return left


def stale_allowances(root: Path = ROOT) -> list[str]:
    """Entries of ``_ext/general_sentences.yml`` that match no sentence any more."""
    texts = {
        page: [s for m in _markdown(path) for s in sentences(m)] for page, path in book_pages(root)
    }
    return [
        f"{page}: {start}"
        for page, starts in allowed().items()
        for start in starts
        if not any(s.startswith(start) for s in texts.get(page, []))
    ]


# ---- the rules -----------------------------------------------------------------------------


@cache
def _ledger() -> dict[str, Any]:
    return json.loads(RULES_DATA.read_text(encoding="utf-8"))


@cache
def box_statuses(root: Path = ROOT) -> dict[str, str]:
    """Label -> status of every claim box in the book's notebooks."""
    from lsa_claims import read_notebook, toc_notebooks

    return {
        box.label: box.status
        for path in toc_notebooks(root / "_toc.yml")
        for box in read_notebook(path).claims()
    }


def rule_parts(name: str) -> dict[str, str]:
    """What the ``{rule}`` role prints for a rule: statement, domain, status, counts, anchor.

    Raises
    ------
    KeyError
        Naming the known rules, if ``name`` is not one (from :func:`lsa_lib.rules.rule`).
    """
    from lsa_lib.rules import REFUTED, rule

    r = rule(name)
    counts = _ledger().get(name)
    if counts is None:
        raise KeyError(
            f"rule {name!r} has no row in site_data/rules.json: run tools/check_rules.py"
        )
    status = box_statuses().get(r.label, "")
    refuted = r in REFUTED
    checked = checked_on(counts)
    if refuted:
        verdict = "certified counterexamples inside the domain"
    else:
        verdict = f"certified cases in its domain: {checked}; none disagrees"
    return {
        "name": name,
        "statement": r.statement,
        "domain": r.domain_text,
        "status": "refuted" if refuted else status,
        "checks": verdict,
        "label": r.label,
        "anchor": rule_anchor(name),
    }


def checked_on(counts: dict[str, Any]) -> str:
    """Where a rule's certified cases inside its domain come from, in words.

    ``counts`` is a rule's row of ``site_data/rules.json``: ``"9,848 on the atlas, 4,045 on the
    sweep, 4 sampled"``, or ``"none"``.
    """
    where = []
    atlas = counts.get("atlas", {}).get("inside", 0)
    if counts.get("atlas_cases"):
        where.append(f"{atlas:,} on the atlas")
    if "sweep" in counts:
        where.append(f"{counts['sweep']['inside']:,} on the sweep")
    sample = counts["inside"] - atlas
    if counts.get("sample_cases") and sample:
        where.append(f"{sample:,} sampled")
    return ", ".join(where) if where else "none"


def rule_anchor(name: str) -> str:
    """The id of a rule's row of the ledger (``rule-general-widths``)."""
    from docutils.nodes import make_id

    return f"rule-{make_id(name)}"


def rule_text(name: str) -> str:
    """The role's text as one plain sentence (what the tests and the PDF read)."""
    p = rule_parts(name)
    return f"{p['statement']}, wherever {p['domain']} ({p['status']}; {p['checks']})"


# ---- Sphinx --------------------------------------------------------------------------------


def setup(app):
    from docutils import nodes
    from sphinx.addnodes import pending_xref
    from sphinx.util import logging

    logger = logging.getLogger(__name__)

    def rule_role(name, rawtext, text, lineno, inliner, options=None, content=None):
        env = inliner.document.settings.env
        env.note_dependency(str(RULES_DATA))
        rule_name = " ".join(text.split())
        try:
            p = rule_parts(rule_name)
        except KeyError as error:
            msg = inliner.reporter.error(str(error), line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        node = nodes.inline(classes=["book-rule"])
        node += nodes.emphasis(p["statement"], p["statement"])
        node += nodes.Text(f", wherever {p['domain']} (")
        node += nodes.inline(p["status"], p["status"], classes=["claim-status", "rule-status"])
        node += nodes.Text(f"; {p['checks']}; ")
        ref = pending_xref(
            "",
            refdomain="std",
            reftype="ref",
            reftarget=p["anchor"],
            refexplicit=True,
            refwarn=True,
            refdoc=env.docname,
        )
        ref += nodes.inline("", f"rule “{rule_name}”")
        node += ref
        node += nodes.Text(")")
        return [node], []

    app.add_role("rule", rule_role)

    def check_sentences(app, env):
        for sentence in general_sentences(Path(app.srcdir)):
            logger.warning(
                "a general sentence cites no rule and names no grid: " + sentence.text[:200],
                location=(sentence.page, None),
                type="rules",
                subtype="general-sentence",
            )
        for entry in stale_allowances(Path(app.srcdir)):
            logger.warning(
                f"_ext/general_sentences.yml lists a sentence that is gone: {entry}",
                type="rules",
                subtype="stale-allowance",
            )

    app.connect("env-check-consistency", check_sentences)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The bibliography's labels in the author–year form the citations use ("Henry et al. 2025").

The default ("alpha") labels were built from letters of the surnames and failed on this
book's entries: "Mont{\\'u}far" became "ADMontufar26", and an anonymous entry dated "n.d."
became "Anonymousd.". Here a label is the surname of a single author, "A and B" for two,
"A et al." for more, then the year as written (``n.d.`` stays ``n.d.``); LaTeX accents are
decoded. Equal labels get a letter (2026a, 2026b). Entries are sorted by author, year, title.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.labels import BaseLabelStyle

STYLE = "book_author_year"


def surname(person: Any) -> str:
    parts = [*person.prelast_names, *person.last_names]
    return " ".join(Text.from_latex(p).render_as("text") for p in parts).strip("{} ")


def base_label(entry: Any) -> str:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [surname(p) for p in persons]
    if not names:
        who = Text.from_latex(entry.fields.get("key", "Anonymous")).render_as("text")
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    year = Text.from_latex(entry.fields.get("year", "n.d.")).render_as("text").strip()
    return f"{who} {year}"


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries: Iterable[Any]) -> Iterator[str]:
        entries = list(sorted_entries)
        labels = [base_label(e) for e in entries]
        counts = Counter(labels)
        seen: Counter[str] = Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
            else:
                yield label


class AuthorYearStyle(AlphaStyle):
    default_label_style = STYLE
    default_sorting_style = "author_year_title"


def register() -> None:
    """Make the style known to pybtex (registering twice is harmless)."""
    register_plugin("pybtex.style.labels", STYLE, AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle, force=True)

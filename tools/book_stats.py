"""Words, code cells, exercises and estimated study hours of every page of the book.

The counts the course page's hours come from, and the sizes the book's shape test holds the
pages to. Prose is the text of the markdown cells without fenced code, display math, directive
options and the two end-of-chapter blocks that are counted on their own: the self-check quiz
and the exercises (with their solutions).

The study-time rule: prose read at 40 words a minute (mathematics is read slowly), 3 minutes
per code cell (read, run, change a number), 20 minutes per exercise and 1 minute per quiz
question.

Usage: ``.venv/bin/python tools/book_stats.py [--json]``
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 40
MINUTES_PER_CODE_CELL = 3
MINUTES_PER_EXERCISE = 20
MINUTES_PER_QUIZ_QUESTION = 1

_FENCE = re.compile(r"^(`{3,}|:{3,})(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass
class PageStats:
    """The counts of one page (a notebook or a text page)."""

    file: str
    title: str
    prose_words: int
    code_cells: int
    exercises: int
    quiz_questions: int

    @property
    def minutes(self) -> float:
        return (
            self.prose_words / WORDS_PER_MINUTE
            + MINUTES_PER_CODE_CELL * self.code_cells
            + MINUTES_PER_EXERCISE * self.exercises
            + MINUTES_PER_QUIZ_QUESTION * self.quiz_questions
        )


def _blocks(markdown: str) -> tuple[list[str], str]:
    """Prose lines, and the section (``prose``/``quiz``/``exercises``) each belongs to."""
    out: list[tuple[str, str]] = []
    section, fences, in_math = "prose", [], False
    for line in markdown.splitlines():
        stripped = line.strip()
        if (h := _HEADING.match(stripped)) and not fences:
            title = h[2].lower()
            if "quiz" in title:
                section = "quiz"
            elif title.startswith("exercises"):
                section = "exercises"
            elif len(h[1]) <= 2:
                section = "prose"
            out.append((section, h[2]))
            continue
        if stripped.startswith("$$"):
            in_math = not (in_math or (stripped.endswith("$$") and len(stripped) > 2))
            continue
        if in_math:
            continue
        if m := _FENCE.match(stripped):
            marker, rest = m[1], m[2].strip()
            if (
                fences
                and marker[0] == fences[-1][0]
                and len(marker) >= len(fences[-1])
                and not rest
            ):
                fences.pop()
                continue
            fences.append(marker)
            if rest.startswith("{") and "}" in rest:
                kind = rest[1 : rest.index("}")]
                if kind in ("exercise",):
                    out.append(("exercise-start", ""))
                title = rest[rest.index("}") + 1 :].strip()
                out.append((section, title))
            else:
                fences[-1] = marker + "code"
            continue
        if fences and fences[-1].endswith("code"):
            continue
        if re.match(r"^:[\w-]+:", stripped):
            continue
        out.append((section, line))
    return [f"{s}\t{t}" for s, t in out], ""


def page_stats(path: Path) -> PageStats:
    """The counts of one page of ``book/``."""
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        code_cells = sum(c.cell_type == "code" for c in nb.cells) - 1  # not the set-up cell
    else:
        markdown, code_cells = path.read_text(encoding="utf-8"), 0
    lines, _ = _blocks(markdown)
    words = {"prose": 0, "quiz": 0, "exercises": 0}
    exercises = 0
    for entry in lines:
        section, text = entry.split("\t", 1)
        if section == "exercise-start":
            exercises += 1
            continue
        words[section] += len(re.findall(r"\S+", text))
    quiz = len(re.findall(r"\{dropdown\}\s*Answer", markdown))
    title = next((ln[2:].strip() for ln in markdown.splitlines() if ln.startswith("# ")), path.stem)
    return PageStats(
        file=path.relative_to(ROOT).with_suffix("").as_posix(),
        title=title,
        prose_words=words["prose"],
        code_cells=max(code_cells, 0),
        exercises=exercises,
        quiz_questions=quiz,
    )


def _toc_parts() -> list[dict]:
    """The parts of ``_toc.yml`` as the claims ledger reads them (one reader of the toc)."""
    spec = importlib.util.spec_from_file_location("lsa_claims", ROOT / "_ext" / "lsa_claims.py")
    module = sys.modules.get("lsa_claims") or importlib.util.module_from_spec(spec)
    if "lsa_claims" not in sys.modules:
        sys.modules["lsa_claims"] = module
        spec.loader.exec_module(module)
    return module.toc_parts(ROOT / "_toc.yml")


def _path(file: str) -> Path | None:
    for suffix in (".ipynb", ".md"):
        if (ROOT / f"{file}{suffix}").exists():
            return ROOT / f"{file}{suffix}"
    return None


def book_stats() -> list[dict]:
    """Per part, per chapter: its pages' counts and the chapter's totals and hours."""
    out = []
    for part in _toc_parts():
        chapters = []
        for files in part["chapters"]:
            pages = [page_stats(p) for f in files if (p := _path(f)) is not None]
            if not pages:
                continue
            total = {
                key: sum(getattr(p, key) for p in pages)
                for key in ("prose_words", "code_cells", "exercises", "quiz_questions")
            }
            total["hours"] = round(sum(p.minutes for p in pages) / 60, 1)
            chapters.append(
                {"title": pages[0].title, "pages": [asdict(p) for p in pages], "total": total}
            )
        out.append({"caption": part["caption"], "chapters": chapters})
    return out


def main(argv: list[str]) -> int:
    stats = book_stats()
    if "--json" in argv:
        print(json.dumps(stats, indent=1, ensure_ascii=False))
        return 0
    for part in stats:
        print(f"== {part['caption']}")
        for ch in part["chapters"]:
            t = ch["total"]
            print(
                f"{ch['title'][:58]:58s} {t['prose_words']:6d} words {t['code_cells']:3d} code "
                f"{t['exercises']:2d} ex {t['quiz_questions']:2d} quiz {t['hours']:5.1f} h"
            )
            if len(ch["pages"]) > 1:
                for p in ch["pages"]:
                    print(
                        f"    {p['file'][:54]:54s} {p['prose_words']:6d} words {p['code_cells']:3d} code"
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Write the launch setting of ``_config.yml`` into every copy of it.

The public repository address and the release the notebooks belong to are set in one place:
``repository.url`` and ``repository.branch`` (a tag ``v<version>``) in ``_config.yml``, where
Jupyter Book's launch buttons read them. This tool writes them into

* the set-up cell, the first code cell of every chapter: where the runtime lacks this release
  of lsa_lib (a fresh Colab runtime), it installs it from the repository at the release's tag,
  makes the new files importable in the running kernel and says so in one line; where the
  release is installed (Binder, a local build) it does nothing and prints nothing;
* ``version`` in ``pyproject.toml``, the library's one version source;
* the launch lines of ``README.md`` and ``book/intro.md`` (between marker lines), and the
  book's citation: the "How to cite this book" entry of ``book/intro.md`` (between marker
  lines) and ``version`` / ``repository-code`` in ``CITATION.cff``.

Usage::

    .venv/bin/python tools/setup_cell.py            # every chapter in book/ and the files above
    .venv/bin/python tools/setup_cell.py book/NN_x.ipynb   # these notebooks, and the files
    .venv/bin/python tools/setup_cell.py --check    # report stale copies, write nothing

The set-up cell is folded on the website (tag ``hide-input``); inserting it renumbers the
execution counts and keeps every stored output valid.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import nbformat
import yaml
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
PYPROJECT = ROOT / "pyproject.toml"
README = ROOT / "README.md"
INTRO = ROOT / "book" / "intro.md"
CITATION = ROOT / "CITATION.cff"
TOC = ROOT / "_toc.yml"

SETUP_MARKER = "# Colab and Binder set-up"
README_MARKERS = (
    "<!-- launch: written by tools/setup_cell.py from _config.yml; edit there -->",
    "<!-- /launch -->",
)
INTRO_MARKERS = (
    "% launch: written by tools/setup_cell.py from _config.yml; edit there",
    "% /launch",
)
CITE_MARKERS = (
    "% cite: written by tools/setup_cell.py from _config.yml; edit there",
    "% /cite",
)


@dataclasses.dataclass(frozen=True)
class Launch:
    """The launch setting: where the book's repository is and which release the notebooks use."""

    url: str  # https://github.com/<owner>/<name>
    release: str  # the git tag, "v" + the library's version
    binderhub_url: str = "https://mybinder.org"
    colab_url: str = "https://colab.research.google.com"
    interface: str = "classic"

    @property
    def version(self) -> str:
        """The library version of the release (the tag without its "v")."""
        return self.release[1:]

    @property
    def github(self) -> str:
        """``<owner>/<name>`` of the repository."""
        return self.url.removeprefix("https://github.com/")

    @property
    def pip_source(self) -> str:
        """The pip requirement that installs this release with the explorers' widgets."""
        return f"lsa_lib[explorer] @ git+{self.url}@{self.release}"

    def binder_link(self, path: str) -> str:
        view = "tree" if self.interface == "classic" else "lab/tree"
        return f"{self.binderhub_url}/v2/gh/{self.github}/{self.release}?urlpath={view}/{path}"

    def colab_link(self, path: str) -> str:
        return f"{self.colab_url}/github/{self.github}/blob/{self.release}/{path}"


def read_setting(config: Path = CONFIG) -> Launch:
    """Read and check the launch setting of ``_config.yml``."""
    data = yaml.safe_load(config.read_text())
    repo = data.get("repository") or {}
    buttons = data.get("launch_buttons") or {}
    url = str(repo.get("url", "")).rstrip("/")
    release = str(repo.get("branch", ""))
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise ValueError(
            f"{config.name}: repository.url must be https://github.com/<owner>/<name> "
            f"(Binder and Colab open GitHub repositories), got {url!r}"
        )
    try:
        ok = release.startswith("v") and str(Version(release[1:])) == release[1:]
    except InvalidVersion:
        ok = False
    if not ok:
        raise ValueError(
            f"{config.name}: repository.branch must be the release tag 'v<version>' with a "
            f"normalized version such as v0.1.0, got {release!r}"
        )
    return Launch(
        url=url,
        release=release,
        binderhub_url=str(buttons.get("binderhub_url", Launch.binderhub_url)).rstrip("/"),
        colab_url=str(buttons.get("colab_url", Launch.colab_url)).rstrip("/"),
        interface=str(buttons.get("notebook_interface", Launch.interface)),
    )


def cell_source(setting: Launch) -> str:
    """The set-up cell of every chapter (ruff-formatted, at most 25 lines)."""
    return f'''{SETUP_MARKER}: install lsa_lib {setting.version} if this runtime lacks it.
import importlib.metadata
import subprocess
import sys

RELEASE = "{setting.version}"
SOURCE = "{setting.pip_source}"


class SetupError(Exception):
    def _render_traceback_(self):  # Jupyter shows this one line instead of a traceback
        return [f"SetupError: {{self}}"]


installed = [d.version for d in importlib.metadata.distributions(name="lsa_lib")][:1]
if installed != [RELEASE]:  # a fresh Colab runtime, or another release of lsa_lib
    command = [sys.executable, "-m", "pip", "install", "--no-color", SOURCE]
    pip = subprocess.run(command, capture_output=True, text=True)
    if pip.returncode != 0:
        why = ["pip failed"] + [s for s in pip.stderr.splitlines() if s[:6] == "ERROR:"]
        raise SetupError(f"could not install lsa_lib {{RELEASE}} from the repository: {{why[-1]}}")
    importlib.invalidate_caches()  # make the new files importable in this kernel, and
    for name in [m for m in sys.modules if m.partition(".")[0] == "lsa_lib"]:
        del sys.modules[name]  # forget an lsa_lib imported before: it is imported afresh
    print(f"Installed lsa_lib {{RELEASE}} from {{SOURCE}}")'''


def first_chapter() -> str:
    """Path of the first notebook in the table of contents, e.g. ``book/01_x.ipynb``."""
    toc = yaml.safe_load(TOC.read_text())
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            if (ROOT / f"{chapter['file']}.ipynb").exists():
                return f"{chapter['file']}.ipynb"
    raise ValueError("_toc.yml lists no notebook")


def readme_block(setting: Launch) -> str:
    """The launch lines of README.md (Markdown)."""
    name = setting.github.split("/")[1]
    return f"""- **Binder**, nothing to install: [the book's notebooks in Binder]({setting.binder_link("book")})
  (or the rocket icon on any chapter of the website).
- **Colab**: [the first chapter in Colab]({setting.colab_link(first_chapter())}); the
  rocket icon of each chapter opens that chapter. The first code cell (folded) installs
  `lsa_lib` {setting.version}, the release the notebooks belong to.
- **Your own Python 3.11+**: the library alone, with the explorers' widgets,

  ```bash
  pip install "{setting.pip_source}"
  ```

  or the chapters in Jupyter, with the readers' pinned packages (CPU-only torch):

  ```bash
  git clone --branch {setting.release} {setting.url} && cd {name}
  python3.11 -m venv .venv && . .venv/bin/activate
  pip install -r binder/requirements.txt notebook && pip install --no-deps -e .
  jupyter notebook book/
  ```"""


def intro_block(setting: Launch) -> str:
    """The "How to read it" list of the landing page (MyST Markdown)."""
    return f"""- **On the website**: every page shows its code and outputs as they were verified.
- **In Binder or Colab**: the rocket icon at the top of each chapter opens it, as of release
  `{setting.release}` of the [book's repository]({setting.url}) (or open [all notebooks in
  Binder]({setting.binder_link("book")})). In Colab, the chapter's first (folded) cell
  installs the matching `lsa_lib` {setting.version}.
- **Locally**: clone the [repository]({setting.url}) and run the two commands of its README
  (`make book` builds this website, `make test` runs every check), or install the library
  alone:

  ```bash
  pip install "{setting.pip_source}"
  ```"""


def cite_block(setting: Launch) -> str:
    """The book's BibTeX entry on the landing page (inside the "How to cite" box)."""
    return f"""```bibtex
@misc{{lsabook,
  author       = {{{{The lsa\\_lib authors}}}},
  title        = {{The Geometry of Lightning Self-Attention: an executable book}},
  year         = {{2026}},
  howpublished = {{\\url{{{setting.url}}}}},
  note         = {{Release {setting.release}}}
}}
```"""


def with_citation(text: str, setting: Launch) -> str:
    """CITATION.cff's text with its ``version`` and ``repository-code`` from the setting."""
    for key, value in (("version", setting.version), ("repository-code", setting.url)):
        pattern = re.compile(rf'^{key}: "[^"\n]*"$', re.M)
        if len(pattern.findall(text)) != 1:
            raise ValueError(f'CITATION.cff: expected one line {key}: "..."')
        text = pattern.sub(f'{key}: "{value}"', text)
    return text


def with_block(text: str, body: str, markers: tuple[str, str], name: str) -> str:
    """``text`` with the lines between the two marker lines replaced by ``body``."""
    start, end = markers
    pattern = re.compile(rf"^{re.escape(start)}\n.*?^{re.escape(end)}$", re.S | re.M)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"{name}: expected one block between {start!r} and {end!r}")
    return pattern.sub(lambda _: f"{start}\n{body}\n{end}", text)


def with_version(text: str, version: str) -> str:
    """pyproject.toml's text with ``[project].version`` set to ``version``."""
    pattern = re.compile(r'(\[project\][^\[]*?^version = )"[^"\n]*"', re.S | re.M)
    if not pattern.search(text):
        raise ValueError('pyproject.toml: no line version = "..." in [project]')
    return pattern.sub(lambda m: f'{m.group(1)}"{version}"', text, count=1)


def with_setup_cell(nb: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """The notebook with its set-up cell (first code cell) set to ``source``."""
    old = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(SETUP_MARKER)]
    if len(old) == 1 and old[0].source == source:
        return nb
    cells = [c for c in nb.cells if not any(c is o for o in old)]
    setup = nbformat.v4.new_code_cell(source, metadata={"tags": ["hide-input"]})
    if old and "id" in old[0]:
        setup["id"] = old[0]["id"]  # keep the id stable across refreshes
    first_code = next(i for i, c in enumerate(cells) if c.cell_type == "code")
    cells.insert(first_code, setup)
    count = 0
    for cell in cells:
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for out in cell.get("outputs", []):
                if "execution_count" in out:
                    out["execution_count"] = count
    nb.cells = cells
    return nb


def stale_copies(setting: Launch, notebooks: list[Path], write: bool) -> list[str]:
    """Names of the copies that differ from ``setting``; rewrite them when ``write``."""
    stale = []
    source = cell_source(setting)
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        setup = [c for c in nb.cells if c.cell_type == "code"][:1]
        folded = setup and "hide-input" in setup[0].metadata.get("tags", [])
        if not (folded and setup[0].source == source and setup[0].outputs == []):
            stale.append(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
            if write:
                nbformat.write(with_setup_cell(nb, source), path)
    files = [
        (PYPROJECT, lambda t: with_version(t, setting.version)),
        (README, lambda t: with_block(t, readme_block(setting), README_MARKERS, "README.md")),
        (INTRO, lambda t: with_block(t, intro_block(setting), INTRO_MARKERS, "book/intro.md")),
        (INTRO, lambda t: with_block(t, cite_block(setting), CITE_MARKERS, "book/intro.md")),
        (CITATION, lambda t: with_citation(t, setting)),
    ]
    for path, update in files:
        text = path.read_text()
        if update(text) != text:
            stale.append(str(path.relative_to(ROOT)))
            if write:
                path.write_text(update(text))
    return stale


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a).resolve() for a in argv if a != "--check"]
    if any(p.suffix != ".ipynb" or not p.is_file() for p in paths):
        raise SystemExit(__doc__)
    notebooks = paths or sorted(
        p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
    )
    setting = read_setting()
    stale = stale_copies(setting, notebooks, write=not check)
    for name in stale:
        print(f"{name}: {'differs from' if check else 'written from'} _config.yml")
    if not stale:
        print(f"every copy matches {setting.url} at {setting.release}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

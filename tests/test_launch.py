"""Every way a reader gets the book running: the launch setting, packaging, Binder, Colab, pip.

The fast tests check the files: one hand-written repository address and release (in
``_config.yml``) and generated copies that match it; package dependencies that are exactly what
``lsa_lib`` imports; a Binder environment that is exactly what the chapters import, pinned as in
``requirements.txt``; the licence fields.

The tests marked ``launch`` (``make launch-check``, part of ``make test``) build fresh virtual
environments from the files alone and run chapters in them:

* Binder: the readers' requirements (``binder/requirements.txt``) and ``binder/postBuild``, as
  repo2docker runs them, then a chapter end to end;
* Colab: a runtime with the usual scientific packages but no lsa_lib, where the set-up cell,
  pointed at a local clone (``git+file://``), installs the release and the chapter runs; the
  cell's failure message, and an older lsa_lib imported before the cell;
* ``pip install .``: the library imports and computes; the ``explorer`` extra brings the widgets.

The environments are built in parallel (``make launch-check`` runs these tests on three
workers) from one shared wheel cache: every wheel they install, torch included, is gathered
once into a wheelhouse (the first worker builds it under a file lock), and every install then
reads only the wheelhouse (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``): no package is fetched twice
and no install waits for an index. Installs skip byte-compilation (``PIP_NO_COMPILE``). The
extra package index of ``binder/requirements.txt`` (PyTorch's CPU wheels) is dropped in the
Binder check: this machine reaches only PyPI, whose torch pin resolves to the same version.

What the readers' files ask to be installed (``binder/requirements.txt``, the Colab-like
runtime's packages, ``pip install .``'s dependencies) is installed by uv's ``pip install``, which
reads the same files and pins: it unpacks each wheel once into a cache shared by the three
environments and links the files from there, so torch is unpacked once, not three times. What a
reader's own pip runs stays pip: ``binder/postBuild``, the set-up cell of the Colab check, and
the ``explorer`` extra, installed by the pip a Python 3.11 virtual environment comes with.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import functools
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import nbformat
import pytest
from conftest import kernel_socket_base
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
)
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

_spec = importlib.util.spec_from_file_location("setup_cell", ROOT / "tools" / "setup_cell.py")
setup_cell = sys.modules["setup_cell"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(setup_cell)
SETTING = setup_cell.read_setting()

# Distributions the Jupyter kernel itself brings (Binder's image, Colab): not the readers' list.
KERNEL_PROVIDED = {"ipython", "ipykernel"}
# The book's build and test toolchain and Jupyter's server side: never in the readers' list.
TOOLCHAIN = {
    "jupyter-book", "sphinx", "myst-nb", "myst-parser", "sphinx-book-theme", "nbval", "pytest",
    "pytest-xdist", "hypothesis", "ruff", "playwright", "coverage", "nbclient", "nbformat",
    "jupyter-server", "notebook", "jupyterlab", "ipykernel", "jupyter-client", "jupyter-core",
    "tornado", "pyzmq", "traitlets", "uv",
}  # fmt: skip


def _tracked_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [ROOT / name for name in out.split("\0") if name and (ROOT / name).is_file()]


@functools.cache
def _module_owners() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distribution(module: str) -> str | None:
    """Canonical distribution name of a top-level import, None for the standard library."""
    if module in sys.stdlib_module_names or module == "lsa_lib":
        return None
    dists = _module_owners().get(module)
    assert dists, f"no installed distribution provides the module {module!r}"
    return canonicalize_name(dists[0])


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def _library_imports(top_level_only: bool = False) -> dict[str, set[str]]:
    """Distribution -> lsa_lib files importing it (anywhere, or at module level only)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "lsa_lib").rglob("*.py")):
        tree = ast.parse(path.read_text())
        if top_level_only:  # module body, including try/if blocks, but not inside functions
            body = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef)]
            tree = ast.Module(body=body, type_ignores=[])
        for module in _imports(tree):
            if (dist := _distribution(module)) is not None:
                found.setdefault(dist, set()).add(str(path.relative_to(ROOT / "lsa_lib")))
    return found


def _notebook_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            code = "\n".join(
                line
                for line in cell.source.splitlines()
                if not line.lstrip().startswith(("%", "!"))
            )
            for module in _imports(ast.parse(code)):
                if (dist := _distribution(module)) is not None:
                    found.setdefault(dist, set()).add(path.name)
    return found


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    project = PYPROJECT["project"]
    core = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    extras = {
        extra: {canonicalize_name(Requirement(r).name) for r in reqs}
        for extra, reqs in project.get("optional-dependencies", {}).items()
    }
    return core, extras


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("--extra-index-url"):
            continue
        req = Requirement(line)
        spec = list(req.specifier)
        assert len(spec) == 1 and spec[0].operator == "==", (
            f"{path.relative_to(ROOT)}: {line!r} is not an exact pin name==version"
        )
        pins[canonicalize_name(req.name)] = spec[0].version
    return pins


# --- the one launch setting and its copies -----------------------------------------------------


def test_copies_match_the_launch_setting():
    stale = setup_cell.stale_copies(SETTING, NOTEBOOKS, write=False)
    assert not stale, (
        f"{stale} differ from the launch setting in _config.yml "
        f"({SETTING.url} at {SETTING.release}): run .venv/bin/python tools/setup_cell.py"
    )


def test_repository_address_is_written_by_hand_once():
    """Outside the generated copies, the address appears once: in _config.yml."""
    readme_start, readme_end = setup_cell.README_MARKERS
    intro_start, intro_end = setup_cell.INTRO_MARKERS
    cite_start, cite_end = setup_cell.CITE_MARKERS
    places = []
    for path in _tracked_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if path.suffix == ".ipynb":
            nb = nbformat.reads(text, as_version=4)
            cells = [c for c in nb.cells if not c.source.startswith(setup_cell.SETUP_MARKER)]
            text = "\n".join(c.source for c in cells)
        if path.name == "CITATION.cff":  # its version and repository-code are generated
            text = setup_cell.with_citation(text, dataclasses.replace(SETTING, url=""))
        markers = ((readme_start, readme_end), (intro_start, intro_end), (cite_start, cite_end))
        for start, end in markers:
            text = re.sub(rf"{re.escape(start)}.*?{re.escape(end)}", "", text, flags=re.S)
        places += [str(path.relative_to(ROOT))] * text.count(SETTING.github)
    assert places == ["_config.yml"], (
        f"the repository address {SETTING.github} is written in {places}; write it only in "
        "_config.yml and generate the copies with tools/setup_cell.py"
    )


def test_release_is_the_library_version():
    import lsa_lib

    assert PYPROJECT["project"]["version"] == SETTING.version
    installed = importlib.metadata.version("lsa_lib")
    assert installed == SETTING.version, (
        f"the installed lsa_lib is {installed}, the release is {SETTING.release}: reinstall "
        "(make setup reinstalls when pyproject.toml changes)"
    )
    assert lsa_lib.__version__ == installed
    literal = [
        p.name for p in (ROOT / "lsa_lib").glob("*.py") if f'"{SETTING.version}"' in p.read_text()
    ]
    assert not literal, f"a second version literal in {literal}: pyproject.toml is the source"


def test_launch_setting_is_checked(tmp_path):
    bad_url = tmp_path / "_config.yml"
    bad_url.write_text("repository:\n  url: https://example.org/x/y\n  branch: v1.0.0\n")
    with pytest.raises(ValueError, match="github.com/<owner>/<name>"):
        setup_cell.read_setting(bad_url)
    for branch in ("main", "1.0.0", "v1.0.0-rc1", "vnext"):
        bad_url.write_text(f"repository:\n  url: {SETTING.url}\n  branch: {branch}\n")
        with pytest.raises(ValueError, match="release tag"):
            setup_cell.read_setting(bad_url)


def test_setup_cell_is_short_and_valid_python():
    source = setup_cell.cell_source(SETTING)
    compile(source, "set-up cell", "exec")
    assert len(source.splitlines()) <= 25
    assert f'RELEASE = "{SETTING.version}"' in source
    assert f"@{SETTING.release}" in source and SETTING.url in source


# --- packaging ---------------------------------------------------------------------------------


def test_package_dependencies_are_what_lsa_lib_imports():
    imported = _library_imports()
    core, extras = _declared()
    declared = core.union(*extras.values())
    undeclared = {d: sorted(f) for d, f in imported.items() if d not in declared}
    unused = declared - set(imported)
    assert not undeclared, f"lsa_lib imports undeclared distributions: {undeclared}"
    assert not unused, f"pyproject.toml declares distributions lsa_lib never imports: {unused}"
    assert extras.get("explorer") == {"ipywidgets"}


def test_importing_lsa_lib_needs_only_the_core_dependencies():
    core, _ = _declared()
    at_import = {d: sorted(f) for d, f in _library_imports(top_level_only=True).items()}
    assert set(at_import) <= core, f"imported at module level but optional: {at_import}"


def test_licence_and_build_requirement():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    licence = (ROOT / "LICENSE").read_text()
    assert "MIT License" in licence and "Permission is hereby granted" in licence
    assert "CC BY 4.0" in licence and "CC BY 4.0" in (ROOT / "README.md").read_text()
    setuptools = [
        Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")
    ]
    assert len(setuptools) == 1
    spec: SpecifierSet = setuptools[0].specifier
    assert "77.0" in spec and "76.9" not in spec, "PEP 639 licence fields need setuptools >= 77"


# --- the readers' environment (Binder) ---------------------------------------------------------


def test_binder_environment_is_what_the_chapters_import():
    binder = _pins(ROOT / "binder" / "requirements.txt")
    book = _pins(ROOT / "requirements.txt")
    core, extras = _declared()
    needed = core.union(*extras.values()) | (set(_notebook_imports()) - KERNEL_PROVIDED)
    assert set(binder) == needed, (
        f"binder/requirements.txt: missing {sorted(needed - set(binder))}, "
        f"not needed {sorted(set(binder) - needed)}"
    )
    assert not set(binder) & TOOLCHAIN, f"toolchain in the readers' list: {set(binder) & TOOLCHAIN}"
    differ = {n: (v, book.get(n)) for n, v in binder.items() if book.get(n) != v}
    assert not differ, f"binder pins differ from requirements.txt (binder, book): {differ}"


def test_binder_files():
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post_build = ROOT / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK), "binder/postBuild must be executable"
    text = (ROOT / "binder" / "requirements.txt").read_text()
    assert not re.search(r"^\s*-r", text, re.M), "binder/requirements.txt includes another list"


# --- fresh environments (make launch-check) ---------------------------------------------------


def _say(record_property, message: str) -> None:
    """A measured time, shown in the test command's summary (tests/conftest.py prints it)."""
    record_property("launch", message)


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{done.stderr[-3000:]}"
    return done


# The shared wheel cache of this process's environments (set by the ``wheelhouse`` fixture),
# and uv's cache of the unpacked wheels beside it (on the environments' file system, so that
# uv links files instead of copying them).
WHEELHOUSE: Path | None = None
UV_CACHE: Path | None = None


def _env(venv: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env.update(PIP_NO_COMPILE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1")
    if venv is not None:
        env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}")
        if WHEELHOUSE is not None:  # every install reads the wheelhouse alone
            env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELHOUSE))
    return env


class Venv:
    """A fresh virtual environment, removed afterwards."""

    def __init__(self, path: Path, upgrade_pip: bool = True):
        self.path = path
        self.python = path / "bin" / "python"
        _run([sys.executable, "-m", "venv", str(path)], env=_env())
        if upgrade_pip:  # as current as Colab's (the venv's bundled pip 23 rejects git+file)
            self.install("--upgrade", "pip")

    def pip(self, *args: str, cwd: Path | None = None) -> float:
        """This environment's own pip; the seconds it took."""
        start = time.perf_counter()
        _run([str(self.python), "-m", "pip", *args], cwd=cwd, env=_env(self.path))
        return time.perf_counter() - start

    def install(self, *args: str, cwd: Path | None = None) -> float:
        """``uv pip install`` into this environment from the wheelhouse alone; the seconds."""
        from uv import find_uv_bin

        assert WHEELHOUSE is not None and UV_CACHE is not None, "no wheelhouse yet"
        command = [find_uv_bin(), "pip", "install", "--quiet", "--python", str(self.python),
                   "--offline", "--no-index", "--find-links", str(WHEELHOUSE), *args]  # fmt: skip
        env = _env(self.path) | {"UV_CACHE_DIR": str(UV_CACHE), "UV_LINK_MODE": "hardlink"}
        start = time.perf_counter()
        _run(command, cwd=cwd, env=env)
        return time.perf_counter() - start

    def packages(self) -> list[str]:
        out = _run([str(self.python), "-m", "pip", "list", "--format=json"], env=_env(self.path))
        return sorted(p["name"] for p in json.loads(out.stdout) if p["name"] != "pip")

    def python_json(self, script: str) -> object:
        out = _run([str(self.python), "-c", script], env=_env(self.path), cwd=self.path)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def execute(self, nb: nbformat.NotebookNode, cwd: Path, allow_errors: bool = False):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager
        from nbclient import NotebookClient

        kernels = self.path / "kernelspecs"
        (kernels / "fresh").mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "fresh",
            "language": "python",
            "env": {k: v for k, v in _env(self.path).items() if k.startswith(("PIP_", "PYTHON"))}
            | {"VIRTUAL_ENV": str(self.path), "PATH": _env(self.path)["PATH"]},
        }
        (kernels / "fresh" / "kernel.json").write_text(json.dumps(spec))
        sockets = kernel_socket_base()  # not TCP ports, which the tests' other kernels may take
        km = KernelManager(
            kernel_name="fresh",
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
            transport="ipc",
            ip=sockets,
        )
        client = NotebookClient(
            nb, km=km, timeout=600, allow_errors=allow_errors,
            resources={"metadata": {"path": str(cwd)}},
        )  # fmt: skip
        start = time.perf_counter()
        try:
            client.execute()
        finally:
            for socket in Path(sockets).parent.glob(Path(sockets).name + "-*"):
                socket.unlink(missing_ok=True)
        return time.perf_counter() - start


# What the fresh environments install besides the readers' list: Binder's kernel, the
# Colab-like runtime's packages, pip for its upgrade, and the build backend of ``pip install .``.
EXTRA_WHEELS = ["pip", "setuptools>=77", "wheel", "ipykernel", "numpy", "scipy", "sympy",
                "matplotlib", "torch", "ipywidgets"]  # fmt: skip


def _readers_requirements(folder: Path) -> Path:
    """binder/requirements.txt without its extra index (this machine reaches only PyPI)."""
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    dropped = [line for line in lines if line.startswith("--extra-index-url")]
    assert len(dropped) == 1, "the CPU-torch index line is expected in binder/requirements.txt"
    path = folder / "requirements-readers.txt"
    path.write_text("\n".join(line for line in lines if line not in dropped) + "\n")
    return path


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    """Every wheel of the fresh environments, gathered once for all of them.

    The folder is shared by the test workers (the parent of their temporary folders); the
    first worker fills it under a file lock, the others wait for it and reuse it.
    """
    from filelock import FileLock

    global WHEELHOUSE, UV_CACHE
    shared = tmp_path_factory.getbasetemp().parent
    house = shared / "wheelhouse"
    with FileLock(str(shared / "wheelhouse.lock")):
        if not (house / ".complete").exists():
            readers = _readers_requirements(shared)
            _run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(house),
                 "-r", str(readers), *EXTRA_WHEELS, *_constraints()],
                env=_env(),
            )  # fmt: skip
            (house / ".complete").touch()
    WHEELHOUSE, UV_CACHE = house, shared / "uv-cache"
    return house


@pytest.fixture
def venv(tmp_path, wheelhouse):
    made = []

    def make(name: str, upgrade_pip: bool = False) -> Venv:
        made.append(Venv(tmp_path / name, upgrade_pip))
        return made[-1]

    yield make
    for v in made:
        shutil.rmtree(v.path, ignore_errors=True)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A local git repository with the working tree's files, the release tagged as on GitHub."""
    repo = tmp_path_factory.mktemp("clone") / "book"
    for path in _tracked_files():
        target = repo / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost",
           "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"]  # fmt: skip
    _run([*git, "init", "--quiet"], cwd=repo)
    _run([*git, "add", "--all"], cwd=repo)
    _run([*git, "commit", "--quiet", "-m", "the working tree"], cwd=repo)
    _run([*git, "tag", SETTING.release], cwd=repo)
    yield repo
    shutil.rmtree(repo.parent, ignore_errors=True)


def _constraints() -> list[str]:
    """Fix every version pip chooses to the book's pins (else the latest, e.g. a CUDA torch)."""
    return ["--constraint", str(ROOT / "requirements.txt")]


def _chapter(name: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "book" / name, as_version=4)


def _probe(folder: Path) -> nbformat.NotebookNode:
    """A cell asserting that the kernel imports this release of lsa_lib from ``folder``."""
    return nbformat.v4.new_code_cell(
        "import lsa_lib\n"
        f"assert lsa_lib.__version__ == {SETTING.version!r}, lsa_lib.__version__\n"
        f"assert lsa_lib.__file__.startswith({str(folder)!r}), lsa_lib.__file__"
    )


def _seconds(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.launch
def test_binder_environment_runs_a_chapter(venv, clone, record_property):
    """repo2docker: binder/requirements.txt, then binder/postBuild from the repository root."""
    env = venv("binder")
    runtime = (clone / "binder" / "runtime.txt").read_text().strip()
    version = env.python_json("import sys, json; print(json.dumps(list(sys.version_info[:2])))")
    assert runtime == "python-{}.{}".format(*version), f"binder/runtime.txt says {runtime}"
    readers = _readers_requirements(env.path)
    seconds = env.install("-r", str(readers))
    packages = env.packages()
    kernel = env.install("ipykernel", *_constraints())  # Binder's image has it
    _run(["bash", "binder/postBuild"], cwd=clone, env=_env(env.path))
    nb = _chapter("02_fibers.ipynb")
    nb.cells.append(_probe(clone / "lsa_lib"))  # postBuild's editable install
    run = env.execute(nb, cwd=clone / "book")
    setup = next(c for c in nb.cells if c.cell_type == "code")
    assert setup.outputs == [], "in Binder the set-up cell must find lsa_lib and do nothing"
    _say(
        record_property,
        f"Binder: readers' requirements (uv) {seconds:.0f} s ({len(packages)} packages), "
        f"ipykernel {kernel:.0f} s, chapter 2 {run:.0f} s",
    )


@pytest.mark.launch
def test_setup_cell_installs_the_release_in_a_fresh_runtime(venv, clone, tmp_path, record_property):
    """Colab: scientific packages and a kernel, but no lsa_lib (and no python-flint)."""
    env = venv("colab", upgrade_pip=True)
    colab = ["numpy", "scipy", "sympy", "matplotlib", "torch", "ipywidgets", "ipykernel"]
    seconds = env.install(*colab, *_constraints())
    assert "lsa_lib" not in env.packages()
    local = setup_cell.Launch(url=f"file://{clone}", release=SETTING.release)
    workdir = tmp_path / "content"  # Colab's working folder holds nothing of the repository
    workdir.mkdir()

    # A release that does not exist: one line that says what failed, and nothing installed.
    missing = setup_cell.Launch(url=f"file://{clone}", release="v999.0.0")
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(setup_cell.cell_source(missing))]
    )
    env.execute(nb, cwd=workdir, allow_errors=True)
    [error] = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    assert error.ename == "SetupError"
    assert len(error.traceback) == 1 and "\n" not in error.traceback[0], error.traceback
    assert error.traceback[0].startswith("SetupError: could not install lsa_lib 999.0.0")
    assert "v999.0.0" in error.traceback[0], error.traceback[0]
    assert "lsa_lib" not in env.packages()

    # The release: the set-up cell installs it, then the whole chapter runs.
    nb = _chapter("01_lightning_map.ipynb")
    setup = next(c for c in nb.cells if c.cell_type == "code")
    setup.source = setup_cell.cell_source(local)
    nb.cells.append(_probe(env.path))
    run = env.execute(nb, cwd=workdir)
    assert _text(setup).startswith(f"Installed lsa_lib {SETTING.version} from"), _text(setup)
    assert {"lsa-lib", "python-flint"} <= {canonicalize_name(n) for n in env.packages()}
    timing = setup.metadata["execution"]
    install = _seconds(timing["shell.execute_reply"]) - _seconds(timing["iopub.execute_input"])

    # An older lsa_lib, installed and imported before the cell: replaced and imported afresh.
    old = tmp_path / "old"
    (old / "lsa_lib").mkdir(parents=True)
    (old / "lsa_lib" / "__init__.py").write_text('__version__ = "0.0.1"\n')
    (old / "pyproject.toml").write_text(
        '[project]\nname = "lsa_lib"\nversion = "0.0.1"\n[tool.setuptools]\npackages = ["lsa_lib"]\n'
    )
    env.install(str(old))
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import lsa_lib\nassert lsa_lib.__version__ == '0.0.1'"),
            nbformat.v4.new_code_cell(setup_cell.cell_source(local)),
            nbformat.v4.new_code_cell("from lsa_lib import attention_layer"),
            _probe(env.path),
        ]
    )
    env.execute(nb, cwd=workdir)
    assert _text(nb.cells[1]).startswith(f"Installed lsa_lib {SETTING.version} from")
    _say(
        record_property,
        f"Colab-like runtime (uv) {seconds:.0f} s ({len(colab)} packages asked); set-up cell "
        f"{install:.0f} s, then chapter 1: {run:.0f} s in all",
    )


LIBRARY_CHECK = """
import importlib, importlib.metadata, importlib.util, json, pkgutil, sys
import numpy as np
import lsa_lib

modules = [m.name for m in pkgutil.iter_modules(lsa_lib.__path__, "lsa_lib.")]
for name in modules:
    importlib.import_module(name)
rng = np.random.default_rng(0)
X, Q, K, V = (rng.standard_normal(s) for s in [(4, 5), (2, 4), (2, 4), (3, 4)])
by_formula = V @ X @ (X.T @ K.T @ Q @ X)  # V X (X^T K^T Q X), tokens as columns
meta = importlib.metadata.metadata("lsa_lib")
lazy = {LAZY}
json.dump({
    "modules": modules,
    "lightning": bool(np.allclose(lsa_lib.attention_layer(X, Q, K, V), by_formula)),
    "version": lsa_lib.__version__,
    "licence": meta["License-Expression"],
    "licence_files": meta.get_all("License-File"),
    "extras": meta.get_all("Provides-Extra"),
    "missing": sorted(m for m in lazy if importlib.util.find_spec(m) is None),
}, sys.stdout)
print()
"""

WIDGET_CHECK = """
import importlib, json
import ipywidgets

made = [
    isinstance(getattr(importlib.import_module(module), name)(), ipywidgets.Widget)
    for module, name in {WIDGETS}
]
print(json.dumps(made))
"""


def _widget_functions() -> list[tuple[str, str]]:
    """(module, function) of lsa_lib's public functions that build a widget with no arguments."""
    found = []
    for path in sorted((ROOT / "lsa_lib").glob("*.py")):
        module = "lsa_lib" if path.stem == "__init__" else f"lsa_lib.{path.stem}"
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            required = len(node.args.args) - len(node.args.defaults)
            if "ipywidgets" in _imports(node) and required == 0:
                found.append((module, node.name))
    return found


@pytest.mark.launch
def test_pip_install_gives_a_working_library(venv, clone, record_property):
    """``pip install .``: imports and computes; ``.[explorer]`` adds what the widgets need.

    The package and its dependencies are installed by uv (from the same ``pyproject.toml``);
    the extra by the pip a Python 3.11 virtual environment comes with, which builds and
    installs the package again.
    """
    env = venv("pip")
    seconds = env.install(".", *_constraints(), cwd=clone)
    modules = sorted(
        {
            m
            for path in (ROOT / "lsa_lib").rglob("*.py")
            for m in _imports(ast.parse(path.read_text()))
        }
        - set(sys.stdlib_module_names)
        - {"lsa_lib"}
    )
    result = env.python_json(LIBRARY_CHECK.replace("{LAZY}", repr(modules)))
    expected_modules = {f"lsa_lib.{p.stem}" for p in (ROOT / "lsa_lib").glob("*.py")} | {
        f"lsa_lib.{p.parent.name}" for p in (ROOT / "lsa_lib").glob("*/__init__.py")
    }
    expected_modules -= {"lsa_lib.__init__"}
    assert set(result["modules"]) == expected_modules
    assert result["lightning"], "attention_layer differs from V X (X^T K^T Q X)"
    assert result["version"] == SETTING.version
    assert result["licence"] == "MIT" and result["licence_files"] == ["LICENSE"]
    assert result["extras"] == ["explorer", "sweep"]
    # the extras' imports are optional: the widgets' and the sweep's (Dask, Parquet)
    optional = set().union(*_declared()[1].values())
    assert result["missing"] == sorted(optional & set(modules)), (
        f"not importable after pip install .: {result}"
    )

    widgets = _widget_functions()
    assert widgets, "no widget-building function found in lsa_lib"
    check = WIDGET_CHECK.replace("{WIDGETS}", repr(widgets))
    without = subprocess.run(
        [str(env.python), "-c", check],
        capture_output=True,
        text=True,
        cwd=env.path,
        env=_env(env.path),
    )
    assert without.returncode != 0 and "No module named 'ipywidgets'" in without.stderr
    extra = env.pip("install", "--quiet", ".[explorer]", *_constraints(), cwd=clone)
    assert env.python_json(check) == [True] * len(widgets)
    _say(
        record_property,
        f"install . (uv) {seconds:.0f} s ({len(env.packages())} packages with the extra), "
        f"the explorer extra (pip) {extra:.0f} s",
    )

"""The book's environment against the readers' environment: install time, packages, size.

Builds fresh virtual environments from ``requirements.txt`` (the pinned environment that builds
and tests the book) and from ``binder/requirements.txt`` (what Binder installs for readers:
only what the chapters import), alternating the two, and prints side by side the install time
(wall clock and the CPU time of pip and its children), the number of installed packages (pip
itself excluded, lsa_lib not yet installed) and the size on disk.

Usage::

    .venv/bin/python benchmarks/bench_environments.py [--repeats 1] [--no-compile]

pip byte-compiles what it installs unless ``--no-compile`` (Binder compiles). The extra index
of ``binder/requirements.txt`` (PyTorch's CPU wheels) is left out when that host cannot be
reached; the torch pin then resolves on PyPI. On a busy machine the wall clock also counts the
time other programs hold the processor: compare CPU times there.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LISTS = {"book": ROOT / "requirements.txt", "readers": ROOT / "binder" / "requirements.txt"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def measure(requirements: Path, compile_: bool, scratch: Path) -> dict[str, float]:
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    lines = requirements.read_text().splitlines()
    kept = scratch / "requirements.txt"
    kept.write_text("\n".join(x for x in lines if not x.startswith("--extra-index-url")) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if not compile_:
        env["PIP_NO_COMPILE"] = "1"
    cpu, wall = _children_cpu(), time.perf_counter()
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "-r", str(kept)],
        check=True, env=env, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=json"], check=True, capture_output=True, env=env
    )
    packages = [p for p in json.loads(listed.stdout) if p["name"] != "pip"]
    result = {"wall": wall, "cpu": cpu, "packages": len(packages), "mb": _size_mb(venv)}
    shutil.rmtree(venv)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and shutil.disk_usage(shm).free > 8 * 2**30 else None
    results: dict[str, list[dict[str, float]]] = {name: [] for name in LISTS}
    for _ in range(args.repeats):
        for name, path in LISTS.items():  # alternate, so that machine load hits both alike
            with tempfile.TemporaryDirectory(dir=base) as scratch:
                results[name].append(measure(path, not args.no_compile, Path(scratch)))
    print(f"fresh venv + pip install -r, byte-compile {'off' if args.no_compile else 'on'}, "
          f"{args.repeats} run(s), best of each")  # fmt: skip
    print(f"{'':28}{'book (requirements.txt)':>26}{'readers (binder/)':>20}")
    rows = [("install, wall clock (s)", "wall", "{:.0f}"), ("install, CPU time (s)", "cpu", "{:.0f}"),
            ("packages", "packages", "{:.0f}"), ("size (MB)", "mb", "{:.0f}")]  # fmt: skip
    for label, key, fmt in rows:
        book = min(r[key] for r in results["book"])
        readers = min(r[key] for r in results["readers"])
        print(f"{label:28}{fmt.format(book):>26}{fmt.format(readers):>20}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

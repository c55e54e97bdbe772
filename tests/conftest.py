"""Test configuration: derandomized Hypothesis, and test files balanced over the workers.

Hypothesis runs derandomized in CI and under ``make test``.

The ``ci`` profile (chosen when ``CI`` is set, which the Makefile's ``unit`` target does)
draws the same examples on every run, so a failure is reproducible and a green run means the
same thing each time; the ``dev`` profile (a plain ``pytest`` run) explores new examples.
Cases that matter are pinned with ``@example`` in the tests themselves.
"""

from __future__ import annotations

import os

# One thread for torch and BLAS, as the notebooks' stored outputs were computed (see the
# Makefile): set before anything loads them; the notebooks' kernels inherit it.
os.environ["OMP_NUM_THREADS"] = "1"

import atexit
import functools
import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

import matplotlib
import nbval.kernel
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")


# ------------------------------------------------------------------------------------------
# Notebook kernels over Unix sockets
# ------------------------------------------------------------------------------------------
# Over TCP, each kernel's ports are picked free by one process and bound a moment later by the
# kernel; with two test workers and the launch check starting kernels at once, two kernels can
# pick the same port, and the second dies before it answers ("Kernel died before replying to
# kernel_info"). A socket file with a name of its own cannot be taken by another kernel.
def kernel_socket_base() -> str:
    """A path prefix, unique to one kernel, for the socket files of its channels."""
    return os.path.join(tempfile.gettempdir(), f"lsa-kernel-{uuid.uuid4().hex[:12]}")


class _SocketKernelManager(nbval.kernel.KernelManager):
    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("ip", kernel_socket_base())
        super().__init__(**kwargs)

    def format_kernel_cmd(self, extra_arguments=None):
        """The kernel, forked from this worker's kernel server (tests/kernel_forkserver.py);
        ``LSA_KERNELS=fresh`` starts each kernel as a new process instead."""
        cmd = super().format_kernel_cmd(extra_arguments)
        module = next(
            (k for k in range(len(cmd) - 1) if cmd[k : k + 2] == ["-m", "ipykernel_launcher"]), None
        )
        if os.environ.get("LSA_KERNELS") == "fresh" or module is None:
            return cmd
        return [sys.executable, str(FORKSERVER), "launch", _kernel_server(), *cmd[module + 2 :]]


FORKSERVER = Path(__file__).with_name("kernel_forkserver.py")


@functools.cache
def _kernel_server() -> str:
    """The socket of this test process's kernel server, started when its first notebook needs
    a kernel, and stopped when the process ends."""
    path = kernel_socket_base() + "-forkserver"
    server = subprocess.Popen([sys.executable, str(FORKSERVER), "serve", path])
    atexit.register(server.terminate)
    deadline = time.monotonic() + 120
    while not os.path.exists(path):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the kernel server did not start (status {server.poll()})")
        time.sleep(0.05)
    return path


nbval.kernel.KernelManager = _SocketKernelManager  # the class nbval starts its kernels with


settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# ------------------------------------------------------------------------------------------
# Balancing the test files over the workers (``-n 2 --dist loadfile``)
# ------------------------------------------------------------------------------------------
# A notebook's cells run in order in one kernel, so a notebook is one unit of work; the units
# are handed to the workers in collection order as they free up. Longest first (from the
# seconds measured in tests/durations.json, refreshed by ``make durations``; a new notebook
# counts half a second per code cell, a new test file two seconds), both workers end together.
DURATIONS = Path(__file__).with_name("durations.json")
ROOT = Path(__file__).resolve().parents[1]


def _estimate(path: Path, known: dict[str, float]) -> float:
    key = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    if key in known:
        return known[key]
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(path.read_text())["cells"]
        except (OSError, ValueError, KeyError):
            return 2.0
        return 0.5 * sum(c.get("cell_type") == "code" for c in cells)
    return 2.0


def pytest_collection_modifyitems(config, items):
    known = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    weight: dict[Path, float] = {}
    for item in items:
        path = Path(str(item.path))
        if path not in weight:
            weight[path] = _estimate(path, known)
    position = {id(item): k for k, item in enumerate(items)}
    items.sort(key=lambda it: (-weight[Path(str(it.path))], str(it.path), position[id(it)]))


_SECONDS: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    _SECONDS[path] += report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The launch check's measured times; ``LSA_DURATIONS=write`` refreshes durations.json."""
    lines = [
        value
        for report in terminalreporter.stats.get("passed", [])
        for name, value in getattr(report, "user_properties", [])
        if name == "launch"
    ]
    if lines:
        terminalreporter.section("launch check: measured times")
        for line in lines:
            terminalreporter.write_line(f"[launch] {line}")
    if (
        os.environ.get("LSA_DURATIONS") == "write"
        and _SECONDS
        and not hasattr(config, "workerinput")
    ):
        known = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
        known.update({k: round(v, 1) for k, v in _SECONDS.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")
        terminalreporter.write_line(f"wrote the seconds of {len(_SECONDS)} files to {DURATIONS}")

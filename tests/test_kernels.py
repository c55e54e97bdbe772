"""The notebooks' test kernels, forked from a kernel server (tests/kernel_forkserver.py), behave
as new kernels: a fresh namespace, the working directory and environment they were started
with, a working interrupt, and no process left behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbval.kernel
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(client, code: str) -> tuple[str, dict]:
    """Execute ``code``; its printed text and the reply's content."""
    out: list[str] = []

    def collect(msg):
        if msg["header"]["msg_type"] == "stream":
            out.append(msg["content"]["text"])

    reply = client.execute_interactive(code, timeout=60, output_hook=collect)
    return "".join(out), reply["content"]


@pytest.fixture
def kernel(monkeypatch):
    monkeypatch.delenv("LSA_KERNELS", raising=False)
    started = []

    def start(cwd: Path, mark: str = ""):
        monkeypatch.setenv("LSA_KERNEL_MARK", mark)  # this kernel's own environment
        km = nbval.kernel.KernelManager()
        km.start_kernel(cwd=str(cwd))
        client = km.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        started.append((km, client))
        return km, client

    yield start
    for km, client in started:
        client.stop_channels()
        if km.has_kernel:
            km.shutdown_kernel(now=True)


def test_a_forked_kernel_is_a_new_kernel(kernel):
    km, client = kernel(ROOT / "book", "first")
    assert "kernel_forkserver.py" in " ".join(km.format_kernel_cmd())
    text, _ = _run(
        client,
        "import os, sys\n"
        "print(os.getcwd(), os.environ.get('LSA_KERNEL_MARK'), 'torch' in sys.modules)\n"
        "print(sorted(k for k in dir() if not k.startswith('_') and k not in "
        "('In', 'Out', 'exit', 'quit', 'get_ipython', 'open', 'os', 'sys')))\n"
        "shared = 1",
    )
    cwd, mark, preloaded, names = text.split(maxsplit=3)
    assert (cwd, mark, preloaded) == (str(ROOT / "book"), "first", "True")
    assert names.strip() == "[]", f"names defined before the first cell: {names}"
    _, other = kernel(ROOT, "second")
    text, reply = _run(other, "print(os.getcwd())")
    assert reply["status"] == "error" and reply["ename"] == "NameError"  # nothing carried over
    text, _ = _run(
        other, "import os; print(os.getcwd(), os.environ['LSA_KERNEL_MARK'], 'shared' in dir())"
    )
    assert text.split() == [str(ROOT), "second", "False"]


def test_a_forked_kernel_is_interrupted_and_ends(kernel):
    km, client = kernel(ROOT)
    pid_text, _ = _run(client, "import os; print(os.getpid())")
    pid = int(pid_text)
    msg_id = client.execute("import time; time.sleep(60)")
    time.sleep(1)
    start = time.monotonic()
    km.interrupt_kernel()
    reply = client.get_shell_msg(timeout=30)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - start < 10
    client.stop_channels()
    km.shutdown_kernel(now=True)  # kills the launcher: the kernel must end with it
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the kernel {pid} outlived its launcher")

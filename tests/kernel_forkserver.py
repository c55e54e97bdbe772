"""Notebook kernels for the tests, forked from one process that has already imported the heavy
modules.

A fresh kernel spends about 2½ s of CPU before a notebook's first line runs: starting Python and
ipykernel, importing torch, SymPy and the library, and loading ``torch._dynamo`` (which
``torch.func`` needs at its first Jacobian). With 34 notebooks, that was a third of the unit
tests' time. Here one server process per test worker imports all that once, and every kernel is
a fork of it: ``os.fork`` copies the imported modules, not the work of importing them. Each
kernel starts with a fresh namespace, as a new kernel does; what a notebook does not import
itself is not defined in it. Only the modules are shared, never objects a notebook made. The
launch check (``tests/test_launch.py``) runs notebooks the readers' way, in fresh kernels of
fresh environments.

Two modes of this file:

``python kernel_forkserver.py serve SOCKET``
    the server: imports, then forks one kernel per request on the Unix socket ``SOCKET``;
``python kernel_forkserver.py launch SOCKET ARGS...``
    the kernel command that ``jupyter_client`` starts (``tests/conftest.py``): it asks the
    server for a kernel with ``ARGS`` (``-f CONNECTION_FILE``), its working directory and
    environment, then stands for it: the signals it is sent (an interrupt, a termination) go to
    the kernel, it exits with the kernel's status, and the kernel exits when it is killed.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import traceback

_STATUS = struct.Struct("!q")  # a pid, then an exit status, sent as 8-byte integers


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the kernel server closed the connection")
        data += chunk
    return data


# ------------------------------------------------------------------------------------------
# the kernel command
# ------------------------------------------------------------------------------------------
def launch(path: str, argv: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "launcher": os.getpid()}
    body = json.dumps(request).encode()
    conn.sendall(_STATUS.pack(len(body)) + body)
    (pid,) = _STATUS.unpack(_recv_exactly(conn, _STATUS.size))

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    try:
        (status,) = _STATUS.unpack(_recv_exactly(conn, _STATUS.size))
    except ConnectionError:
        return 1
    return os.waitstatus_to_exitcode(status)


# ------------------------------------------------------------------------------------------
# the server
# ------------------------------------------------------------------------------------------
def _preload() -> None:
    """What nearly every notebook imports, and what every kernel runs."""
    import ipykernel.ipkernel  # noqa: F401
    import ipykernel.kernelapp  # noqa: F401
    import numpy  # noqa: F401
    import sympy  # noqa: F401
    import torch._dynamo  # noqa: F401  (torch, and what torch.func's first Jacobian loads)

    import lsa_lib  # noqa: F401


def _kernel(request: dict) -> None:
    """In the forked child: become a kernel as ``python -m ipykernel_launcher ARGS`` would."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [sys.executable, *request["argv"]]
    # random state as a new process has it (the notebooks seed their own draws)
    import random

    import numpy
    import torch

    random.seed()
    numpy.random.seed()  # noqa: NPY002 (the legacy global state a new process starts with)
    torch.seed()
    launcher = request["launcher"]

    def watch() -> None:  # the kernel ends when its launcher is killed
        try:
            fd = os.pidfd_open(launcher)
        except ProcessLookupError:
            os._exit(1)
        select.select([fd], [], [])
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance()  # reads sys.argv, as ipykernel_launcher does


def serve(path: str) -> None:
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    waiting: dict[int, socket.socket] = {}  # kernel pid -> its launcher's connection
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    parent = os.getppid()
    try:
        while os.getppid() == parent:  # ends with the test process that started it
            ready, _, _ = select.select([listener], [], [], 0.2)
            while waiting:  # report each kernel that has ended to its launcher
                pid, status = os.waitpid(-1, os.WNOHANG)
                if not pid:
                    break
                conn = waiting.pop(pid, None)
                if conn is not None:
                    try:
                        conn.sendall(_STATUS.pack(status))
                    except OSError:
                        pass
                    conn.close()
            if not ready:
                continue
            conn, _ = listener.accept()
            (size,) = _STATUS.unpack(_recv_exactly(conn, _STATUS.size))
            request = json.loads(_recv_exactly(conn, size))
            pid = os.fork()
            if pid == 0:  # the kernel: never returns into the server's loop
                for other in (listener, conn, *waiting.values()):
                    other.close()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                code = 1
                try:
                    _kernel(request)
                    code = 0
                except SystemExit as end:
                    code = end.code if isinstance(end.code, int) else 0
                except BaseException:
                    traceback.print_exc()  # the launcher reports the kernel's end, not why
                finally:
                    import atexit

                    atexit._run_exitfuncs()  # as a process ending normally: flush and close
                    os._exit(code)
            conn.sendall(_STATUS.pack(pid))
            waiting[pid] = conn
    finally:
        listener.close()
        if os.path.exists(path):
            os.unlink(path)


if __name__ == "__main__":
    mode, path, *rest = sys.argv[1:]
    if mode == "serve":
        serve(path)
    elif mode == "launch":
        sys.exit(launch(path, rest))
    else:
        sys.exit(f"unknown mode {mode!r}: serve or launch")

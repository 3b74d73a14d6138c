"""A cluster on this machine: ``new_cluster()`` starts a supervisor and workers as processes.

>>> from mars.deploy.local import new_cluster        # doctest: +SKIP
>>> with new_cluster(n_worker=2, n_cpu=1) as cluster:  # doctest: +SKIP
...     (mt.ones((4, 4)) + 1).execute()               # runs on the cluster
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import json
import multiprocessing
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from .. import oscar as mo
from ..oscar.loop import new_event_loop
from ..remote import ClusterSession
from .oscar.config import check_cuda_devices, load_config


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _node_main(role: str) -> None:
    """Entry point of a node's process: config on stdin, one JSON line on stdout once serving."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the user's terminal is for the parent
    config = json.loads(sys.stdin.readline())
    _run_node(role, config, sys.stdout.fileno())


def _run_node(role: str, config: dict, ready_fd: int) -> None:
    from .oscar.logconf import configure_logging

    configure_logging(config.get("logging") or {})  # the node's console, and its records for the dashboard
    loop = new_event_loop(config.get("oscar", {}).get("use_uvloop", "auto"))
    try:
        loop.run_until_complete(_serve(role, config, ready_fd))
    finally:
        loop.close()


async def _serve(role: str, config: dict, ready_fd: int) -> None:
    def _say(status: str, info: Any) -> None:
        os.write(ready_fd, (json.dumps([status, info]) + "\n").encode())

    from .oscar import node

    try:
        started = await (node.start_supervisor(config) if role == "supervisor" else node.start_worker(config))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it
        _say("error", f"{type(e).__name__}: {e}")
        return
    _say("ok", [started.address, getattr(started, "web_address", None)])
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    parent = os.getppid()
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except asyncio.TimeoutError:
            if os.getppid() != parent:  # the parent died without stopping us
                break
    await started.stop()


class _NodeProcess:
    """A node in a child process (a fresh interpreter: the user's script is not imported again)."""

    def __init__(self, role: str, config: dict):
        self.role = role
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mars.deploy.local", role],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(config) + "\n")
        self.process.stdin.close()
        self.address: str = ""
        self.web_address: str | None = None

    def _stdout(self) -> Any:
        return self.process.stdout

    def _exit_code(self) -> int | None:
        return self.process.poll()

    def wait_ready(self, timeout: float) -> None:
        out = self._stdout()
        assert out is not None
        ready, _, _ = select.select([out], [], [], timeout)
        line = out.readline() if ready else ""
        if not line:
            self.kill()
            why = f"exited with code {self._exit_code()}" if ready else f"did not start within {timeout:g} s"
            raise RuntimeError(f"the {self.role} process {why}")
        status, info = json.loads(line)
        if status != "ok":
            self.kill()
            raise RuntimeError(f"the {self.role} failed to start: {info}")
        self.address, self.web_address = info

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


class _ForkedNode(_NodeProcess):
    """A node in a forked child: no interpreter to start, no modules to import again.

    The child starts from a copy of this process (only the calling thread
    survives a fork) and runs the node on a new event loop of its own.
    """

    def __init__(self, role: str, config: dict):
        self.role = role
        ctx = multiprocessing.get_context("fork")
        read_fd, write_fd = os.pipe()
        self.process = ctx.Process(target=_forked_main, args=(role, config, read_fd, write_fd), daemon=False,
                                   name=f"mars-{role}")
        self.process.start()
        os.close(write_fd)
        self._out = os.fdopen(read_fd, "r")
        self.address = ""
        self.web_address = None

    def _stdout(self) -> Any:
        return self._out

    def _exit_code(self) -> int | None:
        return self.process.exitcode

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.is_alive():
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.join(timeout)
        self.kill()
        self._out.close()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


def _forked_main(role: str, config: dict, read_fd: int, write_fd: int) -> None:
    os.close(read_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.setsid()  # Ctrl-C in the user's terminal is for the parent, which stops us
    asyncio.set_event_loop(None)
    _run_node(role, config, write_fd)


class _NodeLoop:
    """An event loop on a thread of this process, running the nodes of an in-process cluster."""

    def __init__(self) -> None:
        self.loop = new_event_loop("no")
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="mars-nodes")
        self._thread.start()

    def submit(self, coro: Any) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        from ..oscar import close_connections

        async def _close() -> None:
            close_connections()

        self.submit(_close()).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


class _InProcessNode:
    """A node on the cluster's loop thread in this process (its slots are threads too)."""

    def __init__(self, role: str, config: dict, loop: _NodeLoop):
        from .oscar import node

        self.role = role
        self._loop = loop
        start = node.start_supervisor if role == "supervisor" else node.start_worker
        self._starting = loop.submit(start(config))
        self._node: Any = None
        self.address = ""
        self.web_address: str | None = None

    def wait_ready(self, timeout: float) -> None:
        self._node = self._starting.result(timeout)
        self.address = self._node.address
        self.web_address = getattr(self._node, "web_address", None)

    def stop(self, timeout: float = 10.0) -> None:
        if self._node is not None:
            self._loop.submit(self._node.stop()).result(timeout)
            self._node = None

    def kill(self) -> None:
        self.stop()


class LocalCluster:
    """A supervisor and ``n_worker`` workers on this machine; see :func:`new_cluster`."""

    def __init__(self, n_worker: int = 1, n_cpu: int | str = "auto", web: bool = True, n_io_process: int = 0,
                 config: dict | None = None, timeout: float = 60.0, start_method: str = "auto",
                 processes: bool = True, cuda_devices: Any = None):
        if not isinstance(n_worker, int) or n_worker < 1:
            raise ValueError(f"n_worker must be a positive int, got {n_worker!r}")
        if start_method not in ("auto", "fork", "spawn"):
            raise ValueError(f"start_method must be 'auto', 'fork' or 'spawn', got {start_method!r}")
        self.n_worker = n_worker
        # CUDA does not survive a fork: GPU slots start from fresh interpreters
        self._fork = start_method == "fork" or (start_method == "auto" and _can_fork() and not cuda_devices)
        self._loop = None if processes else _NodeLoop()
        self.config = load_config(None, config)
        if self._loop is not None:
            self.config["worker"]["slots_in_process"] = True
        elif self._fork:
            self.config.setdefault("oscar", {})["start_method"] = "fork"
        host = self.config["supervisor"]["host"]
        self.config["supervisor"]["port"] = self.config["supervisor"].get("port") or _free_port(host)
        if web:
            self.config["supervisor"]["web_port"] = self.config["supervisor"].get("web_port") or _free_port(host)
        else:
            self.config["supervisor"]["web_port"] = None
        self.endpoint = f"{host}:{self.config['supervisor']['port']}"
        self.token = _cluster_token(self.config["security"])
        self.config["worker"].update(supervisors=[self.endpoint], n_cpu=_per_worker_cpu(n_cpu, n_worker),
                                     n_io_process=n_io_process)
        if cuda_devices is not None:  # GPU slots: give them to one worker per machine (see docs/gpu.md)
            self.config["worker"]["cuda_devices"] = check_cuda_devices(cuda_devices)
        self._nodes: list[Any] = []
        self.session: Any = None
        self._start(timeout)

    def _new_node(self, role: str) -> Any:
        if self._loop is not None:
            return _InProcessNode(role, self.config, self._loop)
        return (_ForkedNode if self._fork else _NodeProcess)(role, self.config)

    def _start(self, timeout: float) -> None:
        if self._fork:  # imported once here, not in every forked node (see node.preload_kernels)
            from .oscar.node import preload_kernels

            preload_kernels()
        try:
            # workers start beside the supervisor and register once it is up
            self._nodes.append(self._new_node("supervisor"))
            self._nodes.extend(self._new_node("worker") for _ in range(self.n_worker))
            for node in self._nodes:
                node.wait_ready(timeout)
            tls = self.config["security"].get("tls_ca")
            if tls:  # this process checks the cluster's certificate against its CA
                mo.set_tls(mo.TLSConfig(ca=tls))
            self.session = ClusterSession(self.web_address or self.endpoint, token=self.token)
            self.session.as_default()
            self._wait_workers(timeout)
        except BaseException:
            self.stop()
            raise
        # a script that never calls stop() still ends: multiprocessing's own exit hook joins the
        # (non-daemon) forked nodes, which wait for us; hooks run last-registered first, so this one goes before
        atexit.register(self.stop)

    def _wait_workers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            alive = [w for w in self.session._backend.call("get_workers") if w.get("state") == "alive"]
            if len(alive) >= self.n_worker:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(alive)} of {self.n_worker} workers registered within {timeout:g} s")
            time.sleep(0.005)

    @property
    def web_address(self) -> str | None:
        return self._nodes[0].web_address if self._nodes else None

    @property
    def worker_addresses(self) -> list[str]:
        return [n.address for n in self._nodes[1:]]

    def stop(self) -> None:
        """Close the cluster's session and stop its nodes (workers first); safe to call again."""
        atexit.unregister(self.stop)
        if self.session is not None:
            self.session.close()
            self.session = None
        for node in reversed(self._nodes):  # workers first: they say goodbye to the supervisor
            node.stop()
        self._nodes = []
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<LocalCluster {self.endpoint}, {self.n_worker} workers, web {self.web_address}>"


def _cluster_token(security: dict) -> str | None:
    """The token of a local cluster: given, else this process's (in-process clusters share it), else a new one.

    It reaches the node processes in their config, on stdin or across the
    fork, never on a command line; None with ``insecure``.
    """
    if not security.get("token") and not security.get("insecure"):
        security["token"] = mo.get_token() or secrets.token_urlsafe(32)
    return security.get("token")


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _per_worker_cpu(n_cpu: int | str, n_worker: int) -> int:
    if n_cpu == "auto" or n_cpu is None:
        return max(1, (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1) // n_worker)
    if not isinstance(n_cpu, int) or n_cpu < 1:
        raise ValueError(f"n_cpu must be 'auto' or a positive int, got {n_cpu!r}")
    return n_cpu


def new_cluster(n_worker: int = 1, n_cpu: int | str = "auto", web: bool = True, **kw: Any) -> LocalCluster:
    """Start a supervisor and ``n_worker`` workers on this machine; their session becomes the default.

    With ``processes=False`` the same services run in this process instead,
    on a thread of their own, with thread slots (quick to start; numpy
    kernels release the GIL, Python-heavy chunk functions do not).

    ``n_cpu`` is per worker (``"auto"``: this machine's cores shared among the
    workers). The workers of one machine need no IO processes (``n_io_process=0``:
    their main pools serve their chunks); pass ``n_io_process=1`` to have them. The result has ``.session``, ``.endpoint`` (the supervisor),
    ``.web_address`` and ``.stop()``, and works as a context manager. ``cuda_devices=[0]``
    (or ``"auto"``) gives the workers GPU slots, as ``mars-worker --cuda-devices``.

    >>> import mars.tensor as mt                        # doctest: +SKIP
    >>> with new_cluster(n_worker=2, n_cpu=1) as c:     # doctest: +SKIP
    ...     print((mt.ones(4) * 2).execute().fetch())
    [2. 2. 2. 2.]
    """
    return LocalCluster(n_worker=n_worker, n_cpu=n_cpu, web=web, **kw)


if __name__ == "__main__":
    _node_main(sys.argv[1])

"""Mars nodes as real processes on loopback, for the tests (and benchmarks) that start them by command line.

One harness for ``tests/deploy/test_cluster_processes.py``, ``tests/deploy/test_chaos.py``,
the dashboard's browser tests in ``tests/web`` and ``benchmarks/chaos_bench.py``:

- :class:`Node`: ``python -m mars.deploy.oscar.<role> ...`` with its printed lines
  collected (and copied to a log file, if given), waited for by text; stopped
  with SIGTERM, then SIGKILL to whatever of its process tree is left; or killed
  as a machine dies, the whole tree at once.
- :func:`start_supervisor`, :func:`start_workers`, :func:`start_worker`: nodes
  that have printed their addresses.
- :class:`ProcessCluster`: a supervisor and workers with fast loss detection,
  watched through the web API, for the chaos tests and the chaos benchmark.

Imported as ``process_nodes``: tests/ is not a package, so pytest's default
(prepend) import mode puts tests/ on ``sys.path`` for the root conftest.py;
the benchmark loads this file by its path.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

import psutil

#: how long a stopping node may take to exit after SIGTERM before it is killed
STOP_TIMEOUT = 30.0


class Node:
    """A ``mars-<role>`` process; ``output`` holds every line it printed so far (also copied to ``log``).

    The node runs with this process's environment less ``MARS_TOKEN`` (a token
    only where a test passes ``--token``), plus ``env``. ``package`` holds the
    role's module: ``mars.deploy.kubernetes`` starts it as a pod's command does.
    """

    def __init__(self, role: str, *args: str, env: Mapping[str, str] | None = None, log: TextIO | None = None,
                 package: str = "mars.deploy.oscar"):
        cmd = [sys.executable, "-m", f"{package}.{role}", *args]
        full_env = {k: v for k, v in os.environ.items() if k != "MARS_TOKEN"}
        full_env.update(env or {})
        self.role = role
        self.address = ""  # set by start_supervisor / start_worker once printed
        self.token: str | None = None  # a supervisor's, as printed
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=full_env)
        self.output: list[str] = []
        self._log = log
        self._read_up_to = 0  # lines of output that wait_for has looked at
        self._ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None, "started with stdout=PIPE"
        for line in self.process.stdout:
            self.output.append(line)
            if self._log is not None:
                self._log.write(line)
                self._log.flush()
        self._ended.set()

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The first line printed after those already waited for that contains ``text``.

        Fails after ``timeout`` seconds, or once the node has closed its output.
        """
        deadline = time.monotonic() + timeout
        while True:
            ended = self._ended.is_set()  # read before the lines: a last line comes before the end
            while self._read_up_to < len(self.output):
                line = self.output[self._read_up_to]
                self._read_up_to += 1
                if text in line:
                    return line.strip()
            if ended or time.monotonic() > deadline:
                raise AssertionError(f"{self.role}: {text!r} not printed within {timeout} s; it printed "
                                     f"{''.join(self.output)!r} (exit code {self.process.poll()})")
            self._ended.wait(0.05)

    def tree(self) -> list[psutil.Process]:
        """This node's process and every process under it (sub pools, slots, IO processes)."""
        try:
            top = psutil.Process(self.process.pid)
            return [top, *top.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Gone as a machine goes: SIGKILL to the whole tree at once, with no chance to say goodbye.

        Waits for the node's own process only: the orphaned sub-processes are
        reaped by whoever adopts them.
        """
        _kill(self.tree())
        self.process.wait(STOP_TIMEOUT)

    def stop(self) -> int:
        """SIGTERM, then SIGKILL to whatever of the tree is left; the node's exit code (-9 when killed)."""
        children = self.tree()[1:]
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                children += self.tree()[1:]
                self.process.kill()  # through Popen, which reaps it and keeps its exit code
        code = self.process.wait(STOP_TIMEOUT)
        _kill(children)  # sub-processes of a stuck or killed node outlive it
        psutil.wait_procs(children, timeout=10)
        return code


def _kill(procs: list[psutil.Process]) -> None:
    for p in procs:
        try:
            p.kill()
        except psutil.Error:  # gone already
            pass


def start_supervisor(*extra: str, log: TextIO | None = None) -> tuple[Node, str, str]:
    """A supervisor on loopback at free ports (``extra`` may name others): (node, address, web URL).

    The URL is the printed one without its ``?token=...``; the token is ``node.token``.
    """
    sup = Node("supervisor", "-H", "127.0.0.1", "-p", "0", "-w", "0", *extra, log=log)
    try:
        sup.address = sup.wait_for("Mars supervisor started at").rsplit(" ", 1)[1]
        printed = sup.wait_for("Mars Web started at").rsplit(" ", 1)[1]
    except BaseException:
        sup.stop()
        raise
    url, _, query = printed.partition("?")
    sup.token = urllib.parse.parse_qs(query).get("token", [None])[0]
    return sup, sup.address, url


def api_get(url: str, path: str, token: str | None = None) -> Any:
    """GET ``url + path`` from the JSON API with the cluster's token (by default, the one its supervisor
    left for this user on this host); an error reply fails with its message."""
    from mars.oscar.tokenfile import find_token

    token = token or find_token(url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as e:
        raise AssertionError(f"GET {path} answered {e.code}: {e.read()[:2000]!r}") from None


def start_workers(supervisors: str, n: int, *extra: str, log: TextIO | None = None) -> list[Node]:
    """``n`` workers on loopback joined to ``supervisors`` (comma-separated), started side by side.

    Returns once each has printed its address (``Node.address``); on a failure every one is stopped.
    """
    workers = [Node("worker", "-H", "127.0.0.1", "-s", supervisors, *extra, log=log) for _ in range(n)]
    try:
        for worker in workers:
            worker.address = worker.wait_for("Mars worker started at").rsplit(" ", 1)[1]
    except BaseException:
        for worker in workers:
            worker.stop()
        raise
    return workers


def start_worker(supervisors: str, *extra: str, log: TextIO | None = None) -> Node:
    """One worker, as :func:`start_workers` starts them."""
    return start_workers(supervisors, 1, *extra, log=log)[0]


@contextlib.contextmanager
def one_worker_cluster(*worker_flags: str) -> Iterator[tuple[str, Node]]:
    """A supervisor and one worker started with ``worker_flags``: (the web URL, the worker), stopped after."""
    sup, address, url = start_supervisor()
    try:
        worker = start_worker(address, *worker_flags)
        try:
            yield url, worker
        finally:
            worker.stop()
    finally:
        sup.stop()


class ProcessCluster:
    """A supervisor and ``n_workers`` workers (one slot each) as processes, with fast loss detection.

    Heartbeats every ``heartbeat`` seconds, a worker taken for lost after
    ``worker_timeout`` seconds of silence; the config file and ``log`` (every
    node's output) are the caller's. Workers get no warm-up job: a node
    imports the dataframe package as it starts, so that a first job cannot
    stall its heartbeats past the 2 s timeout (only kills should lose workers).
    """

    def __init__(self, workdir: str, n_workers: int = 3, n_io: int = 1, heartbeat: float = 0.2,
                 worker_timeout: float = 2.0, log: TextIO | None = None):
        os.makedirs(workdir, exist_ok=True)
        self.config = os.path.join(workdir, "chaos.yml")
        with open(self.config, "w") as f:
            f.write(f"cluster:\n  heartbeat_interval: {heartbeat}\n  worker_timeout: {worker_timeout}\n")
        self.n_io = n_io
        self.log = log
        self.workers: list[Node] = []
        self.supervisor, self.address, self.url = start_supervisor("-f", self.config, log=log)
        try:
            for _ in range(n_workers):
                self.start_worker()
        except BaseException:
            self.stop()
            raise

    def start_worker(self, port: int = 0) -> Node:
        """A worker (at ``port``, 0 for any), once the supervisor lists it."""
        worker = start_worker(self.address, "-p", str(port), "--n-cpu", "1", "--n-io-process", str(self.n_io),
                              "-f", self.config, log=self.log)
        self.workers.append(worker)
        self.wait_worker(worker.address, "alive", pid=worker.process.pid)
        return worker

    def alive_workers(self) -> list[Node]:
        return [w for w in self.workers if w.alive]

    def top_up(self, n: int) -> None:
        """Start workers until ``n`` are alive."""
        while len(self.alive_workers()) < n:
            self.start_worker()

    def get(self, path: str) -> Any:
        """GET ``path`` from the web API, decoded."""
        return api_get(self.url, path, self.supervisor.token)

    def worker_info(self, address: str) -> dict:
        return self.get("/api/cluster/workers/" + urllib.parse.quote(address, safe=""))

    def wait_worker(self, address: str, state: str, pid: int | None = None, timeout: float = 30) -> dict:
        """The worker's info once the supervisor lists it in ``state`` (with process ``pid``, if given)."""
        deadline = time.monotonic() + timeout
        infos: list[dict] = []
        while time.monotonic() < deadline:
            infos = [w for w in self.get("/api/cluster/workers") if w["address"] == address]
            info = next((w for w in infos if w["state"] == state and pid in (None, w["pid"])), None)
            if info is not None:
                return info
            time.sleep(0.05)
        raise AssertionError(f"worker {address} (pid {pid}) not {state} within {timeout} s; last seen {infos!r}")

    def io_process(self, worker: Node, timeout: float = 30) -> psutil.Process:
        """The worker's IO process: the child listening on the port of its ``io_addresses``."""
        ports = {int(a.rsplit(":", 1)[1]) for a in self.worker_info(worker.address)["io_addresses"]}
        assert ports, f"worker {worker.address} has no IO process"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # it may be restarting
            for child in worker.tree()[1:]:
                try:
                    if any(c.status == psutil.CONN_LISTEN and c.laddr.port in ports
                           for c in child.net_connections("tcp")):
                        return child
                except psutil.NoSuchProcess:
                    continue
            time.sleep(0.05)
        raise AssertionError(f"no process of worker {worker.address} listens on {sorted(ports)}")

    def counts(self, session_id: str) -> tuple[int, int] | None:
        """``(finished, submitted)`` subtasks of the session's running task, or None when none runs.

        A task's graphs add up: stages, and the runs again after a loss (those
        count the lost run's unfinished subtasks too, so ``submitted`` overstates what is left).
        """
        running = [t for t in self.get(f"/api/sessions/{session_id}/tasks") if t["status"] == "running"]
        if not running:
            return None
        return min(t["n_finished"] for t in running), min(t["n_subtasks"] for t in running)

    def stop(self) -> None:
        """Stop every worker, then the supervisor."""
        for node in [*self.workers, self.supervisor]:
            node.stop()

"""What the dashboard's browser tests need besides pytest fixtures: processes, Chromium, artifacts, the API.

Kept out of conftest.py so the test module can import the helpers by name
(tests/ folders are not packages: this basename is unique in tests/).
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import psutil
import pytest

#: set to "required" (by .ci/run) to fail, not skip, when Chromium or playwright is missing
REQUIRED_ENV = "MARS_BROWSER_TESTS"
#: the Chromium to drive; default: `chromium` on PATH (Debian's package)
CHROMIUM_ENV = "MARS_CHROMIUM"
#: where screenshots go (a `dashboard/` folder inside it); default: test-artifacts/ at the repo root
ARTIFACTS_ENV = "MARS_TEST_ARTIFACTS"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

#: flags for a headless run on a machine without a GPU or internet, as root in CI
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def browser_missing(reason: str) -> None:
    """Skip the browser tests with ``reason``, or fail them when CI requires them."""
    if os.environ.get(REQUIRED_ENV, "").lower() == "required":
        pytest.fail(f"browser tests are required ({REQUIRED_ENV}=required) but {reason}", pytrace=False)
    pytest.skip(f"{reason} (install Debian's chromium, or set {CHROMIUM_ENV}; see .ci/run)")


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None when there is none."""
    given = os.environ.get(CHROMIUM_ENV)
    if given:
        return given if os.access(given, os.X_OK) else None
    return shutil.which("chromium")


def artifacts_dir() -> pathlib.Path:
    """The folder for screenshots (created)."""
    base = os.environ.get(ARTIFACTS_ENV)
    folder = (pathlib.Path(base) if base else REPO_ROOT / "test-artifacts") / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def artifact_name(nodeid_name: str, suffix: str = "") -> str:
    """A file name for a test's screenshot: the test's name, made safe for any file system."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid_name).strip("_")
    return f"{name}{'-' + suffix if suffix else ''}.png"


class Node:
    """A mars-supervisor or mars-worker process; ``lines`` holds what it printed so far."""

    def __init__(self, role: str, *args: str):
        cmd = [sys.executable, "-m", f"mars.deploy.oscar.{role}", *args]
        env = {k: v for k, v in os.environ.items() if k != "MARS_TOKEN"}  # a token only where a test gives one
        self.role = role
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        self._children: list[psutil.Process] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The first line printed from now on that contains ``text``; fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                break
            self.lines.append(line)
            if text in line:
                return line.strip()
        raise AssertionError(f"{self.role}: {text!r} not printed within {timeout} s; "
                             f"it printed {''.join(self.lines)!r} (exit code {self.process.poll()})")

    def _remember_children(self) -> None:
        try:
            self._children += psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            pass

    def kill(self) -> None:
        """SIGKILL the node's main process only (as a crash would); its sub pools are cleaned up by ``stop``."""
        self._remember_children()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """Stop the node and every process it started, whatever state it is in."""
        if self.process.poll() is None:
            self._remember_children()
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for child in self._children:  # sub pools of a killed (or stuck) node outlive it
            try:
                child.kill()
            except psutil.Error:
                pass


def start_supervisor(*extra: str) -> tuple[Node, str, str]:
    """A supervisor on loopback: (node, its address, its web URL as printed, maybe with ?token=)."""
    sup = Node("supervisor", "-H", "127.0.0.1", "-p", "0", "-w", "0", *extra)
    try:
        address = sup.wait_for("Mars supervisor started at").rsplit(" ", 1)[1]
        url = sup.wait_for("Mars Web started at").rsplit(" ", 1)[1]
    except BaseException:
        sup.stop()
        raise
    return sup, address, url


def start_workers(supervisor: str, n: int, *extra: str) -> list[tuple[Node, str]]:
    """``n`` workers on loopback joined to ``supervisor``, started side by side: [(node, its address)]."""
    workers = [Node("worker", "-H", "127.0.0.1", "-s", supervisor, *extra) for _ in range(n)]
    try:
        return [(w, w.wait_for("Mars worker started at").rsplit(" ", 1)[1]) for w in workers]
    except BaseException:
        for w in workers:
            w.stop()
        raise


def api_get(url: str, path: str, token: str | None = None) -> Any:
    """GET ``url + path`` from the JSON API; an error reply fails with its message."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as e:
        raise AssertionError(f"GET {path} answered {e.code}: {e.read()[:2000]!r}") from None


def quoted(address: str) -> str:
    """``address`` as the dashboard puts it in a hash route (JavaScript's encodeURIComponent)."""
    return urllib.parse.quote(address, safe="")


def wait_until(predicate: Any, timeout: float, what: str) -> Any:
    """Poll ``predicate`` until it returns something true; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.1)

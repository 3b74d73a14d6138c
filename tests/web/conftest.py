"""Fixtures of the dashboard's browser tests: a real cluster of processes, a headless Chromium, a checked page.

Chromium is Debian's (``chromium`` on PATH, or ``$MARS_CHROMIUM``), driven by
playwright; nothing is downloaded. Without either the tests skip, unless
``MARS_BROWSER_TESTS=required`` (set by .ci/run) makes them fail.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from typing import Any, Iterator

import pytest

import mars
from dashboard_harness import CHROMIUM_ARGS, artifact_name, artifacts_dir, browser_missing, chromium_path
from process_nodes import Node, start_supervisor, start_workers

#: a worker silent this long is shown as lost: short, so the lost-worker test waits seconds, not tens of seconds
WORKER_TIMEOUT = 4.0


@dataclasses.dataclass
class Cluster:
    """A supervisor and its workers, each a process of its own, on loopback."""

    url: str  # the web service, http://127.0.0.1:port
    supervisor: str  # the supervisor's address
    workers: list[str]  # worker addresses
    nodes: dict[str, Node]  # by address


@pytest.fixture(scope="module", autouse=True)
def _browser_prerequisites() -> None:
    """Skip (or fail, in CI) before anything starts when playwright or Chromium is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:
        browser_missing(f"the playwright package cannot be imported ({e})")
    if chromium_path() is None:
        browser_missing("no Chromium executable was found ($MARS_CHROMIUM, or `chromium` on PATH)")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """``mars-supervisor`` and two ``mars-worker --n-cpu 1`` processes, all stopped at the end, even on failure."""
    config = tmp_path_factory.mktemp("dashboard-cluster") / "config.yml"
    config.write_text(f"cluster:\n  worker_timeout: {WORKER_TIMEOUT}\n")
    with contextlib.ExitStack() as stack:
        sup, address, url = start_supervisor("-f", str(config))
        stack.callback(sup.stop)
        nodes = {address: sup}
        workers = start_workers(address, 2, "--n-cpu", "1")
        for worker in workers:
            stack.callback(worker.stop)
            nodes[worker.address] = worker
        yield Cluster(url, address, [w.address for w in workers], nodes)


@pytest.fixture
def mars_session(cluster: Cluster) -> Iterator[Any]:
    """A client session of its own for the test, so the session page lists only the test's tasks."""
    sess = mars.new_session(cluster.url, default=False)
    try:
        yield sess
    finally:
        sess.close()


@pytest.fixture(scope="module")
def browser(_browser_prerequisites: None) -> Iterator[Any]:
    """One headless Chromium for the module (playwright's launch gives it a fresh temporary profile)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True,
                                     timeout=60_000)
        try:
            yield chromium
        finally:
            chromium.close()


class ConsoleLog:
    """Console errors and uncaught exceptions of a page; ``allow`` exempts messages a test expects."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self._allowed: list[tuple[re.Pattern, re.Pattern]] = []

    def allow(self, text: str, url: str = ".*") -> None:
        """Do not count console errors whose whole text matches ``text`` and whose source matches ``url``."""
        self._allowed.append((re.compile(text), re.compile(url)))

    def on_console(self, message: Any) -> None:
        if message.type != "error":
            return
        where = message.location or {}
        source = where.get("url") or ""
        if any(text.fullmatch(message.text) and url.fullmatch(source) for text, url in self._allowed):
            return
        self.problems.append(f"console error: {message.text} (at {source}:{where.get('lineNumber')})")

    def on_page_error(self, error: Any) -> None:
        self.problems.append(f"uncaught exception in the page: {error}\n{getattr(error, 'stack', '') or ''}")


@pytest.fixture
def console_log() -> ConsoleLog:
    return ConsoleLog()


@pytest.fixture
def snap(request: pytest.FixtureRequest) -> Any:
    """``snap(page, "step")`` saves a full-page screenshot named after the test and the step."""

    def save(page: Any, step: str = "") -> None:
        page.screenshot(path=str(artifacts_dir() / artifact_name(request.node.name, step)), full_page=True)

    return save


@pytest.fixture
def page(browser: Any, console_log: ConsoleLog, snap: Any) -> Iterator[Any]:
    """A page in a fresh context; at the end it is screenshot, and any console error fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    tab.on("console", console_log.on_console)
    tab.on("pageerror", console_log.on_page_error)
    try:
        yield tab
    finally:
        try:
            snap(tab)  # the page as the test left it: the artifact to look at when something went wrong
        finally:
            context.close()
            if console_log.problems:
                report = "\n".join(console_log.problems)
                print(report)
                pytest.fail(f"the page logged {len(console_log.problems)} error(s):\n{report}", pytrace=False)

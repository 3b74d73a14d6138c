"""The dashboard in a real headless Chromium against a real cluster of processes (see conftest.py).

Each test drives the pages as a person would and checks what they show
against the DOM contract the pages keep (docs/web-api.md and the dashboard's
modules); any console error or uncaught exception in a page fails the test,
and every test leaves a screenshot in test-artifacts/dashboard/.
"""

from __future__ import annotations

import os
import pathlib
import re
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
import mars.tensor as mt
from mars.oscar.tokenfile import find_token
from dashboard_harness import api_get, quoted, wait_until
from process_nodes import start_supervisor

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]

#: how long a page may take to show what the API already has (it polls about every second)
SHOW = 15_000
#: how long a job may take on two workers of one core each, slow CI included
JOB = 60_000


def expect(*args: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect  # imported once the fixtures found playwright

    return playwright_expect(*args)


def open_page(page: Any, url: str, route: str, kind: str, with_token: bool = True) -> None:
    """Go to ``url`` at hash ``route`` and wait until the ``kind`` page rendered its first API data.

    The page is opened as the printed URL has it, with ``?token=`` (the one its
    supervisor left for this user on this host), unless ``route`` has a query
    of its own or ``with_token`` is False.
    """
    token = find_token(url) if with_token and route.startswith("#") else None
    page.goto(f"{url}/?token={token}{route}" if token else f"{url}/{route}")
    wait_loaded(page, kind)


def wait_loaded(page: Any, kind: str) -> None:
    """Wait until the page shows the ``kind`` view, rendered from its first API data."""
    view = page.locator("main#view")
    expect(view).to_have_attribute("data-page", kind, timeout=SHOW)
    expect(view).to_have_attribute("data-loaded", "true", timeout=SHOW)


def only_task(url: str, session_id: str) -> str:
    """The id of the one task the session submitted, once the API lists it."""
    tasks = wait_until(lambda: api_get(url, f"/api/sessions/{session_id}/tasks"), 30, "the job's task")
    assert len(tasks) == 1, tasks
    return tasks[0]["task_id"]


def node_states(page: Any) -> list[str]:
    return page.locator("svg#graph g.node").evaluate_all("nodes => nodes.map(n => n.dataset.state)")


def wait_for_nodes(page: Any, more_than: int, ids: set[str] | None = None) -> None:
    """Wait until the graph draws more than ``more_than`` nodes (exactly ``ids``, when given), all succeeded."""
    page.wait_for_function(
        """([n, ids]) => {
            const nodes = [...document.querySelectorAll('svg#graph g.node')];
            return nodes.length > n && nodes.every(g => g.dataset.state === 'succeeded')
                && (ids === null || (nodes.length === ids.length && nodes.every(g => ids.includes(g.dataset.id))));
        }""",
        arg=[more_than, sorted(ids) if ids is not None else None],
        timeout=SHOW,
    )


# ------------------------------------------------------------------ the cluster overview


def test_overview_lists_the_supervisor_and_both_workers_with_cpu_within_n_cpu(page, cluster):
    open_page(page, cluster.url, "#/", "overview")
    expect(page.locator('a[href="#/"]', has_text="Cluster")).to_be_visible()
    expect(page.locator('a[href="#/sessions"]', has_text="Sessions")).to_be_visible()
    expect(page.locator(f'table#supervisors tr[data-supervisor="{cluster.supervisor}"]')).to_be_visible()
    for address in cluster.workers:
        row = page.locator(f'table#workers tr[data-worker="{address}"]')
        expect(row.locator("td.state")).to_have_text("alive")
        # "busy / n_cpu" once a heartbeat brought figures; "–" before that
        cpu = row.locator("td.cpu")
        expect(cpu).to_have_text(re.compile(r"^\s*\d+(\.\d+)?\s*/\s*1\s*$"), timeout=SHOW)
        busy = float(cpu.inner_text().split("/")[0])
        assert 0 <= busy <= 1, f"worker {address} shows {busy} cores busy with --n-cpu 1"
        expect(row.locator("td.memory")).to_contain_text("/")
        expect(row.locator("td.storage")).not_to_be_empty()
        expect(row.locator("td.heartbeat")).to_contain_text("ago")
        expect(row.locator(f'a[href="#/workers/{quoted(address)}"]')).to_have_count(1)
    expect(page.locator("table#workers tr[data-worker]")).to_have_count(2)
    page.locator('a[href="#/sessions"]', has_text="Sessions").click()  # the nav links switch pages
    wait_loaded(page, "sessions")
    page.locator('a[href="#/"]', has_text="Cluster").click()
    wait_loaded(page, "overview")


# ------------------------------------------------------------------ sessions, tasks, graphs


def held_job(session: Any, gate: pathlib.Path) -> Any:
    """A job (4 partitions) whose last partition waits until ``gate`` exists (60 s at most), run in the background."""
    gate_path = str(gate)

    def wait_at_the_gate(part: pd.DataFrame) -> pd.DataFrame:
        if part["x"].iloc[0] == 6:
            deadline = time.monotonic() + 60  # never holds a worker's slot for good, whatever the test does
            while not os.path.exists(gate_path) and time.monotonic() < deadline:
                time.sleep(0.05)
        return part + 1

    frame = pd.DataFrame({"x": np.arange(8.0)})
    df = md.DataFrame(frame, chunk_size=2).map_partitions(wait_at_the_gate, meta=frame.iloc[:0])
    return df.execute(session=session, wait=False)


def test_a_submitted_job_appears_live_and_its_progress_reaches_100_percent(page, cluster, mars_session, snap,
                                                                           tmp_path):
    sid = mars_session.session_id
    open_page(page, cluster.url, "#/sessions", "sessions")
    page.locator(f'table#sessions tr[data-session="{sid}"] a[href="#/sessions/{sid}"]').click()
    wait_loaded(page, "session")
    expect(page.locator("table#tasks tr[data-task]")).to_have_count(0)

    gate = tmp_path / "open"
    job = held_job(mars_session, gate)
    try:
        tid = only_task(cluster.url, sid)
        wait_until(lambda: api_get(cluster.url, f"/api/sessions/{sid}/tasks/{tid}")["progress"] > 0, 30,
                   "progress of the held job")
        row = page.locator(f'table#tasks tr[data-task="{tid}"]')  # the page finds the new task without a reload
        expect(row.locator("td.status")).to_have_text("running", timeout=SHOW)
        expect(row.locator("td.progress")).to_have_text(re.compile(r"^\s*([1-9]|[1-9][0-9])(\.\d+)?\s*%\s*$"),
                                                        timeout=SHOW)
        expect(row.locator("td.start")).not_to_be_empty()
        snap(page, "running")
    finally:
        gate.touch()
    job.result(JOB / 1000)
    expect(row.locator("td.progress")).to_have_text("100%", timeout=SHOW)
    expect(row.locator("td.status")).to_have_text("succeeded")
    expect(row.locator("td.error")).to_have_text("")
    expect(row.locator("td.duration")).not_to_be_empty()

    row.locator(f'a[href="#/sessions/{sid}/tasks/{tid}"]').click()
    wait_loaded(page, "task")
    expect(page.locator("#task-progress")).to_have_text("100%", timeout=SHOW)
    expect(page.locator("#task-status")).to_have_text("succeeded")
    expect(page.locator("#task-error")).to_be_hidden()


def test_the_graph_page_draws_both_levels_with_every_node_succeeded(page, cluster, mars_session, snap):
    a = mt.random.rand(600, 600, chunk_size=200)
    (a @ a + 1).sum().execute(session=mars_session)
    sid = mars_session.session_id
    tid = only_task(cluster.url, sid)
    graph_path = f"/api/sessions/{sid}/tasks/{tid}/graph"
    tileables = api_get(cluster.url, graph_path + "?level=tileable")
    subtasks = api_get(cluster.url, graph_path + "?level=subtask")
    assert len(subtasks["nodes"]) > len(tileables["nodes"]) > 1, (tileables, subtasks)

    open_page(page, cluster.url, f"#/sessions/{sid}/tasks/{tid}", "task")
    wait_for_nodes(page, 0, {n["id"] for n in tileables["nodes"]})
    assert page.locator("svg#graph path.edge").count() > 0, "the tileable graph has no edges drawn"
    snap(page, "tileable")

    page.locator('button[data-level="subtask"]').click()
    wait_for_nodes(page, len(tileables["nodes"]), {n["id"] for n in subtasks["nodes"]})
    assert page.locator("svg#graph path.edge").count() > 0, "the subtask graph has no edges drawn"
    assert set(node_states(page)) == {"succeeded"}
    snap(page, "subtask")

    page.locator('button[data-level="tileable"]').click()
    wait_for_nodes(page, 0, {n["id"] for n in tileables["nodes"]})


def test_a_failing_job_shows_its_error_on_the_session_and_task_pages(page, cluster, mars_session, snap):
    def explode(part: pd.DataFrame) -> pd.DataFrame:
        raise ValueError("boom-dashboard")

    frame = pd.DataFrame({"x": np.arange(6.0)})
    with pytest.raises(ValueError, match="boom-dashboard"):
        md.DataFrame(frame, chunk_size=3).map_partitions(explode, meta=frame.iloc[:0]).execute(session=mars_session)
    sid = mars_session.session_id
    tid = only_task(cluster.url, sid)

    open_page(page, cluster.url, f"#/sessions/{sid}", "session")
    row = page.locator(f'table#tasks tr[data-task="{tid}"]')
    expect(row.locator("td.status")).to_have_text("failed")
    expect(row.locator("td.error")).to_contain_text("boom-dashboard")
    snap(page, "session")

    row.locator(f'a[href="#/sessions/{sid}/tasks/{tid}"]').click()
    wait_loaded(page, "task")
    expect(page.locator("#task-status")).to_have_text("failed")
    expect(page.locator("#task-error")).to_be_visible()
    expect(page.locator("#task-error")).to_contain_text("boom-dashboard")


# ------------------------------------------------------------------ nodes: logs and stacks


def check_logs_and_stacks(page: Any, url: str, path: str) -> None:
    """The node page lists the node's log records and, per process, its threads' stacks with a MainThread."""
    records = api_get(url, f"{path}/logs")["records"]
    assert records, "the node has no log records to show"
    expect(page.locator("#node-info")).to_be_visible()
    expect(page.locator("#logs")).to_be_visible()
    expect(page.locator("#logs .log-record").first).to_be_visible(timeout=SHOW)
    expect(page.locator("#logs")).to_contain_text(records[-1]["message"].splitlines()[0])
    threads = page.locator("#stacks details.thread")
    page.locator("button#refresh-stacks").click()
    expect(threads.first).to_be_attached(timeout=SHOW)
    expect(threads.filter(has_text="MainThread").first).to_be_attached()
    threads.filter(has_text="MainThread").first.locator("summary").click()  # it opens on a stack
    expect(threads.filter(has_text="MainThread").first).to_contain_text("File ")


def test_a_workers_page_shows_its_logs_and_thread_stacks(page, cluster):
    address = cluster.workers[0]
    open_page(page, cluster.url, "#/", "overview")
    page.locator(f'table#workers tr[data-worker="{address}"] a[href="#/workers/{quoted(address)}"]').click()
    wait_loaded(page, "worker")
    expect(page.locator("#view")).to_contain_text(address)
    check_logs_and_stacks(page, cluster.url, f"/api/cluster/workers/{quoted(address)}")
    # a worker has a main pool, one slot (--n-cpu 1) and one IO process: each shows its MainThread
    expect(page.locator("#stacks details.thread").filter(has_text="MainThread")).to_have_count(3, timeout=SHOW)


def test_the_supervisors_page_shows_its_logs_and_thread_stacks(page, cluster):
    open_page(page, cluster.url, f"#/supervisors/{quoted(cluster.supervisor)}", "supervisor")
    expect(page.locator("#view")).to_contain_text(cluster.supervisor)
    check_logs_and_stacks(page, cluster.url, f"/api/cluster/supervisors/{quoted(cluster.supervisor)}")


def test_a_closed_session_stays_listed_with_its_named_tasks(page, cluster, snap):
    sess = mars.new_session(cluster.url, default=False)
    sid = sess.session_id
    assert sess.run((mt.ones((6, 6), chunk_size=3) * 2).sum()) == 72
    tid = only_task(cluster.url, sid)
    sess.close()  # as a client that exits does: its data goes, its record stays
    open_page(page, cluster.url, "#/sessions", "sessions")
    row = page.locator(f'table#sessions tr[data-session="{sid}"]')
    expect(row.locator("td.state")).to_have_text("closed", timeout=SHOW)
    row.locator(f'a[href="#/sessions/{sid}"]').click()
    wait_loaded(page, "session")
    task = page.locator(f'table#tasks tr[data-task="{tid}"]')
    expect(task.locator("td.task")).to_contain_text("TensorSum")
    expect(task.locator("td.status")).to_have_text("succeeded")
    snap(page, "closed-session")
    task.locator(f'a[href="#/sessions/{sid}/tasks/{tid}"]').click()
    wait_loaded(page, "task")
    expect(page.locator("#task-name")).to_contain_text("TensorSum")


# ------------------------------------------------------------------ a cluster with a token


def test_with_a_token_the_page_loads_and_without_it_shows_the_401(page, console_log, snap):
    sup, _, url = start_supervisor("--token", "dashboard-secret-1")
    try:
        assert sup.token == "dashboard-secret-1", sup.output
        # Chromium itself logs each 4xx reply to a fetch as a console error ("Failed to load resource"), whatever
        # the page then does with it; the 401 from the API is what this test provokes, so exactly that message,
        # for API calls only, is let through (the page's own handling is checked: it shows the error)
        console_log.allow(r"Failed to load resource: the server responded with a status of 401 \(Unauthorized\)",
                          url=re.escape(url) + r"/api/.*")
        page.goto(f"{url}/#/")
        expect(page.locator("#view .api-error")).to_contain_text("token", timeout=SHOW)
        expect(page.locator("main#view")).not_to_have_attribute("data-loaded", "true")
        snap(page, "without-token")

        open_page(page, url, "?token=dashboard-secret-1#/", "overview")
        expect(page.locator("#view .api-error")).to_have_count(0)
        expect(page.locator("table#supervisors tr[data-supervisor]")).to_have_count(1)
        page.locator('a[href="#/sessions"]', has_text="Sessions").click()  # the token serves the next pages
        wait_loaded(page, "sessions")
        expect(page.locator("#view .api-error")).to_have_count(0)
        open_page(page, url, "#/", "overview", with_token=False)  # a new load without ?token=: the tab kept it
        expect(page.locator("#view .api-error")).to_have_count(0)
        other = page.context.new_page()  # another tab: the HttpOnly cookie left by ?token= lets it read
        try:
            open_page(other, url, "#/sessions", "sessions", with_token=False)
            expect(other.locator("#view .api-error")).to_have_count(0)
        finally:
            other.close()
    finally:
        sup.stop()


# ------------------------------------------------------------------ last: it kills a worker of the shared cluster


def test_a_killed_worker_is_shown_as_lost_and_the_other_stays_alive(page, cluster):
    gone, kept = cluster.workers
    open_page(page, cluster.url, "#/", "overview")
    expect(page.locator(f'table#workers tr[data-worker="{gone}"] td.state')).to_have_text("alive")
    cluster.nodes[gone].kill()
    row = page.locator(f'table#workers tr[data-worker="{gone}"]')
    # the supervisor takes a worker for lost after WORKER_TIMEOUT (conftest) without a heartbeat
    expect(row.locator("td.state")).to_have_text("lost", timeout=SHOW + 10_000)
    expect(row).to_have_class(re.compile(r"(^|\s)lost(\s|$)"))
    expect(page.locator(f'table#workers tr[data-worker="{kept}"] td.state')).to_have_text("alive")

"""The task stream, the time series charts and the saved performance report in a real headless Chromium.

The cluster here is one of its own: two workers of one slot each with a
small chunk cache and a spill directory, so that a job spills.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import Cluster
from dashboard_harness import api_get, quoted, wait_until
from process_nodes import start_supervisor, start_workers

import mars
import mars.tensor as mt
from mars.oscar.tokenfile import find_token

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

SHOW = 15_000


def expect(*args: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(*args)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A supervisor and two ``--n-cpu 1 --cache-mem 16m`` workers that spill to a folder of the test's."""
    spill = tmp_path_factory.mktemp("spill")
    def stop(node: Any) -> None:
        node.stop()
        node.process.stdout.close()  # its pipe: left open, it would warn when collected, in a later test

    with contextlib.ExitStack() as stack:
        sup, address, url = start_supervisor()
        stack.callback(stop, sup)
        workers = start_workers(address, 2, "--n-cpu", "1", "--cache-mem", "16m", "--spill-dirs", str(spill))
        for w in workers:
            stack.callback(stop, w)
        yield Cluster(url, address, [w.address for w in workers], {address: sup, **{w.address: w for w in workers}})


@pytest.fixture(scope="module")
def spilled(cluster: Cluster) -> tuple[Any, Any]:
    """A session holding about 64 MB of results on two workers whose caches hold 16 MB each; its job's task id."""
    sess = mars.new_session(cluster.url, default=False)
    data = np.random.default_rng(0).random((8000, 1000))
    t = mt.tensor(data, chunk_size=(500, 1000)) + 1
    sess.execute(t)
    sums = sess.run(t.sum(axis=1))
    np.testing.assert_allclose(sums, data.sum(axis=1) + 1000)
    tasks = api_get(cluster.url, f"/api/sessions/{sess.session_id}/tasks")
    yield sess, tasks[-1]["task_id"]
    sess.close()


def open_page(page: Any, url: str, route: str, kind: str) -> None:
    page.goto(f"{url}/?token={find_token(url)}{route}")
    view = page.locator("main#view")
    expect(view).to_have_attribute("data-page", kind, timeout=SHOW)
    expect(view).to_have_attribute("data-loaded", "true", timeout=SHOW)


def test_task_stream_shows_the_subtasks_of_a_job_on_both_workers(page, cluster, spilled):
    sess, tid = spilled
    open_page(page, cluster.url, f"#/sessions/{sess.session_id}/tasks/{tid}", "task")
    page.locator("#task-stream-link").click()
    expect(page.locator("main#view")).to_have_attribute("data-page", "stream", timeout=SHOW)
    n_subtasks = api_get(cluster.url, f"/api/sessions/{sess.session_id}/tasks/{tid}")["n_subtasks"]
    bars = page.locator("svg.stream rect.ev-subtask")
    expect(bars).to_have_count(n_subtasks, timeout=SHOW)
    for address in cluster.workers:
        assert page.locator(f'svg.stream rect.ev-subtask[data-worker="{address}"]').count() > 0, address
    assert set(bars.evaluate_all("rs => rs.map(r => r.dataset.task)")) == {tid}
    title = bars.first.locator("title").text_content()
    assert "subtask" in title and "worker 127.0.0.1:" in title  # what hovering shows
    expect(page.locator(".stream-legend .legend-item").first).to_be_visible()
    bars.first.click()  # a bar opens its task
    expect(page.locator("main#view")).to_have_attribute("data-page", "task", timeout=SHOW)


def test_memory_series_rises_and_shows_spilled_bytes(page, cluster, spilled):
    stored = wait_until(lambda: [w for w in api_get(cluster.url, "/api/cluster/workers")
                                 if (w.get("storage_disk_bytes") or 0) > 0], 20, "a worker with spilled chunks")
    assert stored
    open_page(page, cluster.url, "#/performance", "performance")
    memory = page.locator('.chart[data-chart="memory"]')
    # the charts poll every 2 s: wait for a sample that shows what the job left spilled
    page.wait_for_function("""() => {
        const box = document.querySelector('.chart[data-chart="memory"]');
        return box && Number(box.dataset.maxSpilled) > 0 && Number(box.dataset.maxMemoryChunks) > 0;
    }""", timeout=SHOW)
    assert int(memory.get_attribute("data-points")) >= 2
    expect(memory.locator("canvas")).to_have_count(1)  # drawn by uPlot
    expect(page.locator('.chart[data-chart="cpu"] canvas')).to_have_count(1)
    open_page(page, cluster.url, f"#/workers/{quoted(cluster.workers[0])}", "worker")
    page.wait_for_function("""() => {
        const box = document.querySelector('.chart[data-chart="memory"]');
        return box && Number(box.dataset.points) > 0;
    }""", timeout=SHOW)


def test_saved_report_opens_offline_and_shows_the_stream(browser, cluster, tmp_path: pathlib.Path):
    sess = mars.new_session(cluster.url, default=False)
    path = tmp_path / "report.html"
    try:
        with mars.performance_report(path, session=sess):
            sess.run((mt.ones((400, 400), chunk_size=100) * 3).sum())
    finally:
        sess.close()
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    requested: list[str] = []
    problems: list[str] = []
    try:
        tab = context.new_page()
        tab.on("request", lambda r: requested.append(r.url))
        tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: problems.append(str(e)))
        tab.goto(path.as_uri())
        expect(tab.locator("main#view")).to_have_attribute("data-loaded", "true", timeout=SHOW)
        assert tab.locator("#report-stream rect.ev-subtask").count() > 0
        expect(tab.locator('#report-series .chart[data-chart="cpu"] canvas')).to_have_count(1)
        expect(tab.locator(".report-task svg#graph g.node").first).to_be_visible()
        assert tab.locator("#report-summary").inner_text().count("Tasks") == 1
    finally:
        context.close()
    assert [u for u in requested if not u.startswith("file:")] == [] and problems == []

"""The profile's flame graph in a real headless Chromium (the cluster of conftest.py: two one-slot workers).

A deliberately slow job (a chunk function that busy-loops 0.3 s a chunk)
runs; its task page links to its profile, whose flame graph names the chunk
function under the operator that ran it, zooms in and out, and picks one
operator; a saved performance report shows the same flame graph offline.
"""

from __future__ import annotations

import pathlib
import time
from typing import Any

import numpy as np
import pytest
from dashboard_harness import api_get, wait_until

import mars
import mars.tensor as mt
from mars.oscar.tokenfile import find_token

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

SHOW = 15_000
#: what the flame graph names the slow chunk function (its qualified name)
SLOW = "make_slow.<locals>.slow_function"


def expect(*args: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(*args)


def make_slow(seconds: float = 0.3) -> Any:
    """A chunk function that busy-loops ``seconds``; nested, so that it travels by value to the workers."""

    def slow_function(chunk: np.ndarray) -> np.ndarray:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return chunk + 1

    return slow_function


def run_slow_job(sess: Any, url: str) -> str:
    data = np.arange(8.0)
    np.testing.assert_array_equal(sess.run(mt.tensor(data, chunk_size=2).map_chunk(make_slow(), dtype=float)),
                                  data + 1)
    tasks = wait_until(lambda: api_get(url, f"/api/sessions/{sess.session_id}/tasks"), 30, "the job's task")
    return tasks[-1]["task_id"]


def test_profile_names_the_chunk_function_of_a_slow_job(page, cluster, mars_session):
    tid = run_slow_job(mars_session, cluster.url)
    sid = mars_session.session_id
    page.goto(f"{cluster.url}/?token={find_token(cluster.url)}#/sessions/{sid}/tasks/{tid}")
    view = page.locator("main#view")
    expect(view).to_have_attribute("data-loaded", "true", timeout=SHOW)
    page.locator("#task-profile-link").click()
    expect(view).to_have_attribute("data-page", "profile", timeout=SHOW)
    expect(view).to_have_attribute("data-loaded", "true", timeout=SHOW)
    slow = page.locator(f'svg.flame g.fg-node[data-name="{SLOW}"]')
    expect(slow.first).to_be_visible(timeout=SHOW)
    op = page.locator('svg.flame g.fg-op[data-name="TensorMapChunk"]')
    expect(op).to_have_count(1)
    # the slow function holds most of the task's samples: its box is nearly as wide as the task's
    total = int(page.locator('svg.flame g.fg-node[data-depth="0"]').get_attribute("data-samples"))
    in_slow = sum(int(s) for s in slow.evaluate_all("gs => gs.map(g => g.dataset.samples)"))
    assert total >= 60 and in_slow >= 0.8 * total, (in_slow, total)
    assert "slow_function" in slow.first.locator("title").text_content()  # what hovering shows: name, file, time
    expect(page.locator(f'.fg-top li[data-name="{SLOW}"]')).to_have_count(1)
    assert page.locator(".fg-top li").first.get_attribute("data-name") == SLOW  # the function that ran the most
    slow.first.click()  # zoom in: the slow function is the top row
    expect(page.locator('svg.flame g.fg-node[data-depth="0"]')).to_have_attribute("data-name", SLOW)
    page.locator('svg.flame g.fg-node[data-depth="0"]').click()  # and out again, one level
    expect(page.locator('svg.flame g.fg-node[data-depth="0"]')).not_to_have_attribute("data-name", SLOW)
    page.locator("select.fg-op").select_option("TensorMapChunk")  # one operator alone
    expect(page.locator('svg.flame g.fg-node[data-depth="0"]')).to_have_attribute("data-name", "TensorMapChunk")
    expect(slow.first).to_be_visible()


def test_saved_report_shows_the_profile_offline(browser, cluster, tmp_path: pathlib.Path):
    sess = mars.new_session(cluster.url, default=False)
    path = tmp_path / "report.html"
    try:
        with mars.performance_report(path, session=sess):
            sess.run(mt.tensor(np.arange(4.0), chunk_size=2).map_chunk(make_slow(), dtype=float))
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
        expect(tab.locator(f'.report-task svg.flame g.fg-node[data-name="{SLOW}"]').first).to_be_visible()
    finally:
        context.close()
    assert [u for u in requested if not u.startswith("file:")] == [] and problems == []

"""From a bar of the task stream to its subtask's node in the graph, in a real headless Chromium.

A click on a subtask's bar opens its task page at ``.../subtasks/<index>``: the
subtask graph with that node ringed, zoomed into view and described under the
graph (op, state, worker, chunk keys), in boxes for a small graph and in dots
for a big one. The cluster is conftest.py's: a supervisor and two one-slot workers.
"""

from __future__ import annotations

from typing import Any

import pytest
from dashboard_harness import api_get

import mars.tensor as mt
from mars.oscar.tokenfile import find_token

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

SHOW = 15_000


def expect(*args: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(*args)


def open_page(page: Any, url: str, route: str, kind: str) -> None:
    page.goto(f"{url}/?token={find_token(url)}{route}")
    view = page.locator("main#view")
    expect(view).to_have_attribute("data-page", kind, timeout=SHOW)
    expect(view).to_have_attribute("data-loaded", "true", timeout=SHOW)


def run_job(cluster: Any, sess: Any, tensor: Any) -> str:
    """Run ``tensor`` in ``sess``; the id of its task."""
    sess.run(tensor)
    return api_get(cluster.url, f"/api/sessions/{sess.session_id}/tasks")[-1]["task_id"]


def open_stream(page: Any, cluster: Any, sid: str, tid: str) -> Any:
    """The task's stream page, once it shows a bar per subtask; its bars."""
    open_page(page, cluster.url, f"#/sessions/{sid}/tasks/{tid}/stream", "stream")
    n_subtasks = api_get(cluster.url, f"/api/sessions/{sid}/tasks/{tid}")["n_subtasks"]
    bars = page.locator("svg.stream rect.ev-subtask")
    expect(bars).to_have_count(n_subtasks, timeout=SHOW)
    return bars


def bar_facts(bar: Any) -> dict:
    return bar.evaluate("r => ({op: r.dataset.op, index: r.dataset.index, worker: r.dataset.worker})")


def in_view(page: Any, selector: str) -> bool:
    """Whether the element's box lies inside the graph's visible box."""
    return page.evaluate("""(sel) => {
        const a = document.querySelector(sel).getBoundingClientRect();
        const b = document.querySelector("svg#graph").getBoundingClientRect();
        return a.width > 0 && a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom;
    }""", selector)


def test_clicking_a_bar_opens_its_subtask_selected_in_the_graph(page, cluster, mars_session):
    sess = mars_session
    tid = run_job(cluster, sess, (mt.ones((400, 400), chunk_size=100) * 3 + 1).sum())
    bars = open_stream(page, cluster, sess.session_id, tid)
    # a fused subtask's bar where there is one: its op names several chunk ops
    fused = page.locator('svg.stream rect.ev-subtask[data-op*=" -> "]')
    bar = fused.first if fused.count() else bars.first
    clicked = bar_facts(bar)
    bar.click()

    view = page.locator("main#view")
    expect(view).to_have_attribute("data-page", "task", timeout=SHOW)
    expect(view).to_have_attribute("data-loaded", "true", timeout=SHOW)
    route = f"#/sessions/{sess.session_id}/tasks/{tid}/subtasks/{clicked['index']}"
    assert page.evaluate("location.hash") == route
    expect(page.locator('button.level[data-level="subtask"]')).to_have_attribute("aria-pressed", "true")
    selected = page.locator("svg#graph g.node.selected")
    expect(selected).to_have_count(1, timeout=SHOW)
    assert selected.get_attribute("data-id") == clicked["index"]
    assert selected.locator(".ring").count() == 1
    assert in_view(page, "svg#graph g.node.selected")
    # the node is the bar's subtask: the graph API's node under that id ran the bar's op on the bar's worker
    graph = api_get(cluster.url, f"/api/sessions/{sess.session_id}/tasks/{tid}/graph?level=subtask")
    node = next(n for n in graph["nodes"] if n["id"] == clicked["index"])
    assert (node["op"], node["worker"]) == (clicked["op"], clicked["worker"])
    # and the details line under the graph says so, with the chunk keys the stream recorded
    details = page.locator("#graph-selection")
    expect(details).to_be_visible()
    expect(details).to_have_attribute("data-op", clicked["op"])
    expect(details.locator(".sel-op")).to_have_text(clicked["op"])
    expect(details.locator(".sel-worker")).to_have_text(clicked["worker"])
    expect(details.locator(".sel-state")).to_have_text("succeeded")
    events = api_get(cluster.url, f"/api/sessions/{sess.session_id}/tasks/{tid}/stream")["events"]
    keys = next(e["keys"] for e in events if e["kind"] == "subtask" and str(e["index"]) == clicked["index"])
    expect(details.locator(".sel-keys")).to_have_text(", ".join(keys), timeout=SHOW)


def test_a_big_graph_rings_the_dot_and_a_click_moves_the_selection(page, cluster, mars_session, snap):
    sess = mars_session
    # 150 chunks, each its own subtask (a reduction would fuse into a few): drawn as dots
    tid = run_job(cluster, sess, mt.random.rand(1500, 4, chunk_size=(10, 4)) + 1)
    bars = open_stream(page, cluster, sess.session_id, tid)
    clicked = bar_facts(bars.nth(bars.count() // 2))
    bars.nth(bars.count() // 2).click()
    expect(page.locator("main#view")).to_have_attribute("data-loaded", "true", timeout=SHOW)
    expect(page.locator("svg#graph")).to_have_class("graph dots")
    dot = page.locator("svg#graph g.node.dot.selected")
    expect(dot).to_have_count(1, timeout=SHOW)
    assert dot.get_attribute("data-id") == clicked["index"]
    assert in_view(page, "svg#graph g.node.selected circle.ring")
    assert dot.locator("circle.ring").bounding_box()["width"] >= 40  # zoomed in: a ring of radius 11 at 2x
    expect(page.locator("#graph-selection .sel-op")).to_have_text(clicked["op"])
    snap(page, "dot-selected")

    # a click on another dot in view selects it instead, and the address follows
    other = page.evaluate("""() => {
        const box = document.querySelector("svg#graph").getBoundingClientRect();
        for (const g of document.querySelectorAll("svg#graph g.node.dot:not(.selected)")) {
            const r = g.getBoundingClientRect();
            if (r.left > box.left + 4 && r.right < box.right - 4 && r.top > box.top + 4 && r.bottom < box.bottom - 4) {
                return {id: g.dataset.id, x: r.left + r.width / 2, y: r.top + r.height / 2};
            }
        }
        return null;
    }""")
    assert other is not None
    page.mouse.click(other["x"], other["y"])
    expect(dot).to_have_attribute("data-id", other["id"])
    assert page.evaluate("location.hash").endswith(f"/tasks/{tid}/subtasks/{other['id']}")
    expect(page.locator("#graph-selection")).to_have_attribute("data-id", other["id"])
    # back to the tileables: the selection ends and the address is the task's again
    page.locator('button.level[data-level="tileable"]').click()
    expect(page.locator("svg#graph g.node.selected")).to_have_count(0)
    expect(page.locator("#graph-selection")).to_be_hidden()
    assert page.evaluate("location.hash") == f"#/sessions/{sess.session_id}/tasks/{tid}"

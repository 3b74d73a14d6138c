"""The dashboard's files: served from the package without the token, every module they import is there."""

from __future__ import annotations

import re

import aiohttp
import pytest

from mars.services.session.mock import MockSessionAPI
from mars.services.web import dashboard, start_web_server

_IMPORT = re.compile(r"""(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)""")


def test_every_module_the_page_imports_is_shipped():
    files = {p.name for p in dashboard.STATIC_DIR.iterdir() if p.is_file()}
    assert {"index.html", "favicon.svg"} <= files
    html = (dashboard.STATIC_DIR / "index.html").read_text()
    wanted = set(re.findall(r'(?:src|href)="/static/([^"]+)"', html))
    assert any(w.endswith(".js") for w in wanted) and any(w.endswith(".css") for w in wanted)
    for name in sorted(files):
        if name.endswith(".js"):
            for a, b in _IMPORT.findall((dashboard.STATIC_DIR / name).read_text()):
                target = (a or b).removeprefix("./")
                assert "/" not in target and not target.startswith("http"), f"{name} imports {a or b}"
                wanted.add(target)
    vendored = {w for w in wanted if w.startswith("vendor/")}  # third-party files, served from static/vendor/
    assert all((dashboard.STATIC_DIR / w).is_file() for w in vendored), f"missing: {vendored}"
    assert wanted - vendored <= files, f"missing: {wanted - vendored - files}"
    for name in files:  # no file the server would refuse to serve
        assert dashboard._NAME.fullmatch(name) and (dashboard.STATIC_DIR / name).suffix in dashboard._TYPES


def test_no_asset_is_loaded_from_outside_the_cluster():
    for path in (p for p in dashboard.STATIC_DIR.rglob("*") if p.is_file()):  # vendor/ included
        text = path.read_text()
        assert not re.search(r"""(?:src|href|url\()\s*=?\s*["']?(?:https?:)?//""", text), path.name


@pytest.fixture
async def server():
    async with await start_web_server("127.0.0.1", 0, ["sup:1"], MockSessionAPI, token="secret") as web:
        yield web


async def test_files_are_served_without_the_token_and_the_api_is_not(server):
    async with aiohttp.ClientSession() as client:
        async with client.get(server.url + "/") as resp:
            assert resp.status == 200 and resp.content_type == "text/html"
            assert 'id="view"' in await resp.text()
        for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css")):
            async with client.get(f"{server.url}/static/{name}") as resp:
                assert resp.status == 200 and resp.content_type == kind
                assert resp.headers["Cache-Control"] == "no-cache"
        async with client.get(server.url + "/favicon.ico") as resp:
            assert resp.status == 200 and resp.content_type == "image/svg+xml"
        async with client.get(server.url + "/api/sessions") as resp:
            assert resp.status == 401 and (await resp.json())["error"]["type"] == "Unauthorized"
        async with client.post(server.url + "/static/app.js") as resp:  # only reading is public
            assert resp.status == 401


@pytest.mark.parametrize("path", ["/static/nope.js", "/static/..%2Fserver.py", "/static/.hidden.js",
                                  "/static/x.py", "/static/%2e%2e%2fdashboard.py", "/static/"])
async def test_other_paths_are_json_404s(server, path):
    async with aiohttp.ClientSession() as client:
        async with client.get(server.url + path) as resp:
            assert resp.status == 404
            assert (await resp.json())["error"]["type"] == "NotFound"

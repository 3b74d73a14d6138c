"""The dashboard's files: ``GET /`` is the page, ``GET /static/<name>`` its scripts and styles.

The dashboard is plain HTML, CSS and JavaScript modules shipped in the
package (``static/``): nothing is built, and no Node.js is needed to install
or serve it. The page holds no data; it reads everything through the JSON API
(see docs/web-api.md), so these routes need no token: the API calls carry it.
They still pass the Host check (see guard.py): a page served under a foreign
DNS name would be that name's origin, and could read the API through it.
"""

from __future__ import annotations

import pathlib
import re

from aiohttp import web

STATIC_DIR = pathlib.Path(__file__).with_name("static")
#: paths served without the cluster's token (the files are public; the data is not)
PUBLIC_PREFIX = "/static/"
PUBLIC_PATHS = frozenset({"/", "/index.html", "/favicon.ico"})
#: the page itself: opened with ?token=, it also sets the token cookie (see server.py)
PAGE_PATHS = frozenset({"/", "/index.html"})

_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")
_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml",
          ".png": "image/png", ".json": "application/json"}
#: the browser checks back each time (a 304 when unchanged), so an upgraded cluster serves the new page at once
_CACHE = {"Cache-Control": "no-cache"}

routes = web.RouteTableDef()


def is_public(request: web.Request) -> bool:
    """Whether ``request`` asks for one of the dashboard's files (served to anyone)."""
    if request.method not in ("GET", "HEAD"):
        return False
    return request.path in PUBLIC_PATHS or request.path.startswith(PUBLIC_PREFIX)


def is_page(request: web.Request) -> bool:
    """Whether ``request`` asks for the dashboard's page (not one of its scripts or styles)."""
    return request.method in ("GET", "HEAD") and request.path in PAGE_PATHS


def _file(name: str, folder: pathlib.Path = STATIC_DIR) -> web.StreamResponse:
    path = folder / name
    if not (_NAME.fullmatch(name) and path.suffix in _TYPES and path.is_file()):
        raise web.HTTPNotFound()
    resp = web.FileResponse(path, headers=_CACHE)
    resp.content_type = _TYPES[path.suffix]
    return resp


@routes.get("/")
@routes.get("/index.html")
async def index(request: web.Request) -> web.StreamResponse:
    return _file("index.html")


@routes.get("/static/{name}")
async def static_file(request: web.Request) -> web.StreamResponse:
    return _file(request.match_info["name"])


@routes.get("/static/vendor/{name}")
async def vendor_file(request: web.Request) -> web.StreamResponse:
    # third-party files shipped in the package (uPlot: see static/vendor/README.md)
    return _file(request.match_info["name"], STATIC_DIR / "vendor")


@routes.get("/favicon.ico")
async def favicon(request: web.Request) -> web.StreamResponse:
    return _file("favicon.svg")

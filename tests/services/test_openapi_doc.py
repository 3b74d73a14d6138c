"""docs/openapi.yaml lists exactly the web service's routes, and its references resolve."""

from __future__ import annotations

import re

from .openapi_check import load_spec, resolve

from mars.services.web import dashboard, observe, routes

_METHODS = {"get", "post", "put", "delete", "patch"}


def _server_routes() -> set[tuple[str, str]]:
    out = set()
    for table in (routes.routes, dashboard.routes, observe.routes):
        for route in table:
            paths = [route.path]
            m = re.search(r"\{(\w+):([\w|]+)\}", route.path)
            if m:  # a path with alternatives ({kind:workers|supervisors}) is one path each in the document
                paths = [route.path.replace(m.group(0), alt) for alt in m.group(2).split("|")]
            out.update((route.method.lower(), p) for p in paths)
    return out


def test_every_route_is_documented_and_nothing_else():
    spec = load_spec()
    documented = {(m, p) for p, item in spec["paths"].items() for m in item if m in _METHODS}
    assert documented == _server_routes()


def test_every_reference_resolves_and_every_operation_answers_errors_in_one_format():
    spec = load_spec()

    def walk(node):
        if isinstance(node, dict):
            if "$ref" in node:
                resolve(spec, node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method in _METHODS and path.startswith("/api"):
                assert op["responses"]["default"] == {"$ref": "#/components/responses/Error"}, (method, path)

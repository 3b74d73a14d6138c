"""docs/openapi.yaml read for tests: its routes, and a small checker of JSON against its schemas.

The checker knows the parts of JSON Schema the file uses (type, required,
properties, items, enum, $ref, additionalProperties, min/max); it is enough
to catch an answer that drifted from the document.
"""

from __future__ import annotations

import pathlib
from typing import Any

import yaml

SPEC_PATH = pathlib.Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def load_spec() -> dict:
    return yaml.safe_load(SPEC_PATH.read_text())


def resolve(spec: dict, node: dict) -> dict:
    while "$ref" in node:
        node = _lookup(spec, node["$ref"])
    return node


def _lookup(spec: dict, ref: str) -> dict:
    assert ref.startswith("#/"), ref
    node: Any = spec
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def _type_ok(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def check(spec: dict, schema: dict, value: Any, where: str = "$") -> None:
    """Raise AssertionError naming the first place where ``value`` breaks ``schema``."""
    schema = resolve(spec, schema)
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        assert any(_type_ok(value, n) for n in names), f"{where}: {value!r} is not of type {types}"
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}"
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            assert key in value, f"{where}: missing required {key!r} (has {sorted(value)})"
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                check(spec, sub, value[key], f"{where}.{key}")
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                check(spec, extra, item, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check(spec, schema["items"], item, f"{where}[{i}]")
        assert len(value) <= schema.get("maxItems", len(value)), f"{where}: more than {schema['maxItems']} items"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        assert value >= schema.get("minimum", value) and value <= schema.get("maximum", value), f"{where}: {value}"


def response_schema(spec: dict, path: str, method: str = "get") -> dict:
    """The JSON schema of a path's 200 answer."""
    op = spec["paths"][path][method]
    return op["responses"]["200"]["content"]["application/json"]["schema"]

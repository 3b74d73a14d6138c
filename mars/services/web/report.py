"""A performance report as one HTML file that opens with no server and no network.

:func:`render_report` inlines the dashboard's own modules (the task stream,
the charts, the graph view: see ``static/report.js``), uPlot and the styles,
and the report's data as JSON, into a single page. The modules are ES
modules that import each other; :func:`bundle` joins them into one classic
script (a page opened from ``file://`` may not import modules from files),
each module's body in a function of its own that returns its exports.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from .dashboard import STATIC_DIR

#: the modules of the report page, each after those it imports
REPORT_MODULES = ("dom", "format", "graph", "graphview", "stream", "profile", "series", "report")

_IMPORT = re.compile(r'^import\s+(?:\{([^}]*)\}|\*\s+as\s+(\w+))\s+from\s+"\./(\w+)\.js";\s*$', re.MULTILINE)
_EXPORT = re.compile(r"^export\s+((?:async\s+)?function\*?|class|const|let)\s+(\w+)", re.MULTILINE)


def _module_body(name: str, source: str, known: Sequence[str]) -> str:
    """``source`` with its imports read from the modules bundled before, and its exports returned."""
    def imported(m: re.Match) -> str:
        names, star, module = m.group(1), m.group(2), m.group(3)
        if module not in known:
            raise ValueError(f"module {name}.js imports ./{module}.js, which is not bundled before it")
        if star:
            return f"const {star} = __modules.{module};"
        parts = [p.strip() for p in names.split(",") if p.strip()]
        return "const { " + ", ".join(p.replace(" as ", ": ") for p in parts) + f" }} = __modules.{module};"

    body = _IMPORT.sub(imported, source)
    exports = [m.group(2) for m in _EXPORT.finditer(body)]
    body = _EXPORT.sub(lambda m: f"{m.group(1)} {m.group(2)}", body)
    leftover = re.search(r"^\s*(import|export)\b.*$", body, re.MULTILINE)
    if leftover:
        raise ValueError(f"module {name}.js has a statement the bundler does not read: {leftover.group(0).strip()!r}")
    return f"__modules.{name} = (() => {{\n{body}\nreturn {{ {', '.join(exports)} }};\n}})();\n"


def bundle(modules: Sequence[str] = REPORT_MODULES) -> str:
    """The dashboard's ``modules`` (file names without ``.js``, in import order) as one classic script.

    Examples
    --------
    >>> js = bundle(["format"])
    >>> js.startswith("const __modules = {};") and "__modules.format = " in js
    True
    """
    parts = ["const __modules = {};\n"]
    for i, name in enumerate(modules):
        source = (STATIC_DIR / f"{name}.js").read_text(encoding="utf-8")
        parts.append(_module_body(name, source, modules[:i]))
    return "".join(parts)


def _script_text(js: str) -> str:
    # inside <script>, only "</script" (any case) would end it early
    return re.sub(r"</(script)", r"<\\/\1", js, flags=re.IGNORECASE)


def render_report(data: dict[str, Any]) -> str:
    """The report page for ``data`` (``title``, ``start``, ``end``, ``cluster``, ``tasks``, ``stream``, ``series``).

    Examples
    --------
    >>> page = render_report({"title": "demo", "tasks": [], "stream": {"events": []}, "series": {"columns": {}}})
    >>> page.startswith("<!doctype html>"), "<script src=" in page, "<link" in page  # nothing to load
    (True, False, False)
    """
    vendor = STATIC_DIR / "vendor"
    css = "\n".join(p.read_text(encoding="utf-8") for p in (vendor / "uPlot.min.css", STATIC_DIR / "style.css"))
    payload = json.dumps(data, allow_nan=False, default=str).replace("<", "\\u003c")
    title = html.escape(str(data.get("title") or "Mars performance report"))
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title>",
        # nothing from the network: the page carries its scripts, styles and data
        ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
         "style-src 'unsafe-inline'; img-src data:\">"),
        f"<style>{css}</style>",
        f"<script>{_script_text((vendor / 'uPlot.iife.min.js').read_text(encoding='utf-8'))}</script>",
        "</head><body>",
        f'<script type="application/json" id="report-data">{payload}</script>',
        (f"<script>{_script_text(bundle())}\n"
         "__modules.report.showReport(JSON.parse(document.getElementById('report-data').textContent));</script>"),
        "</body></html>",
    ])

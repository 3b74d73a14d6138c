"""What the dashboard's browser tests need besides pytest fixtures: Chromium, artifacts, the API.

The nodes they drive come from ``tests/process_nodes.py``. Kept out of
conftest.py so the test module can import the helpers by name (tests/
folders are not packages: this basename is unique in tests/).
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import time
import urllib.parse
from typing import Any

import pytest
from process_nodes import api_get  # noqa: F401 - the browser tests' API reads, with the cluster's token

#: set to "required" (by .ci/run) to fail, not skip, when Chromium or playwright is missing
REQUIRED_ENV = "MARS_BROWSER_TESTS"
#: the Chromium to drive; default: `chromium` on PATH (Debian's package)
CHROMIUM_ENV = "MARS_CHROMIUM"
#: where screenshots go (a `dashboard/` folder inside it); default: test-artifacts/ at the repo root
ARTIFACTS_ENV = "MARS_TEST_ARTIFACTS"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

#: flags for a headless run on a machine without a GPU or internet, as root in CI
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def browser_missing(reason: str) -> None:
    """Skip the browser tests with ``reason``, or fail them when CI requires them."""
    if os.environ.get(REQUIRED_ENV, "").lower() == "required":
        pytest.fail(f"browser tests are required ({REQUIRED_ENV}=required) but {reason}", pytrace=False)
    pytest.skip(f"{reason} (install Debian's chromium, or set {CHROMIUM_ENV}; see .ci/run)")


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None when there is none."""
    given = os.environ.get(CHROMIUM_ENV)
    if given:
        return given if os.access(given, os.X_OK) else None
    return shutil.which("chromium")


def artifacts_dir() -> pathlib.Path:
    """The folder for screenshots (created)."""
    base = os.environ.get(ARTIFACTS_ENV)
    folder = (pathlib.Path(base) if base else REPO_ROOT / "test-artifacts") / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def artifact_name(nodeid_name: str, suffix: str = "") -> str:
    """A file name for a test's screenshot: the test's name, made safe for any file system."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid_name).strip("_")
    return f"{name}{'-' + suffix if suffix else ''}.png"


def quoted(address: str) -> str:
    """``address`` as the dashboard puts it in a hash route (JavaScript's encodeURIComponent)."""
    return urllib.parse.quote(address, safe="")


def wait_until(predicate: Any, timeout: float, what: str) -> Any:
    """Poll ``predicate`` until it returns something true; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.1)

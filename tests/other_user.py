"""Acting as another OS user of the host, for the tests that try the nodes as that user would.

Needs root (to become ``nobody`` with ``runuser``) and a Python that
``nobody`` may run: the tests' own may live under root's home.
"""

from __future__ import annotations

import os
import shutil

import pytest


def python_for_nobody() -> str | None:
    """A Python another user may run, or None."""
    for path in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.isfile(path) and os.stat(path).st_mode & 0o001:
            return path
    return None


#: skips a test that cannot act as another user here
needs_another_user = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("runuser") or python_for_nobody() is None,
    reason="needs root, runuser and a Python in /usr to act as another OS user",
)


def as_nobody(script: str, *args: str) -> list[str]:
    """The command that runs the Python ``script`` with ``args`` as user ``nobody``."""
    return ["runuser", "-u", "nobody", "--", python_for_nobody() or "python3", "-I", "-c", script, *args]

"""``python -m mars.deploy.kubernetes.supervisor``: ``mars-supervisor`` with defaults from the pod's environment."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from . import main as _main


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pod's ``mars-supervisor``; returns the exit code."""
    return _main("supervisor", argv)


if __name__ == "__main__":
    sys.exit(main())

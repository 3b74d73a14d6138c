"""``mars-scheduler`` (also ``python -m mars.deploy.oscar.scheduler``): a supervisor without web, the legacy role."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cmdline import main as _main


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mars-scheduler`` with ``argv`` (``sys.argv[1:]`` when None); returns the exit code."""
    return _main("scheduler", argv)


if __name__ == "__main__":
    sys.exit(main())

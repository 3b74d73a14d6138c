"""``mars-supervisor`` (also ``python -m mars.deploy.oscar.supervisor``): a supervisor with its web service."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cmdline import main as _main


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mars-supervisor`` with ``argv`` (``sys.argv[1:]`` when None); returns the exit code."""
    return _main("supervisor", argv)


if __name__ == "__main__":
    sys.exit(main())
